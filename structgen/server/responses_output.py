"""A Responses API answer built from the engine's events: the output items and the stream events.

:class:`OutputWriter` reads the generated text as it comes (the thinking, text, calls of
function and custom tools; :mod:`.calls`) and keeps the ``output`` items as OpenAI writes them:

- ``reasoning``: ``{"id": "rs_...", "type": "reasoning", "summary": [], "content":
  [{"type": "reasoning_text", "text": ...}], "status"}``;
- ``message``: ``{"id": "msg_...", "type": "message", "role": "assistant", "status",
  "content": [{"type": "output_text", "text", "annotations": [], "logprobs": [...]}]}``;
- ``function_call``: ``{"id": "fc_...", "type": "function_call", "call_id", "name",
  "arguments", "status"}``;
- ``custom_tool_call``: ``{"id": "ctc_...", "type": "custom_tool_call", "call_id", "name",
  "input"}``.

For each piece it returns the stream events OpenAI sends (without ``sequence_number``, which the
endpoint numbers): ``response.output_item.added``, ``response.content_part.added``, the deltas
(``response.reasoning_text.delta``, ``response.output_text.delta``,
``response.function_call_arguments.delta``, ``response.custom_tool_call_input.delta``), then
their ``.done`` events, ``response.content_part.done`` and ``response.output_item.done``. A
whole response is the same writer with its events dropped, so a stream and a whole response say
the same thing.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from ..compose.reasoning import ReasoningSplitter
from .calls import CallReader
from .engine import Event
from .logprobs import TokenNames
from .response_format import Compiled

__all__ = ["OutputWriter", "usage"]


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def usage(input_tokens: int, output_tokens: int, reasoning_tokens: int) -> dict[str, Any]:
    """The Responses API's ``usage``."""
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens}


