"""The automata of a :class:`~structgen.automata.network.Network` as a pushdown guide walks them.

An :class:`AutomatonView` is one automaton of the network over one vocabulary: a
:class:`~structgen.automata.lazy.LazyAutomaton` of its expression (restricted to the bytes the
vocabulary can spell), its calls and key guards per state, and which states may branch off (call,
guard or return); everything is built state by state, as walks reach it. A :class:`NetworkView`
builds the views on first use and knows the rules of *frame data* (the keys an object has written,
as a bitset): which guards pass, and which states can no longer finish once some keys are
written. The stacks, the frame masks and the distances of a :class:`~.pushdown.PushdownGuide` all
read the network through one view.

Example:
    >>> from structgen.automata.markers import call_marker
    >>> from structgen.automata.network import Network
    >>> view = NetworkView(Network([call_marker(1), r"\\[\\]"], []), frozenset())
    >>> [callee for callee, _ in view.auto(0).calls(0)]   # the root calls automaton 1 at its start
    [1]
    >>> chr(view.first_bytes(1).bit_length() - 1), view.reachable()
    ('[', [0, 1])
"""

from __future__ import annotations

import numpy as np

from .._engine import FrameSolver
from ..automata.expr import ALL_BYTES, NOTHING, byte_mask
from ..automata.expr_rewrite import restrict
from ..automata.lazy import UNBUILT, LazyAutomaton
from ..automata.markers import CLOSE_GUARD, GUARD_FIRST
from ..automata.network import Network
from ..vocab.slices import char_successor
from .unique_items import UniqueItems

__all__ = ["AutomatonView", "NetworkView"]

_NO_EDGES: tuple[tuple[int, int], ...] = ()


