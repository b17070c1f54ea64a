"""A pushdown guide's stacks kept by the native engine, where its network needs no frame data
(or only that of objects in any key order and of unique arrays over items that call nothing:
:func:`data_stacks`; where unique arrays nest in items, only the frames with data).

A pushdown guide's frames are made natively (the :class:`~structgen._engine.FrameSolver`), but
for those that need frame data (unique items, key guards: :func:`frame_data_automata`). A network
without frame data has its stacks, states and byte step made natively too
(``cpp/engine/stack_table.h``): :class:`NativeStackTable` is a :class:`~.stacks.StackTable` whose
stacks and states are made by the solver, mirrored here when Python first reads them after the
solver made more (the lists the frames, distances and budgets read), so a token's step is one
native call. Automata are handed to the
solver as its steps and frames reach them (:func:`solved`).

Example:
    >>> from structgen.automata.markers import call_marker
    >>> from structgen.automata.network import Network
    >>> from structgen.vocab.index import VocabularyIndex
    >>> from structgen.vocab.vocabulary import Vocabulary
    >>> from structgen.guides.network_view import NetworkView
    >>> view = NetworkView(Network([call_marker(1), r"\\[\\]"], []), frozenset())
    >>> index = VocabularyIndex(Vocabulary.from_bytes([b"[", b"]", b""], eos_token_ids=[2]))
    >>> table = NativeStackTable(view, 8, native_solver(view, index, 8))
    >>> state = table.next_state(0, b"[")   # "[" enters automaton 1
    >>> [table.stacks[sid][:2] for sid in table.configs[state]], table.depths[table.configs[state][0]]
    ([(1, 1)], 2)
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, TypeVar

from .._engine import GUARD_FIRST, FrameSolver
from ..vocab.index import VocabularyIndex
from .network_view import NetworkView
from .stacks import StackEntry, StackTable

__all__ = ["NATIVE_DATA", "NativeStackTable", "data_stacks", "frame_data_automata", "guarded_automata", "held_automata", "native_solver",
           "solved"]

#: Cached walks and frames per native solver before its caches are cleared.
FRAME_CACHE = 200_000
#: Whether frames with frame data (key guards, unique items) are made natively: a state's whole mask
#: where the stacks carry the data (``FrameSolver.collect_data``), else each frame the guide does not
#: keep (``FrameSolver.data_frame``); off, the Python frames make them (the differential tests only).
NATIVE_DATA = True
_T = TypeVar("_T")


def native_solver(view: NetworkView, index: VocabularyIndex, max_depth: int,
                  mask_cache_bytes: int = 64 << 20) -> FrameSolver:
    """The native frames, stacks and states' masks (cached up to ``mask_cache_bytes``) of
    ``view``'s network over ``index``'s vocabulary. Where the network has frame data (unique
    items, key guards), the automata that carry it are marked (:func:`frame_data_automata`): the
    solver refuses their frames and those that enter them (``NeedsFrameData``), and the stacks are
    the guide's (``FrameSolver.has_frame_data``)."""
    # (automata are handed over as frames and steps reach them: see solved)
    autos: list[object] = [view.autos[k].auto if k in view.autos else None for k in range(len(view.network))]
    solver = FrameSolver(autos, index.native, FRAME_CACHE, max_depth, mask_cache_bytes)
    held = frame_data_automata(view, held=True)
    for k in sorted(frame_data_automata(view)):
        solver.mark_frame_data(k, own_plain=k not in held)
    return solver


def frame_data_automata(view: NetworkView, held: bool = False) -> frozenset[int]:
    """The automata of ``view``'s network whose frames carry frame data: unique arrays, their
    items, and the automata that pass a key guard. ``held``: those whose own frames the guide
    makes (all but the items that call nothing and pass no guard: their frames need no data, the
    guide narrows them where an item may still spell a written value)."""
    pool = view.network.pool
    guarded = guarded_automata(view)
    items = (k for k in view.recording if not held or k in guarded or pool.symbols_in(view.roots[k]))
    return frozenset(k for k in (*view.arrays, *items, *guarded) if k < len(view.network))


def held_automata(view: NetworkView) -> frozenset[int]:
    """The items that call a unique array nested in them, and their arrays: where the solver shares
    the frame data for the frames only (``FrameSolver.frames_only``), the frames the guide makes."""
    unique = view.unique
    if unique is None:
        return frozenset()
    pool = view.network.pool
    items = {k for k in unique.recording if pool.symbols_in(view.roots[k])}
    return frozenset(items | {k for k, each in unique.arrays.items() if items.intersection(each)})


def guarded_automata(view: NetworkView) -> frozenset[int]:
    """The automata the root reaches that pass a key guard (objects in any key order)."""
    pool = view.network.pool
    return frozenset(k for k in view.reachable() if any(s >= GUARD_FIRST for s in pool.symbols_in(view.roots[k])))


#: What an automaton is to the frame data the native stacks carry (``FrameSolver.share_data``;
#: held: an item that calls a unique array nested in it, or its array, whose frames the guide makes).
_PLAIN, _ARRAY, _ITEM, _GUARDED, _HELD = 0, 1, 2, 3, 4


