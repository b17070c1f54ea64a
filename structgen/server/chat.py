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
"""

from __future__ import annotations

from typing import Any

from ..compose.reasoning import Reasoning, ReasoningSplitter, split_reasoning
from ..compose.tools import ToolCallStream, parse_tool_calls
from .protocol import ChatCompletionRequest, HTTPProblem
from .response_format import ChatConstraint, Compiled

__all__ = ["ChatDeltas", "chat_constraint", "chat_messages", "finish_reason", "message"]


def chat_constraint(req: ChatCompletionRequest) -> ChatConstraint:
    """The tools and thinking a chat request asks for (400 naming ``tool_choice`` when it names
    no tool of ``tools`` or needs tools that are not there)."""
    tools = tuple(t.model_dump(exclude_none=True) for t in req.tools or ())
    choice: Any = req.tool_choice if req.tool_choice is not None else ("auto" if tools else "none")
    if isinstance(choice, dict):
        fn = choice.get("function")
        if choice.get("type") != "function" or not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise HTTPProblem(400, "tool_choice: expected {\"type\": \"function\", \"function\": {\"name\": ...}}",
                              param="tool_choice")
        names = [t["function"]["name"] for t in tools]
        if fn["name"] not in names:
            raise HTTPProblem(400, f"tool_choice names the function {fn['name']!r}, which is not among the tools "
                                   f"{names}", param="tool_choice")
    elif choice in ("required", "auto") and not tools and req.tool_choice is not None:
        raise HTTPProblem(400, f"tool_choice {choice!r} needs tools", param="tool_choice")
    opts = req.reasoning_options()
    reasoning = None if opts is None else Reasoning(opts.start, opts.end, opts.max_tokens)
    return ChatConstraint(tools=tools, tool_choice=choice, parallel=req.parallel_tool_calls is not False,
                          reasoning=reasoning)


def chat_messages(req: ChatCompletionRequest) -> list[dict[str, Any]]:
    """The messages as OpenAI dicts (``developer`` read as ``system``, text parts joined)."""
    out = []
    for m in req.messages:
        msg: dict[str, Any] = {"role": "system" if m.role == "developer" else m.role, "content": m.text()}
        if m.tool_calls:
            msg["tool_calls"] = [c.model_dump() for c in m.tool_calls]
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
    ``id``, ``type`` and the name first, then ``arguments`` pieces)."""

    def __init__(self, compiled: Compiled) -> None:
        self._thinking = ReasoningSplitter(compiled.reasoning) if compiled.reasoning is not None else None
        self._calls = ToolCallStream(compiled.tools) if compiled.tools else None
        self.has_calls = False

    def feed(self, text: str, *, final: bool = False) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = []
        answer = text
        if self._thinking is not None:
            thinking, answer = self._thinking.feed(text, final=final)
            if thinking:
                deltas.append({"reasoning_content": thinking})
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
