"""Look-arounds made exact: subset construction of an NFA whose epsilon edges may be guarded
by look-ahead / look-behind assertions.

Regular languages are closed under intersection and complement, so a look-around over a regular
pattern keeps the language regular. :mod:`structgen.automata.nfa` compiles each assertion's body ``X`` to
a byte DFA first — ``X·Σ*`` for a look-ahead (run on the rest of the input), ``Σ*·X`` for a
look-behind (run on all of the input read so far) — and marks the assertion in the Thompson NFA
as a guarded epsilon edge. This module determinises that NFA exactly, wherever the assertions
sit (inside repetitions and alternations too):

* **Look-behind** ``(?<=X)`` / ``(?<!X)``: one *tracker* per assertion, the state of the
  ``Σ*·X`` DFA on the whole input so far. Every NFA thread reads the same input, so the trackers
  are part of the DFA state, not of a thread; a guarded edge is crossed iff the tracker is
  (positive) or is not (negative) final.
* **Look-ahead** ``(?=X)`` / ``(?!X)``: crossing the edge adds an *obligation* to the thread (an
  alternating automaton's universal branch): a run of the ``X·Σ*`` DFA from its start on the rest
  of the input, which must end final (positive) or not final (negative). A configuration is an
  NFA state with its set of pending obligations; a DFA state is the trackers plus the set of
  configurations. Obligations that are decided early are settled at once: a dead run fails a
  positive one and frees a negative one; a run in a state whose every continuation is accepted
  (``X·Σ*`` once ``X`` matched) frees a positive one and fails a negative one.

A DFA state is final when some configuration has reached the NFA's accepting state with every
pending obligation met by the input's end. The construction stops at ``max_states`` DFA states
(:class:`CompileBudgetExceeded`); the result is minimised by the caller like any other table.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ..errors import CompileBudgetExceeded
from .dfa import ByteDFA

__all__ = ["ANY_BYTES", "Look", "determinise_with_looks"]

#: ``Σ*`` over bytes: one final state that reads every byte. (Input in a look-around is always
#: valid UTF-8; over bytes the automaton is the smallest.)
ANY_BYTES = ByteDFA(np.zeros((1, 1), dtype=np.int32), np.zeros(256, dtype=np.int32), np.ones(1, dtype=bool))

#: Sets of (NFA state or DFA state) held per DFA state, per allowed DFA state (a memory bound).
ENTRIES_PER_DFA_STATE = 16


class Look(NamedTuple):
    """One assertion: its direction, its polarity and the DFA of its body (``X·Σ*`` / ``Σ*·X``)."""

    ahead: bool
    negative: bool
    dfa: ByteDFA


class _Run(NamedTuple):
    """A look's DFA read over the NFA's byte classes, and what each of its states settles."""

    ahead: bool
    negative: bool
    step: list[list[int]]  # [state][class] -> state, -1 dead
    final: list[bool]
    universal: list[bool]  # every continuation from here is accepted


def _run(look: Look, class_of: np.ndarray, num_classes: int) -> _Run:
    dfa = look.dfa
    first_byte = np.full(num_classes, -1)
    first_byte[class_of[::-1]] = np.arange(255, -1, -1)
    cols = dfa.transitions[:, dfa.byte_classes[first_byte]]  # [state, our class]
    final = dfa.finals.tolist()
    if dfa.is_empty:  # no state can reach acceptance: the start is as good as dead
        cols = np.full_like(cols, -1)
        final = [False] * dfa.num_states
    # Universal states: final, total, and leading only to universal states (greatest fixed point).
    universal = np.array(final, dtype=bool) & (dfa.transitions >= 0).all(axis=1)
    while True:
        nxt = universal & np.where(dfa.transitions >= 0, universal[np.maximum(dfa.transitions, 0)], False).all(axis=1)
        if (nxt == universal).all():
            break
        universal = nxt
    return _Run(look.ahead, look.negative, cols.tolist(), final, universal.tolist())


Obligations = frozenset[tuple[int, int]]  # of (look k, state of its DFA)
Config = tuple[int, Obligations]  # (NFA state, Obligations)

_KEEP, _DROP, _FAIL = 0, 1, 2


def determinise_with_looks(
    moves: Sequence[tuple[tuple[int, tuple[int, ...]], ...]],
    eps: Sequence[tuple[int, ...]],
    conds: dict[int, tuple[int, int]],
    start: int,
    class_of: np.ndarray,
    num_classes: int,
    max_states: int,
    looks: dict[int, Look],
) -> tuple[np.ndarray, np.ndarray]:
    """Subset construction of a Thompson NFA (:class:`structgen.automata.nfa._Nfa`: state 0 accepts;
    a state has byte moves, epsilon edges, or a guard ``conds[s] = (k, next)``) whose guards
    are the assertions ``looks[k]``. ``class_of`` maps bytes to the NFA's ``num_classes``
    classes, which must refine every look's byte classes. Returns the DFA table (state 0 the
    start) over those classes and its finals."""
    runs = {k: _run(look, class_of, num_classes) for k, look in looks.items()}
    behind = sorted(k for k, r in runs.items() if not r.ahead)
    slot = {k: i for i, k in enumerate(behind)}
    accept = 0

    def settle(k: int, d: int) -> int:
        r = runs[k]
        if d < 0:
            return _DROP if r.negative else _FAIL
        if r.universal[d]:
            return _FAIL if r.negative else _DROP
        return _KEEP

    closures: dict[tuple[int, tuple[int, ...]], frozenset[Config]] = {}

    def closure(q: int, trackers: tuple[int, ...]) -> frozenset[Config]:
        """Configurations (with the obligations spawned on the way) an epsilon walk reaches."""
        key = (q, trackers)
        got = closures.get(key)
        if got is not None:
            return got
        out: set[Config] = set()
        first: Config = (q, frozenset())
        seen = {first}
        stack = [first]
        while stack:
            s, obl = stack.pop()
            nxt: list[Config] = []
            if eps[s]:
                nxt = [(t, obl) for t in eps[s]]
            elif s in conds:
                k, t = conds[s]
                r = runs[k]
                if r.ahead:
                    verdict = settle(k, 0)
                    if verdict != _FAIL:
                        nxt = [(t, obl if verdict == _DROP else obl | {(k, 0)})]
                else:
                    d = trackers[slot[k]]
                    if (d >= 0 and r.final[d]) != r.negative:
                        nxt = [(t, obl)]
            elif moves[s] or s == accept:
                out.add((s, obl))
            for c in nxt:
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        closures[key] = result = frozenset(out)
        return result

    stepped: dict[tuple[Obligations, int], Obligations | None] = {}

    def step(obl: Obligations, c: int) -> Obligations | None:
        """Every obligation read one more class; None if one of them failed."""
        key = (obl, c)
        if key in stepped:
            return stepped[key]
        kept: set[tuple[int, int]] = set()
        result: Obligations | None = None
        for k, d in obl:
            d2 = runs[k].step[d][c]
            verdict = settle(k, d2)
            if verdict == _FAIL:
                break
            if verdict == _KEEP:
                kept.add((k, d2))
        else:
            result = frozenset(kept)
        stepped[key] = result
        return result

    def is_final(configs: frozenset[Config]) -> bool:
        for q, obl in configs:
            if q == accept and all(runs[k].final[d] != runs[k].negative for k, d in obl):
                return True
        return False

    work, work_limit = 0, ENTRIES_PER_DFA_STATE * max_states
    trackers0 = tuple(0 for _ in behind)
    first = (trackers0, closure(start, trackers0))
    ids = {first: 0}
    order = [first]
    rows: list[list[int]] = []
    for trackers, configs in order:  # grows while we walk it
        row = [-1] * num_classes
        per_class: dict[int, list[Config]] = {}
        for q, obl in configs:
            for t, cs in moves[q]:
                for c in cs:
                    per_class.setdefault(c, []).append((t, obl))
        for c, targets in per_class.items():
            after = tuple(runs[k].step[d][c] if d >= 0 else -1 for k, d in zip(behind, trackers))
            new: set[Config] = set()
            for t, obl in targets:
                obl2 = step(obl, c)
                if obl2 is None:
                    continue
                for t2, spawned in closure(t, after):
                    new.add((t2, obl2 | spawned if spawned else obl2))
            if not new:
                continue
            key = (after, frozenset(new))
            i = ids.get(key)
            if i is None:
                i = ids[key] = len(order)
                if i >= max_states:
                    raise CompileBudgetExceeded("automaton states (before minimisation)", max_states)
                work += len(new)
                if work > work_limit:
                    raise CompileBudgetExceeded("configurations held by the look-around construction", work_limit)
                order.append(key)
            row[c] = i
        rows.append(row)
    table = np.array(rows, dtype=np.int32).reshape(len(rows), num_classes)
    finals = np.array([is_final(configs) for _, configs in order], dtype=bool)
    return table, finals
