"""Compile a regex or a JSON Schema into a :class:`Guide`, with an in-memory cache.

Compiling has two halves: the constraint → byte DFA (independent of the tokenizer), and the DFA →
guide over a vocabulary (masks are then computed lazily). Both are cached in bounded LRUs keyed by
the constraint's text, the options and the vocabulary's fingerprint, so a server that sees the same
schema twice compiles it once.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import numpy as np

from .errors import UnsatisfiableConstraint
from .fsm import DEFAULT_MAX_STATES, ByteDFA
from .guide import Guide
from .vocabulary import Vocabulary

__all__ = ["compile_json_schema", "compile_regex", "clear_cache"]

DEFAULT_WHITESPACE = r"[ ]?"
_CACHE_SIZE = 128


class _LRU:
    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
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
                self._data.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


_DFAS = _LRU(_CACHE_SIZE)
_GUIDES = _LRU(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget every cached automaton and guide."""
    _DFAS.clear()
    _GUIDES.clear()


def _guide(key: tuple[Hashable, ...], vocab: Vocabulary, make_dfa: Callable[[], ByteDFA], description: str) -> Guide:
    dfa = _DFAS.get_or_make(key, make_dfa)

    def make_guide() -> Guide:
        lifted = dfa
        missing = vocab.missing_bytes
        if missing:
            used = set(np.flatnonzero((dfa.transitions >= 0).any(axis=0)).tolist())
            if any(dfa.byte_classes[b] in used for b in missing):
                lifted = dfa.without_bytes(missing)
        if lifted.is_empty:
            raise UnsatisfiableConstraint(
                f"{description} needs bytes that no token of {vocab!r} contains "
                f"({', '.join(hex(b) for b in sorted(missing)[:8])}...)"
            )
        return Guide(lifted, vocab, description=description)

    return _GUIDES.get_or_make(key + (vocab.fingerprint, id(vocab)), make_guide)


def compile_regex(pattern: str, vocabulary: Vocabulary, *, max_states: int = DEFAULT_MAX_STATES) -> Guide:
    """A guide whose outputs are exactly the strings ``pattern`` full-matches.

    Python ``re`` syntax; ``\\d \\w \\s`` are ASCII classes. Raises :class:`RegexSyntaxError` for a
    malformed pattern and :class:`RegexNotSupported` for constructs no automaton can enforce
    (look-arounds, back-references, ``\\b``, possessive quantifiers, anchors inside the pattern).

    Example:
        >>> guide = compile_regex(r"\\d{4}-\\d{2}-\\d{2}", vocab)   # doctest: +SKIP
    """
    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile_regex needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    return _guide(
        ("regex", pattern, max_states),
        vocabulary,
        lambda: ByteDFA.from_regex(pattern, max_states=max_states),
        f"regex {pattern[:60]!r}",
    )


def compile_json_schema(
    schema: Any,
    vocabulary: Vocabulary,
    *,
    whitespace: str = DEFAULT_WHITESPACE,
    max_recursion_depth: int = 3,
    max_states: int = DEFAULT_MAX_STATES,
    key_order: str = "schema",
    extra_properties: bool = False,
) -> Guide:
    """A guide whose outputs are JSON documents valid under ``schema``.

    ``schema`` is a dict, a JSON string or a pydantic model class. ``whitespace`` is the regex
    allowed between JSON tokens (default ``[ ]?``: at most one space, so a small model cannot loop
    on whitespace). Properties come in schema order; ``key_order="any"`` lets the model choose the
    order of up to five declared keys of an object, and ``extra_properties=True`` lets it add keys
    that ``additionalProperties`` / ``patternProperties`` allow next to declared ones. Recursive ``$ref`` is unrolled
    ``max_recursion_depth`` times (an under-approximation: sound, not complete).

    Raises :class:`SchemaError` for an invalid schema, :class:`SchemaNotSupported` (with the JSON
    pointer) for a keyword structgen cannot enforce exactly, :class:`UnsatisfiableConstraint` when
    nothing can match.

    Example:
        >>> guide = compile_json_schema({"type": "integer", "minimum": 0}, vocab)   # doctest: +SKIP
    """
    from .json_schema import load_schema, schema_to_dfa

    if not isinstance(vocabulary, Vocabulary):
        raise TypeError(f"compile_json_schema needs a structgen.Vocabulary, not {type(vocabulary).__name__}")
    loaded = load_schema(schema)
    text = json.dumps(loaded, sort_keys=True, ensure_ascii=False)

    def make() -> ByteDFA:
        return schema_to_dfa(
            loaded, whitespace=whitespace, max_recursion_depth=max_recursion_depth, max_states=max_states,
            key_order=key_order, extra_properties=extra_properties,
        )

    title = loaded.get("title") if isinstance(loaded, dict) else None
    return _guide(
        ("json", text, whitespace, max_recursion_depth, max_states, key_order, extra_properties),
        vocabulary,
        make,
        f"JSON Schema {title or text[:60]!r}",
    )
