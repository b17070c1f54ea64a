"""``POST /v1/responses``: OpenAI's Responses API, stateless, on the same engine and door.

A request (:class:`~structgen.server.responses_protocol.ResponsesRequest`) becomes what a chat
request becomes: ``instructions`` and the ``input`` items are chat messages (a function call
sent back is the assistant's ``tool_calls``, its output a ``tool`` message, a custom tool's call
is written as the model writes it, reasoning items are left out), ``text.format`` is the
``response_format``, ``tools`` / ``tool_choice`` / ``parallel_tool_calls`` and ``reasoning``
are a :class:`~structgen.server.response_format.ChatConstraint` (custom tools included), all
compiled into one guide through the door. The output is read back into OpenAI's output items
and stream events (:mod:`.responses_output`); a stream's events carry ``sequence_number`` 0, 1,
2, ... and end with ``response.completed`` (``response.incomplete`` when
``max_output_tokens`` ran out, ``response.failed`` when the generation failed).

Nothing is stored: ``store`` is accepted and the response says ``"store": false``;
``previous_response_id`` and the other fields that need stored state are refused with a 400 that
names them, and so are built-in tools.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from typing import Any, AsyncIterator

from fastapi import APIRouter, Request

from ..compose.reasoning import Reasoning
from ..errors import ConstraintError
from .calls import CustomTool, custom_tools_prompt, write_custom_call
from .engine import EngineRequest, Event, SamplingParams
from .grammar_formats import custom_tool_input, definition_size
from .protocol import GrammarFormat, HTTPProblem, JsonSchemaFormat, JsonSchemaSpec, ResponseFormat, TextFormat
from .response_format import ChatConstraint, Compiled
from .responses_output import OutputWriter, usage
from .responses_protocol import (EFFORT_SHARE, AllowedTools, CallOutputItem, CustomToolCallItem, CustomToolSpec,
                                 FunctionCallItem, FunctionTool, MessageItem, NamedToolChoice, ReasoningItem,
                                 ResponsesJsonSchema, ResponsesRequest, part_text)
from .routes import Served, Serving, disconnected, failed, streaming

__all__ = ["input_messages", "router"]

router = APIRouter()


# -- the request, as a chat request --------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(t for t in (part_text(p) for p in content) if t is not None)


def input_messages(req: ResponsesRequest) -> list[dict[str, Any]]:
    """``instructions`` and ``input`` as OpenAI chat messages (dicts)."""
    out: list[dict[str, Any]] = []
    if req.instructions:
        out.append({"role": "system", "content": req.instructions})
    if isinstance(req.input, str):
        out.append({"role": "user", "content": req.input})
        return out
    for item in req.input:
        if isinstance(item, MessageItem):
            role = "system" if item.role == "developer" else item.role
            out.append({"role": role, "content": _text_of(item.content)})
        elif isinstance(item, (FunctionCallItem, CustomToolCallItem)):
            if not out or out[-1]["role"] != "assistant":
                out.append({"role": "assistant", "content": ""})
            last = out[-1]
            if isinstance(item, FunctionCallItem):
                call = {"id": item.call_id, "type": "function", "function": {"name": item.name, "arguments": item.arguments}}
                last.setdefault("tool_calls", []).append(call)
            else:
                written = write_custom_call(item.name, item.input)
                last["content"] = f"{last['content']}\n{written}" if last["content"] else written
        elif isinstance(item, CallOutputItem):
            out.append({"role": "tool", "tool_call_id": item.call_id, "content": _text_of(item.output)})
        elif isinstance(item, ReasoningItem):
            continue  # (the thinking is not shown to the model again, as reasoning_content on chat)
    return out


def _text_format(req: ResponsesRequest) -> ResponseFormat | None:
    fmt = req.text.format if req.text is not None else None
    if fmt is None or isinstance(fmt, TextFormat):
        return None
    if isinstance(fmt, ResponsesJsonSchema):
        spec = JsonSchemaSpec.model_validate({"name": fmt.name, "description": fmt.description,
                                              "schema": fmt.schema_, "strict": fmt.strict})
        return JsonSchemaFormat(type="json_schema", json_schema=spec, extract_from=fmt.extract_from)
    return fmt


def _text_field(req: ResponsesRequest) -> str:
    """The field a ``text.format`` that fails to compile is named by."""
    fmt = req.text.format if req.text is not None else None
    return "text.format.grammar" if isinstance(fmt, GrammarFormat) else "text.format"


def _tools(req: ResponsesRequest, max_bytes: int) -> tuple[list[dict[str, Any]], list[CustomTool]]:
    """The function tools (in the chat form) and the custom tools; 400 for two of one name, 413
    for custom tools' definitions over ``max_bytes`` together (the server's constraint limit)."""
    functions: list[dict[str, Any]] = []
    custom: list[CustomTool] = []
    seen: set[str] = set()
    used = 0  # (bytes of the custom tools' definitions so far)
    for i, tool in enumerate(req.tools or ()):
        name = getattr(tool, "name", "")
        if name in seen:
            raise HTTPProblem(400, f"tools[{i}]: two tools are named {name!r}", param=f"tools[{i}].name")
        seen.add(name)
        if isinstance(tool, FunctionTool):
            fn = {"name": tool.name, "description": tool.description, "parameters": tool.parameters,
                  "strict": tool.strict}
            functions.append({"type": "function", "function": {k: v for k, v in fn.items() if v is not None}})
        elif isinstance(tool, CustomToolSpec):
            spec = tool.format.model_dump() if tool.format is not None else None
            fmt = custom_tool_input(spec, field=f"tools[{i}].format", max_bytes=max_bytes, used=used)
            used += definition_size(fmt)
            custom.append(CustomTool(tool.name, fmt, tool.description or "", tool.model_dump(exclude_none=True)))
    return functions, custom


def _tool_choice(req: ResponsesRequest, functions: list[dict[str, Any]],
                 custom: list[CustomTool]) -> tuple[str, list[dict[str, Any]], list[CustomTool]]:
    """``tool_choice`` as compose reads it, and the tools it allows."""
    choice = req.tool_choice
    has_tools = bool(functions or custom)
    if choice is None:
        return ("auto" if has_tools else "none"), functions, custom
    if isinstance(choice, str):
        if choice != "none" and not has_tools:
            raise HTTPProblem(400, f"tool_choice {choice!r} needs tools", param="tool_choice")
        return choice, functions, custom
    names = {"function": [t["function"]["name"] for t in functions], "custom": [c.name for c in custom]}
    if isinstance(choice, NamedToolChoice):
        if choice.name not in names[choice.type]:
            raise HTTPProblem(400, f"tool_choice names the {choice.type} tool {choice.name!r}, which is not among the "
                                   f"{choice.type} tools {names[choice.type]}", param="tool_choice")
        return choice.name, functions, custom
    assert isinstance(choice, AllowedTools)
    allowed: set[str] = set()
    for j, t in enumerate(choice.tools):
        kind, name = t.get("type"), t.get("name")
        if not isinstance(kind, str) or kind not in names or name not in names[kind] or not isinstance(name, str):
            raise HTTPProblem(400, f"tool_choice.tools[{j}]: {t!r} is not one of the request's function or custom "
                                   "tools", param=f"tool_choice.tools[{j}]")
        allowed.add(name)
    if not allowed:
        raise HTTPProblem(400, "tool_choice.tools: list at least one tool", param="tool_choice.tools")
    return (choice.mode, [t for t in functions if t["function"]["name"] in allowed],
            [c for c in custom if c.name in allowed])


def _reasoning(req: ResponsesRequest, budget: int) -> Reasoning | None:
    r = req.reasoning
    if r is None or r.effort == "none":
        return None
    tokens = r.max_tokens if r.max_tokens is not None else int(budget * EFFORT_SHARE[r.effort or "medium"])
    try:
        return Reasoning(r.start, r.end, tokens)
    except ConstraintError as e:
        raise HTTPProblem(400, f"reasoning: {e}", param="reasoning") from e


# -- the response ----------------------------------------------------------------------------------


def _echo(req: ResponsesRequest, serving: Serving, head: dict[str, Any], output: list[dict[str, Any]], status: str,
          compiled: Compiled | None, used: dict[str, Any] | None = None, error: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    """The response object (OpenAI's ``Response``)."""
    fmt = req.text.format if req.text is not None else None
    tc = req.tool_choice
    body: dict[str, Any] = {
        **head, "object": "response", "status": status, "background": False, "error": error,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": req.instructions, "max_output_tokens": req.max_output_tokens,
        "max_tool_calls": req.max_tool_calls, "model": serving.model_name, "output": output,
        "parallel_tool_calls": req.parallel_tool_calls is not False, "previous_response_id": None,
        "prompt_cache_key": req.prompt_cache_key, "reasoning": {
            "effort": req.reasoning.effort if req.reasoning else None,
            "summary": req.reasoning.summary if req.reasoning else None},
        "safety_identifier": req.safety_identifier, "service_tier": "default", "store": False,
        "temperature": req.temperature, "top_p": req.top_p, "top_logprobs": req.top_logprobs or 0,
        "text": {"format": fmt.model_dump(by_alias=True, exclude_none=True) if fmt else {"type": "text"},
                 "verbosity": "medium"},
        "tool_choice": tc if isinstance(tc, str) else (tc.model_dump(exclude_none=True) if tc is not None
                                                       else ("auto" if req.tools else "none")),
        "tools": [t.model_dump(by_alias=True, exclude_none=True) for t in req.tools or ()],
        "truncation": "disabled", "usage": used, "user": req.user, "metadata": req.metadata or {},
        "completed_at": int(time.time()) if status in ("completed", "incomplete") else None,
    }
    if compiled is not None and compiled.warnings:
        body["warnings"] = list(compiled.warnings)
    return body


@router.post("/v1/responses")
async def create_response(req: ResponsesRequest, request: Request, serving: Served) -> Any:
    serving.check_model(req.model)
    refused = req.unsupported()
    if refused is not None:
        field, why = refused
        raise HTTPProblem(400, f"{field} is not supported by this server: {why}", param=field,
                          code="unsupported_parameter")
    functions, custom = await asyncio.to_thread(_tools, req, serving.compiler.max_constraint_bytes)  # (a custom tool's grammar compiles)
    choice, functions, custom = _tool_choice(req, functions, custom)
    if req.wants_logprobs and (req.tools or (req.reasoning and req.reasoning.effort != "none")):
        raise HTTPProblem(400, "include: message.output_text.logprobs is supported without tools and reasoning only",
                          param="include", code="unsupported_parameter")
    note = custom_tools_prompt(custom) if custom and choice != "none" else ""
    prompt = await serving.messages_prompt(input_messages(req), functions if choice != "none" else [], note=note,
                                           field="input")
    budget = serving.budget(prompt, req.max_output_tokens, field="max_output_tokens")
    chat = ChatConstraint(tools=tuple(functions), tool_choice=choice, parallel=req.parallel_tool_calls is not False,
                          reasoning=_reasoning(req, budget), custom_tools=tuple(custom))
    logprobs = (req.top_logprobs or 0) if req.wants_logprobs else None
    params = SamplingParams(max_tokens=1, temperature=req.temperature, top_p=req.top_p, logprobs=logprobs)
    handles, compiled = await serving.submit(prompt, _text_format(req), params, n=1, max_tokens=req.max_output_tokens,
                                             field="max_output_tokens", chat=chat, request=request,
                                             constraint=_text_field(req))
    head = {"id": f"resp_{uuid.uuid4().hex}", "created_at": int(time.time())}
    writer = OutputWriter(compiled, serving.names if logprobs is not None else None)
    if req.stream:
        return streaming(_events(req, serving, head, handles[0], writer, compiled, len(prompt)), handles)
    last = await _whole(request, handles[0], writer)
    if last.error is not None:
        raise failed(last.error)
    status = "incomplete" if last.finish_reason == "length" else "completed"
    writer.finish(status)
    used = usage(len(prompt), writer.output_tokens, writer.reasoning_tokens)
    return _echo(req, serving, head, writer.items, status, compiled, used)


async def _whole(request: Request, handle: EngineRequest, writer: OutputWriter) -> Event:
    """Every event of ``handle`` through ``writer``; the last one. 499 if the client goes away."""

    async def consume() -> Event:
        last = None
        async for last in handle:
            writer.feed(last)
        assert last is not None, "the engine ends every request with an event"
        return last

    work = asyncio.ensure_future(consume())
    watch = asyncio.ensure_future(disconnected(request))
    try:
        await asyncio.wait((work, watch), return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            raise HTTPProblem(499, "client disconnected")
        return work.result()
    finally:
        watch.cancel()
        work.cancel()
        handle.cancel()


async def _events(req: ResponsesRequest, serving: Serving, head: dict[str, Any], handle: EngineRequest,
                  writer: OutputWriter, compiled: Compiled, prompt_tokens: int) -> AsyncIterator[str]:
    numbers = itertools.count()

    def send(event: dict[str, Any]) -> str:
        event = {**event, "sequence_number": next(numbers)}
        return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"

    snapshot = _echo(req, serving, head, [], "in_progress", compiled)
    yield send({"type": "response.created", "response": snapshot})
    yield send({"type": "response.in_progress", "response": snapshot})
    async for ev in handle:
        if ev.error is not None:
            problem = failed(ev.error)
            error = {"code": "server_error", "message": problem.message}
            body = _echo(req, serving, head, writer.items, "failed", compiled, error=error)
            yield send({"type": "response.failed", "response": body})
            return
        for event in writer.feed(ev):
            yield send(event)
        if ev.finish_reason is not None:
            status = "incomplete" if ev.finish_reason == "length" else "completed"
            for event in writer.finish(status):
                yield send(event)
            used = usage(prompt_tokens, writer.output_tokens, writer.reasoning_tokens)
            body = _echo(req, serving, head, writer.items, status, compiled, used)
            yield send({"type": f"response.{status}", "response": body})
            return
