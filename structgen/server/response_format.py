"""``response_format`` → :class:`~structgen.Guide`, compiled off the event loop and cached.

The compiler's own LRU caches guides by (constraint text, options, vocabulary fingerprint); this
module adds the HTTP-facing rules (size limits, what ``json_object`` means) and runs the compile in
a thread pool so a slow schema never blocks the event loop or the decode loop. Masks of small
guides are computed right there too, so the decode loop rarely computes one itself.

What a client should know about its constraint travels with the guide (:class:`Compiled`): the
``format`` values the schema uses that structgen reads as annotations (they constrain nothing),
which the endpoints send back in the response's ``warnings`` list. (The compiler also emits them
as :class:`~structgen.errors.AnnotationWarning`, which reaches only the server's log.)

A second request with the same ``response_format`` reuses the guide (and its warnings) while
the guide lives (the compiler's LRU keeps it): :attr:`GuideCompiler.hits` and ``misses`` count
that, and ``observe`` (when given) receives the seconds of each compile that was not a hit.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import weakref
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from ..compiler import compile_json_schema, compile_regex
from ..compose.build import compile_composed
from ..compose.formats import Choice, Format, JsonSchema, Regex
from ..compose.reasoning import Reasoning, TextBudget
from ..compose.tools import HERMES, Tool, ToolCallFormat, tool_calls_format
from ..errors import ConstraintError, PayloadTooLarge
from ..guides.base import Guide
from ..json_schema.loading import format_annotations, load_2020_12
from ..vocab.vocabulary import Vocabulary
from .protocol import JsonObjectFormat, JsonSchemaFormat, RegexFormat, ResponseFormat, TextFormat

# PayloadTooLarge lives in structgen.errors; it is re-exported here, where it was first defined.
__all__ = ["ANY_OBJECT_SCHEMA", "ChatConstraint", "Compiled", "GuideCompiler", "PayloadTooLarge", "ToolsProblem",
           "schema_warnings"]

# ``{"type": "json_object"}``: any JSON object, at any depth (a pushdown guide whose "any value"
# automaton calls itself; compiled in about 0.2 s); every output is a valid JSON object.
# (ANY_OBJECT_DEPTH only bounds nesting where a finite automaton is needed: spans.)
ANY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}
ANY_OBJECT_DEPTH = 3

# Guides with at most this many states get every mask computed in the compile pool.
_PRECOMPUTE_STATES = 64
# response_format values remembered (with a weak reference to their guide) for reuse.
_REMEMBERED = 1024


@dataclass(frozen=True)
class Compiled:
    """A ``response_format``'s guide (``None``: unconstrained) and what the client should be told.

    For a chat request with tools or reasoning, also how to read the output back: ``tools`` (the
    calls to parse out of it), ``reasoning`` (the thinking to split off) and the thinking's token
    budget, which the engine applies (``text_budget``)."""

    guide: Guide | None
    warnings: tuple[str, ...] = ()
    tools: tuple[Tool, ...] = ()
    reasoning: Reasoning | None = None
    text_budget: TextBudget | None = None


class ToolsProblem(ConstraintError):
    """A tool's schema cannot be compiled (the message names the tool and the JSON pointer)."""


@dataclass(frozen=True)
class ChatConstraint:
    """What constrains a chat answer besides ``response_format``: ``tools`` (OpenAI's form, as
    dicts) with ``tool_choice`` and ``parallel``, and a thinking (``reasoning``)."""

    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: Any = "auto"
    parallel: bool = True
    reasoning: Reasoning | None = None
    call_format: ToolCallFormat = HERMES

    @property
    def is_plain(self) -> bool:
        return not self.tools and self.reasoning is None


def schema_warnings(schema: Any) -> tuple[str, ...]:
    """One sentence per ``format`` of ``schema`` that is read as an annotation (unknown to
    structgen, so the string it names is not constrained by it), naming its JSON pointer.

    >>> schema_warnings({"properties": {"p": {"type": "string", "format": "path"}}})
    ("format 'path' at /properties/p/format is unknown to this server: read as an annotation, the string is not constrained by it",)
    """
    root = load_2020_12(schema, None)
    return tuple(f"format {name!r} at {path} is unknown to this server: read as an annotation, the string is "
                 "not constrained by it" for path, name in format_annotations(root, {}))


