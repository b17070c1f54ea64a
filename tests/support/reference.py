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
