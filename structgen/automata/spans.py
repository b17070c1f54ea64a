"""Verbatim spans of source documents: the substrings of a text as a byte automaton.

The set of substrings of a text is regular, and its *suffix automaton* recognises it with at most
``2n - 1`` states once every state is final (every prefix of a suffix is a substring). It is built
online over code points (Blumer et al.; the standard ``link``/``len`` construction), then each
code point's transition is lowered to a path of bytes: its UTF-8 bytes for plain text
(:func:`span_dfa`), or its encoding inside a JSON string for JSON (:func:`json_span_dfa`: the
encoding ``json.dumps(..., ensure_ascii=False)`` writes, plus ``\\/`` for ``/``). Encodings are
prefix-free, so the byte paths of one state form a trie whose inner nodes are new, non-final
states: the result is deterministic without a subset construction.

Several documents: the automaton of ``d1 # d2 # ...`` with a separator no text contains, its
separator edges dropped and the unreachable states trimmed, reads exactly the substrings of some
``di``.

Example:
    >>> dfa = span_dfa(["Say \\"hi\\"!"])
    >>> dfa.accepts('"hi'.encode()), dfa.accepts(b'hi"!'), dfa.accepts(b"ih")
    (True, True, False)
    >>> jdfa = json_span_dfa(["Say \\"hi\\"!"])
    >>> jdfa.accepts(b'\\\\"hi'), jdfa.accepts(b'"hi')
    (True, False)
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable, Sequence, Union

import numpy as np

from ..errors import CompileBudgetExceeded, ConstraintError
from .dfa import DEFAULT_MAX_STATES, ByteDFA

__all__ = ["Documents", "documents_key", "extract_dfa", "json_span_dfa", "normalize_documents", "span_dfa", "without_empty"]

#: One document or several (a span of any one of them).
Documents = Union[str, Sequence[str]]

_SEPARATOR = -1  # a "code point" no document contains


def normalize_documents(documents: object, *, name: str = "extract_from") -> tuple[str, ...]:
    """``documents`` as a tuple of strings, checked: a ``str`` or a non-empty list of ``str``.

    Raises ``TypeError`` for other types and :class:`ConstraintError` for an empty list or a
    document with a lone surrogate (it has no UTF-8 encoding, so no output can contain it).

    >>> normalize_documents("abc"), normalize_documents(["a", "b"])
    (('abc',), ('a', 'b'))
    """
    if isinstance(documents, str):
        docs: tuple[str, ...] = (documents,)
    elif isinstance(documents, (list, tuple)):
        docs = tuple(documents)
        if not docs:
            raise ConstraintError(f"{name} is an empty list: give at least one document to extract spans from")
    else:
        raise TypeError(f"{name} must be a str or a list of str, not {type(documents).__name__}")
    for i, d in enumerate(docs):
        if not isinstance(d, str):
            raise TypeError(f"{name}[{i}] must be a str, not {type(d).__name__}")
        try:
            d.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ConstraintError(
                f"{name}[{i}] holds a lone surrogate {d[e.start]!r} at index {e.start}: it has no UTF-8 encoding"
            ) from None
    return docs


def documents_key(documents: Sequence[str]) -> str:
    """A short hash of the documents, for cache keys (documents can be large).

    >>> documents_key(["a", "b"]) != documents_key(["ab"])
    True
    """
    h = hashlib.sha256()
    for d in documents:
        data = d.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def span_dfa(documents: Sequence[str], *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """The UTF-8 byte automaton of every substring of every document ("" included).

    >>> dfa = span_dfa(["héllo"])
    >>> dfa.accepts("éll".encode()), dfa.accepts("é".encode()[:1]), dfa.accepts(b"")
    (True, False, True)
    """
    return _lowered(documents, _utf8, max_states)


def json_span_dfa(documents: Sequence[str], *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """The automaton of the JSON string *bodies* (between the quotes) whose value is a substring.

    Each character is written as ``json.dumps(ch, ensure_ascii=False)`` writes it (``\\"``,
    ``\\\\``, ``\\n``, ``\\u001f``, raw UTF-8 otherwise), and ``/`` also as ``\\/``.

    >>> dfa = json_span_dfa(['a\\nb/c'])
    >>> dfa.accepts(b'a\\\\nb'), dfa.accepts(b'b\\\\/c'), dfa.accepts(b'a\\nb')
    (True, True, False)
    """
    return _lowered(documents, _json, max_states)


def _utf8(cp: int) -> tuple[bytes, ...]:
    return (chr(cp).encode("utf-8"),)


def _json(cp: int) -> tuple[bytes, ...]:
    enc = json.dumps(chr(cp), ensure_ascii=False)[1:-1].encode("utf-8")
    return (enc, b"\\/") if cp == 0x2F else (enc,)


def _suffix_automaton(seq: list[int]) -> list[dict[int, int]]:
    """The transitions of the suffix automaton of ``seq`` (state 0 is the start)."""
    nxt: list[dict[int, int]] = [{}]
    link = [-1]
    length = [0]
    last = 0
    for c in seq:
        cur = len(length)
        nxt.append({})
        length.append(length[last] + 1)
        link.append(0)
        p = last
        while p != -1 and c not in nxt[p]:
            nxt[p][c] = cur
            p = link[p]
        if p != -1:
            q = nxt[p][c]
            if length[p] + 1 == length[q]:
                link[cur] = q
            else:
                clone = len(length)
                nxt.append(nxt[q].copy())
                length.append(length[p] + 1)
                link.append(link[q])
                while p != -1 and nxt[p].get(c) == q:
                    nxt[p][c] = clone
                    p = link[p]
                link[q] = clone
                link[cur] = clone
        last = cur
    return nxt


def _lowered(documents: Sequence[str], encode: Callable[[int], tuple[bytes, ...]], max_states: int) -> ByteDFA:
    """Suffix automaton over code points, lowered to bytes with ``encode`` (prefix-free labels)."""
    seq: list[int] = []
    for i, d in enumerate(documents):
        if i:
            seq.append(_SEPARATOR)
        seq.extend(map(ord, d))
    if 2 * len(seq) + 1 > 4 * max_states:  # (checked again, exactly, below)
        raise CompileBudgetExceeded(f"span automaton of {len(seq)} characters", max_states)
    nxt = _suffix_automaton(seq)
    src_l: list[int] = []
    sym_l: list[int] = []
    dst_l: list[int] = []
    for s, row in enumerate(nxt):
        if row:
            src_l.extend([s] * len(row))
            sym_l.extend(row.keys())
            dst_l.extend(row.values())
    src, sym, dst = (np.array(x, dtype=np.int64) for x in (src_l, sym_l, dst_l))
    n = len(nxt)
    if len(documents) > 1:
        keep = sym != _SEPARATOR
        src, sym, dst = src[keep], sym[keep], dst[keep]
        alive, n = _reachable(src, dst, n)
        new_id = np.cumsum(alive) - 1
        keep = alive[src]
        src, sym, dst = new_id[src[keep]], sym[keep], new_id[dst[keep]]
    # Labels: the distinct code points, each with its byte encodings.
    cps, inverse = np.unique(sym, return_inverse=True)
    labels = [encode(int(c)) for c in cps.tolist()]
    single = np.array([len(ls) == 1 and len(ls[0]) == 1 for ls in labels], dtype=bool)
    first_byte = np.array([ls[0][0] for ls in labels], dtype=np.int64)
    simple = single[inverse]
    e_src, e_byte, e_dst = [src[simple]], [first_byte[inverse[simple]]], [dst[simple]]
    # Multi-byte labels: byte tries per state, inner nodes numbered from n on.
    inner: dict[tuple[int, bytes], int] = {}
    m_src: list[int] = []
    m_byte: list[int] = []
    m_dst: list[int] = []
    hard = np.flatnonzero(~simple)
    for s, k, t in zip(src[hard].tolist(), inverse[hard].tolist(), dst[hard].tolist()):
        for enc in labels[k]:
            at = s
            for j in range(len(enc) - 1):
                key = (s, enc[: j + 1])
                node = inner.get(key)
                if node is None:
                    node = inner[key] = n + len(inner)
                    m_src.append(at)
                    m_byte.append(enc[j])
                    m_dst.append(node)
                at = node
            m_src.append(at)
            m_byte.append(enc[-1])
            m_dst.append(t)
    total = n + len(inner)
    if total > max_states:
        raise CompileBudgetExceeded(f"states of the span automaton ({total})", max_states)
    e_src.append(np.array(m_src, dtype=np.int64))
    e_byte.append(np.array(m_byte, dtype=np.int64))
    e_dst.append(np.array(m_dst, dtype=np.int64))
    all_src, all_byte, all_dst = (np.concatenate(x) for x in (e_src, e_byte, e_dst))
    # Byte classes: each byte that labels an edge is its own class; the rest share a dead one.
    used = np.zeros(256, dtype=bool)
    used[all_byte] = True
    class_of = np.where(used, np.cumsum(used), 0).astype(np.int32)
    if used.all():
        class_of -= 1
    table = np.full((total, int(class_of.max()) + 1), -1, dtype=np.int32)
    table[all_src, class_of[all_byte]] = all_dst
    finals = np.zeros(total, dtype=bool)
    finals[:n] = True
    return ByteDFA(table, class_of, finals)


def _reachable(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Which states the edges reach from 0, and how many."""
    order = np.argsort(src, kind="stable")
    first = np.searchsorted(src[order], np.arange(n + 1)).tolist()
    out = dst[order].tolist()
    seen = [False] * n
    seen[0] = True
    stack = [0]
    while stack:
        s = stack.pop()
        for t in out[first[s] : first[s + 1]]:
            if not seen[t]:
                seen[t] = True
                stack.append(t)
    alive = np.array(seen, dtype=bool)
    return alive, int(alive.sum())


