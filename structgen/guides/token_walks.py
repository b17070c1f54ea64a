"""A walk of the token trie inside one automaton: the tokens it reads, the states they end in,
and the trie nodes where the automaton may call, pass a guard or return (its *branches*), which
:mod:`.frame_masks` follows into other frames.

Example:
    >>> import numpy as np
    >>> walk = TokenWalk(np.array([5, 7]), np.array([1, 2], dtype=np.int32), [(3, 2)])
    >>> walk.ids.tolist(), walk.ends.tolist(), walk.branches
    ([5, 7], [1, 2], [(3, 2)])
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..vocab.slices import MIXED, StringSlice
from .network_view import AutomatonView

__all__ = ["Branches", "TokenWalk", "distinct", "made", "stepped_chain"]


def made(value: np.ndarray | Callable[[], np.ndarray]) -> np.ndarray:
    """``value``, or the array it makes (an array made only where it is read).

    >>> made(np.arange(2)).tolist(), made(lambda: np.arange(3)).tolist()
    ([0, 1], [0, 1, 2])
    """
    return value() if callable(value) else value


#: Up to this many values, :func:`distinct` sorts them out in Python: ``np.unique`` costs 15-20 µs
#: even for one, and the frames of a unique array past an item mostly end one token or two
#: (check-jsonschema's compose-spec: 13 such frames a step inside a string item).
FEW_VALUES = 16


def distinct(values: np.ndarray) -> tuple[list[int], np.ndarray]:
    """``values``' distinct values, sorted, and per value its position among them
    (``np.unique(values, return_inverse=True)``, the first as a list).

    >>> seen, inverse = distinct(np.array([7, 3, 7]))
    >>> seen, inverse.tolist()
    ([3, 7], [1, 0, 1])
    """
    if values.size > FEW_VALUES:
        unique, inverse = np.unique(values, return_inverse=True)
        return unique.tolist(), inverse.reshape(-1)
    listed = values.tolist()
    seen = sorted(set(listed))
    if len(seen) == 1:
        return seen, np.zeros(len(listed), dtype=np.intp)
    at = {v: i for i, v in enumerate(seen)}
    return seen, np.array([at[v] for v in listed], dtype=np.intp)


class TokenWalk:
    """Tokens below a trie node read inside one automaton from one state."""

    __slots__ = ("_ids", "size", "_ends", "_branches", "_inner", "_split", "_parts", "words", "sliced")

    def __init__(self, ids: np.ndarray | Callable[[], np.ndarray], ends: np.ndarray | Callable[[], np.ndarray],
                 branches: list[tuple[int, int]], parts: tuple["TokenWalk", ...] = (),
                 inner: tuple[np.ndarray, np.ndarray] | None = None, *,
                 size: int | None = None, words: Callable[[], np.ndarray] | None = None,
                 sliced: tuple[StringSlice, int, "TokenWalk"] | None = None) -> None:
        # token ids accepted (their bytes all read by the automaton's own edges), or how to make them
        # (with their number as ``size``: a slice's hundred thousand tokens are made only if read)
        self._ids = ids
        self.size: int = ids.size if size is None else size  # type: ignore[union-attr]
        self.words = words  # (or None) makes :attr:`ids` as packed int32 words over the vocabulary
        self._ends = ends  # (or how to compute them: only frames with guards or budgets read them)
        self._branches = branches  # (trie node, state) where a call or a return may start
        # (or None) more branch points, after ``branches``, as (nodes, states) arrays from a native
        # walk: a grammar's walk has hundreds of thousands, sorted out without a tuple each (split)
        self._inner = inner
        self._split: Branches | None = None
        self._parts = parts  # (walks whose branches, after ``branches``, are this one's too)
        # (or None) a root walk through a string slice: (the slice, its tokens' most characters, the
        # walk of its rest trie), whose tokens are the slice's of at most that many characters and the rest's
        self.sliced = sliced

    @property
    def ids(self) -> np.ndarray:
        """The token ids (int64)."""
        ids = self._ids = made(self._ids)
        return ids

    @property
    def branches(self) -> list[tuple[int, int]]:
        """``(trie node, state)`` where a call or a return may start: the walk's own, then its parts'."""
        if self._inner is not None:
            nodes, states = self._inner
            self._branches = self._branches + list(zip(nodes.tolist(), states.tolist()))
            self._inner = None
        if not self._parts:
            return self._branches
        got = self._branches + [b for part in self._parts for b in part.branches]
        self._branches, self._parts = got, ()
        return got

    @property
    def ends(self) -> np.ndarray:
        """The state each token of :attr:`ids` ends in (int32)."""
        ends = self._ends = made(self._ends)
        return ends

    def split(self, auto: AutomatonView) -> "Branches":
        """The branches sorted out (made once: a cached walk shared by the positions of a string
        is read by a new frame at each of them)."""
        got = self._split
        if got is None:
            pops: list[int] = []
            calls: list[tuple[int, int, int]] = []
            guards: list[tuple[int, int, int]] = []
            finals = auto.finals
            kinds: dict[int, tuple[bool, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]] = {}
            for m, p in self._branches:  # (a few: the roots'; the rest come as arrays)
                kind = kinds.get(p)
                if kind is None:
                    kind = kinds[p] = (bool(finals[p]), auto.calls(p), auto.guards(p))
                final, cs, gs = kind
                if final:
                    pops.append(m)
                if cs:
                    calls.extend((m, k, r) for k, r in cs)
                if gs:
                    guards.extend((m, g, r) for g, r in gs)
            if self._inner is not None and self._inner[0].size:
                # (hundreds of thousands on a grammar's walks, in a handful of states: each state
                # read once, the nodes sorted out by array; every list stays in walk order)
                nodes, states = self._inner
                seen, inverse = distinct(states)
                for p in seen:
                    if p not in kinds:
                        kinds[p] = (bool(finals[p]), auto.calls(p), auto.guards(p))
                of = [kinds[p] for p in seen]
                final = np.array([k[0] for k in of], dtype=bool)
                if final.any():
                    pops += nodes[final[inverse]].tolist()
                symbolic = np.array([bool(k[1] or k[2]) for k in of], dtype=bool)
                if symbolic.any():
                    at = np.flatnonzero(symbolic[inverse])
                    for m, p in zip(nodes[at].tolist(), states[at].tolist()):
                        _, cs, gs = kinds[p]
                        calls.extend((m, k, r) for k, r in cs)
                        guards.extend((m, g, r) for g, r in gs)
            for part in self._parts:
                more = part.split(auto)
                pops += more.pops
                calls += more.calls
                guards += more.guards
            got = self._split = Branches(pops, calls, guards)
        return got


class Branches(NamedTuple):
    """A walk's branches by kind: the nodes where the automaton may return, and the (node,
    symbol, state after) of its calls and of its guards."""

    pops: list[int]
    calls: list[tuple[int, int, int]]
    guards: list[tuple[int, int, int]]


def stepped_chain(auto: AutomatonView, q: int, k: int, longest: int) -> list[int]:
    """The states after 0, 1, ... characters of slice ``k`` from ``q``, one character at a time
    (``[]`` when the characters disagree somewhere, or a state on the way may call or return);
    a repeated last state means every further length leads there."""
    chain = [q]
    while len(chain) <= longest:
        nxt = auto.slice_successor(chain[-1], k)
        if nxt == MIXED:  # (checked first: MIXED is negative too, and is not "every one dies")
            return []
        if nxt < 0:
            break
        if auto.branching(nxt):
            return []
        chain.append(nxt)
        if nxt == chain[-2]:  # a loop: every length leads here
            break
    return chain
