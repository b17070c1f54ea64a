"""A request's constraint, as serving engines pass it: string keys of a request's extra arguments
(vLLM's ``vllm_xargs`` / ``SamplingParams.extra_args``), parsed, checked and compiled once.

No torch here: the vLLM plugin (:mod:`.vllm`) and any other engine's adapter share it.

========================  ========================================================================
key                       value (a string; ``structgen_extract`` may also be a list of strings)
========================  ========================================================================
``structgen_json_schema`` a JSON Schema, as JSON text
``structgen_regex``       a regular expression (Python syntax, full match)
``structgen_grammar``     the name of a ready-made constraint in ``grammars/`` (``structgen grammars``)
``structgen_extract``     source text: string values (or, alone, the whole output) are verbatim spans
                          of it; with ``structgen_regex`` the span must also match the regex
``structgen_options``     a JSON object of options: compile options of the constraint's kind (below)
                          and ``budget_aware`` (default ``true``)
========================  ========================================================================

At most one of ``structgen_json_schema``, ``structgen_regex``, ``structgen_grammar``. A request
with none of the keys is not constrained. Anything else is refused with a
:class:`ConstraintError` (a ``ValueError``: engines answer HTTP 400) whose message names the key.

Example:
    >>> c = parse_request({"structgen_regex": "[0-9]{4}", "structgen_options": '{"budget_aware": false}'})
    >>> c.kind, c.text, c.budget_aware
    ('regex', '[0-9]{4}', False)
    >>> parse_request({"temperature_boost": 1}) is None
    True
    >>> parse_request({"structgen_regex": "a", "structgen_grammar": "date"})
    Traceback (most recent call last):
    structgen.errors.ConstraintError: give at most one of structgen_grammar, structgen_regex (got both)
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping

from ..compiler import compile_extract, compile_json_schema, compile_regex, warm_up
from ..errors import ConstraintError, PayloadTooLarge, StructgenError
from ..guides.base import Guide
from ..guides.dfa_guide import DfaGuide
from ..guides.matcher import Matcher
from ..named_grammars import read_grammar
from ..vocab.vocabulary import Vocabulary

__all__ = [
    "KEYS", "OPTIONS", "CompiledConstraint", "ConstraintCache", "RequestConstraint", "byte_vocabulary",
    "check_request", "parse_request", "warm_up",
]

PREFIX = "structgen_"
KEYS = ("structgen_json_schema", "structgen_regex", "structgen_grammar", "structgen_extract", "structgen_options")
#: The options ``structgen_options`` may hold, per kind of constraint, with their types.
OPTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "json_schema": {
        "whitespace": str, "key_order": str, "extra_properties": bool, "max_recursion_depth": int,
        "dialect": str, "formats": dict, "unknown_formats": str, "max_states": int,
    },
    "regex": {"max_states": int},
    "extract": {"min_length": int, "max_length": int, "max_states": int},
}
#: The largest constraint accepted (schema, pattern and documents together), in bytes.
DEFAULT_MAX_CONSTRAINT_BYTES = 1 << 20
#: Flat (DFA) guides with at most this many states get every mask computed when they compile.
PRECOMPUTE_STATES = 64


@dataclass(frozen=True)
class RequestConstraint:
    """One request's constraint, parsed (:func:`parse_request`); hashable, so requests with
    the same constraint share one compile (:attr:`key`).

    ``kind`` is ``"json_schema"`` (``text`` is the schema as JSON), ``"regex"`` (``text`` is the
    pattern) or ``"extract"`` (spans of ``documents``; ``text`` is the regex they must match, or
    ``""``). ``documents`` also go with a schema (its string values are spans).
    """

    kind: str
    text: str
    documents: tuple[str, ...] | None = None
    options: tuple[tuple[str, str], ...] = ()  # (name, JSON of the value), sorted
    budget_aware: bool = True
    source: str = ""

    @property
    def key(self) -> Hashable:
        """What identifies the compiled guide (``budget_aware`` is a per-request setting)."""
        return (self.kind, self.text, self.documents, self.options)

    def describe(self) -> str:
        """A short name for messages and logs."""
        if self.source:
            return self.source
        shown = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        return f"{self.kind} {shown!r}" + (f" over {len(self.documents)} document(s)" if self.documents else "")

    def compile(self, vocabulary: Vocabulary) -> Guide:
        """The guide over ``vocabulary`` (the compiler's caches apply). Raises the constraint's
        :class:`ConstraintError`, :class:`CompileBudgetExceeded`."""
        opts = {name: json.loads(value) for name, value in self.options}
        try:
            if self.kind == "json_schema":
                docs = None if self.documents is None else list(self.documents)
                return compile_json_schema(self.text, vocabulary, extract_from=docs, **opts)
            if self.kind == "regex":
                return compile_regex(self.text, vocabulary, **opts)
            assert self.documents is not None
            return compile_extract(list(self.documents), vocabulary, pattern=self.text or None, **opts)
        except StructgenError:
            raise
        except (TypeError, ValueError) as e:  # an option value the compile function refuses
            raise ConstraintError(f"structgen_options: {e}") from e


def _text(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConstraintError(f"{key} must be a string, not {type(value).__name__}")
    return value


def _options(raw: str | None, kind: str) -> tuple[tuple[tuple[str, str], ...], bool]:
    if raw is None:
        return (), True
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ConstraintError(f"structgen_options is not valid JSON: {e}") from e
    if not isinstance(value, dict):
        raise ConstraintError(f"structgen_options must be a JSON object, not {type(value).__name__}")
    allowed = OPTIONS[kind]
    budget_aware = value.pop("budget_aware", True)
    if not isinstance(budget_aware, bool):
        raise ConstraintError(f"structgen_options: budget_aware must be true or false, not {budget_aware!r}")
    options: list[tuple[str, str]] = []
    for name in sorted(value):
        if name not in allowed:
            known = ", ".join(sorted([*allowed, "budget_aware"]))
            raise ConstraintError(f"structgen_options: unknown option {name!r} for a {kind} constraint (known: {known})")
        want = allowed[name]
        item = value[name]
        if not isinstance(item, want) or (want is int and isinstance(item, bool)):
            kind_name = want.__name__ if isinstance(want, type) else "/".join(t.__name__ for t in want)
            raise ConstraintError(f"structgen_options: {name} must be a {kind_name}, not {item!r}")
        options.append((name, json.dumps(item, sort_keys=True)))
    return tuple(options), budget_aware


def parse_request(extra_args: Mapping[str, Any] | None, *,
                  max_bytes: int = DEFAULT_MAX_CONSTRAINT_BYTES) -> RequestConstraint | None:
    """The constraint a request's extra arguments ask for, or ``None`` when they name none.

    Raises :class:`ConstraintError` for a malformed value, an unknown ``structgen_*`` key or
    option, two constraints, or a grammar name that does not exist; :class:`PayloadTooLarge`
    when the constraint is over ``max_bytes``. The constraint itself is checked by compiling it
    (:meth:`RequestConstraint.compile`).
    """
    if not extra_args:
        return None
    ours = {k for k in extra_args if isinstance(k, str) and k.startswith(PREFIX)}
    if not ours:
        return None
    unknown = sorted(ours - set(KEYS))
    if unknown:
        raise ConstraintError(f"unknown key {unknown[0]!r} (structgen reads {', '.join(KEYS)})")
    schema = _text(extra_args, "structgen_json_schema")
    regex = _text(extra_args, "structgen_regex")
    grammar = _text(extra_args, "structgen_grammar")
    named = sorted(k for k, v in (("structgen_json_schema", schema), ("structgen_regex", regex),
                                  ("structgen_grammar", grammar)) if v is not None)
    if len(named) > 1:
        raise ConstraintError(f"give at most one of {', '.join(named)} (got {'both' if len(named) == 2 else 'all three'})")
    documents = _documents(extra_args.get("structgen_extract"))
    if not named and documents is None:
        raise ConstraintError(f"structgen_options alone constrains nothing: add one of {', '.join(KEYS[:4])}")
    source = ""
    if grammar is not None:
        kind, value = read_grammar(grammar)
        source = f"grammar {grammar!r}"
        if kind == "regex":
            regex = value
        else:
            schema = json.dumps(value)
    if schema is not None:
        kind, text = "json_schema", schema
    elif documents is not None:
        kind, text = "extract", regex or ""
    else:
        assert regex is not None
        kind, text = "regex", regex
    size = len(text.encode("utf-8", "surrogatepass")) + sum(len(d.encode("utf-8", "surrogatepass")) for d in documents or ())
    if size > max_bytes:
        raise PayloadTooLarge(f"the structgen constraint is {size} bytes, over the limit of {max_bytes}")
    options, budget_aware = _options(_text(extra_args, "structgen_options"), kind)
    return RequestConstraint(kind, text, documents, options, budget_aware, source)


def _documents(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    docs = [value] if isinstance(value, str) else value
    if not isinstance(docs, list) or not docs or not all(isinstance(d, str) for d in docs):
        raise ConstraintError("structgen_extract must be a string or a non-empty list of strings")
    return tuple(docs)


_BYTE_VOCABULARY: list[Vocabulary] = []


def byte_vocabulary() -> Vocabulary:
    """The 256 single bytes and an EOS: compiling over it checks a constraint without a tokenizer
    (what an engine's front end can do before the request reaches the model's process)."""
    if not _BYTE_VOCABULARY:
        _BYTE_VOCABULARY.append(Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256]))
    return _BYTE_VOCABULARY[0]


_CHECKED: OrderedDict[Hashable, None] = OrderedDict()
_CHECKED_LOCK = threading.Lock()
_CHECKED_SIZE = 4096


def check_request(extra_args: Mapping[str, Any] | None, *, max_bytes: int = DEFAULT_MAX_CONSTRAINT_BYTES,
                  on_checked: Callable[[RequestConstraint, float], None] | None = None) -> RequestConstraint | None:
    """:func:`parse_request`, then compile the constraint over :func:`byte_vocabulary`: what an
    engine's front end can check without the tokenizer. Constraints that passed are remembered
    (the last 4,096), so a repeated one costs a parse; ``on_checked(constraint, seconds)`` is
    called after each compile. Raises as :func:`parse_request` and
    :meth:`RequestConstraint.compile` do."""
    constraint = parse_request(extra_args, max_bytes=max_bytes)
    if constraint is None:
        return None
    key = constraint.key
    with _CHECKED_LOCK:
        if key in _CHECKED:
            _CHECKED.move_to_end(key)
            return constraint
    start = time.perf_counter()
    constraint.compile(byte_vocabulary())
    if on_checked is not None:
        on_checked(constraint, time.perf_counter() - start)
    with _CHECKED_LOCK:
        _CHECKED[key] = None
        while len(_CHECKED) > _CHECKED_SIZE:
            _CHECKED.popitem(last=False)
    return constraint


@dataclass
class CompiledConstraint:
    """A compiled constraint: its :class:`Matcher`, how long the compile took (seconds, first
    mask included) and, once :meth:`measure_distances` ran, the shortest output in tokens."""

    matcher: Matcher
    seconds: float
    description: str = ""
    uses: int = field(default=0)
    min_length: int | None = None
    distance_seconds: float | None = None

    def measure_distances(self) -> int:
        """The guide's token distances, which budget-aware masks need (for a pushdown guide this
        builds every automaton the network reaches: the slow part of a first request); returns
        :meth:`.Guide.min_length`. Computed once."""
        if self.min_length is None:
            start = time.perf_counter()
            need = self.matcher.guide.min_length()
            self.distance_seconds = time.perf_counter() - start
            self.min_length = need
        return self.min_length


class ConstraintCache:
    """Compiled constraints shared by every request, bounded (least recently used dropped first).

    :meth:`get` returns a :class:`~concurrent.futures.Future`: the first request with a
    constraint starts its compile (with ``submit``, e.g. a thread pool's), and every request with
    the same constraint while it runs waits on the same future, so a constraint compiles once.
    A failed compile is not kept (the next request tries again and gets the same error).

    Args:
        vocabulary: a callable returning the vocabulary (called in the compile, so a vocabulary
            still being built does not block :meth:`get`).
        vocab_size: the logits' width (see :class:`Matcher`).
        size: compiled constraints kept.
        on_compiled: called with each :class:`CompiledConstraint` (logging, metrics).
    """

    def __init__(self, vocabulary: Callable[[], Vocabulary], vocab_size: int | None = None, *, size: int = 256,
                 on_compiled: Callable[[CompiledConstraint], None] | None = None) -> None:
        self._vocabulary = vocabulary
        self.vocab_size = vocab_size
        self.size = size
        self._on_compiled = on_compiled
        self._entries: OrderedDict[Hashable, Future[CompiledConstraint]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, constraint: RequestConstraint,
            submit: Callable[[Callable[[], None]], Any] | None = None) -> Future[CompiledConstraint]:
        """The compiled ``constraint``, as a future. ``submit`` runs the compile (for example a
        thread pool's ``submit``; default: right here, in the caller's thread)."""
        key = constraint.key
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
            future: Future[CompiledConstraint] = Future()
            self._entries[key] = future
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        if submit is None:
            self._run(key, constraint, future)
        else:
            submit(lambda: self._run(key, constraint, future))
        return future

    def _run(self, key: Hashable, constraint: RequestConstraint, future: Future[CompiledConstraint]) -> None:
        try:
            future.set_result(self._compile(constraint))
        except BaseException as e:  # noqa: BLE001 - handed to the waiters
            self._forget(key, future)
            future.set_exception(e)

    def _forget(self, key: Hashable, future: Future[CompiledConstraint]) -> None:
        with self._lock:
            if self._entries.get(key) is future:
                del self._entries[key]

    def _compile(self, constraint: RequestConstraint) -> CompiledConstraint:
        vocab = self._vocabulary()
        start = time.perf_counter()
        guide = constraint.compile(vocab)
        matcher = Matcher(guide, vocab_size=self.vocab_size)
        if isinstance(guide, DfaGuide) and guide.num_states <= PRECOMPUTE_STATES:
            guide.precompute()  # (not a pushdown guide: that would build every automaton it reaches)
        matcher.packed_mask(guide.initial_state)
        done = CompiledConstraint(matcher, time.perf_counter() - start, constraint.describe())
        if self._on_compiled is not None:
            self._on_compiled(done)
        return done
