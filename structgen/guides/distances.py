"""How many tokens it takes, at most, to finish an output from each automaton state.

Budget-aware masking (:meth:`Guide.token_mask` with ``budget=``) needs, for every state ``s``, a
number ``D(s)`` of tokens that is *guaranteed* to finish the output from ``s``, and that is
*consistent*: from every non-final state some token leads to a state ``s'`` with
``D(s') <= D(s) - 1``. Consistency is what makes the masking sound: if ``D(s) <= budget`` there is
always an allowed token (the witness) after which ``D(s') <= budget - 1`` still holds, so a
generation started with ``budget >= D(0)`` ends in a final state.

:func:`token_distances` builds such a ``D``:

- When every byte the automaton can read is a single-byte token of the vocabulary (true of
  byte-level BPE and of SentencePiece with byte fallback, once the bytes no token holds are cut out
  of the automaton at compile time, which the compiler does): take, for every state, one shortest
  byte path to a final state (the BFS tree of :attr:`ByteDFA.distances`) and let ``D(s)`` be the
  fewest tokens that spell a prefix of that path followed by ``D`` of where the prefix ends. The
  single byte is always a token, so ``D(s) <= distance in bytes``; the path's first token is the
  witness, so ``D`` is consistent. It is exact on literal stretches (property names, brackets,
  where the vocabulary has the multi-byte tokens) and an upper bound in general.
- Otherwise (some byte is only ever part of longer tokens): the exact fewest tokens, by a
  shortest-path search over the token transitions of every state, for small automata and
  vocabularies only; beyond :data:`EXACT_LIMIT` states × tokens it raises :class:`VocabularyError`.
"""

from __future__ import annotations

import numpy as np

from ..errors import VocabularyError
from ..automata.dfa import ByteDFA
from ..vocab.trie import token_trie, walk_state
from ..vocab.vocabulary import Vocabulary

__all__ = ["EXACT_LIMIT", "spells_every_byte", "token_distances"]

#: Most states × tokens for the exact search (vocabularies without a token for every byte).
EXACT_LIMIT = 20_000_000


def spells_every_byte(dfa: ByteDFA, vocabulary: Vocabulary) -> bool:
    """Whether every byte ``dfa`` can read is a single-byte token of ``vocabulary``."""
    singles = _single_bytes(vocabulary)
    readable = (dfa.transitions >= 0).any(axis=0)
    return all(b in singles for b in range(256) if readable[dfa.byte_classes[b]])


def token_distances(dfa: ByteDFA, vocabulary: Vocabulary) -> np.ndarray:
    """A consistent upper bound on the tokens needed to finish from each state (see module doc).

    Returns a read-only int32 array over the states, 0 exactly in final states.
    """
    out = _along_shortest_paths(dfa, vocabulary) if spells_every_byte(dfa, vocabulary) else _exact(dfa, vocabulary)
    out.flags.writeable = False
    return out


def _single_bytes(vocabulary: Vocabulary) -> frozenset[int]:
    cached = vocabulary.__dict__.get("_single_bytes")
    if cached is None:
        cached = frozenset(t[0] for t in vocabulary.tokens if t is not None and len(t) == 1)
        object.__setattr__(vocabulary, "_single_bytes", cached)
    return cached


def _token_sets(vocabulary: Vocabulary) -> tuple[frozenset[bytes], frozenset[bytes]]:
    """(walkable token byte strings, all their non-empty prefixes), cached on the vocabulary."""
    cached = vocabulary.__dict__.get("_token_sets")
    if cached is None:
        tokens = frozenset(t for t in vocabulary.tokens if t)
        prefixes = frozenset(t[:k] for t in tokens for k in range(1, len(t) + 1))
        cached = (tokens, prefixes)
        object.__setattr__(vocabulary, "_token_sets", cached)
    return cached  # type: ignore[no-any-return]


def _along_shortest_paths(dfa: ByteDFA, vocabulary: Vocabulary) -> np.ndarray:
    dist = dfa.distances.astype(np.int64)
    n = dfa.num_states
    trans = dfa.transitions
    # One step of a shortest path from every non-final state: the class whose successor is one
    # byte closer, and the smallest byte of that class.
    big = np.int64(1 << 40)
    succ_dist = np.where(trans >= 0, dist[np.maximum(trans, 0)], big)
    cls = succ_dist.argmin(axis=1)
    succ = trans[np.arange(n), cls].tolist()
    first_byte = np.full(dfa.num_classes, -1, dtype=np.int64)
    for b in range(255, -1, -1):
        first_byte[dfa.byte_classes[b]] = b
    step_byte = [bytes([int(first_byte[c])]) for c in cls.tolist()]
    tokens, prefixes = _token_sets(vocabulary)
    d = dist.tolist()
    ub = [0] * n
    for s in np.argsort(dist, kind="stable").tolist():
        if d[s] == 0:
            continue
        best = d[s]
        cur, spelled = s, b""
        while d[cur] > 0:
            spelled += step_byte[cur]
            cur = succ[cur]
            if spelled not in prefixes:
                break
            if spelled in tokens and 1 + ub[cur] < best:
                best = 1 + ub[cur]
        ub[s] = best
    return np.array(ub, dtype=np.int32)


def _exact(dfa: ByteDFA, vocabulary: Vocabulary) -> np.ndarray:
    trie = token_trie(vocabulary)
    n, walkable = dfa.num_states, len(trie.token_ids)
    if n * walkable > EXACT_LIMIT:
        raise VocabularyError(
            f"{vocabulary!r} lacks single-byte tokens for some bytes the constraint uses, so token "
            f"distances must be searched exactly, and {n} states x {walkable} tokens is over the "
            f"limit of {EXACT_LIMIT}; turn budget-aware masking off for this constraint"
        )
    node_classes = dfa.byte_classes[trie.byte]
    nxt = np.stack([walk_state(dfa, node_classes, trie, s) for s in range(n)]) if walkable else np.full((n, 0), -1)
    big = np.int64(1 << 40)
    dist = np.where(dfa.finals, 0, big).astype(np.int64)
    while True:
        via = np.where(nxt >= 0, dist[np.maximum(nxt, 0)], big).min(axis=1, initial=big) + 1
        new = np.minimum(dist, via)
        if np.array_equal(new, dist):
            break
        dist = new
    if (dist >= big).any():
        raise VocabularyError(f"some states of the automaton cannot be completed with the tokens of {vocabulary!r}")
    return dist.astype(np.int32)
