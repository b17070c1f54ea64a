"""The request body of ``POST /v1/responses`` (OpenAI's Responses API), as pydantic models.

The server is stateless: a request carries its whole conversation in ``input``. Every field of
OpenAI's request is known and falls in one of three sets, as for chat completions:

- honoured: ``model``, ``input`` (a string, or items: messages with text parts,
  ``function_call`` / ``function_call_output``, ``custom_tool_call`` /
  ``custom_tool_call_output``, ``reasoning`` items, which are not shown to the model again),
  ``instructions``, ``text.format`` (``text``, ``json_object``, ``json_schema`` with ``strict``;
  structgen's ``regex`` and ``grammar`` too), ``tools`` (function tools; custom tools with a
  ``text`` format or a ``lark`` / ``regex`` grammar, and structgen's ``gbnf`` / ``ebnf``), ``tool_choice`` (``none``, ``auto``, ``required``, a function or
  custom tool by name, ``allowed_tools``), ``parallel_tool_calls``, ``reasoning`` (structgen's
  thinking region: :class:`ResponsesReasoning`), ``max_output_tokens``, ``temperature``,
  ``top_p``, ``top_logprobs`` with ``include: ["message.output_text.logprobs"]``, ``stream``,
  ``metadata`` (echoed back);
- accepted and ignored: ``store`` (nothing is kept: the response says ``"store": false``),
  ``user``, ``safety_identifier``, ``prompt_cache_key``, ``prompt_cache_retention``,
  ``prompt_cache_options``, ``service_tier``, ``max_tool_calls`` (it counts built-in tool
  calls, and there are none), ``background: false``, ``truncation: "disabled"``,
  ``stream_options``, ``include: ["reasoning.encrypted_content"]`` (the thinking comes back in
  clear, never encrypted), ``null`` for any optional field;
- refused with a 400 naming the field: ``previous_response_id``, ``conversation``,
  ``prompt``, ``background: true`` (they need stored state), built-in tools (``web_search``,
  ``file_search``, ``code_interpreter``, ``mcp``, ...), ``truncation: "auto"``,
  ``text.verbosity``, ``moderation``, ``context_management``, other ``include`` values, input
  items of other types (images, files, built-in tool calls, item references).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from .protocol import GrammarFormat, JsonObjectFormat, RegexFormat, TextFormat

__all__ = ["ResponsesReasoning", "ResponsesRequest"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_defaults(cls, data: Any) -> Any:
        """``null`` for an optional field means its default, as in OpenAI's API."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data


class _Other(BaseModel):
    """An item of a kind this server does not take (refused after validation, naming it)."""

    model_config = ConfigDict(extra="allow")
    type: str


def _kind(known: tuple[str, ...], default: str | None = None) -> Any:
    """A discriminator on ``type`` (``default`` when absent); other types go to :class:`_Other`.
    Its tags read ``type=...`` so that error locations can leave them out (``app._location``)."""
    def kind(value: Any) -> str:
        t = value.get("type", default) if isinstance(value, dict) else getattr(value, "type", default)
        return f"type={t}" if t in known else "type=other"
    return Discriminator(kind)


def _tag(name: str) -> Any:
    return Tag(f"type={name}")


# -- content parts --------------------------------------------------------------------------------


class InputTextPart(_Strict):
    type: Literal["input_text"]
    text: str
    prompt_cache_breakpoint: Optional[dict[str, Any]] = None


class OutputTextPart(_Strict):
    type: Literal["output_text"]
    text: str
    annotations: Optional[list[Any]] = None
    logprobs: Optional[list[Any]] = None


class RefusalPart(_Strict):
    type: Literal["refusal"]
    refusal: str


ContentPart = Annotated[Union[Annotated[InputTextPart, _tag("input_text")], Annotated[OutputTextPart, _tag("output_text")],
                              Annotated[RefusalPart, _tag("refusal")], Annotated[_Other, _tag("other")]],
                        _kind(("input_text", "output_text", "refusal"))]


def part_text(part: Any) -> str | None:
    """A text part's text (``None``: not a text part)."""
    if isinstance(part, (InputTextPart, OutputTextPart)):
        return part.text
    if isinstance(part, RefusalPart):
        return part.refusal
    return None


# -- input items ----------------------------------------------------------------------------------


class MessageItem(_Strict):
    """A message: ``role`` and ``content`` (a string or text parts)."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "developer"]
    content: Union[str, list[ContentPart]]
    id: Optional[str] = None
    status: Optional[str] = None
    phase: Optional[str] = None


class FunctionCallItem(_Strict):
    """A function call the model made (sent back)."""

    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str
    id: Optional[str] = None
    status: Optional[str] = None
    namespace: Optional[str] = None
    caller: Optional[dict[str, Any]] = None


class CallOutputItem(_Strict):
    """A call's result: ``function_call_output`` or ``custom_tool_call_output``."""

    type: Literal["function_call_output", "custom_tool_call_output"]
    call_id: str
    output: Union[str, list[ContentPart]]
    id: Optional[str] = None
    status: Optional[str] = None
    name: Optional[str] = None
    namespace: Optional[str] = None
    caller: Optional[dict[str, Any]] = None


