"""Slow, obviously correct references the fast code is checked against."""

from __future__ import annotations

import numpy as np

import structgen
from structgen.automata.dfa import ByteDFA


def reference_mask(dfa: ByteDFA, vocab: structgen.Vocabulary, state: int) -> np.ndarray:
    """Per token, walk its bytes through the DFA: allowed iff it never dies."""
    mask = np.zeros(vocab.size, dtype=bool)
    for i, tok in enumerate(vocab.tokens):
        if tok and dfa.step(state, tok) >= 0:
            mask[i] = True
    if dfa.finals[state]:
        mask[list(vocab.eos_token_ids)] = True
    return mask


def restricted(dfa: ByteDFA, vocab: structgen.Vocabulary) -> ByteDFA:
    """``dfa`` without the bytes no token of ``vocab`` holds (what a guide over ``vocab`` reads)."""
    missing = vocab.missing_bytes
    return dfa.without_bytes(missing) if missing else dfa


def paired_states(guide: object, dfa: ByteDFA, limit: int = 400) -> list[tuple[int, int]]:
    """Breadth first over a :class:`~structgen.guides.dfa_guide.DfaGuide`'s lazy automaton and an
    eager ``dfa`` of the same language in lockstep: ``(guide state, dfa state)`` pairs, at most
    ``limit``. Checks on the way that both agree on every byte and on finality, and that each guide
    state stands for one state of ``dfa`` (a minimal DFA has one state per residual language)."""
    auto = guide.automaton  # type: ignore[attr-defined]
    if auto.is_empty:
        assert dfa.is_empty
        return []
    order = [(0, 0)]
    of = {0: 0}
    for q, d in order:
        assert auto.finals[q] == bool(dfa.finals[d]), (q, d)
        row = auto.row(q)
        for b in range(256):
            t, e = row[b], dfa.step(d, bytes([b]))
            assert (t >= 0) == (e >= 0), (q, d, b, t, e)
            if t < 0:
                continue
            if t in of:
                assert of[t] == e, (t, of[t], e)
            elif len(order) < limit:
                of[t] = e
                order.append((t, e))
    return order
