"""Chat answers with tools and thinking: what a request asks for, and its output read back.

A chat request's ``tools`` / ``tool_choice`` / ``parallel_tool_calls`` and structgen's
``reasoning`` extension become one :class:`~structgen.server.response_format.ChatConstraint`
(:func:`chat_constraint`), compiled with ``response_format`` into one guide. The output the
engine streams is then read back: the thinking (``reasoning_content``), the text (``content``)
and the calls (``tool_calls``, with ``finish_reason: "tool_calls"``), whole (:func:`message`) or
as OpenAI's stream deltas (:class:`ChatDeltas`).

How tools reach the model: through the chat template when it renders tools, else as the
default format's system text (:func:`structgen.compose.tools.tool_messages`), which also writes
an assistant's earlier calls into its content and ``role: "tool"`` results as
``<tool_response>`` user messages.

Custom tools (OpenAI's ``{"type": "custom", "custom": {"name", "format"}}``: free text, a regex
or a Lark / GBNF grammar, :mod:`.grammar_formats`) are called as :mod:`.calls` writes them and
shown to the model in the system text (:func:`~.calls.custom_tools_prompt`); their calls come
back as ``tool_calls`` items ``{"id", "type": "custom", "custom": {"name", "input"}}``, streamed
as ``custom.input`` pieces, and a custom call sent back in an assistant message is written into
its content as the model wrote it.
"""

from __future__ import annotations

from typing import Any

from ..compose.reasoning import Reasoning, ReasoningSplitter, split_reasoning
from ..compose.tools import ToolCallStream, parse_tool_calls
from .calls import CallReader, CustomTool, write_custom_call
from .grammar_formats import custom_tool_input, definition_size
from .protocol import ChatCompletionRequest, CustomToolSpec, HTTPProblem, ToolSpec
from .response_format import ChatConstraint, Compiled

__all__ = ["ChatDeltas", "chat_constraint", "chat_messages", "custom_tools", "finish_reason", "function_tools",
           "message"]


def function_tools(req: ChatCompletionRequest) -> list[dict[str, Any]]:
    """The request's function tools, as OpenAI dicts (custom tools left out)."""
    return [t.model_dump(exclude_none=True) for t in req.tools or () if isinstance(t, ToolSpec)]


def custom_tools(req: ChatCompletionRequest, max_bytes: int) -> tuple[CustomTool, ...]:
    """The request's custom tools, their input formats checked (a 400 naming
    ``tools[i].custom.format.grammar.definition`` for one that does not compile, a 413 for one
    over ``max_bytes``, the server's constraint limit, all custom tools together). Compiles
    grammars (over single bytes): call it off the event loop."""
    out = []
    seen = {t.function.name for t in req.tools or () if isinstance(t, ToolSpec)}
    used = 0  # (bytes of the custom tools' definitions so far)
    for i, t in enumerate(req.tools or ()):
        if isinstance(t, CustomToolSpec):
            spec = t.custom
            if spec.name in seen:
                raise HTTPProblem(400, f"tools[{i}]: two tools are named {spec.name!r}", param=f"tools[{i}].custom.name")
            seen.add(spec.name)
            fmt = custom_tool_input(spec.input_format(), field=f"tools[{i}].custom.format.grammar",
                                    max_bytes=max_bytes, used=used)
            used += definition_size(fmt)
            out.append(CustomTool(spec.name, fmt, spec.description or "", t.model_dump(exclude_none=True)))
    return tuple(out)


def chat_constraint(req: ChatCompletionRequest, custom: tuple[CustomTool, ...] = ()) -> ChatConstraint:
    """The tools and thinking a chat request asks for, with its ``custom`` tools
    (:func:`custom_tools`); a 400 naming ``tool_choice`` when it names no tool of ``tools`` or
    needs tools that are not there."""
    tools = tuple(function_tools(req))
    choice: Any = req.tool_choice if req.tool_choice is not None else ("auto" if tools or custom else "none")
    if isinstance(choice, dict):
        kind = choice.get("type")
        named = choice.get(kind) if isinstance(kind, str) else None
        if kind not in ("function", "custom") or not isinstance(named, dict) or not isinstance(named.get("name"), str):
            raise HTTPProblem(400, "tool_choice: expected {\"type\": \"function\", \"function\": {\"name\": ...}} or "
                                   "{\"type\": \"custom\", \"custom\": {\"name\": ...}}", param="tool_choice")
        names = [t["function"]["name"] for t in tools] if kind == "function" else [c.name for c in custom]
        if named["name"] not in names:
            what = "function" if kind == "function" else "custom tool"
            among = "tools" if kind == "function" else "custom tools"
            raise HTTPProblem(400, f"tool_choice names the {what} {named['name']!r}, which is not among the "
                                   f"{among} {names}", param="tool_choice")
        if custom:  # (with custom tools, compose reads a tool_choice by name)
            choice = named["name"]
    elif choice in ("required", "auto") and not tools and not custom and req.tool_choice is not None:
        raise HTTPProblem(400, f"tool_choice {choice!r} needs tools", param="tool_choice")
    opts = req.reasoning_options()
    reasoning = None if opts is None else Reasoning(opts.start, opts.end, opts.max_tokens)
    return ChatConstraint(tools=tools, tool_choice=choice, parallel=req.parallel_tool_calls is not False,
                          reasoning=reasoning, custom_tools=custom)