class AutomatonView:
    """One automaton of a network, ready to walk and built lazily: byte steps, the calls and
    guards of each state, and which states may branch off (call, guard or return)."""

    __slots__ = ("auto", "flat", "finals", "has_guards", "_calls", "_guards", "_branching", "_edges", "_bytes", "_succ")

    def __init__(self, auto: LazyAutomaton) -> None:
        self.auto = auto
        self.flat = auto.flat  # (the automaton's own array: it grows in place)
        self.finals = auto.finals
        self.has_guards = any(k >= GUARD_FIRST for k in auto.pool.symbols_in(auto.root))
        self._calls: dict[int, tuple[tuple[int, int], ...]] = {}
        self._guards: dict[int, tuple[tuple[int, int], ...]] = {}
        self._branching: dict[int, bool] = {}
        self._edges: dict[int, dict[int, int]] = {}
        self._bytes: dict[int, int] = {}
        self._succ: dict[tuple[int, int], int] = {}

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held: the automaton built so far and the edge maps."""
        return int(self.auto.memory_bytes + 64 * len(self._edges))

    @property
    def num_states(self) -> int:
        return self.auto.num_states

    def step(self, q: int, b: int) -> int:
        """The state after byte ``b`` from ``q`` (-1: dead)."""
        t = self.flat[q * 256 + b]
        return self.auto.step(q, b) if t == UNBUILT else t

    def _split(self, q: int) -> None:
        calls, guards = [], []
        for k, r in self.auto.symbols_of(q):
            if k < GUARD_FIRST:
                calls.append((k, r))
            else:
                guards.append((k - GUARD_FIRST, r))
        self._calls[q] = tuple(calls) if calls else _NO_EDGES
        self._guards[q] = tuple(guards) if guards else _NO_EDGES

    def calls(self, q: int) -> tuple[tuple[int, int], ...]:
        """``((callee, return state), ...)`` of ``q``."""
        got = self._calls.get(q)
        if got is None:
            self._split(q)
            got = self._calls[q]
        return got

    def guards(self, q: int) -> tuple[tuple[int, int], ...]:
        """``((guard, next state), ...)`` of ``q`` (zero-width steps checked against frame data)."""
        got = self._guards.get(q)
        if got is None:
            self._split(q)
            got = self._guards[q]
        return got

    def branching(self, q: int) -> bool:
        """Whether a walk may branch off at ``q``: a return (final), a call or a guard."""
        got = self._branching.get(q)
        if got is None:  # (read off the state's expression: its row need not be built)
            auto = self.auto
            got = self._branching[q] = self.finals[q] or bool(auto.pool.first_symbols(auto.exprs[q]))
        return got

    def edges(self, q: int) -> dict[int, int]:
        """``{byte: next state}`` of ``q``."""
        got = self._edges.get(q)
        if got is None:
            got = self._edges[q] = self.auto.edges(q)
        return got

    def byte_set(self, q: int) -> int:
        """The bytes ``q`` reads, as a 256-bit int."""
        got = self._bytes.get(q)
        if got is None:
            got = self._bytes[q] = byte_mask(self.edges(q))
        return got

    def slice_successor(self, q: int, k: int) -> int:
        """Where every character of slice ``k`` leads from ``q`` (see :mod:`structgen.vocab.slices`)."""
        key = (q, k)
        got = self._succ.get(key)
        if got is None:
            got = self._succ[key] = char_successor(self.auto, q, k)
        return got

    def table_for(self, states: np.ndarray) -> np.ndarray:
        """The transition table with the rows of ``states`` built (for vectorised walks)."""
        return self.auto.table_for(states)


class NetworkView:
    """The :class:`AutomatonView` of every automaton of ``network`` (made on first use, with the
    bytes no token holds cut out, and calls of automata that can then accept nothing too), the
    bytes each can start with, and the rules of frame data. Caches may be filled twice by racing
    threads; the values are the same."""

    __slots__ = ("network", "missing", "autos", "roots", "unique", "recording", "arrays", "_firsts", "_frontiers", "_needs_item",
                 "_guards_solver", "_guards_handed")

    def __init__(self, network: Network, missing: frozenset[int]) -> None:
        self.network = network
        self.missing = missing
        pool = network.pool
        allowed = ALL_BYTES & ~byte_mask(missing)
        dead: frozenset[int] = frozenset()
        while True:  # (an automaton that accepts nothing makes its calls dead: a fixpoint)
            roots = [restrict(pool, e, allowed, dead) for e in network.exprs]
            now = frozenset(k for k, e in enumerate(roots) if e == NOTHING)
            if now == dead:
                break
            dead = now
        self.roots = roots
        #: frame data of unique arrays and their items (``None``: the network has none)
        self.unique = UniqueItems(network.unique_items, roots, pool) if network.unique_items else None
        self.recording: set[int] = self.unique.recording if self.unique else set()  # (grows: items per set)
        self.arrays: dict[int, tuple[int, ...]] = self.unique.arrays if self.unique else {}
        self._needs_item: dict[tuple[int, int], frozenset[int]] = {}
        # automaton -> its view; hot loops read this dict directly and fall back to auto()
        self.autos: dict[int, AutomatonView] = {}
        self._firsts: dict[int, int] = {}
        self._frontiers: dict[tuple[int, int], tuple[bool, frozenset[int]]] = {}
        self._guards_solver: FrameSolver | None = None  # (use_native_guards)
        self._guards_handed: set[int] = set()

    def use_native_guards(self, solver: FrameSolver) -> None:
        """Answer :meth:`is_dead` through ``solver``'s key guards (``FrameSolver.blocking_guards``:
        the frontier read off the terms' structure, kept per term), the automata handed over as
        asked; the search of :meth:`_frontier` stays the answer without a native solver."""
        self._guards_solver = solver

    def auto(self, k: int) -> AutomatonView:
        """The view of automaton ``k``."""
        got = self.autos.get(k)
        if got is None:
            got = self.autos[k] = AutomatonView(LazyAutomaton(self.network.pool, self.roots[k]))
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
                for j, _ in auto.calls(q):
                    got |= self.first_bytes(j)
                for _, r in auto.guards(q):
                    if r not in seen:
                        seen.add(r)
                        todo.append(r)
            self._firsts[k] = got
        return got

    def reachable(self) -> list[int]:
        """The automata the root reaches by calls (read off their expressions: nothing is built)."""
        pool = self.network.pool
        reach = [0]
        seen = {0}
        for k in reach:
            for j in sorted(pool.symbols_in(self.roots[k])):
                if j < GUARD_FIRST and j not in seen:
                    seen.add(j)
                    reach.append(j)
        return reach

    def pass_guard(self, a: int, g: int, data: int) -> int | None:
        """The frame data after guard ``g`` of automaton ``a``, or ``None`` if it does not pass:
        a key already written, or a close before every required key is written."""
        if g == CLOSE_GUARD:
            return data if not self.network.required.get(a, 0) & ~data else None
        return None if data >> g & 1 else data | 1 << g

    def callee_data(self, a: int, data: int) -> int:
        """The frame data a callee of a frame of ``a`` with ``data`` starts with: for the item of a
        unique array, a new item of its set (see :class:`.UniqueItems`); else 0."""
        return self.unique.item_start(data) if a in self.arrays else 0  # type: ignore[union-attr]

    def items_needed(self, a: int, q: int) -> frozenset[int]:
        """The item automata state ``q`` of the unique array ``a`` may call next when it cannot
        close without another item (empty when it can)."""
        key = (a, q)
        got = self._needs_item.get(key)
        if got is None:
            auto = self.auto(a)
            seen, todo = {q}, [q]
            calls: set[int] = set()
            while todo:
                s = todo.pop()
                if auto.finals[s]:
                    calls.clear()
                    break
                calls.update(k for k, _ in auto.calls(s))
                for t in auto.edges(s).values():
                    if t not in seen:
                        seen.add(t)
                        todo.append(t)
            got = self._needs_item[key] = frozenset(calls)
        return got

    def is_dead(self, a: int, q: int, data: int) -> bool:
        """Whether state ``q`` of ``a`` can no longer finish with keys ``data`` written: it cannot
        end before its next guard, and every next guard is the key guard of a written key (a key
        half spelled that only written keys complete). Exact for the objects the compiler writes:
        past a key's guard, the required keys not yet written can always be written and the object
        closed, so only the next guards can block the way."""
        solver = self._guards_solver
        if solver is not None:
            if a not in self._guards_handed:
                solver.set_automaton(a, self.auto(a).auto)
                self._guards_handed.add(a)
            blocking: int | None = solver.blocking_guards(a, q)
            return blocking is not None and not blocking & ~data
        free, guards = self._frontier(a, q)
        return not free and all(g != CLOSE_GUARD and data >> g & 1 for g in guards)

    def _frontier(self, a: int, q: int) -> tuple[bool, frozenset[int]]:
        """Whether ``q`` reaches a final state without passing a guard, and the guards that come
        first on the other ways (a search over bytes and calls, stopping at guards). Breadth
        first, and done at a final state or a close guard (no keys written can then block ``q``,
        as ``KeyGuards::search``): a value's string is left by its closing quote within a few
        bytes, never walked to its length bound (depth first, every position of a long string
        searched its whole rest: 140 ms a token along Transfer::Workflow's ARN of up to 1,600 characters)."""
        key = (a, q)
        got = self._frontiers.get(key)
        if got is None:
            auto = self.auto(a)
            guards: set[int] = set()
            free = False
            seen, todo = {q}, [q]
            i = 0
            while i < len(todo) and CLOSE_GUARD not in guards:
                s = todo[i]
                i += 1
                if auto.finals[s]:
                    free = True
                    break
                guards.update(g for g, _ in auto.guards(s))
                nxt = list(auto.edges(s).values()) + [r for _, r in auto.calls(s)]
                for t in nxt:
                    if t not in seen:
                        seen.add(t)
                        todo.append(t)
            got = self._frontiers[key] = (free, frozenset(guards))
        return got
