"""The transformers integration: a ``LogitsProcessor`` that masks every token a :class:`Guide` forbids.

A row's guide state is a function of the tokens generated in that row, so the processor keys
states by the generated token tuple rather than by row index. That is what makes beam search work
(beams are reordered between steps) and what lets one processor serve several ``generate`` calls.

With plain ``model.generate`` the model is asked for every token, including those the constraint
forces: there is no fast-forward on this path (a logits processor can only mask, not append).
The ``generate_*`` helpers run their own loop that fast-forwards (:mod:`structgen.hf.decoding`).
Each generated prefix has its :class:`~structgen.guides.cursor.Cursor`, the step every
integration drives: its packed mask is applied with :func:`~structgen.hf.bitmask.masked_scores`.
"""

from __future__ import annotations

import torch
import transformers

from ..errors import StructgenError, TokenRejected
from ..guides.base import Guide
from ..guides.cursor import Cursor, fill_next_token_bitmasks
from ..guides.matcher import Matcher
from ..guides.text_budget import TextBudget
from .bitmask import masked_scores

__all__ = ["LogitsProcessor"]

# States of generated prefixes more than this many tokens shorter than the current length are
# dropped (they can be recomputed from the start), so memory stays linear in the length.
_WINDOW = 64


class LogitsProcessor(transformers.LogitsProcessor):
    r"""
    [`LogitsProcessor`] that constrains generation to the language of a structgen [`Guide`] (a regex
    or a JSON Schema compiled against the tokenizer's vocabulary): at every step, each row's
    disallowed tokens get a score of `-inf`, and EOS is allowed exactly when the row's text so far
    is complete.

    One guide state is kept per generated sequence, so it works with any batch size,
    `num_return_sequences`, sampling and beam search. On the first call the processor notes the
    prompt length; on later calls it advances each row by its newly generated tokens. A call whose
    input does not continue the sequences seen so far (the first call of a new `generate`, a
    different batch size or prompt) starts afresh, so one processor can be reused for several
    `generate` calls made one after another; [`~LogitsProcessor.reset`] forces a fresh start. Do
    not share one instance between concurrent `generate` calls (the `Guide` itself is shareable).

    Rows that have emitted EOS are left alone (transformers pads them). A row whose latest token
    the guide rejects (another processor or a generation option forced it, e.g. `min_new_tokens`
    or `forced_eos_token_id`) raises [`TokenRejected`]: the processor never forces EOS to hide it.

    Logits wider than the vocabulary (models pad their embedding matrix) have the extra columns
    masked. Masks are cached per (state, budget) as packed bitmasks ([`Matcher`]).

    Never truncated: with `max_new_tokens`, masking is budget-aware. A row that has generated `k`
    tokens has a budget of `max_new_tokens - k` (counting the token being chosen), and a token is
    allowed only if the output can still reach a complete state within what is left after it
    (see [`Guide.token_mask`]). So when `generate` stops at `max_new_tokens`, the output is
    complete and valid. The mask only forbids what cannot finish: far from the end it is the plain
    mask; near the end, tokens that start something new (another array item, an optional key)
    drop out as their shortest completion stops fitting, and the model's favourite among the
    closing continuations is chosen. transformers does not pass the generation config to logits
    processors, so the budget must be given here (the `generate_*` helpers do it); it must equal
    the `max_new_tokens` passed to `generate` (a smaller value is safe too).

    Args:
        guide (`structgen.Guide`):
            The compiled constraint, built over the vocabulary of the tokenizer that made the
            prompt. Its vocabulary's EOS ids must include the ids `generate` stops on; pass
            `eos_token_id=sorted(guide.vocabulary.eos_token_ids)` to `generate` to be sure.
        max_new_tokens (`int`, *optional*):
            The generation budget; `None` (the default) masks without regard to length, so output
            cut off by `max_new_tokens` may be incomplete. Raises [`UnsatisfiableConstraint`]
            when it is smaller than `guide.min_length()`.

    Examples:

    ```python
    >>> import structgen
    >>> from transformers import LogitsProcessorList
    >>> model, tokenizer = structgen.load_default_model()
    >>> vocab = structgen.Vocabulary.from_tokenizer(tokenizer)
    >>> guide = structgen.compile_regex(r"(19|20)\d{2}-\d{2}-\d{2}", vocab)
    >>> inputs = tokenizer("Bob Marley was born on ", return_tensors="pt")
    >>> out = model.generate(
    ...     **inputs,
    ...     max_new_tokens=16,
    ...     do_sample=False,
    ...     logits_processor=LogitsProcessorList([structgen.LogitsProcessor(guide)]),
    ... )
    >>> text = vocab.decode(out[0, inputs["input_ids"].shape[1]:].tolist()).decode()
    >>> len(text), text[4], text[7]
    (10, '-', '-')
    ```
    """

    def __init__(self, guide: Guide, max_new_tokens: int | None = None, *,
                 text_budget: TextBudget | None = None) -> None:
        if not isinstance(guide, Guide):
            raise TypeError(f"LogitsProcessor needs a structgen.Guide, not {type(guide).__name__}")
        if max_new_tokens is not None:
            if max_new_tokens < 1:
                raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
            guide.check_budget(max_new_tokens)
        self.guide = guide
        self.max_new_tokens = max_new_tokens
        self.text_budget = text_budget
        self.reset()

    def reset(self) -> None:
        """Forget the current generation: the next call is taken as the first of a new one."""
        self._prompt_len: int | None = None
        self._prompts: set[tuple[int, ...]] = set()
        self._batch = 0
        self._pruned_at = 0
        self._width: int | None = None
        # generated tokens (after the prompt) -> the row's cursor; () is the start
        self._cursors: dict[tuple[int, ...], Cursor] = {}

    def __repr__(self) -> str:
        budget = f", max_new_tokens={self.max_new_tokens}" if self.max_new_tokens is not None else ""
        return f"LogitsProcessor({self.guide!r}{budget})"

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        rows = input_ids.tolist()
        width = scores.shape[-1]
        if self._starts_new_generation(rows) or width != self._width:
            self._start(rows, width)
        p = self._prompt_len
        assert p is not None
        cursors = [self._cursor_of(tuple(row[p:]), r) for r, row in enumerate(rows)]
        self._prune(len(rows[0]) - p)
        if self.max_new_tokens is not None and len(rows[0]) - p >= self.max_new_tokens:
            raise StructgenError(
                f"{self!r} was called after {self.max_new_tokens} generated tokens: generate "
                "was given a larger max_new_tokens than this processor"
            )
        bitmask = Matcher.allocate_token_bitmask(len(rows), width)
        fill_next_token_bitmasks(cursors, bitmask)
        for cursor in cursors:
            if cursor.error is not None:  # (failed closed: a library raises rather than force EOS)
                raise cursor.error
        return masked_scores(scores, bitmask)  # type: ignore[return-value]  # (a FloatTensor in, one out)

    # -- rows and cursors ------------------------------------------------------------------

    def _starts_new_generation(self, rows: list[list[int]]) -> bool:
        p = self._prompt_len
        if p is None or len(rows) != self._batch or not rows or len(rows[0]) <= p:
            return True
        for row in rows:
            if tuple(row[:p]) not in self._prompts:
                return True
            # Within one generation every row continues a sequence seen before (beams may swap
            # rows, assisted decoding may step back); a prompt that merely extends the last one
            # does not.
            if tuple(row[p:-1]) not in self._cursors:
                return True
        return False

    def _start(self, rows: list[list[int]], width: int) -> None:
        self.reset()
        self._prompt_len = len(rows[0]) if rows else 0
        self._prompts = {tuple(row) for row in rows}
        self._batch = len(rows)
        self._width = width
        # (budget: the processor checks the call count itself; the cursor's budget is the same)
        self._cursors[()] = Cursor(Matcher.of(self.guide, width), max_tokens=self.max_new_tokens,
                                   text_budget=self.text_budget)

    def _cursor_of(self, generated: tuple[int, ...], row: int) -> Cursor:
        cursor = self._cursors.get(generated)
        if cursor is not None:
            return cursor
        k = len(generated) - 1
        while k > 0 and generated[:k] not in self._cursors:
            k -= 1
        cursor = self._cursors[generated[:k]]
        for i in range(k, len(generated)):
            cursor = cursor.copy()
            if not cursor.ended:  # (after EOS: padding)
                before = cursor.state
                if not cursor.accept(generated[i]):
                    raise TokenRejected(self._rejected_message(generated[:i], generated[i], row, before),
                                        token_id=generated[i], state=before)
            self._cursors[generated[: i + 1]] = cursor
        return cursor

    def _prune(self, length: int) -> None:
        if length - self._pruned_at < _WINDOW:
            return
        keep = length - _WINDOW
        self._cursors = {k: v for k, v in self._cursors.items() if not k or len(k) >= keep}
        self._pruned_at = length

    def _rejected_message(self, before: tuple[int, ...], token: int, row: int, state: int) -> str:
        vocab = self.guide.vocabulary
        text = vocab.decode(before).decode("utf-8", errors="replace")
        if 0 <= token < vocab.size:
            what = "EOS" if token in vocab.eos_token_ids else repr(vocab.tokens[token] or b"<special token>")
        else:
            what = "outside the vocabulary"
        allowed = self.guide.allowed_token_ids(state)
        return (
            f"row {row} generated token {token} ({what}), which {self.guide!r} does not allow after "
            f"{text[-80:]!r} ({len(allowed)} tokens were allowed): something other than this processor "
            "chose it (another logits processor, min_new_tokens, forced or suppressed tokens, an "
            "assistant model) or the guide was built for a different tokenizer"
        )
