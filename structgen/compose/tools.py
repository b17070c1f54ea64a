"""Tool calls: the tools a model may call, how it writes a call, and reading the calls back.

A :class:`Tool` is a function name, a description and a JSON Schema of its arguments (OpenAI's
``{"type": "function", "function": {...}}``, or a pydantic class). A :class:`ToolCallFormat` is
how a model writes one call; the default, :data:`HERMES`, is the Hermes / Qwen form that many chat
templates use::

    <tool_call>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    </tool_call>

:func:`tool_calls_format` turns tools and OpenAI's ``tool_choice`` / ``parallel_tool_calls`` into
a composed format (:mod:`.formats`): ``"auto"`` is free text in which ``<tool_call>`` can only
start a valid call; ``"required"`` and a named tool are calls only (one, or several when
parallel); ``"none"`` is free text that never contains ``<tool_call>``. Each call's arguments are
valid against its tool's schema: the guide allows nothing else.

:func:`parse_tool_calls` reads a whole output back into its text and :class:`ToolCall` values;
:class:`ToolCallStream` does it for a stream, piece by piece (OpenAI's streamed tool-call deltas).
:func:`tools_prompt` is the system text that describes the tools in the default format, for chat
templates that do not render tools themselves (SmolLM2's does not).

Example:
    >>> tools = [Tool("add", {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})]
    >>> fmt = tool_calls_format(tools, "required")
    >>> parse_tool_calls('<tool_call>\\n{"name": "add", "arguments": {"a": 2}}\\n</tool_call>', tools)[1][0].arguments
    '{"a": 2}'
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Union

from ..errors import ConstraintError, SchemaError
from ..formats import DEFAULT_WHITESPACE, Choice, Format, JsonSchema, Repeat, Tag, Text, Triggered

__all__ = [
    "HERMES", "Tool", "ToolCall", "ToolCallFormat", "ToolCallStream", "check_tools", "parse_tool_calls",
    "template_renders_tools", "tool_calls_format", "tool_messages", "tools_prompt",
]


@dataclass(frozen=True, eq=False)
class Tool:
    """A function the model may call: ``name``, the JSON Schema of its ``parameters`` (a dict,
    JSON text or pydantic class) and a ``description`` for the prompt."""

    name: str
    parameters: Any = field(default_factory=lambda: {"type": "object"})
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or any(c in self.name for c in '"\\\n'):
            raise ConstraintError(f"a tool needs a name without quotes, backslashes or newlines, got {self.name!r}")

    @classmethod
    def of(cls, tool: Union["Tool", Mapping[str, Any], type]) -> "Tool":
        """A tool from OpenAI's form (``{"type": "function", "function": {"name", "description",
        "parameters"}}``, or the inner ``function`` object) or a pydantic class (its name and
        docstring, its schema as the parameters)."""
        if isinstance(tool, Tool):
            return tool
        if isinstance(tool, type) and hasattr(tool, "model_json_schema"):
            doc = (tool.__doc__ or "").strip()
            return cls(tool.__name__, tool, "" if doc.startswith(f"{tool.__name__}(") else doc)
        if isinstance(tool, Mapping):
            fn = tool.get("function", tool) if tool.get("type", "function") == "function" else None
            if not isinstance(fn, Mapping) or "name" not in fn:
                raise ConstraintError(f"not a function tool: {dict(tool)!r}")
            return cls(fn["name"], fn.get("parameters") or {"type": "object"}, fn.get("description") or "")
        raise ConstraintError(f"a tool is a structgen Tool, an OpenAI tool dict or a pydantic class, not {tool!r}")

    def schema(self) -> Any:
        """The parameters' JSON Schema as a dict (a pydantic class's generated schema)."""
        p = self.parameters
        if isinstance(p, type) and hasattr(p, "model_json_schema"):
            return p.model_json_schema()
        return json.loads(p) if isinstance(p, str) else p

    def openai(self) -> dict[str, Any]:
        """OpenAI's form, as chat templates take it."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.schema()}}


