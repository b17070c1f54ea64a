"""The states of a pushdown guide: hash-consed stacks of frames, and the step of one byte.

A *stack* is a persistent linked list of frames ``(automaton, state, parent stack, frame data)``,
hash-consed so equal stacks are one ``int`` and stacks share their tails (XGrammar's persistent
stack tree). A guide *state* is a set of stacks (a byte may both continue a number and end it,
or start two ``anyOf`` branches that call different automata), hash-consed again into the ``int``
the public API hands out. Reading a byte (:meth:`StackTable.step`) follows every stack: the top
frame reads it with its own edges, enters a callee that can start with it (a push), passes a key
guard (zero-width, the frame data changes), or returns to the caller from a final state (a pop).

Example:
    >>> from structgen.automata.markers import call_marker
    >>> from structgen.automata.network import Network
    >>> from structgen.guides.network_view import NetworkView
    >>> table = StackTable(NetworkView(Network([call_marker(1), r"\\[\\]"], []), frozenset()), max_depth=8)
    >>> after = table.step(table.configs[0], ord("["))   # "[" enters automaton 1
    >>> [table.stacks[sid][:2] for sid in after], table.depths[after[0]]
    ([(1, 1)], 2)
"""

from __future__ import annotations

import threading
from typing import Iterable, Sequence

from ..automata.expr import EPSILON, NOTHING
from ..automata.lazy import UNBUILT
from .network_view import NetworkView

__all__ = ["StackTable"]

#: A stack: (automaton, state, parent stack id or -1, frame data).
StackEntry = tuple[int, int, int, int]


