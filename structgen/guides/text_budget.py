"""A bound in tokens on a stretch of text (a thinking block), which the decoding step applies.

A bound in *tokens* is not a property of the byte language, so it is not in the guide: a
:class:`TextBudget` says between which strings it counts, and each row keeps a
:class:`BudgetCursor` fed with the bytes of every token it takes (the row's
:class:`~structgen.guides.cursor.Cursor` does it). Once the row has spent ``max_tokens`` tokens
inside, the step allows only the tokens that write the end string (intersected with the guide's
mask), so the guide leaves the stretch. :class:`structgen.compose.Reasoning` makes one.

Example:
    >>> cursor = TextBudget(b"<think>", b"</think>", 2).cursor()
    >>> for piece in (b"<think>", b"a", b" b"):
    ...     cursor.feed(piece)
    >>> cursor.remaining
    b'</think>'
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from ..vocab.vocabulary import Vocabulary

__all__ = ["BudgetCursor", "TextBudget", "closing_tokens"]


@dataclass(frozen=True)
class TextBudget:
    """At most ``max_tokens`` tokens between ``start`` and ``end`` (bytes; an empty ``start``
    opens at the first token); see :class:`BudgetCursor`."""

    start: bytes
    end: bytes
    max_tokens: int

    def cursor(self) -> "BudgetCursor":
        """A fresh per-row cursor."""
        return BudgetCursor(self)


class BudgetCursor:
    """One row's place with respect to a :class:`TextBudget`: before the start string, inside
    (counting tokens), or past the end string. Fed the bytes of each token the row takes."""

    __slots__ = ("budget", "phase", "count", "tail", "remaining")

    BEFORE, INSIDE, DONE = 0, 1, 2

    def __init__(self, budget: TextBudget) -> None:
        self.budget = budget
        self.phase = self.INSIDE if not budget.start else self.BEFORE
        self.count = 0
        self.tail = b""  # the last bytes read (enough to find a start or end string across tokens)
        #: while closing: the bytes of the end string still to write (``None``: not closing)
        self.remaining: bytes | None = None
        self._check()

    def copy(self) -> "BudgetCursor":
        """An independent copy (for beams that share a prefix)."""
        out = BudgetCursor.__new__(BudgetCursor)
        out.budget, out.phase, out.count, out.tail, out.remaining = (
            self.budget, self.phase, self.count, self.tail, self.remaining)
        return out

    @property
    def closing(self) -> bool:
        """Whether the budget is spent and the step must write the end string now."""
        return self.remaining is not None

    def feed(self, data: bytes) -> None:
        """Account for one token's bytes."""
        b = self.budget
        if self.phase == self.DONE:
            return
        if self.phase == self.BEFORE:
            seen = self.tail + data
            at = seen.find(b.start)
            if at < 0:
                self.tail = seen[-(len(b.start) - 1):] if len(b.start) > 1 else b""
                return
            self.phase, self.tail = self.INSIDE, seen[at + len(b.start):]
            if b.end in self.tail:
                self.phase = self.DONE
            self._check()
            return
        self.count += 1
        seen = self.tail + data
        if b.end in seen:
            self.phase, self.remaining = self.DONE, None
            return
        self.tail = seen[-(len(b.end) - 1):] if len(b.end) > 1 else b""
        if self.remaining is not None:
            self.remaining = self.remaining[len(data):] if self.remaining.startswith(data) else None
        self._check()

    def _check(self) -> None:
        if self.phase == self.INSIDE and self.remaining is None and self.count >= self.budget.max_tokens:
            end, tail = self.budget.end, self.tail
            k = next((k for k in range(min(len(end) - 1, len(tail)), 0, -1) if tail.endswith(end[:k])), 0)
            self.remaining = end[k:]

    def allowed(self, vocabulary: Vocabulary) -> np.ndarray:
        """While :attr:`closing`: the tokens that write (the start of) the rest of the end string,
        or all of it and more (a bool mask over the vocabulary). Intersect with the guide's mask."""
        assert self.remaining is not None, "allowed() is for a cursor that is closing"
        return closing_tokens(vocabulary, self.remaining)


_CLOSING: "weakref.WeakKeyDictionary[Vocabulary, dict[bytes, np.ndarray]]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def closing_tokens(vocabulary: Vocabulary, rest: bytes) -> np.ndarray:
    """The tokens whose bytes are a non-empty prefix of ``rest``, or start with ``rest`` (a bool
    mask, cached per vocabulary and ``rest``)."""
    with _LOCK:
        per = _CLOSING.setdefault(vocabulary, {})
        got = per.get(rest)
    if got is None:
        got = np.zeros(vocabulary.size, dtype=bool)
        for i, tok in enumerate(vocabulary.tokens):
            if tok and (rest.startswith(tok) or tok.startswith(rest)):
                got[i] = True
        got.setflags(write=False)
        with _LOCK:
            per[rest] = got
    return got
