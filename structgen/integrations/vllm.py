"""structgen inside vLLM: a V1 custom logits processor (``pip install "structgen[vllm]"``).

Installed with the ``vllm`` extra, :class:`StructgenLogitsProcessor` is registered under vLLM's
``vllm.logits_processors`` entry point, so every vLLM in the environment loads it; without the
entry point, pass it yourself (``LLM(..., logits_processors=[StructgenLogitsProcessor])`` or
``--logits-processors structgen.integrations.vllm:StructgenLogitsProcessor``). A request asks for
a constraint with string keys in ``vllm_xargs`` (``SamplingParams(extra_args=...)``)::

    llm.generate(prompt, SamplingParams(max_tokens=64, extra_args={"structgen_regex": r"\\d{4}-\\d{2}-\\d{2}"}))
    client.chat.completions.create(..., extra_body={"vllm_xargs": {"structgen_json_schema": json.dumps(schema)}})

The keys (:mod:`structgen.integrations.constraints`): ``structgen_json_schema``,
``structgen_regex``, ``structgen_grammar``, ``structgen_extract``, ``structgen_options``.

How it runs, per vLLM worker process:

- **Admission** (:meth:`StructgenLogitsProcessor.validate_params`, in the API process): the keys
  are parsed and the constraint compiled over a byte vocabulary (no tokenizer there), so a bad
  one is refused before anything is scheduled: vLLM answers HTTP 400 with structgen's message.
- **Start-up** (``__init__``): the model's vocabulary is read in a background thread (vLLM's
  tokenizer; EOS = the tokenizer's and the generation config's) and its token trie built.
- **A request joins** (``update_state``): its constraint's compile starts in a background
  thread, through the door (:func:`structgen.compile`, whose cache every request with the same
  constraint shares), while the model runs the step; a budget-aware row's token distances are
  measured there too.
- **Each step** (``apply``): one pass over the constrained rows reads the tokens generated since
  the last step into each row's :class:`~structgen.guides.cursor.Cursor` (the step every
  integration drives); then one batch fill (:func:`~structgen.guides.cursor.fill_next_token_bitmasks`:
  the rows' cold work on native threads, one per core the worker may use) writes their packed
  masks (budget-aware: the tokens left are ``max_tokens`` minus those generated) into one
  preallocated int32 bitmask, and one call masks those rows of the logits in place on their
  device. Unconstrained rows cost nothing.

**Fail closed.** A request whose constraint cannot be used in the worker (its compile fails over
the model's vocabulary although it passed admission, or a token some other option forced is
refused by the constraint) cannot fail alone from inside a logits processor: it is logged as an
error (logger ``vllm.structgen``) and its row is ended: from then on its mask allows only the
tokens vLLM stops on (EOS), so the request finishes with what it had; never unconstrained text
that looks like a constrained answer.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from ..errors import StructgenError
from ..guides.cursor import Cursor, fill_next_token_bitmasks
from ..guides.matcher import Matcher, pack_mask
from ..hf.bitmask import apply_token_bitmask_
from ..vocab.index import prepare_vocabulary
from ..vocab.vocabulary import Vocabulary
from ..compiler import is_cached
from .constraints import RequestConstraint, byte_vocabulary, check_request, parse_request, warm_up

if TYPE_CHECKING:
    from vllm.config import VllmConfig

__all__ = ["StructgenLogitsProcessor", "model_vocabulary"]

#: Under vLLM's logger, so that its handler prints structgen's lines like its own.
logger = logging.getLogger("vllm.structgen")


def model_vocabulary(model_config: Any) -> Vocabulary:
    """The structgen :class:`Vocabulary` of a vLLM ``ModelConfig``: vLLM's own tokenizer, with
    the EOS ids vLLM stops on (the tokenizer's EOS and the generation config's ``eos_token_id``)."""
    from vllm.tokenizers.registry import cached_tokenizer_from_config

    tokenizer = cached_tokenizer_from_config(model_config)
    if tokenizer is None:
        raise StructgenError("vLLM runs without a tokenizer (skip_tokenizer_init): structgen needs one")
    eos: set[int] = set()
    generation = model_config.try_get_generation_config() or {}
    for value in (getattr(tokenizer, "eos_token_id", None), generation.get("eos_token_id")):
        if isinstance(value, int):
            eos.add(value)
        elif isinstance(value, (list, tuple)):
            eos.update(int(v) for v in value)
    vocab = Vocabulary.from_tokenizer(tokenizer, eos_token_ids=eos or None)
    prepare_vocabulary(vocab)
    return vocab


def _warm_up_admission() -> None:
    try:
        warm_up(byte_vocabulary())
    except Exception:  # noqa: BLE001 - a warm-up only saves time; the first request reports any error
        logger.debug("structgen: warm-up of the admission check failed", exc_info=True)


# vLLM imports this module in its API process when it loads the logits processors: warming the
# compiler up there, in the background, keeps its one-time set-up off the first request. A process
# that exits sooner waits for it (about a second, at most WARM_UP_EXIT_WAIT): a daemon thread
# frozen mid-compile would hold native objects past the extension's end (nanobind then reports
# them as leaked at exit).
WARM_UP_EXIT_WAIT = 10.0
_warm_up_thread = threading.Thread(target=_warm_up_admission, name="structgen-warm-up", daemon=True)
_warm_up_thread.start()
atexit.register(_warm_up_thread.join, WARM_UP_EXIT_WAIT)


def _off_the_model_cores() -> None:
    """Run this (compile) thread on the cores the worker's forward pass is not bound to.

    On the CPU backend vLLM binds each worker process to its own cores and leaves the rest to
    its front end, which is mostly idle while the model runs: a compile there overlaps the
    forward pass instead of taking turns with it. Where every core is the worker's, or the
    operating system refuses, nothing changes."""
    try:
        allowed = os.sched_getaffinity(0)
        others = set(range(os.cpu_count() or 1)) - allowed
        if others:
            os.sched_setaffinity(0, others)  # (0: this thread only, on Linux)
    except (AttributeError, OSError):
        pass


class _Row:
    """One constrained request in the persistent batch."""

    __slots__ = ("constraint", "future", "cursor", "seen", "output", "max_tokens", "stops", "failed")

    def __init__(self, constraint: RequestConstraint, future: Future[_Ready], output: list[int],
                 max_tokens: int | None, stops: frozenset[int]) -> None:
        self.constraint = constraint
        self.future = future
        self.cursor: Cursor | None = None
        self.seen = 0  # output tokens already read into the cursor
        self.output = output  # vLLM's live list of the request's generated ids
        self.max_tokens = max_tokens
        self.stops = stops  # the token ids vLLM stops this request on (its EOS)
        self.failed: np.ndarray | None = None  # the mask of a row that failed before it had a cursor


class _Ready:
    """A compiled constraint in the worker: its guide (at the logits' width) and how long the
    compile and the token distances took (``None``: found in the door's cache)."""

    __slots__ = ("matcher", "seconds", "min_length", "reported")

    def __init__(self, matcher: Matcher, seconds: float | None, min_length: int | None) -> None:
        self.matcher = matcher
        self.seconds = seconds
        self.min_length = min_length
        self.reported = False


class StructgenLogitsProcessor(LogitsProcessor):
    """vLLM V1 logits processor that constrains requests carrying ``structgen_*`` extra arguments.

    See the module's docstring for the keys and how a step runs. ``is_argmax_invariant`` is
    ``False`` (a mask changes greedy choices), so vLLM applies it to greedy requests too.

    Example (offline)::

        from vllm import LLM, SamplingParams
        from structgen.integrations.vllm import StructgenLogitsProcessor

        llm = LLM(model=path, logits_processors=[StructgenLogitsProcessor])   # (not if the entry point is installed)
        params = SamplingParams(max_tokens=32, extra_args={"structgen_grammar": "date"})
        print(llm.generate("When was Bob Marley born?", params)[0].outputs[0].text)
    """

    #: Live processors by the ``VllmConfig`` they were built for: a second one for the same
    #: engine (the entry point *and* ``logits_processors=`` name it) stands aside.
    _live: weakref.WeakValueDictionary[int, StructgenLogitsProcessor] = weakref.WeakValueDictionary()
    _live_lock = threading.Lock()

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Refuse a bad constraint at admission (vLLM turns the ``ValueError`` into HTTP 400).

        Parses the ``structgen_*`` keys and compiles the constraint over a byte vocabulary (the
        compiler's cache keeps the result, so a constraint seen before costs a lookup). Also
        refuses options that cannot hold together with a constraint: vLLM's own structured
        outputs (``response_format``, ``structured_outputs``) in the same request, and
        ``min_tokens`` (it forbids EOS where the constraint may allow nothing else).
        """
        try:
            constraint = check_request(sampling_params.extra_args, on_checked=cls._log_check)
        except StructgenError as e:
            raise ValueError(f"structgen: {e}") from e
        if constraint is None:
            return
        if getattr(sampling_params, "structured_outputs", None) is not None:
            raise ValueError("structgen: a request takes either a structgen_* constraint or vLLM's "
                             "structured outputs (response_format / structured_outputs), not both")
        if sampling_params.min_tokens:
            raise ValueError(f"structgen: min_tokens={sampling_params.min_tokens} cannot be combined with a "
                             "structgen_* constraint (it forbids EOS where the constraint may allow only EOS)")

    def __init__(self, vllm_config: VllmConfig, device: torch.device, is_pin_memory: bool) -> None:
        model_config = vllm_config.model_config
        self.device = torch.device(device)
        self.vocab_size = int(model_config.get_vocab_size())
        rows = int(vllm_config.scheduler_config.max_num_seqs)
        words = (self.vocab_size + 31) // 32
        pin = bool(is_pin_memory) and self.device.type != "cpu"
        self._bitmask = torch.full((rows, words), -1, dtype=torch.int32, pin_memory=pin)
        self._bitmask_np = self._bitmask.numpy()
        self._rows: dict[int, _Row] = {}
        # (held so that its id, the key of _live, cannot be reused by another engine's config while
        # this processor lives: a lingering processor of a dead engine must not make a new one stand aside)
        self._vllm_config = vllm_config
        with self._live_lock:
            other = self._live.get(id(vllm_config))
            self._standing_aside = other is not None
            if not self._standing_aside:
                self._live[id(vllm_config)] = self
        if self._standing_aside:
            logger.warning("structgen: a second StructgenLogitsProcessor for the same engine stands aside "
                           "(it is registered twice: by its entry point and by logits_processors)")
            return
        # One thread: compiles run one at a time, never more than one per distinct constraint.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="structgen-vllm",
                                        initializer=_off_the_model_cores)
        self._vocabulary: Future[Vocabulary] = self._pool.submit(self._load_vocabulary, model_config)
        #: (description, compile seconds, seconds a step waited for it) of the latest compiles
        self.compiles: deque[tuple[str, float, float]] = deque(maxlen=1024)

    @staticmethod
    def _load_vocabulary(model_config: Any) -> Vocabulary:
        start = time.perf_counter()
        vocab = model_vocabulary(model_config)
        ready = time.perf_counter()
        warm = warm_up(vocab)
        logger.info("structgen: vocabulary of %d tokens ready in %.2f s (EOS %s), compiler warmed up in %.2f s",
                    vocab.size, ready - start, sorted(vocab.eos_token_ids), warm)
        return vocab

    @staticmethod
    def _log_check(constraint: RequestConstraint, seconds: float) -> None:
        logger.info("structgen: checked %s at admission in %.1f ms", constraint.describe(), seconds * 1e3)

    def is_argmax_invariant(self) -> bool:
        """A mask changes what greedy decoding picks."""
        return False

    # -- the batch ------------------------------------------------------------------------------

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        """Follow the persistent batch: removed, then added, then moved rows (vLLM's order)."""
        if batch_update is None or self._standing_aside:
            return
        rows = self._rows
        for index in batch_update.removed:
            rows.pop(index, None)
        for index, params, _prompt, output in batch_update.added:
            constraint = parse_request(params.extra_args) if params is not None else None
            if constraint is None:
                rows.pop(index, None)
                continue
            budget_aware = constraint.budget_aware and params.max_tokens is not None
            stops = frozenset(getattr(params, "all_stop_token_ids", ()) or ())
            future = self._pool.submit(self._compile, constraint, budget_aware)
            rows[index] = _Row(constraint, future, output, params.max_tokens, stops)
        for a, b, how in batch_update.moved:
            row_a, row_b = rows.pop(a, None), rows.pop(b, None)
            if row_a is not None:
                rows[b] = row_a
            if row_b is not None and how == MoveDirectionality.SWAP:
                rows[a] = row_b

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        """Mask every constrained row of ``logits`` in place: each row's cursor reads the tokens
        generated since the last step, one batch fill (:func:`.fill_next_token_bitmasks`, its
        cold work on the worker's cores) writes their masks into one bitmask, and one call masks
        those rows of the logits."""
        if not self._rows:
            return logits
        indices: list[int] = []
        cursors: list[Cursor] = []
        places: list[int] = []
        rows: list[_Row] = []
        for index, row in self._rows.items():
            if index >= logits.shape[0]:
                continue
            cursor = self._advance(row)
            if cursor is None:
                assert row.failed is not None
                self._bitmask_np[len(indices)] = row.failed
            else:
                cursors.append(cursor)
                places.append(len(indices))
                rows.append(row)
            indices.append(index)
        if cursors:
            fill_next_token_bitmasks(cursors, self._bitmask_np, places)
            for cursor, place, row in zip(cursors, places, rows):
                if cursor.error is not None:  # the mask could not be made: the row ends here
                    self._log_failure(row, str(cursor.error))
                    self._bitmask_np[place] = self._closed(row, cursor.matcher)
        if indices:
            apply_token_bitmask_(logits, self._bitmask[: len(indices)], indices)
        return logits

    # -- one row ---------------------------------------------------------------------------------

    def _compile(self, constraint: RequestConstraint, budget_aware: bool) -> _Ready:
        """The constraint's guide over the model's vocabulary (and, budget-aware, its token
        distances: for a pushdown guide, every automaton the network reaches), in the compile
        thread."""
        vocab = self._vocabulary.result()
        cached = is_cached(constraint.format, vocab)
        start = time.perf_counter()
        guide = constraint.compile(vocab, warm=True)
        need = guide.min_length() if budget_aware else None
        seconds = None if cached else time.perf_counter() - start
        if seconds is not None:
            logger.info("structgen: compiled %s in %.1f ms", constraint.describe(), seconds * 1e3)
        return _Ready(Matcher.of(guide, self.vocab_size), seconds, need)

    def _advance(self, row: _Row) -> Cursor | None:
        """The row's cursor with the tokens generated since the last step read in, ready for its
        mask; ``None`` for a row that failed (its :attr:`_Row.failed` mask is set: the tokens
        vLLM stops on only)."""
        if row.failed is not None:
            return None
        cursor = row.cursor if row.cursor is not None else self._start(row)
        if cursor is None:
            return None
        output = row.output
        while row.seen < len(output) and cursor.error is None:
            token = output[row.seen]
            row.seen += 1
            if token < 0:
                cursor.fail(StructgenError(f"an async-scheduling placeholder ({token}) came where a token was due"))
            elif not cursor.accept(token):
                assert cursor.error is not None
            if cursor.error is not None:
                self._log_failure(row, f"{cursor.error} (another sampling option overrode the mask)")
        if cursor.error is not None:
            self._closed(row, cursor.matcher)
            return None
        return cursor

    def _start(self, row: _Row) -> Cursor | None:
        """The row's cursor, once its compile is done (waited for: once per distinct constraint,
        started when the request joined the batch); ``None`` when the row failed."""
        begin = time.perf_counter()
        try:
            ready = row.future.result()
        except Exception as e:  # noqa: BLE001 - one request's problem must not stop the engine
            self._log_failure(row, f"its constraint does not compile over the model's vocabulary: {e}")
            row.failed = self._stops_only(row, None)
            return None
        if ready.seconds is not None and not ready.reported:
            ready.reported = True
            self.compiles.append((row.constraint.describe(), ready.seconds, time.perf_counter() - begin))
        budget_aware = ready.min_length is not None and row.max_tokens is not None
        if budget_aware and row.max_tokens is not None and ready.min_length is not None \
                and row.max_tokens < ready.min_length:
            logger.warning("structgen: max_tokens=%d is below the %d tokens the shortest output of %s takes; "
                           "this request is not budget-aware (its output may be cut)", row.max_tokens,
                           ready.min_length, row.constraint.describe())
            budget_aware = False
        row.cursor = Cursor(ready.matcher, max_tokens=row.max_tokens, budget_aware=budget_aware)
        return row.cursor

    def _closed(self, row: _Row, matcher: Matcher | None) -> np.ndarray:
        """The mask of a failed row: the tokens vLLM stops it on and the vocabulary's EOS."""
        if row.failed is None:
            row.failed = self._stops_only(row, matcher)
        return row.failed

    def _stops_only(self, row: _Row, matcher: Matcher | None) -> np.ndarray:
        allowed = np.zeros(self._bitmask_np.shape[1] * 32, dtype=bool)
        stops = set(row.stops)
        if matcher is not None:
            stops |= matcher.guide.vocabulary.eos_token_ids
        elif self._vocabulary.done() and self._vocabulary.exception() is None:
            stops |= self._vocabulary.result().eos_token_ids
        allowed[[t for t in stops if 0 <= t < self.vocab_size]] = True
        return pack_mask(allowed, self._bitmask_np.shape[1])

    def _log_failure(self, row: _Row, why: str) -> None:
        logger.error("structgen: request constrained by %s is ended (only EOS is allowed from now on): %s",
                     row.constraint.describe(), why)
