"""A composed format (:mod:`.formats`) as ONE network of automata, and its guide.

Everything is an expression of one :class:`~structgen.automata.expr.ExprPool`: literals and regexes
are built in it directly; a JSON Schema is compiled by the JSON Schema front end and its
automata copied in (a schema that calls automata of its own keeps them as automata of the
composed network, their calls renumbered); spans of documents are embedded automata.

Free text is an *automaton of its own* that the root calls: "text up to the first ``end``" is
``both(Σ*·end, negate(Σ*·end·Σ⁺))`` (ends with ``end``, and no earlier occurrence of it ends
before), "text without the strings X" is ``negate(Σ*·X·Σ*)``, minus the empty string (a called
automaton accepts only non-empty strings; the root makes it optional). Intersections and
complements are thereby symbol-free terms whose liveness the pool decides exactly (a witness
search over bytes), and the root, which calls everything, holds no algebra. A token whose bytes
end the text and start what follows is walked across the return like any other token.

Example:
    >>> import structgen
    >>> from structgen.compose.formats import Regex, Tag, Text, Sequence
    >>> vocab = structgen.Vocabulary.from_bytes([b"<t>", b"</t>", b"a", b"1", b"</t>1", b""], eos_token_ids=[5])
    >>> guide = compile_composed(Sequence(Tag("<t>", Text(), "</t>"), Regex("[0-9]")), vocab)
    >>> s = guide.advance(guide.initial_state, [0, 2, 2])
    >>> guide.allowed_token_ids(s).tolist()      # more text, the end tag, or the end tag and the digit
    [0, 1, 2, 3, 4]
    >>> guide.is_final(guide.next_state(s, 4))
    True
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

from ..automata.dfa import DEFAULT_MAX_STATES, ByteDFA
from ..automata.expr_rewrite import copy_term
from ..automata.expr import ALL_BYTES, NOTHING, ExprPool
from ..automata.network import Network
from ..automata.regex import regex_to_expr
from ..automata.spans import extract_dfa, normalize_documents
from ..errors import ConstraintError, SchemaError, SchemaNotSupported, UnsatisfiableConstraint, VocabularyError
from ..guides.base import Guide
from ..guides.pushdown import PushdownGuide
from ..vocab.vocabulary import Vocabulary
from .formats import Choice, Extract, Format, JsonSchema, Literal, Regex, Repeat, Sequence, Tag, Text, Triggered

__all__ = ["build_network", "clear_composed_cache", "compile_composed"]

class _Builder:
    """Builds the root expression and the called automata of one composed network."""

    def __init__(self, max_states: int) -> None:
        self.pool = ExprPool()
        self.max_states = max_states
        self.exprs: list[int] = [NOTHING]  # automaton 0 (the root) is set last
        self.required: dict[int, int] = {}
        self.unique_items: dict[int, tuple[int, ...]] = {}
        self._callees: dict[Hashable, int] = {}
        self.anything = self.pool.anything

    def call(self, key: Hashable, make: Callable[[], int]) -> int:
        """A call of the automaton ``make()`` builds (one automaton per ``key``)."""
        k = self._callees.get(key)
        if k is None:
            e = make()
            if e == NOTHING or not self.pool.is_live(e):
                raise UnsatisfiableConstraint(f"no text matches {key!r}")
            k = self._callees[key] = len(self.exprs)
            self.exprs.append(e)
        return self.pool.symbol(k)

    # -- free text --------------------------------------------------------------------------------

    def _contains(self, strings: tuple[str, ...]) -> int:
        pool = self.pool
        any_of = pool.alt([pool.literal(s.encode("utf-8")) for s in strings])
        return pool.concat([self.anything, any_of, self.anything])

    def text(self, exclude: tuple[str, ...]) -> int:
        """Any text without the strings of ``exclude`` (possibly empty), inline."""
        if not exclude:
            return self.anything
        return self.pool.negate(self._contains(exclude))

    def text_up_to(self, ends: tuple[str, ...], last: str, exclude: tuple[str, ...] = ()) -> int:
        """Text whose first occurrence of any of ``ends`` is ``last``, at its very end (and
        without ``exclude`` before it), as one call."""
        pool = self.pool

        def make() -> int:
            any_end = pool.alt([pool.literal(s.encode("utf-8")) for s in ends])
            ends_here = pool.seq(self.anything, pool.literal(last.encode("utf-8")))
            earlier = pool.concat([self.anything, any_end, pool.repeat(pool.bytes_of(ALL_BYTES), 1, None)])
            parts = [ends_here, pool.negate(earlier)]
            if exclude:
                parts.append(pool.seq(pool.negate(self._contains(exclude)), pool.literal(last.encode("utf-8"))))
            return pool.both(parts)

        return self.call(("up-to", ends, last, exclude), make)

    # -- the formats -------------------------------------------------------------------------------

    def build(self, fmt: Format) -> int:
        pool = self.pool
        if isinstance(fmt, Literal):
            return pool.literal(fmt.text.encode("utf-8"))
        if isinstance(fmt, Text):
            return self.text(fmt.exclude)
        if isinstance(fmt, Regex):
            return regex_to_expr(fmt.pattern, pool, max_states=self.max_states)
        if isinstance(fmt, JsonSchema):  # (a call: a witness search passes it in one step)
            return self.call(fmt.key(), lambda: self.schema(fmt))
        if isinstance(fmt, Extract):
            docs = normalize_documents(fmt.document, name="document")
            dfa = extract_dfa(docs, min_length=fmt.min_length, max_length=fmt.max_length, pattern=fmt.pattern,
                              max_states=self.max_states)
            return pool.embed(dfa)
        if isinstance(fmt, Sequence):
            return pool.concat([self.build(p) for p in fmt.parts])
        if isinstance(fmt, Choice):
            return pool.alt([self.build(p) for p in fmt.parts])
        if isinstance(fmt, Repeat):
            return self.repeat(self.build(fmt.part), fmt.min, fmt.max, fmt.separator)
        if isinstance(fmt, Tag):
            return self.tag(fmt)
        if isinstance(fmt, Triggered):
            return self.triggered(fmt)
        raise ConstraintError(f"not a format: {fmt!r}")

    def repeat(self, x: int, lo: int, hi: int | None, separator: str) -> int:
        pool = self.pool
        if not separator:
            return pool.repeat(x, lo, hi)
        more = pool.repeat(pool.seq(pool.literal(separator.encode("utf-8")), x), max(lo - 1, 0),
                           None if hi is None else hi - 1)
        some = pool.seq(x, more)
        return some if lo >= 1 else pool.optional(some)

    def triggered(self, fmt: Triggered) -> int:
        """Tags, each after the text up to its trigger (one call per trigger), then text without
        any trigger."""
        pool = self.pool
        options = []
        for trigger in fmt.triggers:
            rests = [self.tag(t, len(trigger)) for t in fmt.tags if t.begin.startswith(trigger)]
            if rests:
                options.append(pool.seq(self.text_up_to(fmt.triggers, trigger), pool.alt(rests)))
        return pool.seq(pool.repeat(pool.alt(options), fmt.min, fmt.max), self.text(fmt.triggers))

    def tag(self, tag: Tag, skip: int = 0) -> int:
        """``tag`` without the first ``skip`` characters of its begin (a trigger already read)."""
        pool = self.pool
        begin = pool.literal(tag.begin[skip:].encode("utf-8"))
        if isinstance(tag.content, Text):  # (the call reads the text and the end string)
            return pool.seq(begin, self.text_up_to((tag.end,), tag.end, tag.content.exclude))
        return pool.concat([begin, self.build(tag.content), pool.literal(tag.end.encode("utf-8"))])

    # -- JSON Schema -------------------------------------------------------------------------------

    def schema(self, fmt: JsonSchema) -> int:
        compiled = _schema_automata(fmt)
        pool = self.pool
        if isinstance(compiled, ByteDFA):
            return pool.embed(compiled)
        if isinstance(compiled, Network):
            shift = len(self.exprs) - 1  # automaton k > 0 of the schema becomes k + shift here
            memo: dict[int, int] = {}
            root = copy_term(pool, compiled.pool, compiled.exprs[0], shift, memo)
            for k in range(1, len(compiled.exprs)):
                self.exprs.append(copy_term(pool, compiled.pool, compiled.exprs[k], shift, memo))
            for k, bits in compiled.required.items():
                self.required[k + shift] = bits
            for k, items in compiled.unique_items.items():
                self.unique_items[k + shift] = tuple(i + shift for i in items)
            return root
        src, e = compiled
        return copy_term(pool, src, e)


# compiled JSON Schemas (before any vocabulary), by schema text and options
_SCHEMAS: OrderedDict[Hashable, Any] = OrderedDict()
_GUIDES: OrderedDict[Hashable, Guide] = OrderedDict()
_CACHE_SIZE = 64
_LOCK = threading.Lock()


def _cached(cache: OrderedDict[Hashable, Any], key: Hashable, make: Callable[[], Any]) -> Any:
    with _LOCK:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = make()
    with _LOCK:
        cache[key] = value
        while len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
    return value


def _schema_automata(fmt: JsonSchema) -> Any:
    from ..json_schema.api import compile_schema, prepare
    from ..json_schema.loading import warn_annotations
    from ..json_schema.options import SchemaOptions

    options = SchemaOptions(
        whitespace=fmt.whitespace, max_recursion_depth=fmt.max_recursion_depth, key_order=fmt.key_order,
        extra_properties=fmt.extra_properties, dialect=fmt.dialect, formats=dict(fmt.formats or {}),
        unknown_formats=fmt.unknown_formats,
    )
    try:
        root, text = prepare(fmt.schema, options)
        warn_annotations(root, options)
        docs = None if fmt.extract_from is None else normalize_documents(fmt.extract_from)
        return _cached(_SCHEMAS, ("json", text, options.cache_key(), docs),
                       lambda: compile_schema(root, options, docs, network=docs is None, lazy=True))
    except (SchemaError, SchemaNotSupported, UnsatisfiableConstraint) as e:
        if not fmt.name:
            raise
        err = type(e).__new__(type(e))
        err.__dict__.update(e.__dict__)
        err.args = (f"{fmt.name}: {e}",)
        raise err from e


def build_network(fmt: Format, *, max_states: int = DEFAULT_MAX_STATES) -> Network:
    """The network of ``fmt``: automaton 0 (the root) calls the others."""
    if not isinstance(fmt, Format):
        raise TypeError(f"compile_composed needs a format (structgen.compose.Text, Tag, ...), not {type(fmt).__name__}")
    b = _Builder(max_states)
    root = b.build(fmt)
    if root == NOTHING:
        raise UnsatisfiableConstraint(f"no output matches {fmt!r}")
    b.exprs[0] = root
    return Network.from_exprs(b.pool, b.exprs, required=b.required, unique_items=b.unique_items)


def compile_composed(fmt: Format, vocabulary: Vocabulary, *, max_states: int = DEFAULT_MAX_STATES) -> Guide:
    """A guide whose outputs are exactly the strings of ``fmt`` (see :mod:`structgen.compose`).

    Cached by the format's :meth:`~.formats.Format.key` and the vocabulary. Raises what the parts
    raise (:class:`RegexSyntaxError`, :class:`SchemaError` with the JSON pointer and the
    :class:`JsonSchema`'s ``name``, ...) and :class:`UnsatisfiableConstraint` when nothing matches
    or the vocabulary cannot spell any output."""
    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile_composed needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    key = (fmt.key(), max_states, vocabulary.fingerprint, id(vocabulary))

    def make() -> Guide:
        guide = PushdownGuide(build_network(fmt, max_states=max_states), vocabulary,
                              description=f"composed {_describe(fmt)}")
        try:
            guide.token_mask(guide.initial_state)
        except VocabularyError as e:
            raise UnsatisfiableConstraint(
                f"no output of {_describe(fmt)} can be spelt with the tokens of {vocabulary!r}") from e
        return guide

    return _cached(_GUIDES, key, make)  # type: ignore[no-any-return]


def clear_composed_cache() -> None:
    """Forget every cached composed guide and compiled schema."""
    with _LOCK:
        _SCHEMAS.clear()
        _GUIDES.clear()


def _describe(fmt: Format) -> str:
    text = repr(fmt)
    return text if len(text) <= 80 else text[:77] + "..."
