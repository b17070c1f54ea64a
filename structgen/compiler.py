"""Compile a regex or a JSON Schema into a :class:`Guide`, with an in-memory cache.

Compiling has two halves: the constraint → byte DFA (independent of the tokenizer), and the DFA →
guide over a vocabulary (masks are then computed lazily). Both are cached in bounded LRUs keyed by
the constraint's text, the options and the vocabulary's fingerprint, so a server that sees the same
schema twice compiles it once.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable, Union


from .errors import UnsatisfiableConstraint
from .automata.dfa import DEFAULT_MAX_STATES, ByteDFA
from .automata.network import Network
from .automata.expr import NOTHING, ExprPool
from .automata.lazy import LazyAutomaton
from .automata.regex import regex_to_expr
from .automata.regex_emptiness import why_no_match
from .guides.base import Guide
from .guides.dfa_guide import DfaGuide
from .guides.pushdown import PushdownGuide
from .automata.spans import Documents, documents_key, extract_dfa, normalize_documents
from .vocab.vocabulary import Vocabulary

__all__ = ["compile_extract", "compile_json_schema", "compile_regex", "clear_cache", "set_cache_limits", "warm_up"]

DEFAULT_WHITESPACE = r"[ ]?"
_CACHE_SIZE = 128


class _LRU:
    """A bounded LRU. With ``max_bytes``, also bounded by the values' ``memory_bytes``: guides grow
    as their masks are cached, so each insert counts the new value's bytes beside the others' as
    last measured, and measures them all again (dropping the least recently used while over) when
    that is over the bound or every :attr:`REMEASURE` inserts. Measuring a guide walks its caches:
    doing it for every cached guide on every insert cost a warm server 2-3 ms per compile."""

    REMEASURE = 16

    def __init__(self, size: int, max_bytes: int | None = None) -> None:
        self.size = size
        self.max_bytes = max_bytes  # bound on the sum of the values' ``memory_bytes``
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._bytes: dict[Hashable, int] = {}  # key -> the value's bytes when last measured
        self._since = 0  # inserts since every value was last measured
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = make()  # outside the lock: compiles may be slow and run concurrently
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._bytes.pop(self._data.popitem(last=False)[0], None)
            if self.max_bytes is not None:
                self._bytes[key] = value.memory_bytes
                self._since += 1
                if self._since >= self.REMEASURE or sum(self._bytes.values()) > self.max_bytes:
                    self._remeasure(self.max_bytes)
        return value

    def _remeasure(self, max_bytes: int) -> None:
        self._since = 0
        self._bytes = {k: v.memory_bytes for k, v in self._data.items()}
        total = sum(self._bytes.values())
        while total > max_bytes and len(self._data) > 1:
            dropped, _ = self._data.popitem(last=False)
            total -= self._bytes.pop(dropped)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes.clear()


_CACHE_BYTES = 2 * 2**30
_DFAS = _LRU(_CACHE_SIZE)
_GUIDES = _LRU(_CACHE_SIZE, _CACHE_BYTES)


def set_cache_limits(*, entries: int = _CACHE_SIZE, guide_bytes: int = _CACHE_BYTES) -> None:
    """Bound the compile caches: at most ``entries`` automata and guides (default 128), and guides
    whose :attr:`Guide.memory_bytes` add up to at most ``guide_bytes`` (default 2 GiB; the least
    recently used go first). A guide in use elsewhere stays alive; the cache just forgets it.

    Example:
        >>> set_cache_limits(entries=32, guide_bytes=512 * 2**20)
        >>> set_cache_limits()  # the defaults again
    """
    if entries < 1 or guide_bytes < 1:
        raise ValueError(f"cache limits must be positive, got entries={entries}, guide_bytes={guide_bytes}")
    _DFAS.size = _GUIDES.size = entries
    _GUIDES.max_bytes = guide_bytes


def clear_cache() -> None:
    """Forget every cached automaton and guide."""
    _DFAS.clear()
    _GUIDES.clear()


@contextlib.contextmanager
def _collector_paused() -> Any:
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


#: What a constraint compiles to before it meets a vocabulary: an eager automaton, a network of
#: automata, or an expression of a pool (its automaton is built lazily, per guide).
Compiled = Union[ByteDFA, Network, tuple[ExprPool, int]]


def _guide(key: tuple[Hashable, ...], vocab: Vocabulary, make: Callable[[], Compiled], description: str,
           why_empty: Callable[[], str] | None = None) -> Guide:
    with _collector_paused():
        return _guide_unpaused(key, vocab, make, description, why_empty)


def _guide_unpaused(key: tuple[Hashable, ...], vocab: Vocabulary, make: Callable[[], Compiled], description: str,
                    why_empty: Callable[[], str] | None = None) -> Guide:
    compiled = _DFAS.get_or_make(key, make)

    def make_guide() -> Guide:
        if isinstance(compiled, Network):
            return PushdownGuide(compiled, vocab, description=description)
        if isinstance(compiled, ByteDFA):
            pool = ExprPool()
            root = pool.embed(compiled)
        else:
            pool, root = compiled
        guide = None if root == NOTHING else DfaGuide(LazyAutomaton(pool, root), vocab, description=description)
        missing = vocab.missing_bytes
        if guide is None or (guide.is_empty and not missing):  # (no string at all: say why, if we can)
            raise UnsatisfiableConstraint(f"no string matches {description}" + (f": {why_empty()}" if why_empty else ""))
        if guide.is_empty:
            raise UnsatisfiableConstraint(
                f"{description} needs bytes that no token of {vocab!r} contains "
                f"({', '.join(hex(b) for b in sorted(missing)[:8])}...)"
            )
        return guide

    return _GUIDES.get_or_make(key + (vocab.fingerprint, id(vocab)), make_guide)


def _regex(pattern: str, max_states: int) -> tuple[ExprPool, int]:
    pool = ExprPool()
    return pool, regex_to_expr(pattern, pool, max_states=max_states)


def compile_regex(pattern: str, vocabulary: Vocabulary, *, max_states: int = DEFAULT_MAX_STATES) -> Guide:
    """A guide whose outputs are exactly the strings ``pattern`` full-matches.

    Python ``re`` syntax; ``\\d \\w \\s`` are ASCII classes. Look-arounds (``(?=X)``, ``(?!X)``,
    ``(?<=X)``, ``(?<!X)``, look-behinds of any width), ``\\b``/``\\B`` (over the ASCII ``\\w``) and
    ``^ $ \\A \\Z`` inside the pattern are compiled exactly (see :mod:`structgen.automata.lookaround`).
    Raises :class:`RegexSyntaxError` for a malformed pattern and :class:`RegexNotSupported` for
    constructs no automaton can enforce exactly (back-references, possessive quantifiers, atomic
    groups, a look-behind inside a look-ahead or the reverse).

    Example:
        >>> guide = compile_regex(r"\\d{4}-\\d{2}-\\d{2}", vocab)   # doctest: +SKIP
    """
    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile_regex needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    return _guide(
        ("regex", pattern, max_states),
        vocabulary,
        lambda: _regex(pattern, max_states),
        f"regex {pattern[:60]!r}",
        lambda: why_no_match(pattern, max_states=max_states),
    )


def compile_json_schema(
    schema: Any,
    vocabulary: Vocabulary,
    *,
    whitespace: str = DEFAULT_WHITESPACE,
    max_recursion_depth: int = 3,
    max_states: int = DEFAULT_MAX_STATES,
    extract_from: Documents | None = None,
    key_order: str = "schema",
    extra_properties: bool = False,
    dialect: str | None = None,
    formats: dict[str, str] | None = None,
    unknown_formats: str = "annotate",
    unknown_keywords: str = "annotate",
) -> Guide:
    """A guide whose outputs are JSON documents valid under ``schema``.

    ``schema`` is a dict, a JSON string or a pydantic model class. ``whitespace`` is the regex
    allowed between JSON tokens (default ``[ ]?``: at most one space, so a small model cannot loop
    on whitespace). Properties come in schema order; ``key_order="any"`` lets the model choose the
    order of an object's keys (any number of them: the object is an automaton of its own whose
    frame remembers the keys written), and ``extra_properties=True`` lets it add keys that
    ``additionalProperties`` / ``patternProperties`` allow next to declared ones.

    The result is a :class:`Guide`, or a :class:`~structgen.guides.pushdown.PushdownGuide` (same API)
    when the schema has recursion, large sub-schemas used more than once, ``{}`` values or
    ``key_order="any"`` objects: those pieces become automata of their own that their users call,
    so recursion is exact (to a nesting depth of 128 frames) and nothing is copied per use.
    ``max_recursion_depth`` now bounds recursion only where a sub-schema must be one finite
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
    # (imported on first use: ``import structgen`` stays without jsonschema until a schema is compiled)
    compile_schema, prepare, warn_annotations, SchemaOptions = _json_schema_front_end()

    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile_json_schema needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    options = SchemaOptions(
        whitespace=whitespace, max_recursion_depth=max_recursion_depth, max_states=max_states, key_order=key_order,
        extra_properties=extra_properties, dialect=dialect, formats={} if formats is None else formats,
        unknown_formats=unknown_formats, unknown_keywords=unknown_keywords,
    )
    with _collector_paused():  # (loading a large schema allocates as much as compiling it)
        root, text = prepare(schema, options)  # (loaded and rewritten into 2020-12 once, on every call)
        docs = None if extract_from is None else normalize_documents(extract_from)
        warn_annotations(root, options)  # (on every call, cached or not)
        title = root.get("title") if isinstance(root, dict) else None
        spans_key = None if docs is None else documents_key(docs)
        return _guide(
            ("json", text, options.cache_key(), spans_key),
            vocabulary,
            lambda: compile_schema(root, options, docs, network=docs is None, lazy=True),
            f"JSON Schema {title or text[:60]!r}",
        )


