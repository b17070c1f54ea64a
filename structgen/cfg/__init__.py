"""Context-free grammars (Lark, GBNF / EBNF) as networks of automata that call one another.

The front end reads a grammar's text (:mod:`.gbnf`, :mod:`.lark`) into rules whose leaves are terms
of one :class:`~structgen.automata.expr.ExprPool` (:mod:`.grammar`), makes each rule's term
(:mod:`.build`), removes left and right recursion and inlines what is not recursive
(:mod:`.shape`), and returns the :class:`~structgen.automata.network.Network` a
:class:`~structgen.guides.pushdown.PushdownGuide` runs. The language is the grammar's, exactly:
see ``docs/grammars.md`` for the syntax, the semantics and where they depart from the peers.

- :func:`grammar_network`: text -> network (no vocabulary); :func:`structgen.compile` calls it
  for a :class:`~structgen.formats.Grammar` format (``structgen.compile_grammar`` is its wrapper);
- :func:`compile_grammar`: text -> guide over a vocabulary, without the door's cache (for tests
  of the front end alone);
- :func:`detect_syntax`: ``"gbnf"`` when a line holds ``::=`` (as vLLM decides), else ``"lark"``.

Example:
    >>> import structgen
    >>> vocab = structgen.Vocabulary.from_bytes([b"(", b")", b"1", b"+", b""], eos_token_ids=[4])
    >>> guide = compile_grammar('root ::= expr\\nexpr ::= expr "+" term | term\\nterm ::= "1" | "(" expr ")"', vocab)
    >>> s = guide.advance(guide.initial_state, [0, 2, 3, 2, 1, 3])     # (1+1)+
    >>> guide.allowed_token_ids(s).tolist(), guide.is_final(guide.next_state(s, 2))
    ([0, 2], True)
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from ..automata.dfa import DEFAULT_MAX_STATES
from ..automata.expr import ExprPool
from ..automata.network import Network
from ..errors import UnsatisfiableConstraint, VocabularyError
from ..guides.pushdown import DEFAULT_MAX_DEPTH, PushdownGuide
from ..json_schema.options import SchemaOptions
from ..vocab.vocabulary import Vocabulary
from .build import GrammarTerms
from .gbnf import parse_gbnf
from .grammar import Grammar
from .shape import DEFAULT_MAX_TERMS, shape_network

__all__ = ["SYNTAXES", "compile_grammar", "detect_syntax", "grammar_network", "parse_grammar"]

#: The grammar syntaxes read here.
SYNTAXES = ("gbnf", "lark")
_COMMENT = re.compile(r"(#|//).*$")


def detect_syntax(text: str) -> str:
    """``"gbnf"`` when a line (its ``#`` or ``//`` comment left out) holds ``::=``, else ``"lark"``:
    the rule vLLM applies to ``structured_outputs.grammar``.

    >>> detect_syntax('root ::= "a"'), detect_syntax('start: "a"')
    ('gbnf', 'lark')
    """
    if not isinstance(text, str):
        raise TypeError(f"a grammar is a str, not {type(text).__name__}")
    for line in text.splitlines():
        if "::=" in _COMMENT.sub("", line):
            return "gbnf"
    return "lark"


def parse_grammar(
    text: str, pool: ExprPool, *, syntax: Optional[str] = None, start: Optional[str] = None,
    max_states: int = DEFAULT_MAX_STATES,
) -> Grammar:
    """The :class:`~.grammar.Grammar` of ``text`` in ``syntax`` (``None``: :func:`detect_syntax`),
    its leaves built in ``pool``; ``start``: the start rule (``root`` for GBNF, ``start`` for Lark)."""
    if not isinstance(text, str):
        raise TypeError(f"a grammar is a str, not {type(text).__name__}")
    syntax = detect_syntax(text) if syntax is None else syntax
    if syntax in ("gbnf", "ebnf"):
        return parse_gbnf(text, pool, start=start or "root")
    if syntax == "lark":
        from .lark import parse_lark

        return parse_lark(text, pool, start=start or "start", max_states=max_states)
    raise ValueError(f"syntax must be one of {', '.join(SYNTAXES)} (or None to detect it), not {syntax!r}")


def grammar_network(
    text: str, *, syntax: Optional[str] = None, start: Optional[str] = None, max_states: int = DEFAULT_MAX_STATES,
    max_terms: int = DEFAULT_MAX_TERMS, schema_options: Optional[SchemaOptions] = None,
    compile_schema: Optional[Callable[[Any, SchemaOptions], Any]] = None,
) -> Network:
    """The network of automata whose language is exactly the language of the grammar ``text``.

    Parameters
    ----------
    text:
        A GBNF / EBNF grammar (llama.cpp, XGrammar) or a Lark grammar (Lark, llguidance).
    syntax:
        ``"gbnf"`` (``"ebnf"`` is the same) or ``"lark"``; ``None`` detects it (:func:`detect_syntax`).
    start:
        The start rule (default ``root`` for GBNF, ``start`` for Lark).
    max_states:
        The state budget of each automaton built eagerly (a Lark terminal with look-arounds).
    max_terms:
        The most terms removing recursion may build (:mod:`.shape`).
    schema_options:
        How Lark's ``%json {...}`` schemas are compiled (:class:`SchemaOptions`; default: its defaults).
    compile_schema:
        ``(schema, options) -> automata`` for ``%json`` (the door passes its cached JSON Schema
        front end, so warnings and the cache are the door's); default: compiled here.

    Raises
    ------
    GrammarSyntaxError
        Not a grammar in its syntax (with ``.line``, ``.column``, ``.rule``), a rule used but not defined.
    GrammarNotSupported
        A construct structgen cannot enforce exactly (``%declare``, token references, ...).
    RegexSyntaxError, RegexNotSupported, SchemaError, SchemaNotSupported
        From a Lark terminal's regex or a ``%json`` schema.
    UnsatisfiableConstraint
        The start rule derives no string.
    CompileBudgetExceeded
        Over ``max_terms`` (naming the rule), ``max_states``, or too many automata.
    """
    pool = ExprPool()
    grammar = parse_grammar(text, pool, syntax=syntax, start=start, max_states=max_states)
    options = schema_options if schema_options is not None else SchemaOptions(max_states=max_states)
    schema_automata = compile_schema if compile_schema is not None else _compile_json
    terms = GrammarTerms(grammar, lambda schema: schema_automata(schema, options))
    return shape_network(terms, max_terms=max_terms)


def _compile_json(schema: Any, options: SchemaOptions) -> Any:
    from ..json_schema.api import compile_schema, prepare
    from ..json_schema.loading import warn_annotations

    root = prepare(schema, options)
    warn_annotations(root, options)
    return compile_schema(root, options, network=True, lazy=True)


def compile_grammar(
    text: str, vocabulary: Vocabulary, *, syntax: Optional[str] = None, start: Optional[str] = None,
    max_depth: int = DEFAULT_MAX_DEPTH, max_states: int = DEFAULT_MAX_STATES, max_terms: int = DEFAULT_MAX_TERMS,
    schema_options: Optional[SchemaOptions] = None,
) -> PushdownGuide:
    """A guide whose outputs are exactly the strings of the grammar ``text`` (see
    :func:`grammar_network` for the parameters and errors), nesting at most ``max_depth``
    called rules deep. Raises :class:`UnsatisfiableConstraint` when no output can be spelt
    with the vocabulary's tokens."""
    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile_grammar needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    syntax = detect_syntax(text) if syntax is None else syntax
    network = grammar_network(text, syntax=syntax, start=start, max_states=max_states, max_terms=max_terms,
                              schema_options=schema_options)
    guide = PushdownGuide(network, vocabulary, description=f"{syntax} grammar", max_depth=max_depth)
    try:
        guide.token_mask(guide.initial_state)
    except VocabularyError as e:
        raise UnsatisfiableConstraint(f"no output of the grammar can be spelt with the tokens of {vocabulary!r}") from e
    return guide
