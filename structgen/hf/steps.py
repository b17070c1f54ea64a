"""The torch side of a decoding step, shared by the LogitsProcessor, :func:`~structgen.hf.decoding.decode`
and the server engine. The step itself (forced tokens, the packed mask with the budget, the
token taken, the end of the output, failing closed) is the row's
:class:`~structgen.guides.cursor.Cursor`; its bitmask meets the logits in :mod:`.bitmask`.

Before the mask, a request's :class:`LogitAdjustments` (OpenAI's ``frequency_penalty``,
``presence_penalty`` and ``logit_bias``, vLLM's ``repetition_penalty``) act on the raw logits
(:func:`adjust_logits`, with the row's :class:`TokenHistory`); after it, :func:`sample_token`
chooses (greedy, or temperature / top-k / top-p with transformers' semantics) and
:func:`token_logprobs` reads the log-probabilities of the distribution the constraint leaves.

:func:`forward_last` runs the model for the logits of the last position only.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import torch

__all__ = [
    "LogitAdjustments",
    "TokenHistory",
    "TokenLogprob",
    "adjust_logits",
    "forward_last",
    "sample_token",
    "token_logprobs",
]

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
