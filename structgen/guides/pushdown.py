"""Pushdown guides: byte automata that call one another (a recursive transition network).

A flat automaton copies a sub-schema at every place it is used and unrolls recursion; a
:class:`~structgen.automata.network.Network` keeps one automaton per shared piece (a ``$ref``
target, a large repeated sub-schema, "any JSON value") and lets an automaton *call* another (see
:func:`structgen.automata.markers.call_marker`): reaching a call edge ``q --k--> r`` enters
automaton ``k`` at its start, and when ``k`` reaches a final state it may *return* to ``r``.
Recursion is a cycle of calls, so a recursive schema is exact (up to a nesting bound,
:data:`DEFAULT_MAX_DEPTH`).

A guide state is a set of hash-consed stacks, itself an ``int``; the :class:`PushdownGuide`
answers the same questions as a :class:`~.dfa_guide.DfaGuide` (``token_mask``, ``next_state``,
``is_final``, budgets, forced text) by composing its parts:

- :class:`~.network_view.NetworkView`: the automata, built on first use, and the frame-data rules;
- :class:`~.stacks.StackTable`: stacks and states, and the step of one byte;
- :class:`~.frame_masks.FrameMasks`: masks across frames, computed per frame and shared;
- :class:`~.distances.NetworkDistances`: token distances, for budgets.
"""

from __future__ import annotations

import threading
from typing import Any, Iterable, Sequence

import numpy as np

from .._engine import FrameSolver, NeedsFrameData, count_token_bits, set_token_bits
from ..automata.lazy import UNBUILT
from ..automata.network import Network
from ..errors import VocabularyError
from ..vocab.vocabulary import Vocabulary
from .base import DEFAULT_MASK_CACHE_BYTES, NO_WORK, Guide, NativeRow, NativeWork
from .distances import NetworkDistances
from .frame_masks import FrameMasks
from .frame_tokens import FrameTokens
from . import native_stacks
from .native_stacks import NativeStackTable, data_stacks, native_solver
from .network_view import NetworkView
from .stacks import StackTable

__all__ = ["DEFAULT_MAX_DEPTH", "PushdownGuide"]

#: Default bound on the frames of a stack (the nesting depth of called automata). A call that
#: would go deeper is not taken: output never nests deeper than this.
DEFAULT_MAX_DEPTH = 128
#: Cached (state, token) -> state transitions per guide before the cache is cleared.
NEXT_CACHE = 100_000
#: Whether networks without frame data get native stacks and frames (off: the Python ones, for
#: the differential tests).
NATIVE = True