def extract_dfa(
    documents: Sequence[str],
    *,
    min_length: int = 0,
    max_length: int | None = None,
    pattern: str | None = None,
    max_states: int = DEFAULT_MAX_STATES,
) -> ByteDFA:
    """Plain-text spans of ``documents`` with ``min_length..max_length`` characters that
    ``pattern`` (Python syntax, full match) also matches.

    ``min_length <= 1`` without the other options costs nothing more than :func:`span_dfa`;
    the others are intersections (:func:`structgen.automata.algebra.intersect`). A length bound keeps
    one state per (span state, length) pair, so ``max_length`` on a large document can reach
    ``max_states`` (:class:`CompileBudgetExceeded`).

    >>> dfa = extract_dfa(["order 66 and 7"], min_length=1, pattern=r"\\d+")
    >>> [dfa.accepts(s) for s in (b"66", b"7", b"", b"67", b"6 ")]
    [True, True, False, False, False]
    """
    from .algebra import intersect
    from .regex import regex_to_dfa

    if not isinstance(min_length, int) or min_length < 0:
        raise ValueError(f"min_length must be a non-negative int, not {min_length!r}")
    if max_length is not None and (not isinstance(max_length, int) or max_length < min_length):
        raise ValueError(f"max_length must be None or an int >= min_length ({min_length}), not {max_length!r}")
    dfa = span_dfa(documents, max_states=max_states)
    if min_length >= 1:
        dfa = without_empty(dfa)
    if min_length > 1 or max_length is not None:
        hi = "" if max_length is None else str(max_length)
        dfa = intersect(dfa, regex_to_dfa(rf"[\s\S]{{{min_length},{hi}}}", max_states=max_states), max_states=max_states)
    if pattern is not None:
        dfa = intersect(dfa, regex_to_dfa(pattern, max_states=max_states), max_states=max_states)
    return dfa


def without_empty(dfa: ByteDFA) -> ByteDFA:
    """A span automaton without the empty span: its start state made non-final (no edge of a
    span automaton enters its start state, so nothing else changes)."""
    finals = dfa.finals.copy()
    finals[0] = False
    return ByteDFA(dfa.transitions, dfa.byte_classes, finals)