class OutputWriter:
    """The output items of one generation, and the stream events that build them."""

    def __init__(self, compiled: Compiled, names: TokenNames | None = None) -> None:
        self.reasoning = compiled.reasoning
        self._thinking = ReasoningSplitter(compiled.reasoning) if compiled.reasoning is not None else None
        tools = compiled.tools or compiled.custom_tools
        self._calls = CallReader(compiled.tools, compiled.custom_tools) if tools else None
        self._names = names
        self.items: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None
        self._raw = ""
        self._tokens = 0
        #: tokens spent before the thinking closed (the one that closes it included)
        self.reasoning_tokens = 0
        self.output_tokens = 0

    @property
    def has_calls(self) -> bool:
        return any(item["type"] in ("function_call", "custom_tool_call") for item in self.items)

    def feed(self, ev: Event) -> list[dict[str, Any]]:
        """The stream events of the engine's event ``ev`` (its text and logprobs)."""
        spent = ev.completion_tokens - self._tokens
        self._tokens = ev.completion_tokens
        self.output_tokens = ev.completion_tokens
        if self.reasoning is not None and not self._thinking_closed():
            self.reasoning_tokens += spent
        self._raw += ev.text
        final = ev.is_last
        out: list[dict[str, Any]] = []
        answer = ev.text
        if self._thinking is not None:
            thinking, answer = self._thinking.feed(ev.text, final=final)
            if thinking:
                out += self._delta("reasoning", thinking)
        if self._calls is None:
            if answer or (ev.logprobs and self._names is not None):
                out += self._delta("message", answer, self._logprobs(ev))
            return out
        for piece in self._calls.feed(answer, final=final):
            if piece[0] == "text":
                out += self._delta("message", piece[1])
            elif piece[0] == "call":
                out += self._close("completed")
                out += self._start_call(piece[1], piece[2], piece[3])
            elif piece[0] == "input":
                out += self._delta(self._open["type"] if self._open else "", piece[1])
            else:
                out += self._close("completed")
        return out

    def finish(self, status: str) -> list[dict[str, Any]]:
        """Close the item being written (``status``: ``completed`` or ``incomplete``)."""
        return self._close(status)

    # -- items ------------------------------------------------------------------------------------

    def _thinking_closed(self) -> bool:
        r = self.reasoning
        assert r is not None
        if not self._raw.startswith(r.start) and len(self._raw) >= len(r.start):
            return True
        return self._raw.find(r.end, len(r.start)) >= 0

    def _logprobs(self, ev: Event) -> list[dict[str, Any]]:
        names = self._names
        if names is None:
            return []

        def one(token: int, logprob: float) -> dict[str, Any]:
            return {"token": names.text(token), "logprob": logprob, "bytes": list(names.bytes(token))}

        return [{**one(lp.token_id, lp.logprob), "top_logprobs": [one(t, p) for t, p in lp.top]}
                for lp, _ in ev.logprobs]

    def _start(self, item: dict[str, Any], part: dict[str, Any] | None) -> list[dict[str, Any]]:
        self.items.append(item)
        self._open = item
        index = len(self.items) - 1
        out = [{"type": "response.output_item.added", "output_index": index, "item": copy.deepcopy(item)}]
        if part is not None:
            item["content"].append(part)
            out.append({"type": "response.content_part.added", "item_id": item["id"], "output_index": index,
                        "content_index": 0, "part": copy.deepcopy(part)})
        return out

    def _start_call(self, kind: str, name: str, call_id: str) -> list[dict[str, Any]]:
        if kind == "function":
            item = {"id": _id("fc"), "type": "function_call", "status": "in_progress", "arguments": "",
                    "call_id": call_id, "name": name}
        else:
            item = {"id": _id("ctc"), "type": "custom_tool_call", "call_id": call_id, "name": name, "input": ""}
        return self._start(item, None)

    def _delta(self, kind: str, text: str, logprobs: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self._open is None or self._open["type"] != kind:
            out += self._close("completed")
            if kind == "reasoning":
                out += self._start({"id": _id("rs"), "type": "reasoning", "summary": [], "content": [],
                                    "status": "in_progress"}, {"type": "reasoning_text", "text": ""})
            else:
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                out += self._start({"id": _id("msg"), "type": "message", "status": "in_progress", "role": "assistant",
                                    "content": []}, part)
        item = self._open
        assert item is not None
        index = len(self.items) - 1
        if kind == "reasoning":
            item["content"][0]["text"] += text
            out.append({"type": "response.reasoning_text.delta", "item_id": item["id"], "output_index": index,
                        "content_index": 0, "delta": text})
        elif kind == "message":
            part = item["content"][0]
            part["text"] += text
            part["logprobs"] += logprobs or []
            if text:
                out.append({"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                            "content_index": 0, "delta": text, "logprobs": logprobs or []})
        elif kind == "function_call":
            item["arguments"] += text
            out.append({"type": "response.function_call_arguments.delta", "item_id": item["id"],
                        "output_index": index, "delta": text})
        else:
            item["input"] += text
            out.append({"type": "response.custom_tool_call_input.delta", "item_id": item["id"],
                        "output_index": index, "delta": text})
        return out

    def _close(self, status: str) -> list[dict[str, Any]]:
        item, self._open = self._open, None
        if item is None:
            return []
        index = len(self.items) - 1
        out: list[dict[str, Any]] = []
        if item["type"] != "custom_tool_call":
            item["status"] = status
        if item["type"] == "reasoning":
            part = item["content"][0]
            out.append({"type": "response.reasoning_text.done", "item_id": item["id"], "output_index": index,
                        "content_index": 0, "text": part["text"]})
        elif item["type"] == "message":
            part = item["content"][0]
            out.append({"type": "response.output_text.done", "item_id": item["id"], "output_index": index,
                        "content_index": 0, "text": part["text"], "logprobs": part["logprobs"]})
        elif item["type"] == "function_call":
            out.append({"type": "response.function_call_arguments.done", "item_id": item["id"],
                        "output_index": index, "name": item["name"], "arguments": item["arguments"]})
        else:
            out.append({"type": "response.custom_tool_call_input.done", "item_id": item["id"],
                        "output_index": index, "input": item["input"]})
        if item["type"] in ("reasoning", "message"):
            out.append({"type": "response.content_part.done", "item_id": item["id"], "output_index": index,
                        "content_index": 0, "part": copy.deepcopy(item["content"][0])})
        out.append({"type": "response.output_item.done", "output_index": index, "item": copy.deepcopy(item)})
        return out
