"""One row's place in a constrained generation: the one decoding step every integration drives.

The LogitsProcessor, :func:`~structgen.hf.decoding.decode`, the server's engine and the vLLM
plugin each keep a :class:`Cursor` per row and do the same four things with it, in this order:

1. **forced tokens** (:meth:`Cursor.forced`): when the guide leaves one way on and it fits in the
   budget, the tokens are appended without asking the model (:meth:`Cursor.accept` each);
2. **the mask** (:meth:`Cursor.fill`): the row's packed int32 bitmask of the next token
   (``ceil(V / 32)`` words; a bool tensor, where a caller needs one, is made from it), with the
   budget and the thinking's token budget applied;
3. **the token** the model chose (:meth:`Cursor.accept`);
4. **the end** (:attr:`Cursor.is_done`): EOS was taken, the output is complete and only EOS may
   follow, the budget is spent, or the row failed.

One budget rule: a budget-aware row (``max_tokens`` given, ``budget_aware=True``) has
``max_tokens - generated`` tokens left, the next one included, and its mask allows only tokens
after which the output can still finish in what is left (:meth:`.Guide.token_mask`); it is
refused at the start (:class:`UnsatisfiableConstraint`) when the shortest output does not fit.

**Fail closed.** A token the guide refuses, or a mask that cannot be made (a guide built for
another tokenizer, a budget that can no longer finish after a refused option, a bug that raises),
ends the row: its :attr:`~Cursor.error` is set and its mask allows EOS only from then on, never
unconstrained text; the other rows of a batch go on.
Each driver reports the error its own way (the LogitsProcessor raises it, the server returns it to
its client, vLLM logs it).

Example:
    >>> import structgen
    >>> vocab = structgen.Vocabulary.from_bytes([b"1", b"2", b"-", None], eos_token_ids=[3])
    >>> cursor = Cursor(Matcher.of(structgen.compile_regex(r"1-2", vocab)), max_tokens=3)
    >>> bitmask = Matcher.allocate_token_bitmask(1, vocab.size)
    >>> cursor.fill(bitmask, 0); bitmask.tolist()
    [[1]]
    >>> cursor.accept(0), cursor.accept(2), cursor.accept(1), cursor.is_done
    (True, True, True, True)
    >>> cursor.accept(0), cursor.error is not None, cursor.fill(bitmask, 0), bitmask.tolist()
    (False, True, None, [[8]])
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

import numpy as np

from .._engine import prefetch
from ..errors import TokenRejected, UnsatisfiableConstraint
from .base import NO_WORK, NativeRow, NativeWork
from .matcher import Matcher, fill_native_rows, native_bitmask, pack_mask
from .text_budget import BudgetCursor, TextBudget

__all__ = ["Cursor", "default_threads", "fill_next_token_bitmasks"]


class Cursor:
    """One row's state under a guide: see the module docstring.

    Args:
        matcher: the guide at the logits' width (:meth:`Matcher.of`), shared by every row.
        max_tokens: the tokens this row may generate (``None``: no bound).
        budget_aware: with ``max_tokens``, mask so that the output always completes within it.
        text_budget: a bound in tokens on the thinking (:class:`.text_budget.TextBudget`): once
            spent, the mask allows only tokens that write its end string.

    Raises :class:`UnsatisfiableConstraint` when budget-aware and the shortest output is longer
    than ``max_tokens``.
    """

    __slots__ = ("matcher", "state", "generated", "max_tokens", "budget_aware", "thinking", "error", "ended")

    def __init__(self, matcher: Matcher, *, max_tokens: int | None = None, budget_aware: bool = True,
                 text_budget: TextBudget | None = None) -> None:
        if not isinstance(matcher, Matcher):
            raise TypeError(f"a Cursor needs a structgen Matcher (Matcher.of(guide)), not {type(matcher).__name__}")
        if max_tokens is not None and max_tokens < 0:
            raise ValueError(f"max_tokens must be at least 0, got {max_tokens}")
        self.matcher = matcher
        self.state = matcher.initial_state
        #: tokens taken so far (sampled or forced; EOS not counted)
        self.generated = 0
        self.max_tokens = max_tokens
        self.budget_aware = budget_aware and max_tokens is not None
        self.thinking: BudgetCursor | None = text_budget.cursor() if text_budget is not None else None
        #: why the row failed (it then allows EOS only); ``None`` while it is well
        self.error: Exception | None = None
        #: whether EOS was taken (the output is over)
        self.ended = False
        if self.budget_aware:
            assert max_tokens is not None
            matcher.guide.check_budget(max_tokens)

    def copy(self) -> Cursor:
        """An independent copy (beams that share a prefix go separate ways)."""
        out = Cursor.__new__(Cursor)
        out.matcher, out.state, out.generated, out.max_tokens = self.matcher, self.state, self.generated, self.max_tokens
        out.budget_aware, out.error, out.ended = self.budget_aware, self.error, self.ended
        out.thinking = self.thinking.copy() if self.thinking is not None else None
        return out

    def __repr__(self) -> str:
        how = "failed" if self.error is not None else "ended" if self.ended else f"state {self.state}"
        return f"<Cursor {how}, {self.generated} tokens, over {self.matcher.guide!r}>"

    # -- where the row stands ------------------------------------------------------------------

    @property
    def budget(self) -> int | None:
        """Tokens left, the next one included (``None``: not budget-aware)."""
        if not self.budget_aware or self.max_tokens is None:
            return None
        return self.max_tokens - self.generated

    @property
    def is_done(self) -> bool:
        """Whether the row needs no more tokens: EOS was taken, the row failed, the output is
        complete and only EOS may follow (:meth:`Matcher.is_terminated`: asking the model could
        only give EOS), or ``max_tokens`` are spent."""
        if self.ended or self.error is not None:
            return True
        if self.max_tokens is not None and self.generated >= self.max_tokens:
            return True
        return self.matcher.is_terminated(self.state)

    @property
    def is_complete(self) -> bool:
        """Whether the output so far is complete (a final state of a row that did not fail)."""
        return self.error is None and self.matcher.guide.is_final(self.state)

    def fail(self, error: Exception) -> None:
        """End the row: from now on its mask allows EOS only (the first error is kept)."""
        if self.error is None:
            self.error = error

    # -- the step ------------------------------------------------------------------------------

    def packed_mask(self) -> np.ndarray:
        """The row's mask of the next token as ``[words]`` int32 (read-only): EOS only for a
        failed row, every token once EOS was taken (what follows is padding)."""
        if self.ended:
            return _all_allowed(self.matcher.words)
        if self.error is None:
            try:
                words = self.matcher.packed_mask(self.state, budget=self.budget)
                if self.thinking is not None and self.thinking.remaining is not None:
                    words = self._closing(words, self.thinking.remaining)
                return words
            except Exception as e:  # noqa: BLE001 - the row fails closed, the batch goes on
                self.fail(e)
        return self.matcher.eos_only()

    @property
    def _masked_by_guide(self) -> bool:
        """Whether the row's next mask is its guide's: not ended, not failed, no spent thinking."""
        return not (self.ended or self.error is not None or (self.thinking is not None and self.thinking.remaining is not None))

    def prefetch_work(self) -> NativeWork:
        """What the row's next mask asks of the native engine first, if not cached
        (:meth:`.Matcher.prefetch_work`); nothing for an ended or failed row, or where finding it
        fails (the fill then raises it for this row alone)."""
        if not self._masked_by_guide:
            return NO_WORK
        try:
            return self.matcher.prefetch_work(self.state, budget=self.budget)
        except Exception:  # noqa: BLE001 - the fill meets it again and fails the row
            return NO_WORK

    def native_row(self) -> NativeRow | None:
        """How a batch fills the row's next mask natively (:meth:`.Matcher.native_row`), or
        ``None``: an ended or failed row, a spent thinking, or where finding it fails (the fill
        then raises it for this row alone)."""
        if not self._masked_by_guide:
            return None
        try:
            return self.matcher.native_row(self.state, budget=self.budget)
        except Exception:  # noqa: BLE001 - the fill meets it again and fails the row
            return None

    def fill(self, bitmask: np.ndarray, row: int = 0) -> None:
        """Write :meth:`packed_mask` into row ``row`` of ``bitmask`` (``[batch, words]`` int32:
        :meth:`Matcher.allocate_token_bitmask`, or the numpy view of a pinned tensor)."""
        m = self.matcher
        if bitmask.ndim != 2 or bitmask.shape[1] != m.words or bitmask.dtype != np.int32:
            raise ValueError(f"bitmask must be an int32 array of shape [batch, {m.words}] for {m.vocab_size} "
                             f"tokens, not {bitmask.dtype} {tuple(bitmask.shape)}")
        bitmask[row] = self.packed_mask()

    def _closing(self, words: np.ndarray, rest: bytes) -> np.ndarray:
        """``words`` narrowed to the tokens that write ``rest`` (the end of a spent thinking)."""
        m = self.matcher
        assert self.thinking is not None
        closing = pack_mask(self.thinking.allowed(m.guide.vocabulary), m.words)
        out: np.ndarray = words & closing
        if not out.any():
            raise UnsatisfiableConstraint(
                f"the thinking spent its {self.thinking.budget.max_tokens} tokens, but the constraint allows no token "
                f"that writes {rest!r} here")
        return out

    def accept(self, token: int) -> bool:
        """Take ``token``: EOS in a final state ends the output; any other token the mask allows
        moves the state. A token the mask refuses fails the row (:class:`TokenRejected`: EOS only
        from now on) and returns ``False``, as does any token after EOS or a failure."""
        token = int(token)
        if self.ended or self.error is not None:
            if self.error is None:
                self.fail(TokenRejected(f"token {token} after EOS", token_id=token, state=self.state))
            return False
        m = self.matcher
        try:
            if token in m.guide.vocabulary.eos_token_ids and m.guide.is_final(self.state):
                self.ended = True
                return True
            nxt = m.accept_token(self.state, token, budget=self.budget)
        except Exception as e:  # noqa: BLE001 - the row fails closed, the batch goes on
            self.fail(e)
            return False
        if nxt < 0:
            self.fail(TokenRejected(self._refusal(token), token_id=token, state=self.state))
            return False
        self.state = nxt
        self.generated += 1
        if self.thinking is not None:
            data = m.guide.vocabulary.tokens[token] if 0 <= token < m.guide.vocabulary.size else None
            self.thinking.feed(data or b"")
        return True

    def accept_all(self, tokens: Iterable[int]) -> bool:
        """:meth:`accept` each of ``tokens`` in turn; ``False`` at the first refused one."""
        return all(self.accept(t) for t in tokens)

    def _refusal(self, token: int) -> str:
        guide = self.matcher.guide
        vocab = guide.vocabulary
        if 0 <= token < vocab.size:
            what = "EOS before the output is complete" if token in vocab.eos_token_ids else repr(
                vocab.tokens[token] or b"<special token>")
        else:
            what = "outside the vocabulary"
        budget = "" if self.budget is None else f" with {self.budget} tokens left"
        return f"token {token} ({what}) is not allowed by {guide!r} in state {self.state}{budget}"

    def forced(self, tokenizer_or_encode: Any) -> list[int]:
        """The tokens the guide forces now (fast-forward: :meth:`.Guide.forced_tokens`), if they
        fit: at most the tokens left and, budget-aware, leaving enough to finish after them;
        ``[]`` otherwise (the caller then asks the model for one token, which the budget-aware
        mask keeps on a path that finishes). Not taken yet: :meth:`accept` them."""
        if not self._masked_by_guide:
            return []
        left = None if self.max_tokens is None else self.max_tokens - self.generated
        if left is not None and left <= 0:
            return []
        m = self.matcher
        try:
            forced = m.forced_tokens(self.state, tokenizer_or_encode)
            if not forced or (left is not None and len(forced) > left):
                return []
            if self.budget_aware:
                assert left is not None
                after = m.guide.advance(self.state, forced)
                if left - len(forced) < m.guide.distance(after):
                    return []
        except Exception as e:  # noqa: BLE001 - the row fails closed, the batch goes on
            self.fail(e)
            return []
        return list(forced)


_ALL: dict[int, np.ndarray] = {}


def _all_allowed(words: int) -> np.ndarray:
    found = _ALL.get(words)
    if found is None:
        found = _ALL[words] = np.full(words, -1, dtype=np.int32)
        found.flags.writeable = False
    return found


def default_threads() -> int:
    """The cores this process may run on (the batch fill's threads by default)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1


def _fill_native(cursors: Sequence[Cursor | None], bitmask: np.ndarray, indices: Sequence[int] | None,
                 threads: int) -> list[int]:
    """Fill the rows whose guides fill them natively (:func:`.fill_native_rows`); answers the
    positions in ``cursors`` of the rows left to the serial fill (no native row, or one the
    native core left: see :meth:`.Guide._native_row`)."""
    rows: list[tuple[Any, int, int]] = []
    natives: list[NativeRow] = []
    where: list[int] = []
    left: list[int] = []
    width = bitmask.shape[1] if native_bitmask(bitmask) else -1
    for i, cursor in enumerate(cursors):
        if cursor is None:
            continue
        got = cursor.native_row() if cursor.matcher.words == width else None
        if got is None:
            left.append(i)
        else:
            rows.append((got.core, cursor.state, i if indices is None else indices[i]))
            natives.append(got)
            where.append(i)
    if rows:
        left += [where[j] for j in fill_native_rows(rows, natives, bitmask, threads)]
        left.sort()
    return left


def fill_next_token_bitmasks(cursors: Sequence[Cursor | None], bitmask: np.ndarray,
                             indices: Sequence[int] | None = None, *, threads: int | None = None) -> None:
    """The batch step: row ``indices[i]`` of ``bitmask`` (default ``i``) gets the mask of
    ``cursors[i]``; a ``None`` cursor (an unconstrained row) gets every token. The cursors may
    have different guides; their matchers must share the bitmask's width.

    The rows whose guides have a native core (a DFA guide; a pushdown guide whose network needs
    no frame data) are filled in one native call (:func:`structgen._engine.fill_rows`), their
    cold masks made on ``threads`` native threads (default: :func:`default_threads`; rows that
    share an expression pool on one thread). The others (and the states a native core leaves to
    its guide) are filled in turn, after their cold work was done on the threads
    (:func:`structgen._engine.prefetch`: root frames, DFA masks)."""
    if threads is None:
        threads = default_threads()
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    serial = _fill_native(cursors, bitmask, indices, threads)
    if threads > 1 and len(serial) > 1:
        frames: list[tuple[Any, ...]] = []
        masks: list[tuple[Any, ...]] = []
        for i in serial:
            work = cursors[i].prefetch_work()  # type: ignore[union-attr]
            frames += work.frames
            masks += work.masks
        if len(frames) + len(masks) > 1:
            prefetch(frames, masks, threads)
    for i, cursor in enumerate(cursors):
        if cursor is None:
            bitmask[i if indices is None else indices[i]] = -1
    for i in serial:
        cursors[i].fill(bitmask, i if indices is None else indices[i])  # type: ignore[union-attr]
