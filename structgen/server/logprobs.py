"""Log-probabilities in OpenAI's two wire forms: the chat form (``choices[i].logprobs.content``,
one entry per token with its ``top_logprobs``) and the legacy completions form (``tokens``,
``token_logprobs``, ``top_logprobs``, ``text_offset``).

The numbers are those the engine recorded (:class:`~structgen.hf.steps.TokenLogprob`): the
log-probabilities of the distribution the constraint leaves, that is the model's logits after
penalties and ``logit_bias``, renormalised over the tokens the constraint allows at that step,
before temperature and top-p. A token the constraint forbids never appears in ``top_logprobs``;
where the constraint allows a single token, its log-probability is 0.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..hf.steps import TokenLogprob
from ..vocab.vocabulary import Vocabulary

__all__ = ["TokenNames", "chat_logprobs", "completion_logprobs"]


class TokenNames:
    """A token's text and bytes as OpenAI shows them: its bytes decoded as UTF-8 (a token that
    holds part of a character shows U+FFFD for that part; ``bytes`` is exact), and for a special
    token (EOS, which the constraint may allow in ``top_logprobs``) the tokenizer's name for it."""

    def __init__(self, vocabulary: Vocabulary, tokenizer: Any) -> None:
        self.vocabulary = vocabulary
        self.tokenizer = tokenizer

    def bytes(self, token: int) -> bytes:
        """The token's bytes (empty for a special token)."""
        data = self.vocabulary.tokens[token] if 0 <= token < self.vocabulary.size else None
        return data or b""

    def text(self, token: int) -> str:
        """The token as text."""
        data = self.vocabulary.tokens[token] if 0 <= token < self.vocabulary.size else None
        if data is not None:
            return data.decode("utf-8", errors="replace")
        name = self.tokenizer.convert_ids_to_tokens(token) if hasattr(self.tokenizer, "convert_ids_to_tokens") else None
        return str(name) if name is not None else ""


def chat_logprobs(entries: Iterable[tuple[TokenLogprob, int]], names: TokenNames) -> dict[str, Any]:
    """``choices[i].logprobs`` of a chat completion (or of one streamed chunk)."""

    def one(token: int, logprob: float) -> dict[str, Any]:
        return {"token": names.text(token), "logprob": logprob, "bytes": list(names.bytes(token))}

    return {"content": [{**one(lp.token_id, lp.logprob), "top_logprobs": [one(t, p) for t, p in lp.top]}
                        for lp, _ in entries], "refusal": None}


def completion_logprobs(entries: Iterable[tuple[TokenLogprob, int]], names: TokenNames,
                        offset: int = 0) -> dict[str, Any]:
    """``choices[i].logprobs`` of a completion, the legacy form: ``top_logprobs[k]`` maps the
    top tokens' texts (and the chosen one's) to their log-probabilities; ``text_offset`` counts
    characters from the start of the choice's ``text`` (``offset``: the echoed prompt's length)."""
    tokens, values, tops, offsets = [], [], [], []
    for lp, at in entries:
        tokens.append(names.text(lp.token_id))
        values.append(lp.logprob)
        top = {names.text(t): p for t, p in lp.top}
        top.setdefault(names.text(lp.token_id), lp.logprob)
        tops.append(top)
        offsets.append(offset + at)
    return {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}