@dataclass(frozen=True)
class ToolCall:
    """One call: the function's ``name``, its ``arguments`` as JSON text (exactly as generated),
    and an ``id`` (``call_`` and 24 hex digits) for OpenAI's ``tool_calls``."""

    name: str
    arguments: str
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:24]}")

    @property
    def parsed(self) -> Any:
        """The arguments as a Python value."""
        return json.loads(self.arguments)

    def openai(self) -> dict[str, Any]:
        """OpenAI's ``tool_calls`` item."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ToolCallFormat:
    """How a model writes a call: ``begin`` (with ``{name}`` where the function's name goes),
    the arguments as JSON, ``end``; ``trigger`` (a prefix of ``begin`` before the name) starts a
    call in free text; ``separator`` goes between two calls in a row."""

    trigger: str = "<tool_call>"
    begin: str = '<tool_call>\n{{"name": "{name}", "arguments": '
    end: str = "}\n</tool_call>"
    separator: str = "\n"

    def __post_init__(self) -> None:
        if "{name}" not in self.begin or not self.begin.startswith(self.trigger) or not self.trigger:
            raise ConstraintError(f"ToolCallFormat: begin {self.begin!r} must start with the trigger "
                                  f"{self.trigger!r} and hold {{name}}")
        if not self.begin.split("{name}")[0].startswith(self.trigger):
            raise ConstraintError("ToolCallFormat: the trigger must come before {name} in begin")

    def opening(self, name: str) -> str:
        """``begin`` with the name in it."""
        return self.begin.replace("{{", "\0").replace("}}", "\1").replace("{name}", name).replace(
            "\0", "{").replace("\1", "}")

    def tag(self, tool: Tool, *, whitespace: str = DEFAULT_WHITESPACE) -> Tag:
        """The tag of one call of ``tool``."""
        return Tag(self.opening(tool.name), JsonSchema(tool.schema(), whitespace=whitespace, name=f"tool {tool.name!r}"),
                   self.end)

    def write(self, call: ToolCall) -> str:
        """A call as the model writes it (for assistant messages sent back in a conversation)."""
        return self.opening(call.name) + call.arguments + self.end


#: The default: Hermes / Qwen ``<tool_call>`` blocks.
HERMES = ToolCallFormat()


def tool_calls_format(
    tools: Iterable[Union[Tool, Mapping[str, Any], type]],
    tool_choice: Union[str, Mapping[str, Any]] = "auto",
    *,
    parallel: bool = True,
    call_format: ToolCallFormat = HERMES,
    whitespace: str = DEFAULT_WHITESPACE,
) -> Format:
    """The composed format of an answer under OpenAI's tool options.

    ``tool_choice``: ``"auto"`` (text, in which ``call_format.trigger`` can only start a valid
    call; any number of calls, or one when not ``parallel``), ``"required"`` (calls only, at
    least one), ``"none"`` (text that never contains the trigger), or a tool's name
    (``{"type": "function", "function": {"name": ...}}`` or the name itself: calls of that tool
    only). Raises :class:`ConstraintError` for an unknown name or an empty tool list, and a bad
    tool schema's :class:`SchemaError` naming the tool and the JSON pointer (at compile time)."""
    listed = [Tool.of(t) for t in tools]
    names = [t.name for t in listed]
    if len(set(names)) != len(names):
        raise ConstraintError(f"tools: two tools share a name ({sorted(n for n in names if names.count(n) > 1)[0]!r})")
    choice = _choice(tool_choice)
    if choice == "none":
        return Text(exclude=(call_format.trigger,))
    if not listed:
        raise ConstraintError(f"tool_choice {choice!r} needs at least one tool")
    if choice not in ("auto", "required"):
        if choice not in names:
            raise ConstraintError(f"tool_choice names {choice!r}, which is not among the tools {names}")
        listed = [t for t in listed if t.name == choice]
    tags = tuple(call_format.tag(t, whitespace=whitespace) for t in listed)
    most = None if parallel else 1
    if choice == "auto":
        return Triggered((call_format.trigger,), tags, 0, most)
    return Repeat(Choice(*tags) if len(tags) > 1 else tags[0], 1, most, call_format.separator)


def _choice(tool_choice: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(tool_choice, Mapping):
        fn = tool_choice.get("function")
        if tool_choice.get("type") != "function" or not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise ConstraintError(f"tool_choice {dict(tool_choice)!r}: expected {{'type': 'function', "
                                  "'function': {'name': ...}}")
        name: str = fn["name"]
        return name
    if not isinstance(tool_choice, str) or not tool_choice:
        raise ConstraintError(f"tool_choice must be 'auto', 'required', 'none' or a tool's name, not {tool_choice!r}")
    return tool_choice


def tools_prompt(tools: Iterable[Union[Tool, Mapping[str, Any], type]], call_format: ToolCallFormat = HERMES) -> str:
    """The system text that describes ``tools`` and how to call them in ``call_format``."""
    described = [{"name": t.name, "description": t.description, "parameters": t.schema()}
                 for t in (Tool.of(x) for x in tools)]
    example = call_format.opening("<function name>") + "<arguments as a JSON object>" + call_format.end
    return ("You can call functions. These are the functions, with the JSON Schema of their arguments:\n"
            + "\n".join(json.dumps(d, ensure_ascii=False) for d in described)
            + f"\nTo call a function, write:\n{example}\nOtherwise, answer in plain text.")


def _open_at(text: str, pos: int, names: list[str], call_format: ToolCallFormat) -> tuple[str, int] | None:
    """``(name, end of the opening)`` when a call of one of ``names`` opens at ``pos``."""
    best = None
    for name in names:
        opening = call_format.opening(name)
        if text.startswith(opening, pos) and (best is None or len(opening) > best[1] - pos):
            best = (name, pos + len(opening))
    return best


_DECODER = json.JSONDecoder()


def _arguments_end(text: str, start: int, end: str) -> int | None:
    """Where the arguments that start at ``start`` end, if ``end`` follows a complete JSON value."""
    try:
        _, stop = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    return stop if text.startswith(end, stop) else None


def parse_tool_calls(
    text: str, tools: Iterable[Union[Tool, Mapping[str, Any], type]], call_format: ToolCallFormat = HERMES,
) -> tuple[str, list[ToolCall]]:
    """``(text, calls)``: the output without its calls (stripped), and each call in order.

    Raises :class:`ConstraintError` for a trigger that does not open a complete call of one of
    ``tools`` (output not generated under :func:`tool_calls_format`)."""
    names = [Tool.of(t).name for t in tools]
    out: list[str] = []
    calls: list[ToolCall] = []
    pos = 0
    while True:
        at = text.find(call_format.trigger, pos)
        if at < 0:
            out.append(text[pos:])
            break
        opened = _open_at(text, at, names, call_format)
        stop = _arguments_end(text, opened[1], call_format.end) if opened else None
        if opened is None or stop is None:
            raise ConstraintError(f"{call_format.trigger!r} at {at} does not open a complete call of one of {names}: "
                                  f"{text[at:at + 80]!r}")
        out.append(text[pos:at])
        calls.append(ToolCall(opened[0], text[opened[1]:stop]))
        pos = stop + len(call_format.end)
        if calls and text.startswith(call_format.separator, pos) and text.startswith(call_format.trigger,
                                                                                     pos + len(call_format.separator)):
            pos += len(call_format.separator)
    return "".join(out).strip(), calls


class ToolCallStream:
    """:func:`parse_tool_calls` for a stream of text pieces. :meth:`feed` returns what to send
    now: ``("text", str)``, ``("call", index, ToolCall with empty arguments)`` when a call's
    name is known, ``("arguments", index, str)`` as its arguments come. Text that may be the
    start of a trigger or of a call's end is held back until the next piece tells."""

    def __init__(self, tools: Iterable[Union[Tool, Mapping[str, Any], type]], call_format: ToolCallFormat = HERMES):
        self.names = [Tool.of(t).name for t in tools]
        self.format = call_format
        self.calls: list[ToolCall] = []
        self._buffer = ""
        self._in_call = False
        self._sent = 0  # arguments characters of the current call already sent
        self._text_started = False
        self._space = ""

    def feed(self, text: str, *, final: bool = False) -> list[tuple[Any, ...]]:
        f = self.format
        buf = self._buffer + text
        events: list[tuple[Any, ...]] = []
        while buf:
            if not self._in_call:
                at = buf.find(f.trigger)
                if at < 0:
                    hold = 0 if final else _prefix_held(buf, f.trigger)
                    self._text(events, buf[: len(buf) - hold])
                    buf = buf[len(buf) - hold:]
                    break
                opened = _open_at(buf, at, self.names, f)
                if opened is None:
                    if final or not any(f.opening(n).startswith(buf[at:]) for n in self.names):
                        self._text(events, buf[: at + len(f.trigger)])  # (not a call: generated unconstrained)
                        buf = buf[at + len(f.trigger):]
                        continue
                    self._text(events, buf[:at])
                    buf = buf[at:]
                    break
                self._text(events, buf[:at])
                call = ToolCall(opened[0], "")
                self.calls.append(call)
                events.append(("call", len(self.calls) - 1, call))
                buf, self._in_call, self._sent = buf[opened[1]:], True, 0
                continue
            # inside a call's arguments: buf starts with the arguments not sent yet
            index = len(self.calls) - 1
            stop = self._end_of_arguments(buf)
            if stop is None:
                hold = 0 if final else _prefix_held(buf, f.end)
                if len(buf) - hold > 0:
                    self._arguments(events, index, buf[: len(buf) - hold])
                buf = buf[len(buf) - hold:]
                break
            if stop:
                self._arguments(events, index, buf[:stop])
            buf = buf[stop + len(f.end):]
            self._in_call = False
            joined = f.separator + f.trigger
            if f.separator and buf.startswith(joined):
                buf = buf[len(f.separator):]  # (the separator between two calls is no text)
            elif f.separator and joined.startswith(buf) and not final:
                break
        self._buffer = buf
        if final:
            self._space = ""
        return events

    def _end_of_arguments(self, buf: str) -> int | None:
        """Where the current call's arguments end in ``buf`` (its start is the call's sent part)."""
        call = self.calls[-1]
        whole = call.arguments + buf
        stop = _arguments_end(whole, 0, self.format.end)
        return None if stop is None else stop - len(call.arguments)

    def _arguments(self, events: list[tuple[Any, ...]], index: int, piece: str) -> None:
        call = self.calls[index]
        self.calls[index] = ToolCall(call.name, call.arguments + piece, call.id)
        events.append(("arguments", index, piece))

    def _text(self, events: list[tuple[Any, ...]], piece: str) -> None:
        # whitespace is held until text follows it (none is sent before the first text or at the
        # end: parse_tool_calls strips the text)
        core = piece.rstrip()
        trailing = piece[len(core):]
        if core:
            if not self._text_started:
                core, self._text_started = core.lstrip(), True
            events.append(("text", self._space + core))
            self._space = ""
        if self._text_started:
            self._space += trailing


def _prefix_held(buf: str, s: str) -> int:
    """The length of the longest end of ``buf`` that is a proper prefix of ``s``."""
    return next((k for k in range(min(len(s) - 1, len(buf)), 0, -1) if buf.endswith(s[:k])), 0)


def check_tools(tools: Iterable[Union[Tool, Mapping[str, Any], type]]) -> list[Tool]:
    """The tools as :class:`Tool` values, each schema checked (:class:`SchemaError` naming the tool)."""
    from ..json_schema.api import prepare
    from ..json_schema.options import SchemaOptions

    out = []
    for t in tools:
        tool = Tool.of(t)
        try:
            prepare(tool.schema(), SchemaOptions())
        except SchemaError as e:
            raise SchemaError(f"tool {tool.name!r}: {e}", e.path) from e
        out.append(tool)
    return out


def template_renders_tools(chat_template: Any) -> bool:
    """Whether a chat template renders tools itself (it reads a ``tools`` variable)."""
    return isinstance(chat_template, str) and "tools" in chat_template


def tool_messages(
    messages: Iterable[Mapping[str, Any]], tools: Iterable[Union[Tool, Mapping[str, Any], type]] = (), *,
    native: bool, call_format: ToolCallFormat = HERMES,
) -> list[dict[str, Any]]:
    """OpenAI chat messages (with ``tool_calls`` and ``role: "tool"`` results) made ready for a
    chat template.

    ``native`` (the template renders tools, :func:`template_renders_tools`): assistant calls are
    kept as ``tool_calls`` with their arguments parsed (the form transformers' templates read);
    pass the tools to the template as ``tools=[t.openai() ...]``. Otherwise the default format:
    the tools are described in the system message (:func:`tools_prompt`; one is added when there
    is none), an assistant's calls are written into its content as the model writes them, and a
    tool's result becomes a user message ``<tool_response>`` ... ``</tool_response>`` (results in
    a row share one message), which any template can render."""
    listed = [Tool.of(t) for t in tools]
    out: list[dict[str, Any]] = []
    for m in messages:
        role, content = m.get("role"), m.get("content") or ""
        calls = m.get("tool_calls") or []
        if native:
            msg = {"role": role, "content": content}
            if calls:
                msg["tool_calls"] = [{"type": "function", "id": c.get("id"), "function": {
                    "name": c["function"]["name"], "arguments": _loads(c["function"].get("arguments"))}} for c in calls]
            if role == "tool" and m.get("tool_call_id"):
                msg["tool_call_id"] = m["tool_call_id"]
            out.append(msg)
        elif role == "assistant" and calls:
            written = call_format.separator.join(
                call_format.write(ToolCall(c["function"]["name"], _dumps(c["function"].get("arguments")))) for c in calls)
            out.append({"role": "assistant", "content": f"{content}\n{written}" if content else written})
        elif role == "tool":
            response = f"<tool_response>\n{content}\n</tool_response>"
            if out and out[-1].get("role") == "user" and out[-1]["content"].startswith("<tool_response>"):
                out[-1]["content"] += "\n" + response
            else:
                out.append({"role": "user", "content": response})
        else:
            out.append({"role": role, "content": content})
    if listed and not native:
        text = tools_prompt(listed, call_format)
        if out and out[0]["role"] == "system":
            out[0] = {**out[0], "content": f"{out[0]['content']}\n\n{text}" if out[0]["content"] else text}
        else:
            out.insert(0, {"role": "system", "content": text})
    return out


def _loads(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return arguments if arguments is not None else {}


def _dumps(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
