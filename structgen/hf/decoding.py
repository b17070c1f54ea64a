"""Our own decode loop for one sequence, with fast-forward (forced tokens appended unsampled).

``model.generate`` asks the model for every token, even where the constraint leaves one way on
(the next key of an object, the rest of an enum value). This loop asks the guide first: when
:meth:`Guide.forced_tokens` has tokens for the current state they are appended without sampling
and fed to the model in *one* forward pass that extends the KV cache like a short prefill, so the
keys the engine writes prompt the value the model writes next. Otherwise it takes the logits of
the last position, masks them with :meth:`Guide.token_mask` (budget-aware when asked), samples
(greedy by default) and feeds that token *together with* the tokens forced after it: the logits
after the sampled token alone would go unused, so a sampled token followed by a forced key costs
one forward pass, not two.

Budgets: forced tokens count against ``max_new_tokens``. With ``budget_aware``, they are appended
only if the output can still finish in the tokens left after them (``left - len(forced) >=
guide.distance(state after)``); otherwise the step falls back to sampling one token, which the
budget-aware mask keeps on a path that finishes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..guides.base import Guide

__all__ = ["DecodeStats", "LOOP_OPTIONS", "decode"]

#: ``generate`` keyword arguments this loop understands; any other sends the helpers to ``model.generate``.
LOOP_OPTIONS = frozenset({"do_sample", "temperature", "top_k", "top_p", "pad_token_id", "eos_token_id"})

# guide -> {id(tokenizer): (tokenizer, {state: forced token ids})}; the tokenizer is held so that
# its id is not reused by another object while the entry lives.
_FORCED: "weakref.WeakKeyDictionary[Guide, dict[int, tuple[Any, dict[int, list[int]]]]]" = (
    weakref.WeakKeyDictionary())


@dataclass
class DecodeStats:
    """What one :func:`decode` call did: tokens generated, of which forced, and forward passes."""

    tokens: int = 0
    forced_tokens: int = 0
    forward_passes: int = 0


def _forced_tokens(guide: Guide, tokenizer: Any, state: int) -> list[int]:
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


def _only_eos(guide: Guide, state: int) -> bool:
    """A final state from which nothing but EOS may follow: the output is done."""
    if not guide.is_final(state):
        return False
    mask = guide.token_mask(state)
    return int(np.count_nonzero(mask)) == int(np.count_nonzero(mask[sorted(guide.vocabulary.eos_token_ids)]))


def _choose(logits: torch.Tensor, mask: np.ndarray, options: dict[str, Any], generator: Any) -> int:
    allowed = torch.from_numpy(np.array(mask, dtype=bool)).to(logits.device)
    width = logits.shape[-1]
    if width > allowed.shape[0]:  # logits wider than the vocabulary: the extra columns are masked
        allowed = torch.cat([allowed, allowed.new_zeros(width - allowed.shape[0])])
    scores = logits.float().masked_fill(~allowed[:width], float("-inf"))
    if not options.get("do_sample"):
        return int(torch.argmax(scores))
    temperature = options.get("temperature") or 1.0
    scores = scores / temperature
    top_k = options.get("top_k") or 0
    if top_k > 0:
        kth = torch.topk(scores, min(top_k, scores.shape[-1])).values[-1]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    top_p = options.get("top_p")
    if top_p is not None and top_p < 1.0:
        # transformers' TopPLogitsWarper: drop the least likely tokens whose mass is <= 1 - top_p
        ordered, index = torch.sort(scores, descending=False)
        cumulative = ordered.softmax(-1).cumsum(-1)
        drop = cumulative <= 1 - top_p
        drop[-1] = False
        scores = scores.masked_fill(drop.scatter(0, index, drop), float("-inf"))
    probs = scores.softmax(-1)
    return int(torch.multinomial(probs, 1, generator=generator))


_NO_LOGITS_TO_KEEP: "weakref.WeakSet[Any]" = weakref.WeakSet()


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


def decode(
    model: Any,
    tokenizer: Any,
    guide: Guide,
    input_ids: torch.Tensor,
    *,
    max_new_tokens: int,
    budget_aware: bool = True,
    fast_forward: bool = True,
    options: dict[str, Any] | None = None,
    stats: DecodeStats | None = None,
    feed_forced_singly: bool = False,
) -> list[int]:
    """Generate under ``guide`` after ``input_ids`` (shape ``[1, n]``); returns the new token ids.

    Stops at EOS (not included), when the output is final and only EOS may follow, or after
    ``max_new_tokens``. ``options``: ``do_sample`` (default ``False``: greedy), ``temperature``,
    ``top_k``, ``top_p`` (defaults from ``model.generation_config`` when sampling), as in
    ``model.generate``; sampling uses torch's global random generator (``transformers.set_seed``).
    ``stats``, when given, is filled in.

    ``feed_forced_singly=True`` feeds forced tokens one forward pass each (a reference for tests
    and benchmarks: the same tokens, so greedy outputs differ from the one-pass feeding only by
    floating-point rounding of the batched forward pass).
    """
    from transformers import DynamicCache

    options = dict(options or {})
    if options.get("do_sample"):
        config = getattr(model, "generation_config", None)
        for name in ("temperature", "top_k", "top_p"):
            if name not in options and config is not None:
                options[name] = getattr(config, name, None)
    stats = stats if stats is not None else DecodeStats()
    eos = guide.vocabulary.eos_token_ids
    cache = DynamicCache()
    attention = torch.ones_like(input_ids)

    def forward(ids: list[int] | torch.Tensor) -> torch.Tensor:
        nonlocal attention
        if not isinstance(ids, torch.Tensor):
            ids = torch.tensor([ids], dtype=torch.long, device=input_ids.device)
            attention = torch.cat([attention, attention.new_ones(1, ids.shape[1])], dim=1)
        out = forward_last(model, input_ids=ids, attention_mask=attention, past_key_values=cache, use_cache=True)
        stats.forward_passes += 1
        return out.logits[0, -1]

    def take_forced(state: int, left: int) -> tuple[list[int], int]:
        """The forced tokens from ``state`` if they fit in ``left`` tokens, and the state after."""
        if not fast_forward or left <= 0:
            return [], state
        forced = _forced_tokens(guide, tokenizer, state)
        if not forced or len(forced) > left:
            return [], state
        after = guide.advance(state, forced)
        if budget_aware and left - len(forced) < guide.distance(after):
            return [], state
        stats.forced_tokens += len(forced)
        return forced, after

    generated: list[int] = []
    state = guide.initial_state
    with torch.inference_mode():
        logits = forward(input_ids)
        while True:
            left = max_new_tokens - len(generated)
            if left <= 0:
                break
            new, state = take_forced(state, left)
            if not new:
                mask = guide.token_mask(state, budget=left if budget_aware else None)
                token = _choose(logits, mask, options, None)
                if token in eos:
                    break
                state = guide.next_state(state, token)
                # What is forced after the sampled token goes into the same forward pass: the
                # logits after the sampled token alone would not be used.
                more, state = take_forced(state, left - 1)
                new = [token, *more]
            generated.extend(new)
            if len(generated) >= max_new_tokens or _only_eos(guide, state):
                break  # no need to ask the model for what comes after
            if feed_forced_singly:
                for t in new:
                    logits = forward([t])
            else:
                logits = forward(new)
    stats.tokens += len(generated)
    return generated