class CustomToolCallItem(_Strict):
    """A custom tool call the model made (sent back)."""

    type: Literal["custom_tool_call"]
    call_id: str
    name: str
    input: str
    id: Optional[str] = None
    status: Optional[str] = None
    namespace: Optional[str] = None
    caller: Optional[dict[str, Any]] = None


class ReasoningItem(_Strict):
    """A reasoning item sent back: accepted, not shown to the model again."""

    type: Literal["reasoning"]
    id: Optional[str] = None
    summary: list[Any] = Field(default_factory=list)
    content: Optional[list[Any]] = None
    encrypted_content: Optional[str] = None
    status: Optional[str] = None


_ITEMS = ("message", "function_call", "function_call_output", "custom_tool_call_output", "custom_tool_call",
          "reasoning")
InputItem = Annotated[Union[Annotated[MessageItem, _tag("message")], Annotated[FunctionCallItem, _tag("function_call")],
                            Annotated[CallOutputItem, _tag("function_call_output")],
                            Annotated[CallOutputItem, _tag("custom_tool_call_output")],
                            Annotated[CustomToolCallItem, _tag("custom_tool_call")],
                            Annotated[ReasoningItem, _tag("reasoning")], Annotated[_Other, _tag("other")]],
                      _kind(_ITEMS, "message")]


# -- tools ----------------------------------------------------------------------------------------


class FunctionTool(_Strict):
    """``{"type": "function", "name", "description", "parameters", "strict"}`` (the Responses
    API's flat form); ``strict`` is accepted: enforcement is always exact."""

    type: Literal["function"]
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: Optional[str] = None
    parameters: Optional[dict[str, Any]] = None
    strict: Optional[bool] = None


class CustomToolText(_Strict):
    type: Literal["text"]


class CustomToolGrammar(_Strict):
    """OpenAI's ``lark`` and ``regex``; structgen's ``gbnf`` / ``ebnf`` (the same syntax)."""

    type: Literal["grammar"]
    syntax: Literal["lark", "regex", "gbnf", "ebnf"]
    definition: str


class CustomToolSpec(_Strict):
    """``{"type": "custom", "name", "description", "format"}``: a tool whose input is free text
    (``format`` absent or ``{"type": "text"}``) or matches a grammar."""

    type: Literal["custom"]
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: Optional[str] = None
    format: Optional[Annotated[Union[CustomToolText, CustomToolGrammar], Field(discriminator="type")]] = None


ToolItem = Annotated[Union[Annotated[FunctionTool, _tag("function")], Annotated[CustomToolSpec, _tag("custom")],
                           Annotated[_Other, _tag("other")]], _kind(("function", "custom"))]


class NamedToolChoice(_Strict):
    """``{"type": "function" | "custom", "name": ...}``: calls of that tool only."""

    type: Literal["function", "custom"]
    name: str


class AllowedTools(_Strict):
    """``{"type": "allowed_tools", "mode": "auto" | "required", "tools": [{"type", "name"}, ...]}``."""

    type: Literal["allowed_tools"]
    mode: Literal["auto", "required"]
    tools: list[dict[str, Any]]


ToolChoice = Union[Literal["none", "auto", "required"],
                   Annotated[Union[Annotated[NamedToolChoice, _tag("function")], Annotated[NamedToolChoice, _tag("custom")],
                                   Annotated[AllowedTools, _tag("allowed_tools")], Annotated[_Other, _tag("other")]],
                             _kind(("function", "custom", "allowed_tools"))]]


# -- text, reasoning -------------------------------------------------------------------------------


class ResponsesJsonSchema(_Strict):
    """``text.format`` ``{"type": "json_schema", "name", "schema", "strict", "description"}``."""

    type: Literal["json_schema"]
    name: str = "response"
    schema_: Union[dict[str, Any], bool] = Field(alias="schema")
    description: Optional[str] = None
    strict: Optional[bool] = None
    #: structgen extension: string values are verbatim spans of this document (or of one of these)
    extract_from: Union[str, list[str], None] = None


TextFormatItem = Annotated[Union[TextFormat, JsonObjectFormat, ResponsesJsonSchema, RegexFormat, GrammarFormat],
                           Field(discriminator="type")]


class TextConfig(_Strict):
    """``text``: the output's ``format`` (``verbosity`` is refused)."""

    format: Optional[TextFormatItem] = None
    verbosity: Optional[str] = None


#: The thinking's share of the output budget by ``reasoning.effort`` (without ``max_tokens``).
EFFORT_SHARE = {"minimal": 0.125, "low": 0.25, "medium": 0.5, "high": 0.75, "xhigh": 0.875}