class StackTable:
    """Every stack and state of one pushdown guide made so far (states are made as generation
    reaches them), and the byte step between them. Interning is thread-safe."""

    __slots__ = ("view", "max_depth", "stacks", "depths", "records", "nested", "configs", "_stack_ids", "_config_ids", "_read",
                 "_stuck", "_lock")

    def __init__(self, view: NetworkView, max_depth: int) -> None:
        self.view = view
        self.max_depth = max_depth
        self._lock = threading.Lock()
        self.stacks: list[StackEntry] = []  # stack id -> its top frame and parent
        self._stack_ids: dict[StackEntry, int] = {}
        self.depths: list[int] = []  # stack id -> its number of frames
        self.records: list[bool] = []  # stack id -> whether one of its frames is an item's (records its text)
        #: whether item frames may lie below others (unique arrays nested in items): see read_below
        self.nested = view.unique is not None and view.unique.nested
        self._read: dict[tuple[int, bytes], int] = {}
        self._stuck: dict[int, bool] = {}
        self.configs: list[tuple[int, ...]] = []  # state -> its stacks, sorted
        self._config_ids: dict[tuple[int, ...], int] = {}
        self.config([self.stack(0, 0, -1)])  # state 0: the root automaton at its start

    def num_states(self) -> int:
        """How many states are made (ids ``0 .. num_states() - 1``)."""
        return len(self.configs)

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held by the interned stacks and states."""
        return 120 * (len(self.stacks) + len(self.configs)) + 100 * (len(self._read) + len(self._stuck))

    def stack(self, a: int, q: int, parent: int, data: int = 0) -> int:
        """The id of the stack ``(a, q, data)`` on top of stack ``parent`` (-1: none)."""
        key = (a, q, parent, data)
        sid = self._stack_ids.get(key)
        if sid is None:
            with self._lock:
                sid = self._stack_ids.get(key)
                if sid is None:
                    sid = self._stack_ids[key] = len(self.stacks)
                    self.stacks.append(key)
                    self.depths.append(1 if parent < 0 else self.depths[parent] + 1)
                    self.records.append(a in self.view.recording or parent >= 0 and self.records[parent])
        return sid

    def read_below(self, sid: int, more: bytes) -> int:
        """Stack ``sid`` once every item frame in it (its top's too) has read ``more`` as well: the
        bytes a frame above them read (an item's text is all of its value, nested arrays included)."""
        if sid < 0 or not more or not self.records[sid]:
            return sid
        key = (sid, more)
        got = self._read.get(key)
        if got is None:
            a, q, parent, data = self.stacks[sid]
            if a in self.view.recording:
                read = self.view.unique.read  # type: ignore[union-attr]
                for b in more:
                    data = read(data, b)
            got = self.stack(a, q, self.read_below(parent, more), data)
            if len(self._read) >= 100_000:
                self._read.clear()
            self._read[key] = got
        return got

    def config(self, stacks: Iterable[int]) -> int:
        """The id of the state that is this set of stacks."""
        key = tuple(sorted(set(stacks)))
        cid = self._config_ids.get(key)
        if cid is None:
            with self._lock:
                cid = self._config_ids.get(key)
                if cid is None:
                    cid = self._config_ids[key] = len(self.configs)
                    self.configs.append(key)
        return cid

    def step(self, stacks: Iterable[int], b: int) -> list[int]:
        """The stacks after reading byte ``b`` (calls and returns taken as needed)."""
        view = self.view
        recording, arrays, nested = view.recording, view.arrays, self.nested
        out: list[int] = []
        seen: set[int] = set()
        todo = list(stacks)
        bit = 1 << b
        while todo:
            sid = todo.pop()
            if sid in seen:
                continue
            seen.add(sid)
            a, q, parent, data = self.stacks[sid]
            auto = view.autos.get(a) or view.auto(a)
            t = auto.flat[q * 256 + b]
            if t == UNBUILT:
                t = auto.step(q, b)
            if t >= 0:
                below = self.read_below(parent, bytes((b,))) if nested else parent
                out.append(self.stack(a, t, below, view.unique.read(data, b) if a in recording else data))  # type: ignore[union-attr]
            calls = auto.calls(q)
            if calls and self.depths[sid] < self.max_depth:
                for k, r in calls:
                    if view.first_bytes(k) & bit:
                        todo.append(self.stack(k, 0, self.stack(a, r, parent, data), view.callee_data(a, data) if a in arrays else 0))
            todo.extend(self.guarded(a, q, parent, data))
            if parent >= 0 and auto.finals[q]:
                caller = self.returned(parent, a, data) if a in recording else parent
                if caller >= 0:
                    todo.append(caller)
        return out

    def returned(self, parent: int, a: int, data: int, more: bytes = b"") -> int:
        """The caller stack ``parent`` once the item frame of ``a`` with item id ``data`` (its text so
        far, then ``more``) returns: the item's value joins the array's data; -1 if it was written already."""
        unique = self.view.unique
        assert unique is not None
        pa, pq, grand, written = self.stacks[parent]
        now = unique.after_item(written, unique.text(data) + more)
        return -1 if now < 0 else self.stack(pa, pq, self.read_below(grand, more), now)

    def guarded(self, a: int, q: int, parent: int, data: int) -> list[int]:
        """The stacks that the guards of state ``q`` pass to (zero-width steps, same frame)."""
        view = self.view
        out = []
        for g, r in (view.autos.get(a) or view.auto(a)).guards(q):
            passed = view.pass_guard(a, g, data)
            if passed is not None:
                out.append(self.stack(a, r, parent, passed))
        return out

    def is_stuck(self, sid: int) -> bool:
        """Whether the top frame of stack ``sid`` can no longer finish: every way on passes a
        guard for a key already written (a key half spelled that only a written key completes)."""
        a, q, _, data = self.stacks[sid]
        view = self.view
        auto = view.autos.get(a) or view.auto(a)
        if self.nested and self.records[sid]:
            if self._stuck_below(sid):
                return True
        elif a in view.recording:  # (an item that only values written before could finish)
            unique = view.unique
            return not unique.alive(auto.auto.exprs[q], unique.left(data))  # type: ignore[union-attr]
        return auto.has_guards and view.is_dead(a, q, data)

    def _stuck_below(self, sid: int) -> bool:
        """:meth:`is_stuck`'s question for the item frames, where they may lie below the top (the
        top's guards are asked after): whether some item frame can only be finished with a value
        written before, given what the frames above it need first
        (their languages in a row, nested calls inlined: see :meth:`.UniqueItems.flat`; a nested
        array's next items without the values it holds, :meth:`.UniqueItems.array_rest`, and
        where the item above it has few ways left to end, each way apart with its value)."""
        got = self._stuck.get(sid)
        if got is None:
            view, stacks, records = self.view, self.stacks, self.records
            unique = view.unique
            assert unique is not None
            pool = unique.pool
            got = False
            ahead = EPSILON  # (what the frames above the current one need, in a row)
            ends: tuple[bytes, ...] | None = None  # (the ways the item just above may end, when few)
            text = b""
            s = sid
            while s >= 0 and records[s]:
                a, q, parent, data = stacks[s]
                here = view.auto(a).auto.exprs[q]
                if a in view.arrays:
                    if ends is None:
                        ahead = pool.seq(ahead, unique.array_rest(a, here, data))
                    else:  # (each way the item ends, then the array without that value too)
                        afters = [(x, unique.after_item(data, text + x)) for x in ends]
                        ahead = pool.alt(pool.seq(pool.literal(x), unique.array_rest(a, here, w)) for x, w in afters if w >= 0)
                else:
                    ahead = pool.seq(ahead, here)
                recording = a in view.recording
                if ahead == NOTHING or data and recording and not unique.alive(ahead, unique.left(data)):
                    got = True
                    break
                ends = unique.completions(ahead) if recording else None
                text = unique.text(data) if recording else b""
                s = parent
            self._stuck[sid] = got
        return got

    def is_final(self, sid: int) -> bool:
        """Whether every frame of stack ``sid`` may end (the output may end here)."""
        stacks, view = self.stacks, self.view
        while True:
            a, q, parent, _ = stacks[sid]
            if not view.auto(a).finals[q]:
                return False
            if parent < 0:
                return True
            sid = parent

    def next_bytes(self, stacks: Sequence[int]) -> int:
        """The bytes that can come next from these stacks (a 256-bit int)."""
        view = self.view
        recording = view.recording
        out = 0
        seen: set[int] = set()
        todo = list(stacks)
        while todo:
            sid = todo.pop()
            if sid in seen:
                continue
            seen.add(sid)
            a, q, parent, data = self.stacks[sid]
            auto = view.auto(a)
            out |= auto.byte_set(q)
            if self.depths[sid] < self.max_depth:
                for k, _ in auto.calls(q):
                    out |= view.first_bytes(k)
            todo.extend(self.guarded(a, q, parent, data))
            if parent >= 0 and auto.finals[q]:
                caller = self.returned(parent, a, data) if a in recording else parent
                if caller >= 0:
                    todo.append(caller)
        return out
