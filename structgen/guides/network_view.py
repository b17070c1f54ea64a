"""The automata of a :class:`~structgen.automata.network.Network` as a pushdown guide walks them.

An :class:`AutomatonView` is one automaton ready to walk: its byte table without the call paths
(calls are taken by the guide, never by a token's bytes), its calls and key guards per state, and
which states may branch off (call, guard or return). A :class:`NetworkView` builds them on first
use and knows the rules of *frame data* (the keys an object has written, as a bitset): which
guards pass, and which states can no longer finish once some keys are written. The stacks, the
frame masks and the distances of a :class:`~.pushdown.PushdownGuide` all read the network
through one view.

Example:
    >>> from structgen.automata.markers import call_marker
    >>> from structgen.automata.network import Network
    >>> view = NetworkView(Network([call_marker(1), r"\\[\\]"], []), frozenset())
    >>> [callee for callee, _ in view.auto(0).calls[0]]   # the root calls automaton 1 at its start
    [1]
    >>> chr(view.first_bytes(1).bit_length() - 1), view.reachable()
    ('[', [0, 1])
"""

from __future__ import annotations

import numpy as np

from ..automata.dfa import ByteDFA
from ..automata.markers import CALL_BYTES, CLOSE_GUARD, GUARD_FIRST, call_edges
from ..automata.network import Network
from ..vocab.slices import char_successors

__all__ = ["AutomatonView", "NetworkView"]