class GuideCompiler:
    """Compiles ``response_format`` values into guides over one vocabulary, in a thread pool.

    Args:
        vocabulary: the model's vocabulary (its EOS ids are the ones the engine stops on).
        max_constraint_bytes: the largest schema (as JSON) or pattern accepted.
        workers: compile threads.
        observe: called with the seconds of every compile that was not a hit (for metrics).
    """

    def __init__(self, vocabulary: Vocabulary, *, max_constraint_bytes: int = 64 * 1024, workers: int = 2,
                 observe: Callable[[float], None] | None = None) -> None:
        self.vocabulary = vocabulary
        self.max_constraint_bytes = max_constraint_bytes
        self.observe = observe
        self.hits = 0
        self.misses = 0
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="structgen-compile")
        self._seen: OrderedDict[str, tuple[weakref.ref[Guide], tuple[str, ...]]] = OrderedDict()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the compile threads (running compiles finish)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def compile(self, fmt: ResponseFormat | None) -> Compiled:
        """The guide for ``fmt`` and its warnings (no guide for plain text).

        Raises ``ConstraintError``, ``PayloadTooLarge``."""
        if fmt is None or isinstance(fmt, TextFormat):
            return Compiled(None)
        key = fmt.model_dump_json(by_alias=True)
        with self._lock:
            seen = self._seen.get(key)
            guide = seen[0]() if seen is not None else None
            if seen is not None and guide is not None:
                self._seen.move_to_end(key)
                self.hits += 1
                return Compiled(guide, seen[1])
        loop = asyncio.get_running_loop()
        compiled = await loop.run_in_executor(self._pool, self._timed, fmt)
        if compiled.guide is not None:
            with self._lock:
                self._seen[key] = (weakref.ref(compiled.guide), compiled.warnings)
                while len(self._seen) > _REMEMBERED:
                    self._seen.popitem(last=False)
        return compiled

    async def compile_chat(self, fmt: ResponseFormat | None, chat: ChatConstraint) -> Compiled:
        """The guide of a chat answer under ``fmt`` and ``chat`` (tools, thinking): one composed
        guide (:mod:`structgen.compose`). Raises :class:`ToolsProblem` naming a tool whose schema
        fails, ``ConstraintError``, ``PayloadTooLarge``."""
        if chat.is_plain:
            return await self.compile(fmt)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._compile_chat, fmt, chat)

    def _compile_chat(self, fmt: ResponseFormat | None, chat: ChatConstraint) -> Compiled:
        start = time.perf_counter()
        tools = tuple(Tool.of(t) for t in chat.tools)
        size = sum(len(json.dumps(t.schema())) for t in tools)
        self._check_size(b" " * size, "tools' schemas")
        answer, schema = self._answer(fmt, size)
        body: Format | None = answer
        if tools:
            choice = chat.tool_choice
            calls = tool_calls_format(tools, choice, parallel=chat.parallel, call_format=chat.call_format)
            if choice == "none":
                body = answer if answer is not None else calls
            elif choice == "auto" and answer is not None:  # an answer under response_format, or calls
                body = Choice(answer, tool_calls_format(tools, "required", parallel=chat.parallel,
                                                        call_format=chat.call_format))
            else:
                body = calls
        if chat.reasoning is not None:
            body = chat.reasoning.format(body)
        assert body is not None
        try:
            guide = compile_composed(body, self.vocabulary)
        except ConstraintError as e:
            if str(e).startswith("tool '"):
                raise ToolsProblem(str(e)) from e
            raise
        guide.token_mask(guide.initial_state)
        warnings = schema_warnings(schema) if schema is not None else ()
        for t in tools:
            warnings += tuple(f"tool {t.name!r}: {w}" for w in schema_warnings(t.schema()))
        with self._lock:
            self.misses += 1
        if self.observe is not None:
            self.observe(time.perf_counter() - start)
        return Compiled(guide, warnings, tools, chat.reasoning,
                        chat.reasoning.budget() if chat.reasoning is not None else None)

    def _answer(self, fmt: ResponseFormat | None, used: int) -> tuple[Format | None, Any]:
        """``response_format`` as a composed format (``None``: free text) and its schema."""
        if isinstance(fmt, RegexFormat):
            self._check_size(fmt.pattern.encode("utf-8"), "regex pattern")
            return Regex(fmt.pattern), None
        if isinstance(fmt, (JsonSchemaFormat, JsonObjectFormat)):
            schema = fmt.json_schema.schema_ if isinstance(fmt, JsonSchemaFormat) else fmt.schema_
            depth = 3
            if schema is None:
                schema, depth = ANY_OBJECT_SCHEMA, ANY_OBJECT_DEPTH
            data = json.dumps(schema).encode("utf-8")
            self._check_size(data, "JSON Schema")
            self._check_documents(fmt.extract_from, len(data) + used)
            docs = tuple(fmt.extract_from) if isinstance(fmt.extract_from, list) else fmt.extract_from
            return JsonSchema(schema, max_recursion_depth=depth, extract_from=docs), (
                None if schema is ANY_OBJECT_SCHEMA else schema)
        return None, None

    def _timed(self, fmt: ResponseFormat) -> Compiled:
        start = time.perf_counter()
        guide = self.compile_sync(fmt)
        schema = fmt.json_schema.schema_ if isinstance(fmt, JsonSchemaFormat) else (
            fmt.schema_ if isinstance(fmt, JsonObjectFormat) else None)
        compiled = Compiled(guide, schema_warnings(schema) if schema is not None else ())
        with self._lock:
            self.misses += 1
        if self.observe is not None:
            self.observe(time.perf_counter() - start)
        return compiled

    def compile_sync(self, fmt: ResponseFormat) -> Guide | None:
        """The blocking half of :meth:`compile`: the guide alone (no cache of its own, no warnings)."""
        if isinstance(fmt, TextFormat):
            return None
        if isinstance(fmt, RegexFormat):
            self._check_size(fmt.pattern.encode("utf-8"), "regex pattern")
            guide = compile_regex(fmt.pattern, self.vocabulary)
        elif isinstance(fmt, JsonSchemaFormat):
            guide = self._schema(fmt.json_schema.schema_, fmt.extract_from)
        elif isinstance(fmt, JsonObjectFormat):
            if fmt.schema_ is None:
                self._check_documents(fmt.extract_from, 0)
                guide = compile_json_schema(ANY_OBJECT_SCHEMA, self.vocabulary, max_recursion_depth=ANY_OBJECT_DEPTH,
                                            extract_from=fmt.extract_from)
            else:
                guide = self._schema(fmt.schema_, fmt.extract_from)
        else:  # pragma: no cover - the protocol models admit nothing else
            raise TypeError(f"unknown response_format {fmt!r}")
        if guide.num_states <= _PRECOMPUTE_STATES:
            guide.precompute()
        else:
            guide.token_mask(guide.initial_state)
        return guide

    def _schema(self, schema: Any, extract_from: str | list[str] | None = None) -> Guide:
        data = json.dumps(schema).encode("utf-8")
        self._check_size(data, "JSON Schema")
        self._check_documents(extract_from, len(data))
        return compile_json_schema(schema, self.vocabulary, extract_from=extract_from)

    def _check_documents(self, extract_from: str | list[str] | None, used: int) -> None:
        """``extract_from`` documents count against the constraint size limit (with the schema)."""
        if extract_from is None:
            return
        docs = [extract_from] if isinstance(extract_from, str) else extract_from
        size = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
        if used + size > self.max_constraint_bytes:
            raise PayloadTooLarge(
                f"the extract_from documents are {size} bytes (with the schema, {used + size}), over this "
                f"server's limit of {self.max_constraint_bytes}"
            )

    def _check_size(self, data: bytes, what: str) -> None:
        if len(data) > self.max_constraint_bytes:
            raise PayloadTooLarge(
                f"the {what} is {len(data)} bytes, over this server's limit of {self.max_constraint_bytes}"
            )
