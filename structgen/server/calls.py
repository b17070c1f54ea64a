"""Calls of function tools *and* custom tools in one output: the format that enforces them, the
prompt that shows custom tools to the model, and a reader that cuts an output (whole or streamed)
into text and calls.

Function tools are written as :mod:`structgen.compose.tools` writes them (the Hermes form).
A custom tool (OpenAI's ``{"type": "custom", "name", "format"}``) takes free-form input, not JSON,
so its call is a tag of its own under the same trigger::

    <tool_call>
    <input tool="run_sql">
    SELECT name FROM users;
    </input>
    </tool_call>

whose input is exactly what the tool's format allows (:func:`.grammar_formats.custom_tool_input`).
Without custom tools, :func:`calls_format` is :func:`structgen.compose.tools.tool_calls_format`
itself (the chat endpoint's format, unchanged).

:class:`CallReader` reads the output back as pieces, the same whole or streamed:
``("text", str)``, ``("call", kind, name, call_id)`` (``kind`` is ``"function"`` or
``"custom"``), ``("input", str)`` (a piece of the call's arguments or input) and ``("done",)``
(the call is complete). Text around calls is trimmed: whitespace at the start or end of a run of
text (between calls) is not sent.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Union

from ..compose.tools import HERMES, Tool, ToolCallFormat, tool_calls_format
from ..errors import ConstraintError
from ..cfg import detect_syntax
from ..formats import Choice, Format, Grammar, Regex, Repeat, Tag, Text, Triggered
from .grammar_formats import input_matches

__all__ = ["CUSTOM_BEGIN", "CUSTOM_END", "CallReader", "CustomTool", "Piece", "calls_format", "custom_tools_prompt",
           "write_custom_call"]

#: A custom tool's call: ``CUSTOM_BEGIN`` with the tool's name, the input, ``CUSTOM_END``.
CUSTOM_BEGIN = '<tool_call>\n<input tool="{name}">\n'
CUSTOM_END = "\n</input>\n</tool_call>"

#: What :class:`CallReader` returns (see the module docstring).
Piece = tuple[Any, ...]


@dataclass(frozen=True)
class CustomTool:
    """A custom tool: its ``name``, ``description`` and the format of its ``input``."""

    name: str
    input: Format
    description: str = ""
    #: the tool as the request gave it (echoed back in the response)
    spec: Any = None

    def __post_init__(self) -> None:
        if not self.name or any(c in self.name for c in '"\\\n<>'):
            raise ConstraintError(f"a custom tool needs a name without quotes, backslashes, newlines or angle "
                                  f"brackets, got {self.name!r}")

    @property
    def begin(self) -> str:
        return CUSTOM_BEGIN.replace("{name}", self.name)

    def tag(self) -> Tag:
        return Tag(self.begin, self.input, CUSTOM_END)


def write_custom_call(name: str, text: str) -> str:
    """A custom tool's call as the model writes it (for a call sent back in a conversation)."""
    return CUSTOM_BEGIN.replace("{name}", name) + text + CUSTOM_END


def calls_format(tools: Iterable[Union[Tool, dict[str, Any]]], custom: Iterable[CustomTool], tool_choice: str, *,
                 parallel: bool = True, call_format: ToolCallFormat = HERMES) -> Format:
    """The format of an answer that may call ``tools`` (function tools) and ``custom`` tools
    under ``tool_choice`` (``"auto"``, ``"required"``, ``"none"`` or a tool's name), as
    :func:`~structgen.compose.tools.tool_calls_format` reads it."""
    listed = [Tool.of(t) for t in tools]
    customs = list(custom)
    if not customs:
        return tool_calls_format(listed, tool_choice, parallel=parallel, call_format=call_format)
    names = [t.name for t in listed] + [c.name for c in customs]
    if len(set(names)) != len(names):
        raise ConstraintError(f"tools: two tools share a name ({sorted(n for n in names if names.count(n) > 1)[0]!r})")
    if tool_choice == "none":
        return Text(exclude=(call_format.trigger,))
    if tool_choice not in ("auto", "required"):
        if tool_choice not in names:
            raise ConstraintError(f"tool_choice names {tool_choice!r}, which is not among the tools {names}")
        listed = [t for t in listed if t.name == tool_choice]
        customs = [c for c in customs if c.name == tool_choice]
    tags = tuple(call_format.tag(t) for t in listed) + tuple(c.tag() for c in customs)
    most = None if parallel else 1
    if tool_choice == "auto":
        return Triggered((call_format.trigger,), tags, 0, most)
    return Repeat(Choice(*tags) if len(tags) > 1 else tags[0], 1, most, call_format.separator)