class ResponsesReasoning(_Strict):
    """``reasoning``: OpenAI's ``effort`` and ``summary``, and structgen's thinking region.

    With ``reasoning`` given and ``effort`` other than ``"none"``, the model thinks between
    ``start`` and ``end`` first (the thinking comes back as a ``reasoning`` output item), for at
    most ``max_tokens`` tokens, or, without it, the share of the output's budget ``effort`` asks
    for (:data:`EFFORT_SHARE`: minimal 1/8, low 1/4, medium 1/2 (the default), high 3/4,
    xhigh 7/8). ``summary`` is accepted: the reasoning item's ``summary`` stays empty (the
    thinking itself is in its ``content``)."""

    effort: Optional[Literal["none", "minimal", "low", "medium", "high", "xhigh"]] = None
    summary: Optional[Literal["auto", "concise", "detailed"]] = None
    generate_summary: Optional[Literal["auto", "concise", "detailed"]] = None
    start: str = "<think>"
    end: str = Field(default="</think>", min_length=1)
    max_tokens: Optional[int] = Field(default=None, ge=0)


class ResponsesStreamOptions(_Strict):
    include_obfuscation: Optional[bool] = None


#: ``include`` values: honoured, or accepted (nothing to include).
INCLUDE_LOGPROBS = "message.output_text.logprobs"
INCLUDE_ACCEPTED = ("reasoning.encrypted_content",)


class ResponsesRequest(_Strict):
    """``POST /v1/responses`` (see the module docstring for the three sets of fields)."""

    model: str
    input: Union[str, list[InputItem]]
    instructions: Optional[str] = None
    text: Optional[TextConfig] = None
    tools: Optional[list[ToolItem]] = None
    tool_choice: Optional[ToolChoice] = None
    parallel_tool_calls: Optional[bool] = None
    reasoning: Optional[ResponsesReasoning] = None
    max_output_tokens: Optional[int] = Field(default=None, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_logprobs: Optional[int] = Field(default=None, ge=0, le=20)
    include: Optional[list[str]] = None
    stream: bool = False
    stream_options: Optional[ResponsesStreamOptions] = None
    metadata: Optional[dict[str, str]] = None
    # accepted and ignored
    store: Optional[bool] = None
    user: Optional[str] = None
    safety_identifier: Optional[str] = None
    prompt_cache_key: Optional[str] = None
    prompt_cache_retention: Optional[str] = None
    prompt_cache_options: Optional[dict[str, Any]] = None
    service_tier: Optional[str] = None
    max_tool_calls: Optional[int] = Field(default=None, ge=1)
    background: Optional[bool] = None
    truncation: Optional[Literal["auto", "disabled"]] = None
    # refused (see unsupported())
    previous_response_id: Optional[str] = None
    conversation: Union[str, dict[str, Any], None] = None
    prompt: Optional[dict[str, Any]] = None
    moderation: Optional[dict[str, Any]] = None
    context_management: Optional[list[Any]] = None

    def unsupported(self) -> tuple[str, str] | None:
        """``(field, why)`` for the first field this server cannot honour, or ``None``."""
        stateless = "this server is stateless and keeps no responses or conversations: send the whole " \
                    "conversation in input"
        for name, why in (("previous_response_id", stateless), ("conversation", stateless),
                          ("prompt", "stored prompt templates are not supported: send instructions and input"),
                          ("moderation", "this server does not moderate"),
                          ("context_management", "this server does not compact conversations")):
            if getattr(self, name) not in (None, "", [], {}):
                return name, why
        if self.background:
            return "background", "background responses need storage; this server answers in the request"
        if self.truncation == "auto":
            return "truncation", "this server does not drop input items; send an input that fits the context"
        if self.text is not None and self.text.verbosity is not None:
            return "text.verbosity", "the model served here has no verbosity setting"
        for i, item in enumerate(self.include or ()):
            if item != INCLUDE_LOGPROBS and item not in INCLUDE_ACCEPTED:
                return f"include[{i}]", f"{item!r} cannot be included by this server (it has no built-in tools)"
        for i, tool in enumerate(self.tools or ()):
            if isinstance(tool, _Other):
                return f"tools[{i}]", (f"built-in tools ({tool.type!r}) are not supported by this server: send "
                                       "function or custom tools")
        if isinstance(self.tool_choice, _Other):
            return "tool_choice", f"built-in tools ({self.tool_choice.type!r}) are not supported by this server"
        if isinstance(self.input, list):
            for i, entry in enumerate(self.input):
                if isinstance(entry, _Other):
                    return f"input[{i}]", f"input items of type {entry.type!r} are not supported by this server"
                content = getattr(entry, "content" if isinstance(entry, MessageItem) else "output", None)
                for j, part in enumerate(content if isinstance(content, list) else ()):
                    if isinstance(part, _Other):
                        where = "content" if isinstance(entry, MessageItem) else "output"
                        return f"input[{i}].{where}[{j}]", f"{part.type!r} parts are not supported: this server reads text only"
        return None

    @property
    def wants_logprobs(self) -> bool:
        return INCLUDE_LOGPROBS in (self.include or ())
