"""Eager automata inside expressions: a :class:`~.dfa.ByteDFA` as an :class:`~.expr.ExprPool`
reads it (per-state byte rows and partitions, calls read back as symbols, shortest lengths). The
table lives in the native engine (:class:`EmbeddedDfa` derives from ``structgen._engine.EmbeddedDfa``);
this module turns a ``ByteDFA`` into one.

Example:
    >>> from structgen.automata.regex import regex_to_dfa
    >>> emb = EmbeddedDfa.of(regex_to_dfa("ab|c"))
    >>> emb.min_lengths({})[0], emb.is_dead(0)
    (1, False)
"""

from __future__ import annotations

import weakref
from typing import Sequence

import numpy as np

from .. import _engine
from .dfa import ByteDFA
from .markers import CALL_BYTES, call_edges

__all__ = ["EmbeddedDfa", "spelled_as"]


def _mask(bs: list[int]) -> int:
    """The 256-bit mask of ascending bytes, built from runs (one shift per run, not per byte)."""
    out, i, n = 0, 0, len(bs)
    while i < n:
        j = i
        while j + 1 < n and bs[j + 1] == bs[j] + 1:
            j += 1
        out |= ((1 << (bs[j] + 1)) - 1) & ~((1 << bs[i]) - 1)
        i = j + 1
    return out


#: The embedded form of each automaton embedded so far (:meth:`EmbeddedDfa.of`), while it lives.
_OF: "weakref.WeakKeyDictionary[ByteDFA, EmbeddedDfa]" = weakref.WeakKeyDictionary()
#: The regex that spells an automaton, where one does (a slot of a pattern: see :func:`spelled_as`).
_SPELLED: "weakref.WeakKeyDictionary[ByteDFA, str]" = weakref.WeakKeyDictionary()


def spelled_as(dfa: ByteDFA, regex: str) -> ByteDFA:
    """Note that ``regex`` (interegular syntax, an atom: a group or a class) spells ``dfa`` from its
    start: where ``dfa`` is embedded, a term holding it can still be printed as a regex
    (:func:`.expr_text.to_regex`). Returns ``dfa``."""
    _SPELLED[dfa] = regex
    return dfa


class EmbeddedDfa(_engine.EmbeddedDfa):
    """An eager automaton as the pool reads it: ``rows`` (``[state, byte]`` -> state or -1),
    ``finals``, ``symbols`` (state -> ``((symbol, state after it), ...)``: calls and guards) and
    the masks of bytes whose columns are equal in every state (computed when not given). Native
    and immutable: ``classes(q)``, ``min_lengths(weights)``, ``is_dead(q)``, ``readable_bytes()``.
    """

    def __init__(
        self, rows: Sequence[Sequence[int]] | np.ndarray, finals: Sequence[bool],
        symbols: dict[int, tuple[tuple[int, int], ...]], column_classes: list[int] | None = None,
    ) -> None:
        table = np.ascontiguousarray(np.asarray(rows, dtype=np.int32).reshape(-1, 256))
        flags = np.ascontiguousarray(np.asarray(finals, dtype=np.uint8).reshape(-1))
        super().__init__(table, flags, dict(symbols), None if column_classes is None else list(column_classes))

    @classmethod
    def of(cls, dfa: ByteDFA) -> "EmbeddedDfa":
        """``dfa`` as the pool reads it: made once per automaton (pools share it: an embedded
        automaton is not changed after it is made, its rewrites are new ones), so an automaton
        shared by compiles (the canonical universe) is converted once per process."""
        got = _OF.get(dfa)
        if got is None:
            got = _OF[dfa] = cls._of(dfa)
        return got

    @classmethod
    def _of(cls, dfa: ByteDFA) -> "EmbeddedDfa":
        table = dfa.transitions[:, dfa.byte_classes].copy()
        symbols = call_edges(dfa)
        table[:, sorted(CALL_BYTES)] = -1  # (no text reads a call path: bytes UTF-8 never uses)
        groups: dict[int, list[int]] = {}
        for b, c in enumerate(dfa.byte_classes.tolist()):
            groups.setdefault(-1 if b in CALL_BYTES else c, []).append(b)
        got = cls(table, dfa.finals, symbols, [_mask(bs) for bs in groups.values()])
        got.regex = _SPELLED.get(dfa)
        return got

    def state(self) -> tuple[np.ndarray, list[bool], dict[int, tuple[tuple[int, int], ...]]]:
        return self.rows, self.finals, self.symbols
