"""The door: every constraint is a format value (:mod:`structgen.formats`), and :func:`compile`
turns one into a :class:`Guide` over a vocabulary, the one way in for every integration (the
public ``compile_*`` functions, the ``generate_*`` helpers, the server, the vLLM plugin).

Compiling has two halves, each cached in a bounded LRU keyed by the format's
:meth:`~structgen.formats.Format.key`:

1. the format → automata, independent of the tokenizer (:data:`Automata`): the regex, JSON Schema,
   grammar (:mod:`structgen.cfg`) and spans front ends, and
   :func:`structgen.compose.build.build_network` for composed formats, whose JSON Schema and
   grammar regions (and a grammar's ``%json`` schemas) go through this same cache (a schema compiles once, alone or as a
   region, and a composed format with no region of its own is the same guide as its leaf);
2. the automata → a guide, in one cache per vocabulary (it dies with the vocabulary), and the
   checks after compile: an empty language, or bytes no token spells, is an
   :class:`UnsatisfiableConstraint` here, never a dead end at the first step.

Concurrent compiles of one format share one run (the second waits for the first); a failed
compile is not kept. The warnings a schema gives (:class:`AnnotationWarning`) are given on every
call, cached or not, attributed to the caller outside structgen.

Example:
    >>> import structgen
    >>> from structgen.formats import Regex
    >>> vocab = structgen.Vocabulary.from_bytes([b"ye", b"s", b"no", None], eos_token_ids=[3])
    >>> guide = compile(Regex("yes|no"), vocab)
    >>> guide is compile(Regex("yes|no"), vocab), guide.allowed_token_ids(guide.initial_state).tolist()
    (True, [0, 2])
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import time
import warnings
import weakref
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, Iterator, TypeVar

import numpy as np

from .automata.dfa import DEFAULT_MAX_STATES, ByteDFA
from .automata.expr import NOTHING, ExprPool
from .automata.lazy import LazyAutomaton
from .automata.network import Network
from .automata.regex import regex_to_expr
from .automata.regex_emptiness import why_no_match
from .automata.spans import Documents, extract_dfa
from .compose.build import Automata, build_network
from .errors import ConstraintError, UnsatisfiableConstraint, VocabularyError
from .formats import DEFAULT_WHITESPACE, Extract, Format, Grammar, JsonSchema, Regex, SchemaOptions
from .guides.base import Guide
from .guides.dfa_guide import DfaGuide
from .guides.pushdown import PushdownGuide
from .vocab.vocabulary import Vocabulary

__all__ = [
    "DEFAULT_WHITESPACE", "clear_cache", "compile", "compile_composed", "compile_extract", "compile_grammar",
    "compile_json_schema", "compile_regex", "set_cache_limits", "warm_up",
]

_CACHE_SIZE = 128
_CACHE_BYTES = 2 * 2**30
#: Flat guides with at most this many states get every mask computed by ``compile(..., warm=True)``.
PRECOMPUTE_STATES = 64

V = TypeVar("V")


class _Cache(Generic[V]):
    """A bounded LRU whose values are made once: concurrent callers of one key wait for the one
    run of ``make`` (a failed run is forgotten, so the next call tries again).

    With ``measure`` (a value's bytes) it is also bounded in bytes: each insert counts the new
    value's bytes beside the others' as last measured, measures again the few measured longest
    ago (enough that each value is measured again within :attr:`REMEASURE` inserts: guides grow
    as they cache masks, and measuring walks their caches, so all of them at once would land in
    one compile), and drops the least recently used while the total is over the bound."""

    REMEASURE = 32

    def __init__(self, size: int, max_bytes: int | None = None, measure: Callable[[V], int] | None = None) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._measure = measure
        self._data: OrderedDict[Hashable, Future[V]] = OrderedDict()
        self._bytes: dict[Hashable, int] = {}  # (by when measured: the oldest first)
        self._total = 0  # (the sum of _bytes)
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> tuple[V, bool]:
        """The value of ``key`` and whether it was made by this call."""
        with self._lock:
            found = self._data.get(key)
            if found is not None:
                self._data.move_to_end(key)
            else:
                future: Future[V] = Future()
                self._data[key] = future
                while len(self._data) > self.size:
                    self._forget_oldest()
        if found is not None:
            return found.result(), False
        try:
            value = make()  # outside the lock: compiles may be slow and run concurrently
        except BaseException as e:
            with self._lock:
                if self._data.get(key) is future:
                    del self._data[key]
            future.set_exception(e)
            raise
        future.set_result(value)
        if self._measure is not None and self.max_bytes is not None:
            with self._lock:
                if self._data.get(key) is future:
                    self._note(key, self._measure(value))
                    self._remeasure(self.max_bytes)
        return value, True

    def _forget_oldest(self) -> None:
        key, _ = self._data.popitem(last=False)
        self._total -= self._bytes.pop(key, 0)

    def _note(self, key: Hashable, size: int) -> None:
        """``key``'s value measured at ``size`` bytes now (the most recently measured)."""
        self._total += size - self._bytes.pop(key, 0)
        self._bytes[key] = size

    def _remeasure(self, max_bytes: int) -> None:
        """Measure again the values measured longest ago (one in :attr:`REMEASURE` of them, the
        newest left out), then drop the least recently used while over ``max_bytes``."""
        assert self._measure is not None
        for _ in range(min(-(-len(self._bytes) // self.REMEASURE), len(self._bytes) - 1)):
            key = next(iter(self._bytes))
            found = self._data[key]  # (a key leaves _bytes when it leaves _data; only made values enter)
            self._note(key, self._measure(found.result()))
        while self._total > max_bytes and len(self._data) > 1:
            self._forget_oldest()

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            future = self._data.get(key)
            return future is not None and future.done() and future.exception() is None

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes.clear()
            self._total = 0


@dataclass(frozen=True)
class _Compiled:
    """A format's automata (before any vocabulary) and the warnings its compile gives."""

    automata: Automata
    warnings: tuple[Warning, ...] = ()
    why_empty: Callable[[], str] | None = None


def _guide_bytes(entry: tuple[Guide, tuple[Warning, ...]]) -> int:
    return entry[0].memory_bytes


_AUTOMATA: _Cache[_Compiled] = _Cache(_CACHE_SIZE)
#: The vocabularies that hold a cache of guides. Each keeps its own (``Vocabulary._guide_cache``):
#: its guides hold it, so a cache keyed by it here would keep it, and them, for good.
_GUIDES: weakref.WeakSet[Vocabulary] = weakref.WeakSet()
_GUIDES_LOCK = threading.Lock()
_LIMITS = {"entries": _CACHE_SIZE, "guide_bytes": _CACHE_BYTES}


def _guides_of(vocabulary: Vocabulary) -> _Cache[tuple[Guide, tuple[Warning, ...]]]:
    with _GUIDES_LOCK:
        cache: _Cache[tuple[Guide, tuple[Warning, ...]]] | None = vocabulary._guide_cache
        if cache is None:
            cache = _Cache(_LIMITS["entries"], _LIMITS["guide_bytes"], _guide_bytes)
            object.__setattr__(vocabulary, "_guide_cache", cache)  # (a frozen dataclass)
            _GUIDES.add(vocabulary)
        return cache


def set_cache_limits(*, entries: int = _CACHE_SIZE, guide_bytes: int = _CACHE_BYTES) -> None:
    """Bound the compile caches: at most ``entries`` compiled formats and, per vocabulary, as
    many guides whose :attr:`Guide.memory_bytes` add up to at most ``guide_bytes`` (default 128
    and 2 GiB; the least recently used go first). A guide in use elsewhere stays alive; the cache
    just forgets it.

    Example:
        >>> set_cache_limits(entries=32, guide_bytes=512 * 2**20)
        >>> set_cache_limits()  # the defaults again
    """
    if entries < 1 or guide_bytes < 1:
        raise ValueError(f"cache limits must be positive, got entries={entries}, guide_bytes={guide_bytes}")
    _LIMITS.update(entries=entries, guide_bytes=guide_bytes)
    _AUTOMATA.size = entries
    with _GUIDES_LOCK:
        for vocabulary in list(_GUIDES):
            vocabulary._guide_cache.size, vocabulary._guide_cache.max_bytes = entries, guide_bytes


def clear_cache() -> None:
    """Forget every compiled format and guide."""
    _AUTOMATA.clear()
    with _GUIDES_LOCK:
        for vocabulary in list(_GUIDES):
            vocabulary._guide_cache.clear()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while compiling: a compile allocates many small
    objects, which trigger full collections that scan every object in the process (torch and
    transformers hold millions): up to a third of a compile's time. Reference counting still
    frees what a compile drops; the collector is restored (if it was on) afterwards."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


# -- the door -------------------------------------------------------------------------------------------


def compile(fmt: Format, vocabulary: Vocabulary, *, warm: bool = False) -> Guide:
    """The guide of ``fmt`` (any :mod:`structgen.formats` value) over ``vocabulary``: the one
    compile every way into structgen goes through.

    Cached (see the module docstring): the same format over the same vocabulary is the same
    guide. ``warm=True`` also computes what the first step needs (the initial state's mask;
    every mask of a flat guide of at most :data:`PRECOMPUTE_STATES` states), as servers do in
    their compile threads.

    Raises what the format's front end raises (:class:`RegexSyntaxError`, :class:`SchemaError`
    with its JSON pointer, ... with ``region`` set for a named region of a composed format),
    :class:`CompileBudgetExceeded`, and :class:`UnsatisfiableConstraint` when no output matches
    or the vocabulary cannot spell any.

    Example:
        >>> guide = compile(JsonSchema({"type": "integer"}, whitespace=""), vocab)   # doctest: +SKIP
    """
    if not isinstance(fmt, Format):
        raise TypeError(f"compile needs a format (structgen.formats.Regex, JsonSchema, ...), not {type(fmt).__name__}")
    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    with _collector_paused():
        (guide, given), _ = _guides_of(vocabulary).get_or_make(fmt.key(), lambda: _make_guide(fmt, vocabulary))
        if warm:
            _warm(guide)
        _give(given)
    return guide


def is_cached(fmt: Format, vocabulary: Vocabulary) -> bool:
    """Whether :func:`compile` has the guide of ``fmt`` over ``vocabulary`` ready (a lookup)."""
    with _GUIDES_LOCK:
        cache = vocabulary._guide_cache
    return cache is not None and fmt.key() in cache


def _make_guide(fmt: Format, vocabulary: Vocabulary) -> tuple[Guide, tuple[Warning, ...]]:
    compiled = _automata(fmt)
    description = fmt.describe()
    automata = compiled.automata
    if isinstance(automata, Network) and len(automata) == 1:  # (a composed format that calls nothing)
        automata = (automata.pool, automata.exprs[0])
    if isinstance(automata, Network):
        guide: Guide = PushdownGuide(automata, vocabulary, description=description)
        if automata.is_empty:
            raise UnsatisfiableConstraint(f"no output matches {description}")
        try:  # (the first mask, made where a batch's fill finds it: natively kept where the guide can)
            if guide._packed(guide.initial_state) is None:
                guide.token_mask(guide.initial_state)
        except VocabularyError as e:
            raise UnsatisfiableConstraint(f"no output of {description} can be spelt with the tokens of {vocabulary!r}") from e
        return guide, compiled.warnings
    if isinstance(automata, ByteDFA):
        pool = ExprPool()
        root = pool.embed(automata)
    else:
        pool, root = automata
    why = compiled.why_empty
    if root == NOTHING:
        raise UnsatisfiableConstraint(f"no string matches {description}" + (f": {why()}" if why else ""))
    flat = DfaGuide(LazyAutomaton(pool, root), vocabulary, description=description)
    if flat.is_empty:
        missing = vocabulary.missing_bytes
        if not missing:
            raise UnsatisfiableConstraint(f"no string matches {description}" + (f": {why()}" if why else ""))
        raise UnsatisfiableConstraint(
            f"{description} needs bytes that no token of {vocabulary!r} contains "
            f"({', '.join(hex(b) for b in sorted(missing)[:8])}...)"
        )
    return flat, compiled.warnings


def _warm(guide: Guide) -> None:
    if isinstance(guide, DfaGuide) and guide.num_states <= PRECOMPUTE_STATES:
        guide.precompute()
    else:
        guide.token_mask(guide.initial_state)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _give(given: tuple[Warning, ...]) -> None:
    """Give the warnings of a compile, attributed to the first caller outside structgen."""
    if not given:
        return
    level, frame = 1, sys._getframe(0)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    for warning in given:
        warnings.warn(warning, stacklevel=level)


# -- the front ends: a format -> automata, cached -------------------------------------------------------


def _automata(fmt: Format) -> _Compiled:
    compiled, _ = _AUTOMATA.get_or_make(fmt.key(), lambda: _front_end(fmt))
    return compiled


def _front_end(fmt: Format) -> _Compiled:
    if isinstance(fmt, Regex):
        pool = ExprPool()
        expr = regex_to_expr(fmt.pattern, pool, max_states=fmt.max_states)
        return _Compiled((pool, expr), why_empty=lambda: why_no_match(fmt.pattern, max_states=fmt.max_states))
    if isinstance(fmt, JsonSchema):
        try:
            return _json_schema(fmt)
        except ConstraintError as e:
            if fmt.name:
                raise e.in_region(fmt.name) from e
            raise
    if isinstance(fmt, Extract):
        dfa = extract_dfa(fmt.documents, min_length=fmt.min_length, max_length=fmt.max_length, pattern=fmt.pattern,
                          max_states=fmt.max_states)
        if dfa.is_empty:
            what = f"{fmt.min_length}..{'' if fmt.max_length is None else fmt.max_length} characters" + (
                f" matching {fmt.pattern!r}" if fmt.pattern is not None else "")
            raise UnsatisfiableConstraint(f"no span of the document has {what}")
        return _Compiled(dfa)
    given: list[Warning] = []

    def region(part: Format) -> Automata:
        compiled = _automata(part)
        given.extend(compiled.warnings)
        return compiled.automata

    if isinstance(fmt, Grammar):
        from .cfg import grammar_network  # (on first use: import structgen does not pay for it)

        limits = {} if fmt.max_terms is None else {"max_terms": fmt.max_terms}
        network = grammar_network(fmt.text, syntax=fmt.syntax, start=fmt.start, max_states=fmt.max_states,
                                  schema_options=fmt.schema_options, **limits,
                                  compile_schema=lambda schema, options: region(JsonSchema(schema, options)))
    else:
        network = build_network(fmt, region)
    return _Compiled(network, tuple(given))


def _json_schema(fmt: JsonSchema) -> _Compiled:
    compile_schema, prepare, annotation_warnings = _json_schema_front_end()
    options = fmt.options
    with fmt.texts_known():
        root = prepare(fmt.schema, options)
        given = annotation_warnings(root, options)
        automata = compile_schema(root, options, fmt.extract_from, network=fmt.extract_from is None, lazy=True)
    return _Compiled(automata, given)


# -- the public compile functions: thin wrappers over the door ------------------------------------------


def compile_regex(pattern: str, vocabulary: Vocabulary, *, max_states: int = DEFAULT_MAX_STATES) -> Guide:
    """A guide whose outputs are exactly the strings ``pattern`` full-matches.

    Python ``re`` syntax; ``\\d \\w \\s`` are ASCII classes. Look-arounds (``(?=X)``, ``(?!X)``,
    ``(?<=X)``, ``(?<!X)``, look-behinds of any width), ``\\b``/``\\B`` (over the ASCII ``\\w``) and
    ``^ $ \\A \\Z`` inside the pattern are compiled exactly (see :mod:`structgen.automata.lookaround`).
    Raises :class:`RegexSyntaxError` for a malformed pattern and :class:`RegexNotSupported` for
    constructs no automaton can enforce exactly (back-references, possessive quantifiers, atomic
    groups, a look-behind inside a look-ahead or the reverse). ``compile(Regex(pattern), vocabulary)``.

    Example:
        >>> guide = compile_regex(r"\\d{4}-\\d{2}-\\d{2}", vocab)   # doctest: +SKIP
    """
    return compile(Regex(pattern, max_states), vocabulary)


def compile_json_schema(schema: Any, vocabulary: Vocabulary, *, extract_from: Documents | None = None,
                        **options: Any) -> Guide:
    """A guide whose outputs are JSON documents valid under ``schema``:
    ``compile(JsonSchema(schema, SchemaOptions(**options), extract_from=extract_from), vocabulary)``.

    ``schema`` is a dict, a JSON string or a pydantic model class. ``options`` are those of
    :class:`~structgen.json_schema.options.SchemaOptions` (an unknown one is a ``TypeError`` that
    names it): ``whitespace`` is the regex allowed between JSON tokens (default ``[ ]?``: at
    most one space, so a small model cannot loop on whitespace). Properties come in schema order;
    ``key_order="any"`` lets the model choose the order of an object's keys (any number of them:
    the object is an automaton of its own whose frame remembers the keys written), and
    ``extra_properties=True`` lets it add keys that ``additionalProperties`` /
    ``patternProperties`` allow next to declared ones.

    The result is a :class:`Guide`, or a :class:`~structgen.guides.pushdown.PushdownGuide` (same API)
    when the schema has recursion, large sub-schemas used more than once, ``{}`` values or
    ``key_order="any"`` objects: those pieces become automata of their own that their users call,
    so recursion is exact (to a nesting depth of 128 frames) and nothing is copied per use.
    ``max_recursion_depth`` bounds recursion only where a sub-schema must be one finite
    automaton (inside ``not``, ``if``, overlapping ``oneOf``, intersections), unrolled that many
    times (an under-approximation: sound, not complete).

    ``extract_from`` (a document or a list of them): string values are verbatim spans of a
    document — every string value, or only those whose schema says ``"x-extract": true`` when
    any does. Object keys are not spans; ``""`` is (use ``minLength: 1``); other string keywords
    still hold. See :mod:`structgen.json_schema.spans`. (Spans compile to one flat automaton.)

    ``dialect`` (``"draft-04"``, ``"draft-06"``, ``"draft-07"``, ``"2019-09"``, ``"2020-12"``)
    reads the schema in that draft whatever its ``$schema`` says; by default ``$schema`` decides,
    and a schema without one is 2020-12 (see :mod:`structgen.json_schema.dialects`).

    ``format``: the built-in formats are enforced; ``formats={"name": regex}`` adds custom ones
    (ECMA-262 regexes matched against the whole string, enforced). Any other format is an
    annotation, as the specification reads it: it constrains nothing, and every call warns
    (:class:`AnnotationWarning`, naming the JSON pointer); ``unknown_formats="error"`` refuses
    it instead (:class:`SchemaNotSupported`).

    A keyword that no JSON Schema vocabulary defines is an annotation too (it constrains
    nothing); one edit away from a keyword that constrains (``"propertes"``), it warns
    (:class:`UnknownKeywordWarning`, naming the JSON pointer and the keyword it is close to).
    ``unknown_keywords="error"`` refuses every unknown keyword (:class:`SchemaNotSupported`).

    Raises :class:`SchemaError` for an invalid schema, :class:`SchemaNotSupported` (with the JSON
    pointer) for a keyword structgen cannot enforce exactly, :class:`UnsatisfiableConstraint` when
    nothing can match.

    Example:
        >>> guide = compile_json_schema({"type": "integer", "minimum": 0}, vocab)   # doctest: +SKIP
    """
    return compile(JsonSchema(schema, SchemaOptions(**options), extract_from=extract_from), vocabulary)


def compile_extract(
    document: Documents,
    vocabulary: Vocabulary,
    *,
    min_length: int = 0,
    max_length: int | None = None,
    pattern: str | None = None,
    max_states: int = DEFAULT_MAX_STATES,
) -> Guide:
    """A guide whose outputs are verbatim spans (substrings) of ``document`` — plain text:
    ``compile(Extract(document, ...), vocabulary)``.

    ``document`` is a string or a list of them (a span of any one). The output has
    ``min_length`` to ``max_length`` characters (default: any, the empty span included) and, with
    ``pattern`` (Python syntax, full match), matches it too. ``max_length`` costs one state per
    (span state, length): on long documents it can raise :class:`CompileBudgetExceeded`.
    Raises :class:`UnsatisfiableConstraint` when no span qualifies.

    Example:
        >>> guide = compile_extract(document, vocab, min_length=1)   # doctest: +SKIP
    """
    return compile(Extract(document, min_length, max_length, pattern, max_states), vocabulary)


def compile_grammar(text: str, vocabulary: Vocabulary, *, syntax: str | None = None, start: str | None = None,
                    **options: Any) -> Guide:
    """A guide whose outputs are exactly the strings the context-free grammar ``text`` derives:
    ``compile(Grammar(text, syntax, start, **options), vocabulary)``.

    ``syntax`` is ``"lark"`` or ``"gbnf"`` (``"ebnf"``); ``None`` reads GBNF when a line holds
    ``::=``, else Lark. Left recursion and ambiguity are fine; the language is the grammar's,
    exactly (``docs/grammars.md`` says how it departs from greedy lexers and LALR parsers).
    ``options``: ``max_states``, ``max_terms``, ``schema_options`` (Lark's ``%json``).
    Raises :class:`GrammarSyntaxError` (with ``.line``, ``.column``, ``.rule``),
    :class:`GrammarNotSupported` for a construct structgen cannot enforce exactly,
    :class:`CompileBudgetExceeded` naming the rule whose expansion is over budget, and
    :class:`UnsatisfiableConstraint`.

    Example:
        >>> import structgen
        >>> vocab = structgen.Vocabulary.from_bytes([b"1", b"+", b"2", None], eos_token_ids=[3])
        >>> guide = compile_grammar('root ::= expr\\nexpr ::= expr "+" [0-9] | [0-9]', vocab)
        >>> state = guide.advance(guide.initial_state, [0, 1, 2])  # "1+2"
        >>> guide.is_final(state), guide.allowed_token_ids(state).tolist()
        (True, [1, 3])
    """
    return compile(Grammar(text, syntax, start, **options), vocabulary)


def compile_composed(fmt: Format, vocabulary: Vocabulary) -> Guide:
    """A guide whose outputs are exactly the strings of the composed ``fmt`` (see
    :mod:`structgen.compose`): ``compile(fmt, vocabulary)``.

    Raises what the parts raise (:class:`RegexSyntaxError`, :class:`SchemaError` with the JSON
    pointer and the :class:`JsonSchema`'s ``name`` as its ``region``, ...) and
    :class:`UnsatisfiableConstraint` when nothing matches or the vocabulary cannot spell any
    output.

    Example:
        >>> from structgen.formats import Tag, Text
        >>> guide = compile_composed(Tag("<think>", Text(), "</think>"), vocab)   # doctest: +SKIP
    """
    return compile(fmt, vocabulary)


#: What :func:`warm_up` compiles: a small schema that reaches what a first compile loads or builds
#: once per process (the JSON Schema modules, the metaschema check, a format's and a pattern's
#: automata, the Unicode categories of ``\p{..}``, and for ``oneOf`` / ``not`` the canonical
#: universe of the default whitespace).
WARM_UP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "when": {"type": "string", "format": "date-time"},
        "name": {"type": "string", "pattern": "^\\p{Lu}\\p{Ll}*$"},  # (Unicode's categories, read once)
        "kind": {"oneOf": [{"type": "string", "pattern": "^[a-z]+$"}, {"type": "integer", "not": {"const": 3}}]},
        "note": {"type": "string", "pattern": "[^ ].*"},  # (the automata of a string's characters, read once)
    },
}


def warm_up(vocabulary: Vocabulary) -> float:
    """Do now what the first compile in a process would otherwise do on a user's request: load
    the JSON Schema front end, build the metaschema check and the canonical universe, compile
    :data:`WARM_UP_SCHEMA` and a regex and take their first masks (so the automata of a JSON
    string's characters that patterns share are built), parse the built-in formats and measure
    their widths, make ``jsonschema``'s validator class of the default options, read the
    Unicode tables of patterns' ``\\p{..}``, ``\\s``, ``\\d`` and ``\\w`` (about 0.7 s once;
    the first request's compile is then as fast as any other). Returns the seconds it took.
    ``structgen serve`` and the vLLM plugin call it at start-up, after
    :func:`~structgen.vocab.index.prepare_vocabulary`.

    Example:
        >>> seconds = warm_up(vocab)   # doctest: +SKIP
    """
    start = time.perf_counter()
    for guide in (compile_json_schema(WARM_UP_SCHEMA, vocabulary), compile_regex(r"[a-z]{1,8}@[0-9]+", vocabulary)):
        guide.token_mask(guide.initial_state)
    from .automata import unicode_props
    from .json_schema import charsets, formats  # (the package is imported by now: see _json_schema_front_end)
    from .json_schema.loading import validator_class
    from .json_schema.options import SchemaOptions

    formats.parse_formats()
    validator_class(SchemaOptions())  # (jsonschema's validator class of the default options: 1.2 ms of the first schema that asks it)
    unicode_props.load_tables()  # (else the first \p{..} in a pattern: 90 ms)
    for shorthand in ("digit", "space", "word"):  # (else the first \s: 18 ms)
        charsets.python_category(shorthand)
    np.unique(np.zeros(2))  # (numpy loads numpy.ma on its first unique: 20 ms in some mask step of the first unique array)
    return time.perf_counter() - start


#: Held while the JSON Schema front end is imported (on first use, see :func:`_json_schema_front_end`).
_FRONT_END_LOCK = threading.Lock()


def _json_schema_front_end() -> tuple[Any, Any, Any]:
    """``(compile_schema, prepare, annotation_warnings)``, the JSON Schema front end, imported on
    first use (``import structgen`` does not pay for it) under a lock. Two threads importing the
    package for the first time at once (a server's warm-up thread and its first request) could
    meet in its circular imports, where Python raises ``_DeadlockError`` in one of them."""
    with _FRONT_END_LOCK:
        from .json_schema.api import compile_schema, prepare
        from .json_schema.loading import annotation_warnings
    return compile_schema, prepare, annotation_warnings