class AutomatonView:
    """One automaton of a network, ready to walk: its byte table without the call paths, its
    calls, and which states may branch off (call or return)."""

    __slots__ = (
        "dfa", "table", "flat", "width", "cls", "cls_np", "finals", "calls", "guards", "branching", "_edges",
        "_bytes", "_succ", "_preds",
    )

    def __init__(self, dfa: ByteDFA, missing: frozenset[int] = frozenset()) -> None:
        self.dfa = dfa
        table = dfa.transitions.copy()
        marker_classes = sorted({int(dfa.byte_classes[b]) for b in CALL_BYTES})
        table[:, marker_classes] = -1  # no token walks a call path: calls are taken by the guide
        self.cls_np = dfa.byte_classes.astype(np.int64)
        edges = call_edges(dfa)
        self.calls = {q: c for q, es in edges.items() if (c := tuple(e for e in es if e[0] < GUARD_FIRST))}
        self.guards = {q: g for q, es in edges.items() if (g := tuple((k - GUARD_FIRST, r) for k, r in es if k >= GUARD_FIRST))}
        if missing:  # bytes no token holds: a column of their own, dead, then trim what dies with it
            table = np.concatenate([table, np.full((table.shape[0], 1), -1, dtype=table.dtype)], axis=1)
            self.cls_np = self.cls_np.copy()
            self.cls_np[sorted(missing)] = table.shape[1] - 1
            table = _trim_live(table[:, self.cls_np], dfa.finals, edges)
            self.cls_np = np.arange(256, dtype=np.int64)
        self.table = table
        # one flat list (state * width + class), read per byte by the guide's step
        self.flat: list[int] = table.ravel().tolist()
        self.width = int(table.shape[1])
        self.cls: list[int] = self.cls_np.tolist()
        self.finals: list[bool] = dfa.finals.tolist()
        branching = dfa.finals.copy()
        branching[list(self.calls)] = True
        branching[list(self.guards)] = True
        self.branching: list[bool] = branching.tolist()
        self._preds: list[list[tuple[int, int]]] | None = None
        self._edges: dict[int, dict[int, int]] = {}
        self._bytes: dict[int, int] = {}
        self._succ: dict[int, list[int]] = {}

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held: the table (and its list copies) and the edge maps made so far."""
        return int(self.table.nbytes * 3 + 64 * len(self._edges))

    def preds(self) -> list[list[tuple[int, int]]]:
        """Per state, its predecessors ``(state, guard)`` (guard -1: a byte or a call)."""
        got = self._preds
        if got is None:
            got = [[] for _ in range(self.dfa.num_states)]
            src, col = np.nonzero(self.table >= 0)
            for s, t in set(zip(src.tolist(), self.table[src, col].tolist())):
                got[t].append((s, -1))
            for q, cs in self.calls.items():
                for _, r in cs:
                    got[r].append((q, -1))
            for q, gs in self.guards.items():
                for g, r in gs:
                    got[r].append((q, g))
            self._preds = got
        return got

    def slice_successors(self, k: int) -> list[int]:
        """Per state, where every character of slice ``k`` leads (see :mod:`structgen.vocab.slices`)."""
        got = self._succ.get(k)
        if got is None:
            view = ByteDFA(self.table, self.cls_np.astype(np.int32), self.dfa.finals)
            got = self._succ[k] = char_successors(view, k).tolist()
        return got

    def edges(self, q: int) -> dict[int, int]:
        """``{byte: next state}`` of ``q`` (call paths left out)."""
        got = self._edges.get(q)
        if got is None:
            row = self.table[q][self.cls_np]
            nz = np.flatnonzero(row >= 0)
            got = self._edges[q] = dict(zip(nz.tolist(), row[nz].tolist()))
        return got

    def byte_set(self, q: int) -> int:
        """The bytes ``q`` reads, as a 256-bit int."""
        got = self._bytes.get(q)
        if got is None:
            got = 0
            for b in self.edges(q):
                got |= 1 << b
            self._bytes[q] = got
        return got


class NetworkView:
    """The :class:`AutomatonView` of every automaton of ``network`` (built on first use, with
    the bytes no token holds cut out), the bytes each can start with, and the rules of frame data.
    Caches may be filled twice by racing threads; the values are the same."""

    __slots__ = ("network", "missing", "autos", "_firsts", "_dead")

    def __init__(self, network: Network, missing: frozenset[int]) -> None:
        self.network = network
        self.missing = missing
        # automaton -> its view; hot loops read this dict directly and fall back to auto()
        self.autos: dict[int, AutomatonView] = {}
        self._firsts: dict[int, int] = {}
        self._dead: dict[tuple[int, int], frozenset[int]] = {}

    def auto(self, k: int) -> AutomatonView:
        """The view of automaton ``k``."""
        got = self.autos.get(k)
        if got is None:
            got = self.autos[k] = AutomatonView(self.network.dfa(k), self.missing)
        return got

    def first_bytes(self, k: int) -> int:
        """The bytes a string of automaton ``k`` may start with (256-bit int)."""
        got = self._firsts.get(k)
        if got is None:
            self._firsts[k] = 0  # (a call cycle at the start state adds nothing new)
            auto = self.auto(k)
            got = 0
            todo, seen = [0], {0}
            while todo:  # (through guards: zero-width)
                q = todo.pop()
                got |= auto.byte_set(q)
                for j, _ in auto.calls.get(q, ()):
                    got |= self.first_bytes(j)
                for _, r in auto.guards.get(q, ()):
                    if r not in seen:
                        seen.add(r)
                        todo.append(r)
            self._firsts[k] = got
        return got

    def reachable(self) -> list[int]:
        """The automata the root reaches by calls (all built)."""
        reach = [0]
        seen = {0}
        for k in reach:
            for calls in self.auto(k).calls.values():
                for j, _ in calls:
                    if j not in seen:
                        seen.add(j)
                        reach.append(j)
        return reach

    def pass_guard(self, a: int, g: int, data: int) -> int | None:
        """The frame data after guard ``g`` of automaton ``a``, or ``None`` if it does not pass:
        a key already written, or a close before every required key is written."""
        if g == CLOSE_GUARD:
            return data if not self.network.required.get(a, 0) & ~data else None
        return None if data >> g & 1 else data | 1 << g

    def dead_states(self, a: int, data: int) -> frozenset[int]:
        """States of ``a`` that cannot finish with keys ``data`` written. Backward from the final
        states, a key guard passable only for a key not written yet. Exact for the objects the
        compiler writes: past a key's guard, the required keys not yet written can always be
        written and the object closed, so only the keys written so far block a way."""
        key = (a, data)
        got = self._dead.get(key)
        if got is None:
            auto = self.auto(a)
            preds = auto.preds()
            live = set(np.flatnonzero(auto.dfa.finals).tolist())
            todo = list(live)
            while todo:
                t = todo.pop()
                for src, g in preds[t]:
                    if src not in live and (g < 0 or g == CLOSE_GUARD or not data >> g & 1):
                        live.add(src)
                        todo.append(src)
            got = self._dead[key] = frozenset(range(auto.dfa.num_states)) - live
        return got


def _trim_live(table: np.ndarray, finals: np.ndarray, calls: dict[int, tuple[tuple[int, int], ...]]) -> np.ndarray:
    """``table`` (one column per byte) without edges into states that can no longer reach a
    final state (by bytes, or by calls: a callee is taken to be able to finish)."""
    n = table.shape[0]
    preds: list[list[int]] = [[] for _ in range(n)]
    src, col = np.nonzero(table >= 0)
    for s, t in zip(src.tolist(), table[src, col].tolist()):
        preds[t].append(s)
    for q, cs in calls.items():
        for _, r in cs:
            preds[r].append(q)
    live = finals.copy()
    todo = np.flatnonzero(finals).tolist()
    while todo:
        t = todo.pop()
        for s in preds[t]:
            if not live[s]:
                live[s] = True
                todo.append(s)
    out = table.copy()
    out[(out >= 0) & ~live[np.maximum(out, 0)]] = -1
    return out