def data_stacks(view: NetworkView, solver: FrameSolver) -> bool:
    """Where the network's frame data is that of objects in any key order (the keys written) and of
    unique arrays over items that call nothing (no unique array inside an item, no item that is
    such an object), let the solver's stacks carry it (``FrameSolver.share_data``: the keys as
    bits, the item ids and set ids of ``view.unique.data``), so a token's step is one native call
    and the masks are native too (``FrameSolver.collect_data``). Whether it did.

    Where unique arrays nest in items (items that call nothing else), the stacks stay the guide's
    (an item's text there is every byte the frames above it read: :meth:`.StackTable.read_below`),
    but the data is shared for the frames (``FrameSolver.frames_only``): the guide makes the frames
    of those items and their arrays, and asks the solver for the others with their data
    (``FrameSolver.data_frame``: objects in any key order, the nested arrays and their items).

    Example:
        >>> import structgen
        >>> vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(128)] + [b""], eos_token_ids=[128])
        >>> schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
        >>> guide = structgen.compile_json_schema(schema, vocab, key_order="any")
        >>> guide._native is not None   # (its stacks are native: data_stacks shared the keys written)
        True
        >>> state = guide.advance(guide.initial_state, list(b'{"b":1,"'))
        >>> sorted(chr(t) for t in guide.allowed_token_ids(state))   # ("b" is written)
        ['a']
    """
    unique = view.unique
    pool = view.network.pool
    kinds = [_PLAIN] * len(view.network)
    for k in guarded_automata(view):
        if k < len(kinds):
            kinds[k] = _GUARDED
    if unique is not None:
        held = held_automata(view)
        if any(not pool.symbols_in(view.roots[k]) <= unique.arrays.keys() for k in held if k in unique.recording):
            return False  # (an item that calls what is no unique array)
        for k in unique.arrays:
            if kinds[k] != _PLAIN:
                return False
            kinds[k] = _HELD if k in held else _ARRAY
        for k in unique.recording:
            kinds[k] = _HELD if k in held else _ITEM
    if any(kinds[k] == _PLAIN for k in frame_data_automata(view)):
        return False  # (frame data the stacks cannot carry)
    # (an object's required keys where it passes guards: one the root does not reach keeps its own)
    required = [view.network.required.get(k, 0) if kind == _GUARDED else 0 for k, kind in enumerate(kinds)]
    solver.share_data(kinds, required, None if unique is None else unique.data)
    return not solver.frames_only


def solved(solver: FrameSolver, view: NetworkView, ask: Callable[[], _T]) -> _T:
    """``ask()`` of the solver, handing it the automata it reaches that it was not given yet (it
    raises ``KeyError(k)`` for one; what it made before stays made)."""
    while True:
        try:
            return ask()
        except KeyError as e:
            k = e.args[0]
            solver.set_automaton(k, view.auto(k).auto)


#: The mirror of a native table's lists: stacks, depths, records, configs (as :class:`.StackTable`'s).
_Mirror = tuple[list[StackEntry], list[int], list[bool], list[tuple[int, ...]]]


class NativeStackTable(StackTable):
    """A :class:`StackTable` made by the native solver: :attr:`stacks`, :attr:`configs`,
    :attr:`depths` and :attr:`records` mirror the solver's, read when Python first asks after the
    solver made more (a step of the serving path reads none of them: its masks and steps are
    native, and copying each new stack and state cost 1.6 µs a step)."""

    __slots__ = ("solver", "_mirror", "_made", "_read_at")

    def __init__(self, view: NetworkView, max_depth: int, solver: FrameSolver) -> None:
        # (not StackTable.__init__: the solver made stack 0 and state 0 already)
        self.view = view
        self.max_depth = max_depth
        self.solver = solver
        self._lock = threading.Lock()
        self._mirror: _Mirror = ([], [], [], [])
        self._made, self._read_at = 1, 0  # (a count of the solver's makes, and the count the mirror has read)
        self.nested = False
        self._stack_ids, self._config_ids, self._read, self._stuck = {}, {}, {}, {}

    @property
    def stacks(self) -> list[StackEntry]:  # type: ignore[override]
        return self._synced()[0]

    @property
    def depths(self) -> list[int]:  # type: ignore[override]
        return self._synced()[1]

    @property
    def records(self) -> list[bool]:  # type: ignore[override]
        return self._synced()[2]

    @property
    def configs(self) -> list[tuple[int, ...]]:  # type: ignore[override]
        return self._synced()[3]

    def num_states(self) -> int:
        return self.solver.num_configs

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes of the mirror (the solver's own are the frames')."""
        stacks, _, _, configs = self._mirror
        return 100 * (len(stacks) + len(configs))

    def _synced(self) -> _Mirror:
        """The mirror, with the stacks and states the solver made since it was last read. (A
        reader that sees it read sees it whole: the count it has read moves only once it is.)"""
        if self._made != self._read_at:
            solver = self.solver
            with self._lock:
                made = self._made  # (what the solver makes from here on moves the count again)
                stacks, depths, records, configs = self._mirror
                n = len(stacks)
                if solver.num_stacks != n:
                    entries, more, recorded = solver.stacks_from(n)
                    stacks += entries
                    depths += more
                    records += recorded
                m = len(configs)
                if solver.num_configs != m:
                    configs += solver.configs_from(m)
                self._read_at = made
        return self._mirror

    def stack(self, a: int, q: int, parent: int, data: int = 0) -> int:
        sid = self.solver.stack(a, q, parent, data)  # (data: where the stacks carry frame data, see data_stacks)
        self._made += 1
        return sid

    def config(self, stacks: Iterable[int]) -> int:
        cid = self.solver.config(list(stacks))
        self._made += 1
        return cid

    def step(self, stacks: Iterable[int], b: int) -> list[int]:
        solver = self.solver
        out = solved(solver, self.view, lambda: solver.step(list(stacks), b))
        self._made += 1
        return out

    def next_state(self, state: int, token: bytes) -> int:
        """The state after ``token``'s bytes from ``state`` (-1: refused)."""
        solver = self.solver
        got = solved(solver, self.view, lambda: solver.next_state(state, token))
        self._made += 1
        return got

