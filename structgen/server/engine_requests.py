"""What the batching engine takes and gives, per request: :class:`SamplingParams` in, a
:class:`EngineRequest` handle back, whose :class:`Event` values the caller iterates; and the
error a request ends with when the server stops first (:class:`ShuttingDown`).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from typing import AsyncIterator, Callable

from ..errors import StructgenError
from ..guides.base import Guide
from ..guides.text_budget import TextBudget
from ..hf.steps import LogitAdjustments, TokenLogprob

__all__ = ["EngineRequest", "Event", "SamplingParams", "ShuttingDown"]

#: A temperature below this is greedy decoding (as in vLLM): dividing logits by 1e-70 overflows to
#: inf, and sampling from that fails (the HTTP fuzz found it).
GREEDY_BELOW = 1e-5


@dataclass(frozen=True)
class SamplingParams:
    """Per-request decoding settings. ``temperature`` 0 (below :data:`GREEDY_BELOW`) is greedy.

    ``adjustments``: penalties and ``logit_bias``, applied before the mask. ``logprobs``: ``None``
    reports none; ``k >= 0`` reports each token's log-probability and the ``k`` most likely
    tokens (see :func:`~structgen.hf.steps.token_logprobs`). ``text_budget``: the most tokens of
    a thinking block, after which the step writes its end string (the row's
    :class:`~structgen.guides.cursor.Cursor`).
    """

    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    adjustments: LogitAdjustments = LogitAdjustments()
    logprobs: int | None = None
    text_budget: TextBudget | None = None


@dataclass
class Event:
    """What the engine reports to a request: new text, then exactly one finish or error."""

    text: str = ""
    token_id: int | None = None
    finish_reason: str | None = None  # "stop" | "length" once finished
    completion_tokens: int = 0
    error: BaseException | None = None
    #: with ``SamplingParams.logprobs``: one entry per token of ``text``, with its offset in the output
    logprobs: tuple[tuple[TokenLogprob, int], ...] = ()

    @property
    def is_last(self) -> bool:
        """Whether this event ends the request."""
        return self.finish_reason is not None or self.error is not None


class EngineRequest:
    """A submitted request: iterate it (``async for``) for its events; :meth:`cancel` frees its slot.

    ``cancelled_at_step`` is the engine's step count when :meth:`cancel` was first called, and
    ``left_at_step`` its step count when the row left the batch (``None`` until then): a
    cancelled row leaves before the next decoding step, so the two differ by at most one."""

    _ids = itertools.count()

    def __init__(self, prompt_ids: list[int], guide: Guide | None, params: SamplingParams,
                 loop: asyncio.AbstractEventLoop, *, clock: Callable[[], int] | None = None) -> None:
        self.id = next(self._ids)
        self.prompt_ids = prompt_ids
        self.guide = guide
        self.params = params
        self.cancelled = False
        self.submitted_at = time.perf_counter()
        self.cancelled_at_step: int | None = None
        self.left_at_step: int | None = None
        self._clock = clock
        self._loop = loop
        self._events: asyncio.Queue[Event] = asyncio.Queue()

    def cancel(self) -> None:
        """Stop generating for this request at the next step (safe from any thread)."""
        if not self.cancelled and self._clock is not None:
            self.cancelled_at_step = self._clock()
        self.cancelled = True

    def _emit(self, event: Event) -> None:
        try:
            self._loop.call_soon_threadsafe(self._events.put_nowait, event)
        except RuntimeError:  # the event loop is gone: nobody is listening
            self.cancelled = True

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            event = await self._events.get()
            yield event
            if event.is_last:
                return


class ShuttingDown(StructgenError):
    """The server stopped (or gave up draining) before the request finished."""


class Abort:
    """An inbox message: fail every request in the engine with ``error`` (the drain's timeout)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
