"""Grammar-shaped constraints a request can send, as format values: the one place that maps them.

Three ways in name a grammar:

- an OpenAI custom tool's ``format``: ``{"type": "text"}`` or a grammar, ``{"type": "grammar",
  "syntax": "regex" | "lark", "definition": ...}`` on ``/v1/responses`` and ``{"type":
  "grammar", "grammar": {"syntax", "definition"}}`` on ``/v1/chat/completions``; structgen also
  takes ``"gbnf"`` and ``"ebnf"`` (the same syntax) as an extension;
- vLLM's ``structured_outputs.grammar`` / ``guided_grammar`` (``/v1/chat/completions``,
  ``/v1/completions``): GBNF when a line holds ``::=`` (as vLLM decides), else Lark;
- structgen's ``response_format: {"type": "grammar", "grammar", "syntax"}`` (and the Responses
  API's ``text.format`` of that shape), read by :mod:`.response_format`.

All of them become :class:`~structgen.formats.Regex` or :class:`~structgen.formats.Grammar`
values compiled through the door:

- :func:`custom_tool_input` maps a custom tool's format (``text`` is free text,
  :class:`~structgen.formats.Text`) and checks it at once, so that a bad regex or grammar is a
  400 naming the tool's field (``tools[0].format.definition``) with the error's message (a
  :class:`~structgen.errors.GrammarSyntaxError` says the line and column);
- :func:`grammar_format` maps vLLM's grammar text (errors in its compile name the field);
- :func:`input_matches` says whether a custom tool's input, read back from the output, is a whole
  match of its format (where the call's end string could also occur inside the input).
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from ..automata.regex import regex_to_dfa
from ..compiler import compile
from ..errors import ConstraintError, StructgenError
from ..formats import Format, Grammar, Regex, Text
from ..guides.base import Guide
from ..vocab.vocabulary import Vocabulary
from .protocol import HTTPProblem

__all__ = ["TOOL_SYNTAXES", "custom_tool_input", "definition_size", "grammar_format", "input_matches"]

#: The syntaxes of a custom tool's grammar: OpenAI's ``lark`` and ``regex``, and structgen's
#: ``gbnf`` / ``ebnf`` (llama.cpp's GBNF, which XGrammar calls EBNF).
TOOL_SYNTAXES = ("lark", "regex", "gbnf", "ebnf")


def custom_tool_input(spec: Mapping[str, Any] | None, *, field: str, max_bytes: int, used: int = 0) -> Format:
    """The format of a custom tool's input: ``spec`` is the tool's ``format`` in the Responses
    API's flat form (``None``: free text). A 400 naming ``field`` for a regex or grammar that
    does not compile, a 413 for a definition that takes the request's custom tools (``used``
    bytes before it) over ``max_bytes``, the server's constraint limit (checked before anything
    compiles). Compiles a grammar (over single bytes): call it off the
    event loop."""
    if spec is None or spec.get("type") == "text":
        return Text()
    syntax, definition = spec.get("syntax"), spec.get("definition")
    if syntax not in TOOL_SYNTAXES or not isinstance(definition, str):
        raise HTTPProblem(400, f"{field}: expected {{\"type\": \"grammar\", \"syntax\": \"lark\" | \"regex\", "
                               "\"definition\": \"...\"}} or {\"type\": \"text\"}", param=field)
    where = f"{field}.definition"
    size = len(definition.encode("utf-8", "surrogatepass"))
    if used + size > max_bytes:
        together = f" (the custom tools' together: {used + size})" if used else ""
        raise HTTPProblem(413, f"{where}: the {syntax} definition is {size} bytes{together}, over this server's "
                               f"limit of {max_bytes}", param=where, code="payload_too_large")
    try:
        if syntax == "regex":
            _dfa(definition)  # (a regex the server cannot enforce is refused here, naming the tool)
            return Regex(definition)
        grammar = Grammar(definition, syntax=syntax)
        _byte_guide(grammar)  # (likewise a grammar: its automata are cached for the real compile)
        return grammar
    except (ConstraintError, StructgenError) as e:
        raise HTTPProblem(400, f"{where}: {e}", param=where) from e


def definition_size(fmt: Format) -> int:
    """The bytes of a custom tool's regex or grammar (0 for free text): what counts against the
    server's constraint limit."""
    text = fmt.pattern if isinstance(fmt, Regex) else fmt.text if isinstance(fmt, Grammar) else ""
    return len(text.encode("utf-8", "surrogatepass"))


def grammar_format(definition: Any, *, field: str) -> Format:
    """vLLM's ``grammar`` constraint (``structured_outputs.grammar``, ``guided_grammar``): a
    :class:`~structgen.formats.Grammar` whose syntax is detected as vLLM does (GBNF when a line
    holds ``::=``, else Lark)."""
    if not isinstance(definition, str) or not definition.strip():
        raise HTTPProblem(400, f"{field}: give the grammar's text (GBNF / EBNF or Lark)", param=field)
    try:
        return Grammar(definition)
    except (ConstraintError, StructgenError) as e:  # pragma: no cover - the text is a str, the syntax detected
        raise HTTPProblem(400, f"{field}: {e}", param=field) from e


def input_matches(fmt: Format, text: str) -> bool:
    """Whether ``text`` is a whole input under ``fmt`` (free text: any)."""
    if isinstance(fmt, Regex):
        return bool(_dfa(fmt.pattern).accepts(text.encode("utf-8")))
    if isinstance(fmt, Grammar):
        guide = _byte_guide(fmt)
        state = guide.advance(guide.initial_state, text.encode("utf-8"))
        return state >= 0 and guide.is_final(state)
    return True


@functools.lru_cache(maxsize=256)
def _dfa(pattern: str) -> Any:
    return regex_to_dfa(pattern)


@functools.lru_cache(maxsize=1)
def _bytes() -> Vocabulary:
    """The 256 single bytes (token ``b`` is byte ``b``) and an EOS."""
    return Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])


def _byte_guide(fmt: Grammar) -> Guide:
    """``fmt`` over single bytes (the door caches it): a recognizer of its strings."""
    return compile(fmt, _bytes())