def custom_tools_prompt(custom: Iterable[CustomTool]) -> str:
    """The system text that shows custom tools to the model and how to call them."""
    lines = []
    for c in custom:
        described = {"name": c.name, "description": c.description, "input": _shape(c.input)}
        lines.append(json.dumps(described, ensure_ascii=False))
    example = write_custom_call("<tool name>", "<input>")
    return ("You can call these tools with free-form input:\n" + "\n".join(lines)
            + f"\nTo call one of them, write:\n{example}")


def _shape(fmt: Format) -> str:
    """What a custom tool's input is, in words for the model."""
    if isinstance(fmt, Regex):
        return f"text matching the regex {fmt.pattern}"
    if isinstance(fmt, Grammar):
        syntax = fmt.syntax or detect_syntax(fmt.text)
        return f"text in the language of this {'GBNF' if syntax in ('gbnf', 'ebnf') else 'Lark'} grammar:\n{fmt.text}"
    return "any text"


def _held(buf: str, s: str) -> int:
    """The length of the longest end of ``buf`` that is a proper prefix of ``s``."""
    return next((k for k in range(min(len(s) - 1, len(buf)), 0, -1) if buf.endswith(s[:k])), 0)


_DECODER = json.JSONDecoder()


class CallReader:
    """Cuts an output into text and calls (see the module docstring); :meth:`feed` each piece."""

    def __init__(self, tools: Iterable[Tool], custom: Iterable[CustomTool] = (),
                 call_format: ToolCallFormat = HERMES) -> None:
        self.format = call_format
        # opening -> (kind, name, end string, input format)
        self._openings: dict[str, tuple[str, str, str, Format | None]] = {}
        for t in tools:
            self._openings[call_format.opening(t.name)] = ("function", t.name, call_format.end, None)
        for c in custom:
            self._openings[c.begin] = ("custom", c.name, CUSTOM_END, c.input)
        self._buffer = ""
        self._call: tuple[str, str, str, Format | None] | None = None
        self._content = ""  # the current call's input so far (sent or held)
        self._sent = 0  # characters of _content already sent
        self._space = ""  # whitespace held until text follows it
        self._text_started = False
        self.calls = 0

    def feed(self, text: str, *, final: bool = False) -> list[Piece]:
        out: list[Piece] = []
        buf = self._buffer + text
        trigger = self.format.trigger
        while buf:
            if self._call is None:
                at = buf.find(trigger)
                if at < 0:
                    hold = 0 if final else _held(buf, trigger)
                    self._text(out, buf[: len(buf) - hold])
                    buf = buf[len(buf) - hold:]
                    break
                rest = buf[at:]
                opened = max((o for o in self._openings if rest.startswith(o)), key=len, default=None)
                if opened is None:
                    if not final and any(o.startswith(rest) for o in self._openings):
                        self._text(out, buf[:at])
                        buf = rest
                        break
                    self._text(out, buf[: at + len(trigger)])  # (not a call: the output was not constrained)
                    buf = buf[at + len(trigger):]
                    continue
                self._text(out, buf[:at])
                self._space, self._text_started = "", False  # (a call ends a run of text)
                kind, name, end, fmt = self._call = self._openings[opened]
                self.calls += 1
                out.append(("call", kind, name, f"call_{uuid.uuid4().hex[:24]}"))
                self._content, self._sent = "", 0
                buf = buf[at + len(opened):]
                continue
            kind, name, end, fmt = self._call
            self._content += buf
            buf = ""
            stop = self._end(kind, end, fmt)
            if stop is None:
                hold = 0 if final else _held(self._content, end)
                upto = len(self._content) - hold
                if upto > self._sent:
                    out.append(("input", self._content[self._sent:upto]))
                    self._sent = upto
                break
            if stop > self._sent:
                out.append(("input", self._content[self._sent:stop]))
            buf = self._content[stop + len(end):]
            self._content, self._sent, self._call = "", 0, None
            out.append(("done",))
        self._buffer = buf
        if final and self._call is not None:  # (cut off inside a call: what came is sent)
            if len(self._content) > self._sent:
                out.append(("input", self._content[self._sent:]))
            self._call, self._content, self._sent = None, "", 0
        return out

    def _end(self, kind: str, end: str, fmt: Format | None) -> int | None:
        """Where the current call's input ends in ``_content`` (``None``: not yet)."""
        content = self._content
        if kind == "function":
            try:
                _, stop = _DECODER.raw_decode(content, 0)
            except json.JSONDecodeError:
                return None
            return stop if content.startswith(end, stop) else None
        at = content.find(end)
        while at >= 0:
            if fmt is None or input_matches(fmt, content[:at]):
                return at
            at = content.find(end, at + 1)
        return None

    def _text(self, out: list[Piece], piece: str) -> None:
        core = piece.rstrip()
        trailing = piece[len(core):]
        if core:
            if not self._text_started:
                core, self._text_started = core.lstrip(), True
            if core:
                out.append(("text", self._space + core))
            self._space = ""
        if self._text_started:
            self._space += trailing
