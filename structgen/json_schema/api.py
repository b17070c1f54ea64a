"""The JSON Schema front end's entry points: :func:`schema_to_regex`, :func:`schema_to_dfa`,
:func:`schema_to_network`, and for :mod:`structgen.compiler` the two steps they are made of:
:func:`prepare` (load, check and rewrite into 2020-12, once) and :func:`compile_schema`.

Older drafts (draft-04, -06, -07, 2019-09, by ``$schema`` or ``dialect=``) are first rewritten
into 2020-12 by :mod:`.dialects`. The keywords covered, and the departures from the
specification: ``docs/json_schema.md``.

>>> options = SchemaOptions(whitespace="")
>>> root = prepare({"type": "array", "items": {"type": "boolean"}, "maxItems": 2}, options)
>>> dfa = compile_schema(root, options)
>>> dfa.accepts(b"[true,false]"), dfa.accepts(b"[true,false,true]")
(True, False)
>>> pool, term = compile_schema(root, options, network=True, lazy=True)
>>> lazy_to_dfa(pool, term).accepts(b"[false]"), len(to_regex(pool, term))
(True, 43)
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from ..automata.dfa import ByteDFA
from ..automata.expr import ExprPool
from ..automata.expr_dfa import lazy_to_dfa
from ..automata.expr_text import NotARegex, to_regex
from ..automata.network import Network
from ..automata.spans import normalize_documents
from ..errors import CompileBudgetExceeded, SchemaNotSupported
from .context import MAX_REGEX_SIZE
from .dispatch import SchemaCompiler
from .loading import load_2020_12, warn_annotations
from .ops import Schema
from .options import SchemaOptions
from .spans import SpanStrings

__all__ = ["compile_schema", "prepare", "schema_to_dfa", "schema_to_network", "schema_to_regex"]

#: What a schema may be given as: a dict or bool, a JSON string, or a pydantic model class.
SchemaInput = Union[dict[str, Any], bool, str, type]


def prepare(schema: SchemaInput, options: SchemaOptions) -> Schema:
    """``schema`` loaded, checked against its metaschema and rewritten into 2020-12: the root
    :func:`compile_schema` reads. (A compile's cache key is the schema as given, in canonical
    JSON text: :meth:`structgen.formats.JsonSchema.key`.)

    Raises :class:`SchemaError` for an invalid schema (see :func:`.loading.load_schema`)."""
    return load_2020_12(schema, options.dialect)


def compile_schema(
    root: Schema, options: SchemaOptions, documents: Optional[tuple[str, ...]] = None, *, network: bool = False,
    lazy: bool = False,
) -> Union[ByteDFA, Network, tuple[ExprPool, int]]:
    """The automaton of a prepared (2020-12) schema: one :class:`ByteDFA`, or with ``network=True``
    (and no ``documents``) a :class:`Network` of expressions when some part is called. With
    ``lazy=True`` a schema that calls nothing is an expression ``(pool, term)`` whose automaton
    is built lazily (:mod:`structgen.automata.lazy`) instead of one eager :class:`ByteDFA`. With
    ``documents`` (normalized ``extract_from``), string values are spans of them (one
    :class:`ByteDFA`). Warns of nothing: the caller does (:func:`.loading.warn_annotations`)."""
    spans = None if documents is None else SpanStrings(documents, root, max_states=options.max_states)
    compiler = SchemaCompiler(root, options, spans, network=network)
    term = compiler.run()
    compiler.release()
    ctx = compiler.ctx
    if ctx.calls.callees:
        callees = [c for c in ctx.calls.callees if c is not None]
        assert len(callees) == len(ctx.calls.callees)
        return Network.from_exprs(ctx.pool, [term, *callees], required=ctx.calls.required,
                                  unique_items=ctx.calls.unique_items)
    if spans is None:
        return (ctx.pool, term) if lazy else ctx.to_dfa(term, "", minimal=True)
    # span strings are placeholders until here (see structgen.json_schema.spans)
    try:
        dfa = lazy_to_dfa(ctx.pool, term, max_states=options.max_states)
    except CompileBudgetExceeded as e:
        raise CompileBudgetExceeded(e.what, e.limit, e.path or "/") from None
    spliced = spans.splice(dfa)
    return spliced if spliced is not None else ctx.to_dfa(term, "", minimal=True)


def schema_to_regex(schema: SchemaInput, **options: Any) -> str:
    """The regex (full-match, interegular-compatible) of the serialised instances of ``schema``:
    the expression :func:`schema_to_dfa` builds, printed (:func:`structgen.automata.expr_text.to_regex`).

    Between two JSON tokens (after ``{ [ , :`` and before ``} ] , :``) it allows one match of
    ``whitespace``, so both ``json.dumps(x)`` and ``json.dumps(x, separators=(",", ":"))``
    (``ensure_ascii=False``) of an instance we cover match.

    Parameters
    ----------
    schema:
        A JSON Schema (draft 2020-12) as a dict or bool, a JSON string, or a pydantic model class.
    options:
        Those of :class:`SchemaOptions` (``whitespace``, ``max_recursion_depth``: how many times
        a ``$ref`` may re-enter a schema it is already inside, so a recursive schema yields at
        most ``max_recursion_depth + 1`` nested copies of itself; ``dialect``, ``formats``,
        ``unknown_formats``, ...).

    Raises
    ------
    SchemaError
        Not JSON, or not a valid JSON Schema.
    SchemaNotSupported
        A keyword that structgen cannot enforce exactly (see ``docs/json_schema.md``).
    UnsatisfiableConstraint
        No instance is valid (``false``, ``minItems`` > ``maxItems``, ...).
    CompileBudgetExceeded
        The schema needs deeper recursion, or the regex would exceed ``MAX_REGEX_SIZE``.

    >>> schema_to_regex({"enum": ["a", "b"]})
    '(?:"a"|"b")'
    """
    opts = SchemaOptions(**options)
    root = load_2020_12(schema, opts.dialect)
    compiler = SchemaCompiler(root, opts)
    term = compiler.run()
    warn_annotations(root, opts)
    try:
        return to_regex(compiler.ctx.pool, term, max_length=MAX_REGEX_SIZE)
    except NotARegex as e:
        if e.too_long:
            raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE, "/") from None
        raise SchemaNotSupported("", "/", "this schema compiles to automaton algebra, not one regex: use schema_to_dfa") from None


def schema_to_dfa(schema: SchemaInput, *, extract_from: Union[str, Sequence[str], None] = None,
                  **options: Any) -> ByteDFA:
    """The byte automaton of the serialised instances of ``schema`` (``options`` are those of
    :class:`SchemaOptions`); ``max_states`` bounds every automaton built on the way, and a blown
    budget names the JSON pointer of the schema whose automaton grew too big. With
    ``extract_from`` (documents), string values are spans of them (:mod:`.spans`).

    ``key_order="schema"`` (default) writes declared properties in schema order; ``"any"`` lets
    the output choose the order of an object's keys when it has at most five declared ones (the
    automaton tracks which were written: 2**n states). ``extra_properties=True`` also lets it add
    keys that ``additionalProperties`` / ``patternProperties`` allow beside declared properties
    (by default none are written where properties are declared). Unlike :func:`schema_to_regex`,
    this covers the keywords compiled by automaton algebra (``not``, ``if``, overlapping
    ``oneOf``, ``contains`` counts, ``multipleOf``, ...).

    >>> dfa = schema_to_dfa({"type": "integer", "minimum": 10})
    >>> dfa.accepts(b"12"), dfa.accepts(b"9")
    (True, False)
    """
    opts = SchemaOptions(**options)
    root = load_2020_12(schema, opts.dialect)
    documents = None if extract_from is None else normalize_documents(extract_from)
    dfa = compile_schema(root, opts, documents)
    warn_annotations(root, opts)
    assert isinstance(dfa, ByteDFA)
    return dfa


def schema_to_network(schema: SchemaInput, **options: Any) -> Union[ByteDFA, Network]:
    """The automata of ``schema`` as a :class:`~structgen.automata.network.Network` (a ``$ref`` that
    recurses, a large sub-schema used more than once, ``{}`` values and ``key_order="any"``
    objects become automata that their users call), or one :class:`ByteDFA` when nothing is
    called. Parameters as :func:`schema_to_dfa`; ``max_recursion_depth`` only bounds recursion
    inside the automata algebra (``not``, ``if``, overlapping ``oneOf``, intersections), which
    needs finite automata.

    >>> net = schema_to_network({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"})
    >>> len(net), sorted(net.callees(0))
    (2, [1])
    """
    opts = SchemaOptions(**options)
    root = load_2020_12(schema, opts.dialect)
    compiled = compile_schema(root, opts, network=True)
    warn_annotations(root, opts)
    assert not isinstance(compiled, tuple)  # (an expression only with lazy=True)
    return compiled