def chat_messages(req: ChatCompletionRequest) -> list[dict[str, Any]]:
    """The messages as OpenAI dicts (``developer`` read as ``system``, text parts joined)."""
    out = []
    for m in req.messages:
        msg: dict[str, Any] = {"role": "system" if m.role == "developer" else m.role, "content": m.text()}
        for c in m.tool_calls or ():
            if c.custom is not None:  # (a custom tool's call, written as the model writes it)
                written = write_custom_call(c.custom.name, c.custom.input)
                msg["content"] = f"{msg['content']}\n{written}" if msg["content"] else written
            elif c.function is not None:
                msg.setdefault("tool_calls", []).append({"id": c.id, "type": "function",
                                                         "function": c.function.model_dump()})
        if m.tool_call_id:
            msg["tool_call_id"] = m.tool_call_id
        out.append(msg)
    return out


def message(text: str, compiled: Compiled) -> dict[str, Any]:
    """The assistant message of a whole output: ``content`` (``None`` when there are calls and
    no text), ``tool_calls`` and ``reasoning_content`` when asked for."""
    msg: dict[str, Any] = {"role": "assistant"}
    if compiled.reasoning is not None:
        thinking, text = split_reasoning(text, compiled.reasoning)
        msg["reasoning_content"] = thinking
    if compiled.custom_tools:
        deltas = ChatDeltas(compiled, reasoning=False)
        made: dict[int, dict[str, Any]] = {}
        content = []
        for d in deltas.feed(text, final=True):
            if "content" in d:
                content.append(d["content"])
            for c in d.get("tool_calls", ()):
                if c["index"] not in made:
                    kind = c["type"]
                    made[c["index"]] = {"id": c["id"], "type": kind, kind: dict(c[kind])}
                else:
                    call = made[c["index"]]
                    kind = call["type"]
                    key = "arguments" if kind == "function" else "input"
                    call[kind][key] += c[kind][key]
        msg["content"] = "".join(content) or (None if made else "")
        if made:
            msg["tool_calls"] = [made[i] for i in sorted(made)]
        return msg
    if compiled.tools:
        text, calls = parse_tool_calls(text, compiled.tools)
        if calls:
            msg["content"] = text or None
            msg["tool_calls"] = [c.openai() for c in calls]
            return msg
    msg["content"] = text
    return msg


def finish_reason(reason: str | None, msg_or_deltas: Any) -> str | None:
    """``"tool_calls"`` in place of ``"stop"`` when the answer made calls."""
    has_calls = bool(msg_or_deltas.get("tool_calls")) if isinstance(msg_or_deltas, dict) else msg_or_deltas.has_calls
    return "tool_calls" if reason == "stop" and has_calls else reason


class ChatDeltas:
    """One choice's stream read back: :meth:`feed` each piece of text, get OpenAI's ``delta``
    objects to send (``reasoning_content``, ``content``, ``tool_calls`` items with ``index``,
    ``id``, ``type`` and the name first, then ``arguments`` pieces; a custom tool's item has
    ``type: "custom"`` and ``custom: {"name", "input"}``, then ``custom.input`` pieces).
    ``reasoning=False``: the text has no thinking (it was split off already)."""

    def __init__(self, compiled: Compiled, *, reasoning: bool = True) -> None:
        thinking = compiled.reasoning if reasoning else None
        self._thinking = ReasoningSplitter(thinking) if thinking is not None else None
        self._calls = ToolCallStream(compiled.tools) if compiled.tools and not compiled.custom_tools else None
        self._custom = CallReader(compiled.tools, compiled.custom_tools) if compiled.custom_tools else None
        self._kind = ""
        self._index = -1
        self.has_calls = False

    def feed(self, text: str, *, final: bool = False) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = []
        answer = text
        if self._thinking is not None:
            thinking, answer = self._thinking.feed(text, final=final)
            if thinking:
                deltas.append({"reasoning_content": thinking})
        if self._custom is not None:
            return deltas + self._custom_deltas(answer, final)
        if self._calls is None:
            if answer:
                deltas.append({"content": answer})
            return deltas
        for event in self._calls.feed(answer, final=final):
            if event[0] == "text":
                deltas.append({"content": event[1]})
            elif event[0] == "call":
                self.has_calls = True
                call = event[2]
                deltas.append({"tool_calls": [{"index": event[1], "id": call.id, "type": "function",
                                               "function": {"name": call.name, "arguments": ""}}]})
            else:
                deltas.append({"tool_calls": [{"index": event[1], "function": {"arguments": event[2]}}]})
        return deltas

    def _custom_deltas(self, answer: str, final: bool) -> list[dict[str, Any]]:
        """Function and custom tools' calls (:class:`~.calls.CallReader`): a custom call is a
        ``tool_calls`` item of type ``custom`` (``{"custom": {"name", "input"}}``), its input
        streamed in ``custom.input`` pieces."""
        assert self._custom is not None
        deltas: list[dict[str, Any]] = []
        for piece in self._custom.feed(answer, final=final):
            if piece[0] == "text":
                deltas.append({"content": piece[1]})
            elif piece[0] == "call":
                _, self._kind, name, call_id = piece
                self._index += 1
                self.has_calls = True
                body = {"name": name, "arguments": ""} if self._kind == "function" else {"name": name, "input": ""}
                deltas.append({"tool_calls": [{"index": self._index, "id": call_id, "type": self._kind,
                                               self._kind: body}]})
            elif piece[0] == "input":
                key = "arguments" if self._kind == "function" else "input"
                deltas.append({"tool_calls": [{"index": self._index, self._kind: {key: piece[1]}}]})
        return deltas
