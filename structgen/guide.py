"""The Guide: a constraint lifted to a vocabulary. Immutable, shared by every sequence.

A sequence's state is a plain ``int``; the guide answers, for a state, which tokens may come next
(:meth:`Guide.token_mask`), where a token leads (:meth:`Guide.next_state`) and whether the output
may end there (:meth:`Guide.is_final`). Masks are computed on first use and cached, so only the
states that generation visits cost anything; computing one twice from two threads is harmless.
"""

from __future__ import annotations

import threading
from typing import Iterable

import numpy as np

from .errors import VocabularyError
from .fsm import ByteDFA
from .index import token_trie, walk_state
from .vocabulary import Vocabulary

__all__ = ["Guide"]


class Guide:
    """Which tokens may follow, state by state, for one constraint over one vocabulary.

    EOS is allowed exactly in final states; a final state with no other way on allows only EOS.
    Reading EOS in a final state leaves the state unchanged.

    Example:
        >>> import structgen
        >>> vocab = structgen.Vocabulary.from_bytes([b"1", b"2", b"-", b""], eos_token_ids=[3])
        >>> guide = structgen.compile_regex(r"1-2", vocab)
        >>> s = guide.initial_state
        >>> guide.allowed_token_ids(s).tolist()
        [0]
        >>> s = guide.next_state(s, 0); s = guide.next_state(s, 2); s = guide.next_state(s, 1)
        >>> guide.is_final(s), guide.allowed_token_ids(s).tolist()
        (True, [3])
    """

    __slots__ = (
        "dfa",
        "vocabulary",
        "description",
        "_rows",
        "_classes",
        "_finals",
        "_node_classes",
        "_masks",
        "_lock",
        "_eos",
        "__weakref__",
    )

    initial_state: int = 0

    def __init__(self, dfa: ByteDFA, vocabulary: Vocabulary, *, description: str = "") -> None:
        self.dfa = dfa
        self.vocabulary = vocabulary
        self.description = description
        self._rows: list[list[int]] = dfa.transitions.tolist()
        self._classes: list[int] = dfa.byte_classes.tolist()
        self._finals: list[bool] = dfa.finals.tolist()
        self._node_classes: np.ndarray | None = None
        self._masks: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()
        self._eos = np.array(sorted(vocabulary.eos_token_ids), dtype=np.int64)

    def __repr__(self) -> str:
        what = f" {self.description}" if self.description else ""
        return f"<Guide{what}: {self.num_states} states over {self.vocabulary!r}>"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.dfa, self.vocabulary, self.description))

    @property
    def num_states(self) -> int:
        """Number of automaton states (every int in ``range(num_states)`` is a valid state)."""
        return len(self._rows)

    def is_final(self, state: int) -> bool:
        """Whether the output may end in ``state``."""
        return 0 <= state < len(self._finals) and self._finals[state]

    def next_state(self, state: int, token_id: int) -> int:
        """The state after ``token_id``, or -1 if the token is not allowed in ``state``."""
        if state < 0 or state >= len(self._rows):
            return -1
        tok = self.vocabulary.tokens[token_id] if 0 <= token_id < self.vocabulary.size else None
        if tok is None:
            if token_id in self.vocabulary.eos_token_ids and self._finals[state]:
                return state
            return -1
        rows, cls = self._rows, self._classes
        for b in tok:
            state = rows[state][cls[b]]
            if state < 0:
                return -1
        return state

    def advance(self, state: int, token_ids: Iterable[int]) -> int:
        """The state after a sequence of tokens (-1 as soon as one is not allowed)."""
        for t in token_ids:
            state = self.next_state(state, t)
            if state < 0:
                return -1
        return state

    def accepts_bytes(self, data: bytes) -> bool:
        """Whether ``data`` (as a whole) is in the constraint's language."""
        s = self.dfa.step(0, data)
        return s >= 0 and self._finals[s]

    def token_mask(self, state: int) -> np.ndarray:
        """Read-only bool array over the vocabulary: ``True`` where the token may come next."""
        mask = self._masks.get(state)
        if mask is None:
            mask = self._compute_mask(state)
        return mask

    def allowed_token_ids(self, state: int) -> np.ndarray:
        """The ids allowed in ``state``, ascending."""
        return np.flatnonzero(self.token_mask(state))

    def precompute(self, states: Iterable[int] | None = None) -> "Guide":
        """Compute masks eagerly (all states by default); returns ``self``."""
        for s in range(self.num_states) if states is None else states:
            self.token_mask(s)
        return self

    def _compute_mask(self, state: int) -> np.ndarray:
        if not 0 <= state < len(self._rows):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._rows)})")
        trie = token_trie(self.vocabulary)
        if self._node_classes is None:
            self._node_classes = self.dfa.byte_classes[trie.byte]
        reached = walk_state(self.dfa, self._node_classes, trie, state)
        mask = np.zeros(self.vocabulary.size, dtype=bool)
        mask[trie.token_ids[reached >= 0]] = True
        if self._finals[state]:
            mask[self._eos] = True
        elif not mask.any():
            raise VocabularyError(
                f"no token of {self.vocabulary!r} can continue from state {state} of {self!r}: "
                "the vocabulary cannot spell the bytes the constraint needs next"
            )
        mask.flags.writeable = False
        with self._lock:
            self._masks.setdefault(state, mask)
        return mask


def _rebuild(dfa: ByteDFA, vocabulary: Vocabulary, description: str) -> Guide:
    return Guide(dfa, vocabulary, description=description)
