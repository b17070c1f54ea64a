"""``response_format`` (and a chat's tools and thinking) → a format value → a
:class:`~structgen.Guide`, through the door (:func:`structgen.compile`, whose cache every request
shares), compiled off the event loop.

This module adds the HTTP-facing rules (size limits, what ``json_object`` means) and runs a compile
that is not in the cache in a thread pool, so a slow schema never blocks the event loop or the
decode loop; ``compile(..., warm=True)`` computes the first step's masks right there too. A
``response_format`` schema is the same format, and the same guide, whether it comes alone or as
the answer beside tools or a thinking (then one region of a composed format).

What a client should know about its constraint travels with the guide (:class:`Compiled`): the
``format`` values the schema uses that structgen reads as annotations (they constrain nothing),
which the endpoints send back in the response's ``warnings`` list. (The compiler also emits them
as :class:`~structgen.errors.AnnotationWarning`, which reaches only the server's log.)

A second request with the same ``response_format`` reuses the guide (the door's cache keeps it):
:attr:`GuideCompiler.hits` and ``misses`` count that, and ``observe`` (when given) receives the
seconds of each compile that was not a hit.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Union

from ..compiler import compile, is_cached
from ..compose.reasoning import Reasoning
from ..compose.tools import HERMES, Tool, ToolCallFormat
from ..errors import ConstraintError, PayloadTooLarge
from ..formats import Choice, Format, Grammar, JsonSchema, Literal, Regex
from ..guides.base import Guide
from ..guides.text_budget import TextBudget
from ..json_schema.loading import format_annotations, load_2020_12
from ..vocab.vocabulary import Vocabulary
from .calls import CustomTool, calls_format
from .protocol import GrammarFormat, JsonObjectFormat, JsonSchemaFormat, RegexFormat, ResponseFormat, TextFormat

#: What constrains an answer: a ``response_format`` (or the Responses API's ``text.format``), or
#: a format value built from another field (vLLM's ``structured_outputs`` / ``guided_*``).
Answer = Union[ResponseFormat, Format, None]

# PayloadTooLarge lives in structgen.errors; it is re-exported here, where it was first defined.
__all__ = ["ANY_OBJECT_SCHEMA", "ChatConstraint", "Compiled", "GuideCompiler", "PayloadTooLarge", "ToolsProblem",
           "schema_warnings"]

# ``{"type": "json_object"}``: any JSON object, at any depth (a pushdown guide whose "any value"
# automaton calls itself; compiled in about 0.2 s); every output is a valid JSON object.
ANY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}

# The warnings of the schemas seen last (reading them loads the schema again).
_WARNINGS_KEPT = 1024


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
    custom_tools: tuple[CustomTool, ...] = ()


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
    #: custom tools (the Responses API's ``{"type": "custom"}``), called beside ``tools``
    custom_tools: tuple[CustomTool, ...] = ()

    @property
    def is_plain(self) -> bool:
        return not self.tools and not self.custom_tools and self.reasoning is None


@functools.lru_cache(maxsize=_WARNINGS_KEPT)
def _warnings_of(text: str) -> tuple[str, ...]:
    root = load_2020_12(json.loads(text), None)
    return tuple(f"format {name!r} at {path} is unknown to this server: read as an annotation, the string is "
                 "not constrained by it" for path, name in format_annotations(root, {}))


def schema_warnings(schema: Any) -> tuple[str, ...]:
    """One sentence per ``format`` of ``schema`` that is read as an annotation (unknown to
    structgen, so the string it names is not constrained by it), naming its JSON pointer.

    >>> schema_warnings({"properties": {"p": {"type": "string", "format": "path"}}})
    ("format 'path' at /properties/p/format is unknown to this server: read as an annotation, the string is not constrained by it",)
    """
    return _warnings_of(json.dumps(schema, sort_keys=True))


class GuideCompiler:
    """Compiles ``response_format`` values (with a chat's tools and thinking) into guides over
    one vocabulary, through the door; what the cache does not hold compiles in a thread pool.

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
        #: compiles whose client went away before they ended (see ``Serving.submit``)
        self.abandoned = 0
        #: compiles running in the pool now
        self.running = 0
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="structgen-compile")
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the compile threads (running compiles finish)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def compile(self, fmt: Answer) -> Compiled:
        """The guide for ``fmt`` and its warnings (no guide for plain text).

        Raises ``ConstraintError``, ``PayloadTooLarge``."""
        return await self.compile_chat(fmt, ChatConstraint())

    async def compile_chat(self, fmt: Answer, chat: ChatConstraint) -> Compiled:
        """The guide of a chat answer under ``fmt`` and ``chat`` (tools, thinking): one format.
        Raises :class:`ToolsProblem` naming a tool whose schema fails, ``ConstraintError``,
        ``PayloadTooLarge``."""
        tools = tuple(Tool.of(t) for t in chat.tools)
        body, schema = self.format_of(fmt, chat, tools)
        reasoning = chat.reasoning
        budget = reasoning.budget() if reasoning is not None else None
        if body is None:
            return Compiled(None, (), tools, reasoning, budget, chat.custom_tools)
        if is_cached(body, self.vocabulary):
            guide = self._compile(body)
            with self._lock:
                self.hits += 1
        else:
            start = time.perf_counter()
            guide = await asyncio.get_running_loop().run_in_executor(self._pool, self._compile, body)
            with self._lock:
                self.misses += 1
            if self.observe is not None:
                self.observe(time.perf_counter() - start)
        # (after the compile, which names a tool whose schema is invalid: ToolsProblem)
        warnings = schema_warnings(schema) if schema is not None else ()
        for t in tools:
            try:
                found = schema_warnings(t.schema())
            except ConstraintError as e:  # (a cached guide skips the compile that would have named it)
                raise ToolsProblem(f"tool {t.name!r}: {e}") from e
            warnings += tuple(f"tool {t.name!r}: {w}" for w in found)
        return Compiled(guide, warnings, tools, reasoning, budget, chat.custom_tools)

    def _compile(self, body: Format) -> Guide:
        with self._lock:
            self.running += 1
        try:
            return self._through_the_door(body)
        except ConstraintError as e:
            if e.region is not None:  # (a tool's schema: named regions are the tools')
                raise ToolsProblem(str(e)) from e
            raise
        finally:
            with self._lock:
                self.running -= 1

    def _through_the_door(self, body: Format) -> Guide:
        return compile(body, self.vocabulary, warm=True)

    def format_of(self, fmt: Answer, chat: ChatConstraint,
                  tools: tuple[Tool, ...]) -> tuple[Format | None, Any]:
        """The format of an answer under ``fmt`` and ``chat`` (``None``: free text) and the
        ``response_format``'s schema (for its warnings). Raises :class:`PayloadTooLarge`."""
        size = sum(len(json.dumps(t.schema())) for t in tools)
        self._check_size(b" " * size, "tools' schemas")
        answer, schema = self._answer(fmt, size)
        body: Format | None = answer
        if tools or chat.custom_tools:
            choice, custom = chat.tool_choice, chat.custom_tools
            calls = calls_format(tools, custom, choice, parallel=chat.parallel, call_format=chat.call_format)
            if choice == "none":
                body = answer if answer is not None else calls
            elif choice == "auto" and answer is not None:  # an answer under response_format, or calls
                body = Choice(answer, calls_format(tools, custom, "required", parallel=chat.parallel,
                                                   call_format=chat.call_format))
            else:
                body = calls
        if chat.reasoning is not None:
            body = chat.reasoning.format(body)
        return body, schema

    def _answer(self, fmt: Answer, used: int) -> tuple[Format | None, Any]:
        """``response_format`` as a format (``None``: free text) and its schema."""
        if isinstance(fmt, Format):  # (built from another field: its size is checked here)
            if isinstance(fmt, JsonSchema):
                data = fmt.schema_text().encode("utf-8")
                self._check_size(data, "JSON Schema")
                self._check_documents(list(fmt.extract_from) if fmt.extract_from else None, len(data) + used)
                return fmt, fmt.schema
            if isinstance(fmt, Regex):
                self._check_size(fmt.pattern.encode("utf-8"), "regex pattern")
            elif isinstance(fmt, Grammar):
                self._check_size(fmt.text.encode("utf-8"), "grammar")
            elif isinstance(fmt, Choice):
                size = sum(len(p.text.encode("utf-8")) for p in fmt.parts if isinstance(p, Literal))
                self._check_size(b" " * size, "choice")
            return fmt, None
        if isinstance(fmt, RegexFormat):
            self._check_size(fmt.pattern.encode("utf-8"), "regex pattern")
            return Regex(fmt.pattern), None
        if isinstance(fmt, GrammarFormat):
            self._check_size(fmt.grammar.encode("utf-8"), "grammar")
            return Grammar(fmt.grammar, syntax=fmt.syntax, start=fmt.start), None
        if isinstance(fmt, (JsonSchemaFormat, JsonObjectFormat)):
            schema = fmt.json_schema.schema_ if isinstance(fmt, JsonSchemaFormat) else fmt.schema_
            if schema is None:
                schema = ANY_OBJECT_SCHEMA
            data = json.dumps(schema).encode("utf-8")
            self._check_size(data, "JSON Schema")
            self._check_documents(fmt.extract_from, len(data) + used)
            return JsonSchema(schema, extract_from=fmt.extract_from), (None if schema is ANY_OBJECT_SCHEMA else schema)
        if fmt is None or isinstance(fmt, TextFormat):
            return None, None
        raise TypeError(f"unknown response_format {fmt!r}")  # pragma: no cover - the protocol admits nothing else

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
