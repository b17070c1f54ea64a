"""Markers: single characters of a structgen-written regex that stand for more than a character.

Regexes that structgen writes itself (never a user's) may hold lone UTF-16 surrogates, which no
UTF-8 text contains, as markers:

* a **slot** (U+D800 + k) embeds a whole automaton, ``slots[k]`` (FSM-algebra results,
  document spans);
* a **call** (U+DC00 + k) calls automaton ``k`` of a :class:`~structgen.automata.network.Network`;
* a **guard** (the last call numbers) is a zero-width step a pushdown guide checks against the
  data of its frame (an object's keys written so far).

In a byte DFA a call or guard is a path of bytes UTF-8 never uses; :func:`call_edges` reads them
back off the table.

Example:
    >>> call_index(call_marker(3))
    3
"""

from __future__ import annotations

import numpy as np

from ..errors import CompileBudgetExceeded
from .dfa import ByteDFA

__all__ = [
    "CALL_BYTES", "CALL_DIGITS", "CLOSE_GUARD", "GUARD_FIRST", "MAX_CALLS", "MAX_GUARDED_KEYS", "MAX_SLOTS",
    "SLOT_FIRST", "call_edges", "call_index", "call_marker", "call_path", "close_guard", "key_guard", "slot_index",
    "slot_marker",
]

#: Slots: a regex built by structgen (not a user's) may stand for a whole automaton by one
#: character, a lone UTF-16 surrogate (U+D800 + k), which no UTF-8 text can contain. It lets the
#: schema compiler splice FSM-algebra results (intersections, complements, document spans) into
#: the regex it writes. User text never reaches a regex as a raw surrogate (JSON strings are
#: escaped, pattern classes drop them), and plain :func:`pattern_to_dfa` calls have no slots.
SLOT_FIRST = 0xD800
MAX_SLOTS = 0x400
#: Calls: a regex built by structgen may also stand for a *call* of another automaton of a
#: network (see :mod:`structgen.automata.network`) by one character, a lone low surrogate (U+DC00 + k).
#: In the byte DFA a call is a path of reserved bytes, ``0xFF`` then :data:`CALL_DIGITS` digits
#: in ``0xF5..0xFE`` (bytes that UTF-8 never uses, so no text walks them), ending in the state
#: where the caller goes on when the callee returns. Determinisation and minimisation treat the
#: path like any other bytes; :func:`call_edges` reads the calls back off the table.
_CALL_FIRST = 0xDC00
MAX_CALLS = 0x400
#: The last call numbers are *guards*: zero-width steps that a pushdown guide checks against the
#: data of the frame (see :mod:`structgen.automata.network`): ``key_guard(i)`` writes key ``i`` of an
#: object (refused if written already), ``CLOSE_GUARD`` lets the object close only once its
#: required keys are written. Automata are numbered below ``GUARD_FIRST``.
GUARD_FIRST = 0x3C0
MAX_GUARDED_KEYS = 63
CLOSE_GUARD = MAX_GUARDED_KEYS
CALL_DIGITS = 4
_CALL_LEAD = 0xFF
_DIGIT0 = 0xF5
#: Every byte a call path uses (never part of valid UTF-8).
CALL_BYTES = frozenset([_CALL_LEAD, *range(_DIGIT0, _DIGIT0 + 10)])


def slot_marker(k: int) -> str:
    """The one-character regex that stands for ``slots[k]`` in :func:`pattern_to_dfa`."""
    if not 0 <= k < MAX_SLOTS:
        raise CompileBudgetExceeded("embedded automata in one regex", MAX_SLOTS)
    return chr(SLOT_FIRST + k)


def call_marker(k: int) -> str:
    """The one-character regex that stands for a call of automaton ``k`` of a network."""
    if not 0 <= k < GUARD_FIRST:
        raise CompileBudgetExceeded("called automata in one schema", GUARD_FIRST)
    return chr(_CALL_FIRST + k)


def key_guard(i: int) -> str:
    """The marker of the guard "key ``i`` is written now" (``i < MAX_GUARDED_KEYS``)."""
    if not 0 <= i < MAX_GUARDED_KEYS:
        raise ValueError(f"key guards go up to {MAX_GUARDED_KEYS - 1}, not {i}")
    return chr(_CALL_FIRST + GUARD_FIRST + i)


def close_guard() -> str:
    """The marker of the guard "every required key is written"."""
    return chr(_CALL_FIRST + GUARD_FIRST + CLOSE_GUARD)


def call_index(ch: str) -> int | None:
    """``k`` if ``ch`` is :func:`call_marker` ``(k)``, else ``None``."""
    k = ord(ch) - _CALL_FIRST
    return k if 0 <= k < MAX_CALLS else None


def call_path(k: int) -> tuple[int, ...]:
    """The bytes that spell a call of automaton ``k`` in a byte DFA."""
    digits = [(k // 10**i) % 10 for i in range(CALL_DIGITS - 1, -1, -1)]
    return (_CALL_LEAD, *(_DIGIT0 + d for d in digits))


def call_edges(dfa: ByteDFA) -> dict[int, tuple[tuple[int, int], ...]]:
    """The calls of ``dfa``: ``{state: ((callee, return state), ...)}`` for every state with one."""
    t, c = dfa.transitions, dfa.byte_classes
    out: dict[int, list[tuple[int, int]]] = {}
    for q in np.flatnonzero(t[:, c[_CALL_LEAD]] >= 0).tolist():
        frontier = [(int(t[q, c[_CALL_LEAD]]), 0)]
        for _ in range(CALL_DIGITS):
            nxt = []
            for s, k in frontier:
                for d in range(10):
                    s2 = int(t[s, c[_DIGIT0 + d]])
                    if s2 >= 0:
                        nxt.append((s2, k * 10 + d))
            frontier = nxt
        out[q] = [(k, s) for s, k in frontier]
    return {q: tuple(sorted(v)) for q, v in out.items()}


def slot_index(ch: str, num_slots: int) -> int | None:
    """``k`` if ``ch`` is :func:`slot_marker` ``(k)`` with ``k < num_slots``, else ``None``."""
    k = ord(ch) - SLOT_FIRST
    return k if 0 <= k < num_slots else None