class PushdownGuide(Guide):
    """A :class:`~.base.Guide` over a :class:`Network`: same API, states are sets of stacks.

    Example:
        >>> import structgen
        >>> from structgen.automata.markers import call_marker
        >>> vocab = structgen.Vocabulary.from_bytes([b"[", b"]", b"[]", b""], eos_token_ids=[3])
        >>> net = Network([call_marker(1), rf"\\[{call_marker(1)}?\\]"], [])
        >>> guide = PushdownGuide(net, vocab)
        >>> s = guide.advance(guide.initial_state, [0, 0, 2, 1, 1])   # [[[]]]
        >>> guide.is_final(s), guide.allowed_token_ids(s).tolist()
        (True, [3])
    """

    __slots__ = ("network", "max_depth", "_busy", "_view", "_stacks", "_native", "_dists", "_frames", "_next", "_finals_memo",
                 "_handed")

    _STATES_NOTE = " so far"

    def __init__(
        self, network: Network, vocabulary: Vocabulary, *, description: str = "",
        mask_cache_bytes: int = DEFAULT_MASK_CACHE_BYTES, max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        super().__init__(vocabulary, description=description, mask_cache_bytes=mask_cache_bytes)
        self.network = network
        self.max_depth = max_depth
        # Mask, distance and budget computations share frame caches and a set of frames being
        # computed (to cut call cycles): one thread at a time (they hold the GIL anyway).
        self._busy = threading.RLock()
        self._handed = 0  # (automata handed to the native solver before a batch's threads run: _hand_made)
        self._view = NetworkView(network, frozenset(vocabulary.missing_bytes))
        solver = native_solver(self._view, self._index, max_depth, mask_cache_bytes) if NATIVE else None
        # (the stacks are the solver's where no frame carries data or only data they can carry does, else this guide's)
        native = solver is not None and (not solver.has_frame_data or data_stacks(self._view, solver))
        self._native = NativeStackTable(self._view, max_depth, solver) if native and solver is not None else None
        if solver is not None and self._native is None:  # (the guide's stacks ask the solver which keys block a state)
            self._view.use_native_guards(solver)
        self._stacks = self._native or StackTable(self._view, max_depth)
        self._dists = NetworkDistances(self._view, self._stacks, self._index, self._busy)
        self._frames = FrameMasks(self._view, self._stacks, self._dists, self._index, solver)
        self._next: dict[tuple[int, int], int] = {}
        self._finals_memo: dict[int, bool] = {}

    def __repr__(self) -> str:
        what = f" {self.description}" if self.description else ""
        return f"<PushdownGuide{what}: {len(self.network)} automata over {self.vocabulary!r}>"

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_pushdown,
            (self.network, self.vocabulary, self.description, self._mask_cache_bytes, self.max_depth),
        )

    @property
    def num_states(self) -> int:
        """The states made so far (states are made as generation reaches them)."""
        return self._stacks.num_states()

    @property
    def num_automata(self) -> int:
        return len(self.network)

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes this guide holds: its network, the automata built so far, the masks,
        frames, stacks and transitions cached so far."""
        masks = (len(self._masks) + len(self._tight)) * self.vocabulary.size  # (the native masks are the frames')
        autos = sum(a.memory_bytes for a in self._view.autos.values())
        interned = self._stacks.memory_bytes + 80 * len(self._next)
        if self._view.unique is not None:
            interned += self._view.unique.memory_bytes
        return int(self.network.memory_bytes + masks + autos + self._frames.memory_bytes + interned)

    def is_final(self, state: int) -> bool:
        if not 0 <= state < self._stacks.num_states():
            return False
        got = self._finals_memo.get(state)
        if got is None:
            is_final = self._stacks.is_final
            got = self._finals_memo[state] = any(is_final(s) for s in self._stacks.configs[state])
        return got

    def next_state(self, state: int, token_id: int) -> int:
        table = self._stacks
        if not 0 <= state < table.num_states():
            return -1
        tok = self.vocabulary.tokens[token_id] if 0 <= token_id < self.vocabulary.size else None
        if tok is None:
            if token_id in self.vocabulary.eos_token_ids and self.is_final(state):
                return state
            return -1
        key = (state, token_id)
        got = self._next.get(key)
        if got is not None:
            return got
        if self._native is not None:
            got = self._native.next_state(state, tok)
        else:
            got = self._python_step(state, tok)
        if len(self._next) >= NEXT_CACHE:
            self._next.clear()
        self._next[key] = got
        return got

    def _python_step(self, state: int, tok: bytes) -> int:
        """:meth:`next_state` through the Python stacks (a network with frame data)."""
        table = self._stacks
        stacks: Sequence[int] = table.configs[state]
        entries, autos, view = table.stacks, self._view.autos, self._view
        recording = view.recording
        got = 0
        for b in tok:
            if len(stacks) == 1:  # the common case: one stack whose top frame reads the byte itself
                a, q, parent, data = entries[stacks[0]]
                auto = autos.get(a) or view.auto(a)
                if not auto.branching(q):
                    t = auto.flat[q * 256 + b]
                    if t == UNBUILT:
                        t = auto.step(q, b)
                    if t < 0:
                        got = -1
                        break
                    if table.nested:
                        parent = table.read_below(parent, bytes((b,)))
                    stacks = (table.stack(a, t, parent, view.unique.read(data, b) if a in recording else data),)  # type: ignore[union-attr]
                    continue
            stacks = table.step(stacks, b)
            if not stacks:
                got = -1
                break
        if got == 0:
            stacks = [sid for sid in stacks if not table.is_stuck(sid)]
            got = table.config(stacks) if stacks else -1
        return got

    def accepts_bytes(self, data: bytes) -> bool:
        table = self._stacks
        stacks: Sequence[int] = table.configs[0]
        for b in data:
            stacks = table.step(stacks, b)
            if not stacks:
                return False
        return any(table.is_final(s) for s in stacks)

    # -- masks ---------------------------------------------------------------------------------

    def _dead_end(self) -> str:
        return (
            "the vocabulary cannot spell the bytes the constraint needs next, or the output "
            f"would nest deeper than max_depth={self.max_depth}"
        )

    def _frames_of(self, state: int) -> list[FrameTokens]:
        """The frames whose tokens make up ``state``'s mask, made in Python (a network with frame
        data: :meth:`_native_words` is for the others). Callers hold ``_busy``."""
        parts: list[FrameTokens] = []
        seen: set[tuple[int, int]] = set()
        for sid in self._stacks.configs[state]:
            self._frames.collect(sid, 0, parts, seen)
        return parts

    def _deep(self, state: int) -> bool:
        """Whether a stack of ``state`` is near the nesting bound."""
        # (one token pushes far fewer than max_depth // 2 frames: each push reads an opening byte)
        depths, half = self._stacks.depths, self.max_depth // 2
        return any(depths[sid] > half for sid in self._stacks.configs[state])

    def _words_of(self, state: int) -> np.ndarray:
        """The tokens of ``state``'s frames OR-ed natively into packed int32 words: the whole
        union in one native call where the network needs no frame data (:meth:`_native_words`),
        else :meth:`_frames_of`'s frames; less, where an item below another frame may be led
        where only written values finish it, those of the tokens in danger that
        :meth:`next_state` refuses. Callers hold ``_busy``."""
        words = np.zeros((self.vocabulary.size + 31) // 32, dtype=np.int32)
        if not (self._native_words(state, words) or self._data_words(state, words)):
            for frame in self._frames_of(state):
                frame.or_into(words)
        if self._stacks.nested:
            bits = words.view(np.uint32)
            for t in self._frames.tokens_in_danger(self._stacks.configs[state]):
                if bits[t >> 5] >> (t & 31) & 1 and self.next_state(state, t) < 0:
                    bits[t >> 5] &= ~np.uint32(1 << (t & 31))
        return words

    @property
    def _stack_solver(self) -> FrameSolver | None:
        """The native solver where it keeps the stacks and makes their masks (a network without frame data)."""
        solver = self._native.solver if self._native is not None else None
        return solver if solver is not None and not solver.has_frame_data else None

    @property
    def _state_solver(self) -> FrameSolver | None:
        """The native solver where it keeps the stacks and makes the states' whole masks (cached
        there, ``FrameSolver.state_mask``): a network without frame data, or one whose stacks
        carry it (:func:`.native_stacks.data_stacks`; ``native_stacks.NATIVE_DATA`` off: none there)."""
        solver = self._native.solver if self._native is not None else None
        return None if solver is None or solver.has_frame_data and not native_stacks.NATIVE_DATA else solver

    def _native_words(self, state: int, words: np.ndarray) -> bool:
        """OR ``state``'s mask into ``words`` with the native solver's ``collect`` (the stacks
        are the solver's own: :class:`.NativeStackTable`). ``False`` where the network needs frame data."""
        solver = self._stack_solver
        if solver is None:
            return False
        self._frames.solved(solver, lambda: solver.collect(self._stacks.configs[state], words))
        return True

    def _data_words(self, state: int, words: np.ndarray) -> bool:
        """OR ``state``'s mask into ``words`` with the native solver's ``collect_data``, where the
        stacks carry frame data (:func:`.native_stacks.data_stacks`). ``False`` where they
        do not, or where the solver leaves the mask to the guide (``words`` cleared then)."""
        solver = self._native.solver if self._native is not None and native_stacks.NATIVE_DATA else None
        if solver is None or not solver.has_frame_data:
            return False
        try:
            self._frames.solved(solver, lambda: solver.collect_data(self._stacks.configs[state], words))
        except NeedsFrameData:
            words[:] = 0
            return False
        return True

    def _token_set(self, state: int) -> np.ndarray:
        with self._busy:
            words = self._words_of(state)
            mask: np.ndarray = np.unpackbits(words.view(np.uint8), bitorder="little")[: self.vocabulary.size].view(bool)
            if self._deep(state):  # near the nesting bound: the frames' tokens may push past it, so check each
                for t in np.flatnonzero(mask).tolist():
                    if self.next_state(state, t) < 0:
                        mask[t] = False
            return mask

    def _packed(self, state: int) -> np.ndarray | None:
        """The plain mask packed natively: the native solver's whole mask of the state, cached
        there (``FrameSolver.state_mask``), else :meth:`_words_of` (the masks it makes are kept
        there too). ``None`` near the nesting bound (each token is checked there: :meth:`_token_set`)."""
        self._check_state(state)
        solver = self._state_solver
        with self._busy:
            if solver is not None:
                got: np.ndarray | None = self._frames.solved(solver, lambda: solver.state_mask(state))
                if got is not None:
                    return got
            if self._deep(state):
                return None
            words = self._words_of(state)
        if self.is_final(state):
            set_token_bits(words, self._eos)
        elif not count_token_bits(words):
            raise self._dead_end_error(state)
        if solver is not None:
            solver.keep_mask(state, words)
        return words

    def _native_row(self, state: int) -> NativeRow | None:
        """The native solver fills the state's row (its whole mask: ``FrameSolver.state_mask``)
        where the network needs no frame data or its stacks carry it."""
        solver = self._state_solver
        if solver is None or not 0 <= state < self._stacks.num_states():
            return None
        return NativeRow(solver, self._need, self._prepare)

    def _prepare(self) -> None:
        """Hand the native solver the automata made since the last call (so that a batch's
        threads do not stop for them)."""
        solver = self._state_solver
        if solver is not None:
            self._hand_made(solver)

    def _need(self, k: int) -> bool:
        """Make automaton ``k`` and hand it to the native solver (``False``: no such automaton)."""
        solver = self._state_solver
        return solver is not None and self._hand_automaton(solver, k)

    def _prefetch(self, state: int) -> NativeWork:
        """The native work of a state's mask in a network with frame data that its stacks do not
        carry (elsewhere the solver fills the state's row whole: :meth:`_native_row`): the root frames of its tops
        that need no frame data and that the solver has not made yet (:meth:`.FrameMasks.unmade_roots`)."""
        with self._busy:
            solver = self._frames.solver
            if solver is None or self._state_solver is not None or not 0 <= state < self._stacks.num_states() or self._deep(state):
                return NO_WORK
            stacks = self._stacks
            wanted = self._frames.unmade_roots([stacks.stacks[sid] for sid in stacks.configs[state]])
            if not wanted:
                return NO_WORK
            self._hand_made(solver)
            return NativeWork([(solver, a, q, 0) for a, q in wanted], ())

    def _hand_made(self, solver: FrameSolver) -> None:
        """Hand the native solver the automata made since the last call (so that a batch's
        threads do not stop for them)."""
        made = self._view.autos
        if len(made) != self._handed:
            for k, got in list(made.items()):
                solver.set_automaton(k, got.auto)
            self._handed = len(made)

    def _hand_automaton(self, solver: FrameSolver, k: int) -> bool:
        """Make automaton ``k`` and hand it to the native solver (``False``: the network has none)."""
        if not 0 <= k < len(self.network):
            return False
        solver.set_automaton(k, self._view.auto(k).auto)
        return True

    def _eager_states(self) -> Iterable[int]:
        return (self.initial_state,)

    # -- distances and budgets -----------------------------------------------------------------

    def distance(self, state: int) -> int:
        """Tokens that surely finish ``state`` (bytes along a shortest completion, each byte a
        token: see :meth:`.Guide.min_length`)."""
        self._check_state(state)
        if not self._dists.spells_every_byte:
            raise VocabularyError(
                f"{self.vocabulary!r} has no single-byte token for some byte the constraint reads, "
                "so token budgets cannot be guaranteed for a pushdown guide"
            )
        tail = self._dists.tail
        return min(tail(s) for s in self._stacks.configs[state])

    def _byte_distance(self, state: int) -> int:
        self._dists.prepare()
        tail = self._dists.tail
        return min(tail(s, "bytes") for s in self._stacks.configs[state])

    @property
    def spells_every_byte(self) -> bool:
        """Whether every byte the reachable automata read is a single-byte token (see :meth:`min_length`)."""
        return self._dists.spells_every_byte

    def _farthest_bound(self, state: int) -> int | None:
        bounds = [self._dists.stack_bound(sid) for sid in self._stacks.configs[state]]
        return None if any(b is None for b in bounds) else max(bounds)  # type: ignore[type-var]

    def _farthest_after(self, state: int) -> int:
        seen: dict[tuple[int, int], int] = {}
        with self._busy:
            return max(self._frames.farthest(sid, 0, seen) for sid in self._stacks.configs[state])

    def _budget_token_set(self, state: int, budget: int) -> np.ndarray:
        with self._busy:
            plain = self.token_mask(state)
            dists, frames = self._dists, self._frames
            dists.prepare()
            ok = np.zeros(self.vocabulary.size, dtype=bool)
            stacks = self._stacks.configs[state]
            decided = np.zeros(self.vocabulary.size, dtype=bool)
            view = self._view
            for sid in stacks:
                a, q, parent, data = self._stacks.stacks[sid]
                if data and a in view.recording and view.unique.in_danger(data):  # type: ignore[union-attr]
                    continue  # (an item that may still spell a written value: each token checked below)
                walk = frames.walk(a, q, 0)
                below = 0 if parent < 0 else dists.tail(parent)
                fits = dists.dists(a, data, walk.ends) + below <= budget - 1
                ok[walk.ids[fits]] = True  # (that path alone finishes in time)
                if len(stacks) == 1:
                    clean = frames.single_path_tokens(walk)
                    decided[walk.ids[clean]] = True  # (no other path: too far means rejected)
            for t in np.flatnonzero(plain & ~ok & ~decided).tolist():
                if t in self.vocabulary.eos_token_ids and self.vocabulary.tokens[t] is None:
                    continue
                nxt = self.next_state(state, t)
                if nxt >= 0 and self.distance(nxt) <= budget - 1:
                    ok[t] = True
            ok &= plain
            return ok

    # -- forced text ---------------------------------------------------------------------------

    def _find_forced_bytes(self, state: int) -> bytes:
        table = self._stacks
        out = bytearray()
        stacks: Sequence[int] = table.configs[state]
        for _ in range(4096):  # (a guard: a forced chain ends at a final state or a choice)
            if any(table.is_final(s) for s in stacks):
                break
            nxt = table.next_bytes(stacks)
            if nxt == 0 or nxt & (nxt - 1):
                break
            b = nxt.bit_length() - 1
            out.append(b)
            stacks = table.step(stacks, b)
        result = bytes(out)
        self._forced[state] = result
        return result


def _rebuild_pushdown(
    network: Network, vocabulary: Vocabulary, description: str, mask_cache_bytes: int, max_depth: int
) -> PushdownGuide:
    return PushdownGuide(network, vocabulary, description=description, mask_cache_bytes=mask_cache_bytes, max_depth=max_depth)
