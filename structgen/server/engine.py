"""The batching engine: one worker thread runs the model with continuous (iteration-level) batching.

Requests join the running batch at the next decoding step and leave it the moment they finish.
Each row keeps its own guide state (an ``int``), sampling settings and random generator; the
packed masks of the whole batch are filled into one bitmask and applied in one ``masked_fill``. A
row's step is its :class:`~structgen.guides.cursor.Cursor`, as in the LogitsProcessor, the
one-sequence loop and the vLLM plugin: forced tokens within its budget, its packed mask, the token
taken, the end of its output; a row whose cursor fails gets the error as its last event.

KV cache: one ``transformers.DynamicCache`` for the batch, rows left-padded to a common length
with a 2-D attention mask and explicit position ids (``generate``'s own left-padding scheme).
Joining requests are prefilled together as a left-padded batch and their cache is concatenated
onto the running one; finished rows are dropped with ``index_select`` and leading all-padding
columns trimmed. Copies happen only when the batch changes, not at every step.

transformers 5 ships a continuous-batching manager (``model.generate_batch`` /
``init_continuous_batching``) with a paged cache, but its logits processors are per-token tensor
kernels configured once (temperature, top-k, top-p): there is no hook for a per-request, stateful
mask that depends on the tokens sampled so far, which is what a guide needs. Hence this loop.

Fast-forward (with ``tokenizer=`` and ``fast_forward=True``): after a row's token, the tokens its
guide forces (:meth:`Guide.forced_tokens`) are appended at once without sampling, and the next
step feeds each row all its new tokens in one forward pass. Rows feed different numbers of tokens
in the same step: each row's tokens are left-padded (attention 0) to the step's longest, with
position ids continuing the row's own, so the logits of every row's last token are at the end.

Per-request logits: a row's :class:`~structgen.hf.steps.LogitAdjustments` (penalties,
``logit_bias``) change its logits before the mask; with ``logprobs``, each sampled token's
log-probability under the distribution the constraint leaves rides on the event that carries its
text, and the row does not fast-forward (every token is the model's, with its own number).
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import queue
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import DynamicCache

from ..errors import StructgenError
from ..guides.base import Guide
from ..guides.cursor import Cursor, fill_next_token_bitmasks
from ..guides.matcher import Matcher
from ..hf.bitmask import masked_scores
from ..hf.steps import (TokenHistory, TokenLogprob, adjust_logits, forward_last, sample_token,
                        token_logprobs)
from ..vocab.vocabulary import Vocabulary
from .engine_requests import GREEDY_BELOW, EngineRequest, Event, SamplingParams, ShuttingDown, Abort

__all__ = ["Engine", "EngineRequest", "Event", "SamplingParams", "ShuttingDown"]

log = logging.getLogger("structgen.server")

#: How many decoding steps ``Engine.batch_log`` remembers.
BATCH_LOG_STEPS = 4096


class _Row:
    """Engine-thread state of one request in the batch."""

    __slots__ = ("req", "cursor", "generated", "decoder", "text", "emitted", "generator", "pending", "done",
                 "history", "logprob", "logprobs")

    def __init__(self, req: EngineRequest) -> None:
        self.req = req
        #: the guided row's step (made at its first logits, which give the width); None: unguided
        self.cursor: Cursor | None = None
        self.generated = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.text = ""
        self.emitted = 0
        seed = req.params.seed if req.params.seed is not None else random.getrandbits(63)
        self.generator = torch.Generator().manual_seed(seed)
        self.pending: list[int] = []  # tokens to feed the model at the next step
        self.done = False
        self.history: TokenHistory | None = None  # for penalties: created with the first logits
        self.logprob: TokenLogprob | None = None  # the sampled token's, until _advance files it
        self.logprobs: list[tuple[TokenLogprob, int]] = []  # (entry, offset in text) not yet emitted


@dataclass
class _Batch:
    rows: list[_Row] = field(default_factory=list)
    cache: Any = None
    attention: torch.Tensor | None = None  # [B, T] 1 = real token
    positions: torch.Tensor | None = None  # [B] position of the next token


class Engine:
    """Continuous batching over one causal LM, in one worker thread.

    Args:
        model: a transformers causal LM in eval mode.
        vocabulary: the model's vocabulary; its EOS ids end a generation.
        max_batch_size: the most rows decoded together (1 disables batching).
        batch_timeout_ms: when idle, how long to wait for more requests before prefilling the
            first one (more requests then share the prefill).
        max_context: the model's context length (prompt + generated tokens).
        budget_aware: when ``True`` (the default), a guided request's output is always complete:
            its budget is ``min(max_tokens, max_context - prompt length)`` and each step's mask
            allows only tokens after which the output can still be finished in the tokens left
            (:meth:`Guide.token_mask` with ``budget=``). Its ``finish_reason`` is then "stop" even
            when the budget is spent exactly, and a request whose constraint cannot fit in its
            budget is refused at :meth:`submit` with :class:`UnsatisfiableConstraint`. ``False``
            masks without regard to length (output may be cut off, ``finish_reason`` "length").
        tokenizer: the model's tokenizer; needed for fast-forward (forced tokens are tokenized by it).
        fast_forward: append the tokens a guide forces without sampling (default ``True``; has
            effect only with ``tokenizer``). Forced tokens count against the budget and are
            appended only when they fit in it.
    """

    def __init__(self, model: Any, vocabulary: Vocabulary, *, max_batch_size: int = 32,
                 batch_timeout_ms: float = 2.0, max_context: int | None = None,
                 budget_aware: bool = True, tokenizer: Any = None, fast_forward: bool = True) -> None:
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be at least 1, got {max_batch_size}")
        self.model = model
        self.vocabulary = vocabulary
        self.max_batch_size = max_batch_size
        self.batch_timeout = batch_timeout_ms / 1000.0
        self.max_context = max_context or int(getattr(model.config, "max_position_embeddings", 2048))
        self.device = next(model.parameters()).device
        self.budget_aware = budget_aware
        self.tokenizer = tokenizer
        self.fast_forward = fast_forward and tokenizer is not None
        self.forced_tokens = 0
        self._eos = frozenset(vocabulary.eos_token_ids)
        self._eos_list = sorted(self._eos)
        self._inbox: queue.Queue[EngineRequest | Abort | None] = queue.Queue()
        self._waiting: deque[EngineRequest] = deque()
        self._batch = _Batch()
        self._thread: threading.Thread | None = None
        self.steps = 0
        self.max_rows_seen = 0
        #: requests submitted since start
        self.submitted = 0
        #: (step, rows in the batch) of the last decoding steps, oldest first
        self.batch_log: deque[tuple[int, int]] = deque(maxlen=BATCH_LOG_STEPS)
        #: totals since start (read by /metrics): prompt tokens prefilled, tokens generated
        self.prompt_tokens = 0
        self.generated_tokens = 0

    # -- public API (any thread) -------------------------------------------------------------

    def start(self) -> None:
        """Start the worker thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="structgen-engine", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Ask the worker to finish; running and waiting requests get a :class:`ShuttingDown` event."""
        self._inbox.put(None)
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def abort_all(self, reason: str) -> None:
        """Fail every request in the engine now (running, waiting or queued) with
        :class:`ShuttingDown` (``reason``); the engine goes on serving new requests."""
        self._inbox.put(Abort(ShuttingDown(reason)))

    @property
    def num_running(self) -> int:
        """Rows in the batch right now (approximate when read from another thread)."""
        return len(self._batch.rows)

    @property
    def num_waiting(self) -> int:
        """Requests submitted and not yet in the batch (approximate from another thread)."""
        return len(self._waiting) + self._inbox.qsize()

    def submit(self, prompt_ids: list[int], guide: Guide | None, params: SamplingParams) -> EngineRequest:
        """Queue a request; call from the event loop. Iterate the result for its events.

        With ``budget_aware``, raises :class:`UnsatisfiableConstraint` when the guide's shortest
        output is longer than the request's budget.
        """
        if not prompt_ids:
            raise ValueError("a request needs at least one prompt token")
        if guide is not None and self.budget_aware:
            guide.check_budget(self._budget(len(prompt_ids), params))
        req = EngineRequest(prompt_ids, guide, params, asyncio.get_running_loop(), clock=lambda: self.steps)
        self.submitted += 1
        self._inbox.put(req)
        return req

    def _budget(self, prompt_len: int, params: SamplingParams) -> int:
        return min(params.max_tokens, self.max_context - prompt_len)

    # -- worker thread -------------------------------------------------------------------------

    def _run(self) -> None:
        with torch.inference_mode():
            while True:
                if not self._collect():
                    break
                joiners: list[_Row] = []
                try:
                    self._drop_cancelled()
                    while self._waiting and len(self._batch.rows) + len(joiners) < self.max_batch_size:
                        joiners.append(_Row(self._waiting.popleft()))
                    if joiners:
                        self._prefill(joiners)
                    if self._batch.rows:
                        self._decode()
                except Exception as e:  # noqa: BLE001 - an engine bug must not hang every client
                    log.exception("engine step failed")
                    for row in self._batch.rows + joiners:
                        if not row.done:
                            self._fail(row, e)
                    self._batch = _Batch()
        self._fail_all(ShuttingDown("the server is shutting down; the request was not finished"))

    def _fail_all(self, error: BaseException) -> None:
        """Every request in the engine (the batch, the waiting ones, the inbox) ends with ``error``."""
        for row in self._batch.rows:
            if not row.done:
                row.done = True
                row.req.left_at_step = self.steps
                row.req._emit(Event(error=error))
        self._batch = _Batch()
        waiting = list(self._waiting)
        self._waiting.clear()
        stop = False
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, EngineRequest):
                waiting.append(item)
            stop = stop or item is None
        if stop:  # (a stop that came meanwhile still stops the worker)
            self._inbox.put(None)
        for req in waiting:
            req._emit(Event(error=error))

    def _collect(self) -> bool:
        """Move new requests into ``_waiting``; block when there is nothing to do. False = stop.
        An abort message fails every request there is (:meth:`abort_all`)."""
        idle = not self._batch.rows and not self._waiting
        try:
            item = self._inbox.get() if idle else self._inbox.get_nowait()
        except queue.Empty:
            return True
        if item is None:
            return False
        if isinstance(item, Abort):
            self._fail_all(item.error)
            return True
        self._waiting.append(item)
        if idle and self.batch_timeout > 0:
            deadline = time.perf_counter() + self.batch_timeout
            while len(self._waiting) < self.max_batch_size:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                try:
                    item = self._inbox.get(timeout=left)
                except queue.Empty:
                    break
                if item is None:
                    return False
                if isinstance(item, Abort):
                    self._fail_all(item.error)
                    return True
                self._waiting.append(item)
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return True
            if item is None:
                return False
            if isinstance(item, Abort):
                self._fail_all(item.error)
                return True
            self._waiting.append(item)

    def _drop_cancelled(self) -> None:
        if any(r.cancelled for r in self._waiting):
            self._waiting = deque(r for r in self._waiting if not r.cancelled)
        if any(row.req.cancelled for row in self._batch.rows):
            for row in self._batch.rows:
                if row.req.cancelled:
                    row.done = True
                    row.req.left_at_step = self.steps
            self._remove_done()

    def _prefill(self, joiners: list[_Row]) -> None:
        lengths = [len(r.req.prompt_ids) for r in joiners]
        width = max(lengths)
        pad = self._eos_list[0] if self._eos_list else 0
        ids = torch.tensor([[pad] * (width - n) + r.req.prompt_ids for r, n in zip(joiners, lengths)])
        attention = torch.tensor([[0] * (width - n) + [1] * n for n in lengths])
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache()
        try:
            out = forward_last(self.model, input_ids=ids.to(self.device), attention_mask=attention.to(self.device),
                               position_ids=positions.to(self.device), past_key_values=cache, use_cache=True)
        except Exception as e:  # noqa: BLE001 - a failed forward fails these rows, not the engine
            log.exception("prefill failed")
            for row in joiners:
                row.req._emit(Event(error=e))
            return
        logits = out.logits[:, -1, :].float()
        self.prompt_tokens += sum(lengths)
        self._merge(joiners, out.past_key_values, attention.to(self.device),
                    torch.tensor(lengths, device=self.device))
        self.max_rows_seen = max(self.max_rows_seen, len(self._batch.rows))
        self._sample_and_advance(joiners, logits)
        self._remove_done()

    def _merge(self, joiners: list[_Row], cache: Any, attention: torch.Tensor, positions: torch.Tensor) -> None:
        b = self._batch
        if not b.rows:
            b.rows, b.cache, b.attention, b.positions = list(joiners), cache, attention, positions
            return
        assert b.attention is not None and b.positions is not None
        old_t, new_t = b.attention.shape[1], attention.shape[1]
        t = max(old_t, new_t)
        for old_layer, new_layer in zip(b.cache.layers, cache.layers):
            old_layer.keys = torch.cat([_left_pad(old_layer.keys, t), _left_pad(new_layer.keys, t)], 0)
            old_layer.values = torch.cat([_left_pad(old_layer.values, t), _left_pad(new_layer.values, t)], 0)
        b.attention = torch.cat([_left_pad(b.attention, t), _left_pad(attention, t)], 0)
        b.positions = torch.cat([b.positions, positions], 0)
        b.rows.extend(joiners)

    def _decode(self) -> None:
        b = self._batch
        assert b.attention is not None and b.positions is not None
        lengths = [len(row.pending) for row in b.rows]
        width = max(lengths)
        pad = self._eos_list[0] if self._eos_list else 0
        ids = torch.tensor([[pad] * (width - k) + row.pending for row, k in zip(b.rows, lengths)], device=self.device)
        new_attention = torch.tensor([[0] * (width - k) + [1] * k for k in lengths], device=self.device)
        b.attention = torch.cat([b.attention, new_attention.to(b.attention.dtype)], 1)
        count = torch.tensor(lengths, device=self.device)
        # real tokens continue each row's positions; padding repeats the first one (masked anyway)
        offsets = (torch.arange(width, device=self.device)[None, :] - (width - count)[:, None]).clamp(min=0)
        try:
            out = forward_last(self.model, input_ids=ids, attention_mask=b.attention,
                               position_ids=b.positions[:, None] + offsets, past_key_values=b.cache, use_cache=True)
        except Exception as e:  # noqa: BLE001
            log.exception("decode step failed")
            for row in b.rows:
                row.req._emit(Event(error=e))
                row.done = True
            self._batch = _Batch()
            return
        b.positions = b.positions + count
        self.steps += 1
        self.batch_log.append((self.steps, len(b.rows)))
        self._sample_and_advance(b.rows, out.logits[:, -1, :].float())
        self._remove_done()

    def _remove_done(self) -> None:
        b = self._batch
        keep = [i for i, row in enumerate(b.rows) if not row.done]
        if len(keep) == len(b.rows):
            return
        if not keep:
            self._batch = _Batch()
            return
        assert b.attention is not None and b.positions is not None
        index = torch.tensor(keep, device=self.device)
        attention = b.attention.index_select(0, index)
        used = attention.any(0).nonzero()
        first = int(used[0]) if len(used) else 0
        for layer in b.cache.layers:
            layer.keys = layer.keys.index_select(0, index)[:, :, first:]
            layer.values = layer.values.index_select(0, index)[:, :, first:]
        b.attention = attention[:, first:]
        b.positions = b.positions.index_select(0, index)
        b.rows = [b.rows[i] for i in keep]

    # -- masks and sampling ------------------------------------------------------------------------

    def _cursor(self, row: _Row, width: int) -> Cursor | None:
        """The row's cursor, made at its first logits (``width``); ``None`` for an unguided row."""
        guide = row.req.guide
        if row.cursor is None and guide is not None:
            p = row.req.params
            row.cursor = Cursor(Matcher.of(guide, width), max_tokens=self._budget(len(row.req.prompt_ids), p),
                                budget_aware=self.budget_aware, text_budget=p.text_budget)
        return row.cursor

    def _sample_and_advance(self, rows: list[_Row], logits: torch.Tensor) -> None:
        width, device = logits.shape[-1], logits.device
        ok: list[int] = []
        for i, row in enumerate(rows):
            row.pending = []
            try:
                adj = row.req.params.adjustments
                if row.history is None and not adj.is_identity:
                    row.history = adj.history(row.req.prompt_ids, width=width, device=device)
                self._cursor(row, width)
                if self._fast_forward(row):  # forced tokens instead of a sampled one (a prompt's start)
                    continue
                ok.append(i)
            except Exception as e:  # noqa: BLE001 - this row fails, the others go on
                self._fail(row, e)
        cursors = [rows[i].cursor for i in ok]
        bitmask = Matcher.allocate_token_bitmask(len(ok), width)
        try:
            fill_next_token_bitmasks(cursors, bitmask)
        except Exception:  # noqa: BLE001 - a guide's bug: row by row, so that it fails its own row only
            for k, cursor in enumerate(cursors):
                try:
                    fill_next_token_bitmasks([cursor], bitmask, [k])
                except Exception as e:  # noqa: BLE001
                    self._fail(rows[ok[k]], e)
        for i, cursor in zip(ok, cursors):
            if cursor is not None and cursor.error is not None:  # (failed closed: the client gets the error)
                self._fail(rows[i], cursor.error)
        keep = [k for k, i in enumerate(ok) if not rows[i].done]
        if not keep:
            return
        if len(keep) != len(rows):
            logits = logits[torch.tensor([ok[k] for k in keep], device=device)]
            bitmask = bitmask[keep]
            rows = [rows[ok[k]] for k in keep]
        if any(row.history is not None for row in rows):  # penalties and logit_bias, before the mask
            logits = adjust_logits(logits, [row.req.params.adjustments for row in rows], [row.history for row in rows])
        logits = masked_scores(logits, bitmask)
        chosen = logits.argmax(-1).tolist()  # greedy rows, in one call for the batch
        for i, row in enumerate(rows):
            p = row.req.params
            if p.temperature > GREEDY_BELOW:
                chosen[i] = sample_token(logits[i], temperature=p.temperature, top_p=p.top_p, generator=row.generator)
            if p.logprobs is not None:
                row.logprob = token_logprobs(logits[i], int(chosen[i]), p.logprobs)
        for row, token in zip(rows, chosen):
            try:
                self._advance(row, int(token))
                if not row.done:
                    self._fast_forward(row)
            except Exception as e:  # noqa: BLE001
                self._fail(row, e)

    def _fast_forward(self, row: _Row) -> bool:
        """Append the tokens the row's guide forces now, if they fit its budget; True if any."""
        cursor = row.cursor
        if not self.fast_forward or cursor is None or row.done or row.req.params.logprobs is not None:
            return False
        forced = cursor.forced(self.tokenizer)
        for token in forced:
            self._advance(row, token)
            self.forced_tokens += 1
            if row.done:
                break
        return bool(forced)

    def _fail(self, row: _Row, error: BaseException) -> None:
        log.warning("request %s failed: %s", row.req.id, error)
        row.done = True
        row.req._emit(Event(error=error))

    def _advance(self, row: _Row, token: int) -> None:
        params, cursor = row.req.params, row.cursor
        if cursor is None:
            if token in self._eos:
                self._finish(row, "stop")
                return
        else:
            if not cursor.accept(token):  # the mask and the forced tokens allow only what the guide does
                assert cursor.error is not None
                raise StructgenError(f"request {row.req.id}: {cursor.error} after {row.text[-80:]!r} (engine bug)")
            if cursor.ended:
                self._finish(row, "stop")
                return
        row.pending.append(token)
        row.generated += 1
        self.generated_tokens += 1
        if row.history is not None:
            row.history.add(token)
        if row.logprob is not None:
            row.logprobs.append((row.logprob, len(row.text)))
            row.logprob = None
        data = self.vocabulary.tokens[token] if 0 <= token < self.vocabulary.size else None
        row.text += row.decoder.decode(data or b"")
        if params.stop:
            cut = _find_stop(row.text, params.stop, row.emitted)
            if cut is not None:
                row.text = row.text[:cut]
                row.logprobs = [(lp, at) for lp, at in row.logprobs if at < cut]  # tokens the cut removed
                self._finish(row, "stop", token, flush=False)
                return
        if cursor is not None and cursor.matcher.is_terminated(cursor.state):
            self._finish(row, "stop", token)
        elif row.generated >= params.max_tokens or len(row.req.prompt_ids) + row.generated >= self.max_context:
            # Budget-aware masking ends a guided row in a final state: the output is complete.
            complete = cursor is not None and self.budget_aware and cursor.is_complete
            self._finish(row, "stop" if complete else "length", token)
        else:
            hold = _stop_prefix_len(row.text, params.stop) if params.stop else 0
            end = len(row.text) - hold
            if end > row.emitted:
                row.req._emit(Event(text=row.text[row.emitted:end], token_id=token,
                                    completion_tokens=row.generated, logprobs=self._take_logprobs(row, end)))
                row.emitted = end

    def _finish(self, row: _Row, reason: str, token: int | None = None, *, flush: bool = True) -> None:
        if flush:
            row.text += row.decoder.decode(b"", final=True)
        row.done = True
        row.req._emit(Event(text=row.text[row.emitted:], token_id=token, finish_reason=reason,
                            completion_tokens=row.generated, logprobs=self._take_logprobs(row, len(row.text) + 1)))
        row.emitted = len(row.text)

    @staticmethod
    def _take_logprobs(row: _Row, end: int) -> tuple[tuple[TokenLogprob, int], ...]:
        """The row's logprob entries of tokens that start before ``end`` (emitted now)."""
        if not row.logprobs:
            return ()
        taken = tuple(e for e in row.logprobs if e[1] < end)
        row.logprobs = row.logprobs[len(taken):]
        return taken


def _left_pad(t: torch.Tensor, length: int) -> torch.Tensor:
    """Zero-pad dim 2 (KV: [B, H, T, D]) or dim 1 (mask: [B, T]) on the left to ``length``."""
    dim = 2 if t.dim() == 4 else 1
    missing = length - t.shape[dim]
    if missing <= 0:
        return t
    shape = list(t.shape)
    shape[dim] = missing
    return torch.cat([t.new_zeros(shape), t], dim)


def _find_stop(text: str, stops: tuple[str, ...], emitted: int) -> int | None:
    """Index where the earliest stop string starts in ``text`` (searching past ``emitted``)."""
    best: int | None = None
    for s in stops:
        i = text.find(s, max(0, emitted - len(s) + 1))
        if i >= 0 and (best is None or i < best):
            best = i
    return best


def _stop_prefix_len(text: str, stops: tuple[str, ...]) -> int:
    """Length of the longest suffix of ``text`` that starts a stop string (held back from streaming)."""
    best = 0
    for s in stops:
        for k in range(min(len(s) - 1, len(text)), best, -1):
            if text.endswith(s[:k]):
                best = k
                break
    return best
