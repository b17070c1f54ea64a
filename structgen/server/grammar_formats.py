"""Grammar-shaped constraints a request can send, as format values: the one place that maps them.

Two ways in name a grammar: an OpenAI custom tool's ``format`` (``{"type": "text"}``, or
``{"type": "grammar", "syntax": "regex" | "lark", "definition": ...}``, on ``/v1/responses``)
and vLLM's ``structured_outputs.grammar`` / ``guided_grammar`` (``/v1/chat/completions``,
``/v1/completions``). Both come here:

- :func:`custom_tool_input` maps a custom tool's format to a :mod:`structgen.formats` value:
  ``text`` is free text (:class:`~structgen.formats.Text`), a ``regex`` grammar is a
  :class:`~structgen.formats.Regex`; a ``lark`` grammar is refused with a 400 that names it;
- :func:`grammar_format` maps vLLM's grammar text: refused with a 400 that names the field;
- :func:`input_matches` says whether a custom tool's input, read back from the output, is a whole
  match of its format (where the call's end string could also occur inside the input).

Lark and GBNF grammars are built on another branch (issue 40); when they land, these functions
return its grammar format instead of refusing, and nothing else in the server changes.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from ..automata.regex import regex_to_dfa
from ..errors import ConstraintError, StructgenError
from ..formats import Format, Regex, Text
from .protocol import HTTPProblem

__all__ = ["custom_tool_input", "grammar_format", "input_matches"]


def _not_yet(field: str, what: str) -> HTTPProblem:
    return HTTPProblem(400, f"{field}: {what} is not supported by this server yet (grammars are coming); "
                            "use a regex grammar (syntax \"regex\"), a JSON Schema or a choice instead",
                       param=field, code="unsupported_parameter")


def custom_tool_input(spec: Mapping[str, Any] | None, *, field: str) -> Format:
    """The format of a custom tool's input: ``spec`` is the tool's ``format`` (``None``: free
    text). A 400 naming ``field`` for a ``lark`` grammar (not yet) or a bad regex."""
    if spec is None or spec.get("type") == "text":
        return Text()
    syntax, definition = spec.get("syntax"), spec.get("definition")
    if syntax == "lark":
        raise _not_yet(f"{field}.syntax", "a Lark grammar (syntax \"lark\")")
    if syntax != "regex" or not isinstance(definition, str):
        raise HTTPProblem(400, f"{field}: expected {{\"type\": \"grammar\", \"syntax\": \"regex\", \"definition\": "
                               "\"...\"}} or {\"type\": \"text\"}", param=field)
    try:
        _dfa(definition)  # (a regex the server cannot enforce is refused here, naming the tool)
    except (ConstraintError, StructgenError) as e:
        raise HTTPProblem(400, f"{field}.definition: {e}", param=f"{field}.definition") from e
    return Regex(definition)


def grammar_format(definition: Any, *, field: str) -> Format:
    """vLLM's ``grammar`` constraint (``structured_outputs.grammar``, ``guided_grammar``): a 400
    naming ``field`` until grammars land."""
    raise _not_yet(field, "a grammar constraint (Lark / GBNF / EBNF)")


def input_matches(fmt: Format, text: str) -> bool:
    """Whether ``text`` is a whole input under ``fmt`` (free text: any)."""
    if isinstance(fmt, Regex):
        return bool(_dfa(fmt.pattern).accepts(text.encode("utf-8")))
    return True


@functools.lru_cache(maxsize=256)
def _dfa(pattern: str) -> Any:
    return regex_to_dfa(pattern)
