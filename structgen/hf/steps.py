"""One decoding step, in pieces that the LogitsProcessor, :func:`~structgen.hf.decoding.decode`
and the server engine all use (each keeps only its own bookkeeping: rows, KV cache, events).

A guided step for one row, whatever loop runs it:

1. **Fast-forward** (:func:`forced_within`): when the guide forces tokens from the row's state and
   they fit in the budget, they are appended without asking the model.
2. Otherwise **mask** the logits: :class:`DeviceMasks` turns ``guide.token_mask(state)`` into a
   bool tensor of the logits' width on the logits' device (budget-aware near the end), cached.
3. **Choose** a token from the masked scores (:func:`sample_token`: greedy, or temperature /
   top-k / top-p sampling with transformers' semantics).
4. **Stop** when the state is final and only EOS may follow (:func:`completes`): asking the model
   for one more token could only get EOS.

A row with a :class:`~structgen.compose.reasoning.TextBudget` (``max_reasoning_tokens``) keeps
a :class:`~structgen.compose.reasoning.BudgetCursor` fed with every token it takes; once the
thinking has spent its tokens, :func:`closing_mask` narrows the row's mask to the tokens that write
the thinking's end string, so the guide leaves the thinking and the answer starts.

Before the mask, a request's :class:`LogitAdjustments` (OpenAI's ``frequency_penalty``,
``presence_penalty`` and ``logit_bias``, vLLM's ``repetition_penalty``) act on the raw logits
(:func:`adjust_logits`, with the row's :class:`TokenHistory`); after it, :func:`token_logprobs`
reads the log-probabilities of the distribution the constraint leaves.

:func:`forward_last` runs the model for the logits of the last position only.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
import torch

from ..compose.reasoning import BudgetCursor
from ..errors import UnsatisfiableConstraint, VocabularyError
from ..guides.base import Guide
from ..vocab.vocabulary import Vocabulary

__all__ = [
    "DeviceMasks",
    "LogitAdjustments",
    "TokenHistory",
    "TokenLogprob",
    "adjust_logits",
    "all_allowed",
    "closing_mask",
    "completes",
    "forced_within",
    "forward_last",
    "sample_token",
    "token_logprobs",
]

#: Most device masks kept per guide (oldest dropped first).
MAX_DEVICE_MASKS = 2048


class DeviceMasks:
    """Guides' token masks as bool tensors ready for ``scores.masked_fill(~mask, -inf)``.

    :meth:`mask` is ``guide.token_mask(state, budget=...)`` as a ``torch.bool`` tensor of the
    logits' ``width`` on their ``device``. Logits wider than the vocabulary (models pad their
    embedding matrix) get the extra columns masked; narrower logits are refused when the guide
    allows a token past them (:class:`VocabularyError`: the guide was built for another tokenizer).

    Masks are cached per guide, keyed by ``(state, effective budget, device, width)``: the budget
    is part of the key only where it narrows the mask (:meth:`Guide.effective_budget`), so every
    step but the last few of a generation shares the plain mask. At most ``capacity`` masks are
    kept per guide (the oldest go first); guides are held weakly, so a cache dies with its guide.
    Thread-safe; pickles empty (the tensors live on a device).

    Example:
        >>> import structgen, torch
        >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"b", None], eos_token_ids=[2])
        >>> guide = structgen.compile_regex("ab", vocab)
        >>> DeviceMasks().mask(guide, guide.initial_state, None, torch.device("cpu"), 4).tolist()
        [True, False, False, False]
    """

    def __init__(self, capacity: int = MAX_DEVICE_MASKS) -> None:
        self.capacity = capacity
        self._per_guide: weakref.WeakKeyDictionary[Guide, dict[tuple[Any, ...], torch.Tensor]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def mask(self, guide: Guide, state: int, budget: int | None, device: torch.device, width: int) -> torch.Tensor:
        """The tokens allowed in ``state`` with ``budget`` tokens left (``None``: no limit), as a
        ``[width]`` bool tensor on ``device``. Raises :class:`UnsatisfiableConstraint` when the
        output cannot finish within ``budget`` (see :meth:`Guide.token_mask`)."""
        tight = guide.effective_budget(state, budget)
        key = (state, tight, device, width)
        with self._lock:
            per_guide = self._per_guide.get(guide)
            if per_guide is None:
                per_guide = self._per_guide[guide] = {}
            cached = per_guide.get(key)
        if cached is not None:
            return cached
        # The plain call for the plain mask: guides that override token_mask(state) keep working.
        allowed = guide.token_mask(state) if tight is None else guide.token_mask(state, budget=tight)
        tensor = _to_tensor(guide, state, allowed, width).to(device)
        with self._lock:
            if len(per_guide) >= self.capacity:
                per_guide.pop(next(iter(per_guide)))
            per_guide[key] = tensor
        return tensor

    def __len__(self) -> int:
        """Masks cached, over every guide."""
        with self._lock:
            return sum(len(masks) for masks in self._per_guide.values())

    def values(self) -> list[torch.Tensor]:
        """The cached masks, over every guide."""
        with self._lock:
            return [mask for masks in self._per_guide.values() for mask in masks.values()]

    def __reduce__(self) -> tuple[Any, ...]:
        return (DeviceMasks, (self.capacity,))


def _to_tensor(guide: Guide, state: int, allowed: np.ndarray, width: int) -> torch.Tensor:
    if not allowed.any():
        raise VocabularyError(
            f"state {state} of {guide!r} allows no token, not even EOS: no token of its vocabulary can continue"
        )
    if width < len(allowed):
        if allowed[width:].any():
            raise VocabularyError(
                f"the scores have {width} columns but {guide!r} allows tokens up to id "
                f"{int(allowed.nonzero()[0][-1])}: the guide was built for another tokenizer"
            )
        allowed = allowed[:width]
    tensor = torch.zeros(width, dtype=torch.bool)
    tensor[: len(allowed)] = torch.from_numpy(allowed.copy())
    return tensor


@functools.lru_cache(maxsize=16)
def all_allowed(width: int, device: torch.device) -> torch.Tensor:
    """A mask that allows every column: for rows without a guide, or done with theirs."""
    return torch.ones(width, dtype=torch.bool, device=device)


_CLOSING_TENSORS: weakref.WeakKeyDictionary[Vocabulary, dict[tuple[Any, ...], torch.Tensor]] = (
    weakref.WeakKeyDictionary())


def closing_mask(mask: torch.Tensor, cursor: BudgetCursor | None, vocabulary: Vocabulary) -> torch.Tensor:
    """``mask`` narrowed, while ``cursor`` is closing a thinking whose tokens are spent, to the
    tokens that write the rest of its end string (or all of it and more); ``mask`` itself
    otherwise. Raises :class:`UnsatisfiableConstraint` when the guide allows none of them (the
    guide's language does not close the thinking with that string here).

    Example:
        >>> import structgen
        >>> from structgen.compose.reasoning import TextBudget
        >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"</", b"t>", b"</t>", None], eos_token_ids=[4])
        >>> cursor = TextBudget(b"", b"</t>", 1).cursor()
        >>> cursor.feed(b"a")
        >>> closing_mask(torch.ones(5, dtype=torch.bool), cursor, vocab).tolist()
        [False, True, False, True, False]
    """
    if cursor is None or cursor.remaining is None:
        return mask
    key = (cursor.remaining, mask.device, mask.shape[-1])
    per = _CLOSING_TENSORS.setdefault(vocabulary, {})
    close = per.get(key)
    if close is None:
        allowed = cursor.allowed(vocabulary)
        close = torch.zeros(mask.shape[-1], dtype=torch.bool)
        n = min(len(allowed), mask.shape[-1])
        close[:n] = torch.from_numpy(allowed[:n].copy())
        close = per[key] = close.to(mask.device)
    out = mask & close
    if not bool(out.any()):
        raise UnsatisfiableConstraint(
            f"the thinking spent its {cursor.budget.max_tokens} tokens, but the constraint allows no token that "
            f"writes {cursor.remaining!r} here")
    return out


# guide -> {state: final and only EOS may follow}
_COMPLETES: weakref.WeakKeyDictionary[Guide, dict[int, bool]] = weakref.WeakKeyDictionary()


def completes(guide: Guide, state: int) -> bool:
    """Whether ``state`` is final and nothing but EOS may follow: the output is done, no model
    call is needed for what comes next (it could only be EOS). Cached per (guide, state).

    Example:
        >>> import structgen
        >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"b", None], eos_token_ids=[2])
        >>> guide = structgen.compile_regex("ab?", vocab)
        >>> after_a = guide.next_state(guide.initial_state, 0)
        >>> completes(guide, after_a), completes(guide, guide.next_state(after_a, 1))
        (False, True)
    """
    per_guide = _COMPLETES.get(guide)
    if per_guide is None:
        per_guide = _COMPLETES.setdefault(guide, {})
    done = per_guide.get(state)
    if done is None:
        done = guide.is_final(state)
        if done:
            mask = guide.token_mask(state)
            eos = sorted(guide.vocabulary.eos_token_ids)
            done = int(np.count_nonzero(mask)) == int(np.count_nonzero(mask[eos]))
        per_guide[state] = done
    return done


def sample_token(
    scores: torch.Tensor,
    *,
    temperature: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    generator: torch.Generator | None = None,
) -> int:
    """A token id from one row of masked scores (``-inf`` where a token is not allowed).

    ``temperature <= 0`` is greedy: the argmax. Otherwise transformers' warpers, in their order:
    the scores are divided by ``temperature``; ``top_k > 0`` keeps the ``top_k`` best;
    ``top_p < 1`` keeps the smallest set of most likely tokens whose probability mass reaches
    ``top_p`` (at least one token); then one token is drawn from the softmax with ``generator``
    (``None``: torch's global generator of the scores' device; the probabilities move to the
    generator's device when it is another one).

    Example:
        >>> sample_token(torch.tensor([0.0, 2.0, float("-inf")]))
        1
        >>> sample_token(torch.tensor([0.0, 2.0, float("-inf")]), temperature=1.0, top_p=0.5)
        1
    """
    scores = scores.float()
    if temperature <= 0:
        return int(torch.argmax(scores))
    scores = scores / temperature
    if top_k > 0:
        kth = torch.topk(scores, min(top_k, scores.shape[-1])).values[-1]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p < 1.0:
        # transformers' TopPLogitsWarper: drop the least likely tokens whose mass is <= 1 - top_p
        ordered, index = torch.sort(scores, descending=False)
        cumulative = ordered.softmax(-1).cumsum(-1)
        drop = cumulative <= 1 - top_p
        drop[-1] = False
        scores = scores.masked_fill(drop.scatter(0, index, drop), float("-inf"))
    probs = scores.softmax(-1)
    if generator is not None and generator.device != probs.device:
        probs = probs.to(generator.device)
    return int(torch.multinomial(probs, 1, generator=generator))


# guide -> {id(tokenizer): (tokenizer, {state: forced token ids})}; the tokenizer is held so that
# its id is not reused by another object while the entry lives.
_FORCED: weakref.WeakKeyDictionary[Guide, dict[int, tuple[Any, dict[int, list[int]]]]] = (
    weakref.WeakKeyDictionary())


def _forced_tokens(guide: Guide, tokenizer: Any, state: int) -> list[int]:
    """:meth:`Guide.forced_tokens`, cached per (guide, tokenizer, state)."""
    per_guide = _FORCED.get(guide)
    if per_guide is None:
        per_guide = _FORCED.setdefault(guide, {})
    entry = per_guide.get(id(tokenizer))
    if entry is None:
        entry = per_guide.setdefault(id(tokenizer), (tokenizer, {}))
    cache = entry[1]
    forced = cache.get(state)
    if forced is None:
        forced = cache[state] = guide.forced_tokens(state, tokenizer)
    return forced


def forced_within(guide: Guide, tokenizer: Any, state: int, left: int, *,
                  budget_aware: bool) -> tuple[list[int], int]:
    """The tokens ``guide`` forces from ``state`` (fast-forward), if they fit in ``left`` tokens,
    and the state after them; ``([], state)`` when there are none or they do not fit.

    Forced tokens count against the budget: they are taken only when there are at most ``left``
    of them and, with ``budget_aware``, when the output can still finish in the tokens left after
    them (``left - len(forced) >= guide.distance(after)``). Otherwise the caller samples one
    token, which the budget-aware mask keeps on a path that finishes. ``tokenizer`` encodes the
    forced text (see :meth:`Guide.forced_tokens`).
    """
    if left <= 0:
        return [], state
    forced = _forced_tokens(guide, tokenizer, state)
    if not forced or len(forced) > left:
        return [], state
    after = guide.advance(state, forced)
    if budget_aware and left - len(forced) < guide.distance(after):
        return [], state
    return list(forced), after


_NO_LOGITS_TO_KEEP: weakref.WeakSet[Any] = weakref.WeakSet()


def forward_last(model: Any, **inputs: Any) -> Any:
    """``model(**inputs)`` computing the logits of the last position only (``logits_to_keep=1``:
    a prefill or a fast-forward chunk of n tokens skips n - 1 vocabulary projections). Models
    whose ``forward`` does not take ``logits_to_keep`` get a plain call."""
    if model not in _NO_LOGITS_TO_KEEP:
        try:
            return model(**inputs, logits_to_keep=1)
        except TypeError as e:
            if "logits_to_keep" not in str(e):
                raise
            _NO_LOGITS_TO_KEEP.add(model)
    return model(**inputs)


# -- what a request asks of the logits before the mask, and what it reads after ----------------------


@dataclass(frozen=True)
class LogitAdjustments:
    """Changes to a row's raw logits before the mask, as OpenAI and vLLM define them.

    With ``c[j]`` the number of times token ``j`` was generated so far (sampled or forced) and
    ``seen[j]`` whether it is in the prompt or was generated, each step's logits ``l`` become, in
    vLLM's order:

    - ``l[j] + logit_bias[j]`` (OpenAI's ``logit_bias``: token id -> bias, -100 to 100);
    - ``repetition_penalty`` (vLLM's and transformers', CTRL's): where ``seen[j]``,
      ``l[j] / p`` if ``l[j] > 0`` else ``l[j] * p`` (``1.0``: off; above 1 discourages repeats);
    - ``l[j] - c[j] * frequency_penalty - (c[j] > 0) * presence_penalty`` (OpenAI's formula;
      ``0.0``: off; positive values discourage repeats).

    The mask comes after: a bias or penalty only reorders the tokens the constraint allows; a
    token the constraint forbids stays forbidden whatever its bias.

    Example:
        >>> adj = LogitAdjustments(frequency_penalty=1.0, logit_bias=((2, 5.0),))
        >>> history = adj.history([0], width=3, device=torch.device("cpu"))
        >>> history.add(1); history.add(1)
        >>> adjust_logits(torch.zeros(1, 3), [adj], [history]).tolist()
        [[0.0, -2.0, 5.0]]
    """

    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    repetition_penalty: float = 1.0
    logit_bias: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        for name in ("frequency_penalty", "presence_penalty", "repetition_penalty"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)}")
        if self.repetition_penalty <= 0:
            raise ValueError(f"repetition_penalty must be positive, got {self.repetition_penalty}")
        for token, bias in self.logit_bias:
            if token < 0 or not math.isfinite(bias):
                raise ValueError(f"logit_bias: token {token} with bias {bias}: ids are >= 0, biases finite")

    @classmethod
    def from_bias(cls, logit_bias: Mapping[int, float] | None = None, **penalties: float) -> "LogitAdjustments":
        """The adjustments with ``logit_bias`` given as a mapping (sorted into the tuple)."""
        return cls(logit_bias=tuple(sorted((logit_bias or {}).items())), **penalties)

    @property
    def is_identity(self) -> bool:
        """Whether the logits are left as they are (every option at its default)."""
        return (self.frequency_penalty == 0 and self.presence_penalty == 0 and self.repetition_penalty == 1
                and not any(bias for _, bias in self.logit_bias))

    def history(self, prompt_ids: Iterable[int], *, width: int, device: torch.device) -> "TokenHistory":
        """A fresh :class:`TokenHistory` for a row with this prompt, on the logits' device."""
        history = TokenHistory(width, device)
        if self.repetition_penalty != 1:
            ids = [t for t in prompt_ids if 0 <= t < width]
            if ids:
                history.seen[torch.tensor(ids, device=device)] = True
        return history


@dataclass
class TokenHistory:
    """One row's generated-token counts and the tokens seen (prompt and output), as ``[width]``
    tensors on the logits' device: what :func:`adjust_logits` reads."""

    width: int
    device: torch.device
    counts: torch.Tensor = field(init=False)
    seen: torch.Tensor = field(init=False)

    def __post_init__(self) -> None:
        self.counts = torch.zeros(self.width, dtype=torch.float32, device=self.device)
        self.seen = torch.zeros(self.width, dtype=torch.bool, device=self.device)

    def add(self, token: int) -> None:
        """Count one generated token (sampled or forced)."""
        if 0 <= token < self.width:
            self.counts[token] += 1
            self.seen[token] = True


def adjust_logits(scores: torch.Tensor, adjustments: list[LogitAdjustments],
                  histories: list[TokenHistory | None]) -> torch.Tensor:
    """``scores`` (``[rows, width]``) with each row's :class:`LogitAdjustments` applied, given
    its :class:`TokenHistory` (``None`` for a row whose adjustments are the identity). Returns a
    new tensor; rows whose adjustments are the identity are unchanged."""
    out = scores.float().clone()
    for i, (adj, history) in enumerate(zip(adjustments, histories)):
        if adj.is_identity:
            continue
        if history is None:
            raise ValueError(f"row {i} has logit adjustments but no token history")
        row = out[i]
        if adj.logit_bias:
            ids = [t for t, _ in adj.logit_bias if t < row.shape[-1]]
            if ids:
                bias = torch.tensor([b for t, b in adj.logit_bias if t < row.shape[-1]], device=row.device)
                row = row.index_add(0, torch.tensor(ids, device=row.device), bias)
        if adj.repetition_penalty != 1:
            p = adj.repetition_penalty
            row = torch.where(history.seen, torch.where(row > 0, row / p, row * p), row)
        if adj.frequency_penalty or adj.presence_penalty:
            row = row - history.counts * adj.frequency_penalty - (history.counts > 0).float() * adj.presence_penalty
        out[i] = row
    return out


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token's log-probability and the ``top`` most likely tokens with theirs
    (``(token id, logprob)``, best first), under the distribution the constraint leaves."""

    token_id: int
    logprob: float
    top: tuple[tuple[int, float], ...] = ()


def token_logprobs(masked: torch.Tensor, token: int, top: int = 0) -> TokenLogprob:
    """``token``'s log-probability in one row of masked scores (``-inf`` where not allowed), and
    the ``top`` most likely allowed tokens.

    This is the distribution the constraint leaves: the model's (adjusted) logits renormalised
    over the allowed tokens (``log_softmax`` of the masked row), before temperature and top-p.
    A forbidden token never appears among the top ones.

    Example:
        >>> t = token_logprobs(torch.tensor([0.0, math.log(3), float("-inf")]), 0, top=5)
        >>> round(t.logprob, 4), [(i, round(p, 4)) for i, p in t.top]
        (-1.3863, [(1, -0.2877), (0, -1.3863)])
    """
    logp = torch.log_softmax(masked.float(), dim=-1)
    best: tuple[tuple[int, float], ...] = ()
    if top > 0:
        allowed = int(torch.isfinite(logp).sum())
        values, index = torch.topk(logp, min(top, allowed))
        best = tuple((int(i), float(v)) for i, v in zip(index.tolist(), values.tolist()))
    return TokenLogprob(token, float(logp[token]), best)
