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

The step (forced tokens within the budget, the packed mask, the token taken, the end of the
output) is the row's :class:`~structgen.guides.cursor.Cursor`, as in the LogitsProcessor, the
server engine and the vLLM plugin; this module keeps the loop and its KV cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers import DynamicCache

from ..guides.base import Guide
from ..guides.cursor import Cursor
from ..guides.matcher import Matcher
from ..guides.text_budget import TextBudget
from .bitmask import masked_scores
from .steps import forward_last, sample_token

__all__ = ["DecodeStats", "LOOP_OPTIONS", "decode"]

#: ``generate`` keyword arguments this loop understands; any other sends the helpers to ``model.generate``.
LOOP_OPTIONS = frozenset({"do_sample", "temperature", "top_k", "top_p", "pad_token_id", "eos_token_id"})


@dataclass
class DecodeStats:
    """What one :func:`decode` call did: tokens generated, of which forced, and forward passes."""

    tokens: int = 0
    forced_tokens: int = 0
    forward_passes: int = 0


def _sampling(model: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``generate``'s sampling options as :func:`sample_token`'s (``do_sample=False``: greedy).

    When sampling, ``temperature``, ``top_k`` and ``top_p`` not given come from
    ``model.generation_config``; ``None`` or ``0`` mean no warping, as in ``generate``."""
    if not options.get("do_sample"):
        return {"temperature": 0.0}
    config = getattr(model, "generation_config", None)
    chosen = {name: options[name] if name in options else getattr(config, name, None)
              for name in ("temperature", "top_k", "top_p")}
    top_p = chosen["top_p"]
    return {"temperature": chosen["temperature"] or 1.0, "top_k": chosen["top_k"] or 0,
            "top_p": 1.0 if top_p is None else top_p}


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
    text_budget: TextBudget | None = None,
) -> list[int]:
    """Generate under ``guide`` after ``input_ids`` (shape ``[1, n]``); returns the new token ids.

    Stops at EOS (not included), when the output is final and only EOS may follow, or after
    ``max_new_tokens``. ``options``: ``do_sample`` (default ``False``: greedy), ``temperature``,
    ``top_k``, ``top_p`` (defaults from ``model.generation_config`` when sampling), as in
    ``model.generate``; sampling uses torch's global random generator (``transformers.set_seed``).
    ``stats``, when given, is filled in. ``text_budget`` bounds the tokens of a thinking block
    (:class:`~structgen.guides.text_budget.TextBudget`): once spent, the step writes its end string.

    ``feed_forced_singly=True`` feeds forced tokens one forward pass each (a reference for tests
    and benchmarks: the same tokens, so greedy outputs differ from the one-pass feeding only by
    floating-point rounding of the batched forward pass).
    """
    sampling = _sampling(model, options or {})
    stats = stats if stats is not None else DecodeStats()
    cache = DynamicCache()
    attention = torch.ones_like(input_ids)

    def forward(ids: list[int] | torch.Tensor) -> torch.Tensor:
        nonlocal attention
        if not isinstance(ids, torch.Tensor):
            ids = torch.tensor([ids], dtype=torch.long, device=input_ids.device)
            attention = torch.cat([attention, attention.new_ones(1, ids.shape[1])], dim=1)
        out = forward_last(model, input_ids=ids, attention_mask=attention, past_key_values=cache, use_cache=True)
        stats.forward_passes += 1
        last: torch.Tensor = out.logits[0, -1]
        return last

    cursor: Cursor | None = None
    generated: list[int] = []

    def take_forced() -> list[int]:
        assert cursor is not None
        forced = cursor.forced(tokenizer) if fast_forward else []
        if forced and not cursor.accept_all(forced):
            raise AssertionError(f"forced tokens {forced} refused: {cursor.error}")
        stats.forced_tokens += len(forced)
        return forced

    with torch.inference_mode():
        logits = forward(input_ids)
        cursor = Cursor(Matcher.of(guide, logits.shape[-1]), max_tokens=max_new_tokens, budget_aware=budget_aware,
                        text_budget=text_budget)
        bitmask = Matcher.allocate_token_bitmask(1, logits.shape[-1])
        while not cursor.is_done:
            new = take_forced()
            if not new:
                cursor.fill(bitmask)
                if cursor.error is not None:
                    raise cursor.error
                token = sample_token(masked_scores(logits.float()[None], bitmask)[0], **sampling)
                if not cursor.accept(token):
                    raise cursor.error or AssertionError("a sampled token was refused")
                if cursor.ended:
                    break
                # What is forced after the sampled token goes into the same forward pass: the
                # logits after the sampled token alone would not be used.
                new = [token, *take_forced()]
            generated.extend(new)
            if cursor.is_done:
                break  # no need to ask the model for what comes after
            if feed_forced_singly:
                for t in new:
                    logits = forward([t])
            else:
                logits = forward(new)
    stats.tokens += len(generated)
    return generated