def compile_extract(
    document: Documents,
    vocabulary: Vocabulary,
    *,
    min_length: int = 0,
    max_length: int | None = None,
    pattern: str | None = None,
    max_states: int = DEFAULT_MAX_STATES,
) -> Guide:
    """A guide whose outputs are verbatim spans (substrings) of ``document`` — plain text.

    ``document`` is a string or a list of them (a span of any one). The output has
    ``min_length`` to ``max_length`` characters (default: any, the empty span included) and, with
    ``pattern`` (Python syntax, full match), matches it too. ``max_length`` costs one state per
    (span state, length): on long documents it can raise :class:`CompileBudgetExceeded`.
    Raises :class:`UnsatisfiableConstraint` when no span qualifies.

    Example:
        >>> guide = compile_extract(document, vocab, min_length=1)   # doctest: +SKIP
    """
    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile_extract needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    docs = normalize_documents(document, name="document")

    def make() -> ByteDFA:
        dfa = extract_dfa(docs, min_length=min_length, max_length=max_length, pattern=pattern, max_states=max_states)
        if dfa.is_empty:
            what = f"{min_length}..{'' if max_length is None else max_length} characters" + (
                f" matching {pattern!r}" if pattern is not None else ""
            )
            raise UnsatisfiableConstraint(f"no span of the document has {what}")
        return dfa

    key = documents_key(docs)
    return _guide(
        ("extract", key, min_length, max_length, pattern, max_states),
        vocabulary,
        make,
        f"spans of {len(docs)} document(s) {docs[0][:40]!r}",
    )


#: What :func:`warm_up` compiles: a small schema that reaches what a first compile loads or builds
#: once per process (the JSON Schema modules, the metaschema check, a format's and a pattern's
#: automata, the Unicode categories of ``\p{..}``, and for ``oneOf`` / ``not`` the canonical
#: universe of the default whitespace).
WARM_UP_SCHEMA: dict = {
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
    string's characters that patterns share are built), parse the built-in formats,
    read the Unicode tables of patterns' ``\\p{..}``, ``\\s``, ``\\d`` and ``\\w`` (about 0.7 s
    once; the first request's compile is then as fast as any other). Returns the seconds it took.
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

    formats.parse_formats()
    unicode_props.load_tables()  # (else the first \p{..} in a pattern: 90 ms)
    for shorthand in ("digit", "space", "word"):  # (else the first \s: 18 ms)
        charsets.python_category(shorthand)
    return time.perf_counter() - start


#: Held while the JSON Schema front end is imported (on first use, see :func:`_json_schema_front_end`).
_FRONT_END_LOCK = threading.Lock()


def _json_schema_front_end() -> tuple[Any, Any, Any, Any]:
    """``(compile_schema, prepare, warn_annotations, SchemaOptions)``, the JSON Schema front end,
    imported on first use (``import structgen`` does not pay for it) under a lock. Two threads
    importing the package for the first time at once (a server's warm-up thread and its first
    request) could meet in its circular imports, where Python raises ``_DeadlockError`` in one
    of them."""
    with _FRONT_END_LOCK:
        from .json_schema.api import compile_schema, prepare
        from .json_schema.loading import warn_annotations
        from .json_schema.options import SchemaOptions
    return compile_schema, prepare, warn_annotations, SchemaOptions
