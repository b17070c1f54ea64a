"""Request and response bodies of the HTTP API: the requests as pydantic models, the error body.

Requests forbid unknown fields (``extra="forbid"``): a misspelt option is a 400 naming the field,
not a silently ignored one. Every field of OpenAI's chat and completions requests is known and
falls in one of three sets:

- honoured: ``model``, ``messages`` / ``prompt``, ``max_tokens``, ``max_completion_tokens``,
  ``temperature``, ``top_p``, ``n``, ``seed``, ``stop``, ``stream``, ``stream_options``,
  ``frequency_penalty``, ``presence_penalty``, ``logit_bias``, ``logprobs``, ``top_logprobs``,
  ``response_format``, ``echo``, and on chat completions ``tools`` (function tools and custom
  tools, whose input is free text or follows a ``lark`` / ``regex`` grammar: :class:`CustomToolSpec`),
  ``tool_choice``, ``parallel_tool_calls`` (enforced: see :mod:`structgen.compose.tools` and
  :mod:`structgen.server.calls`); extensions: structgen's ``response_format`` of type ``grammar``
  (:class:`GrammarFormat`) and ``regex``, vLLM's
  ``repetition_penalty``, ``structured_outputs`` and the older ``guided_json`` /
  ``guided_regex`` / ``guided_choice`` / ``guided_grammar`` / ``guided_whitespace_pattern``
  (:mod:`structgen.server.vllm_fields`; ``guided_decoding_backend`` is accepted and ignored),
  and ``reasoning`` / ``max_reasoning_tokens`` (think first, the thinking returned as
  ``reasoning_content``: :class:`ReasoningOptions`);
- accepted and ignored, as OpenAI itself lets them change nothing in the output: ``user``,
  ``safety_identifier``, ``prompt_cache_key``, ``metadata``, ``service_tier``, ``store: false``,
  ``modalities: ["text"]``, ``best_of`` equal to ``n``, ``reasoning_content`` on a message sent
  back, and ``null`` for any optional field;
- refused with a 400 naming the field (:meth:`_Sampling.unsupported`): ``functions`` and
  ``function_call`` (the legacy form: send ``tools``), ``tools`` on ``/v1/completions``,
  ``audio``, other ``modalities``, ``prediction``, ``web_search_options``,
  ``reasoning_effort``, ``verbosity``, ``store: true``, ``suffix``, ``best_of`` other than ``n``.

Responses follow the OpenAI wire format closely enough that the official ``openai`` client (and
instructor, LangChain) parse them unchanged; every error, whatever raised it, is answered with
:attr:`HTTPProblem.body`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

__all__ = [
    "ChatCompletionRequest",
    "ChatMessage",
    "CompletionRequest",
    "CustomToolSpec",
    "FunctionSpec",
    "GenerateRequest",
    "GrammarFormat",
    "HTTPProblem",
    "JsonObjectFormat",
    "JsonSchemaFormat",
    "JsonSchemaSpec",
    "ReasoningOptions",
    "RegexFormat",
    "ResponseFormat",
    "StructuredOutputs",
    "TextFormat",
    "ToolSpec",
]


class HTTPProblem(Exception):
    """A request the server answers with an error: ``status`` and OpenAI's error body.

    Raised by the endpoints and answered by the app's handler; it never leaves the server (the
    errors a Python caller sees are those of :mod:`structgen.errors`). As in OpenAI's, ``code``
    is a string naming the kind of problem or ``null`` (the HTTP status is the response's own):
    ``model_not_found``, ``invalid_api_key``, ``context_length_exceeded``,
    ``unsupported_parameter``, ``unknown_parameter``, ``payload_too_large``.

    >>> HTTPProblem(404, "no such model", code="model_not_found", param="model").body
    {'error': {'message': 'no such model', 'type': 'invalid_request_error', 'param': 'model', 'code': 'model_not_found'}}
    """

    def __init__(self, status: int, message: str, *, type_: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type_, param, code

    @property
    def body(self) -> dict[str, Any]:
        """The JSON body of the answer (also sent as the last event of a stream that fails)."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _by_type(*known: str) -> Any:
    """A discriminator on ``type`` whose tags read ``type=...`` (error locations leave them out)."""
    def kind(value: Any) -> str | None:
        t = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
        return f"type={t}" if t in known else None
    expected = " or ".join(repr(k) for k in known)
    return Discriminator(kind, custom_error_type="type_invalid", custom_error_message=f"expected type {expected}")


class TextFormat(_Strict):
    """``{"type": "text"}``: no constraint."""

    type: Literal["text"]


class JsonObjectFormat(_Strict):
    """``{"type": "json_object"}`` (any JSON object) or, LoRAX's form, with a ``schema``."""

    type: Literal["json_object"]
    schema_: Union[dict[str, Any], bool, None] = Field(default=None, alias="schema")
    #: structgen extension: string values are verbatim spans of this document (or of one of these).
    extract_from: Union[str, list[str], None] = None


class JsonSchemaSpec(_Strict):
    """OpenAI's ``json_schema`` member: a name, the schema and the ``strict`` flag.

    structgen always enforces the schema exactly, so ``strict`` is accepted and has no effect.
    """

    name: str = "response"
    description: str | None = None
    schema_: Union[dict[str, Any], bool] = Field(alias="schema")
    strict: bool | None = None


class JsonSchemaFormat(_Strict):
    """``{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}, "strict": true}}``."""

    type: Literal["json_schema"]
    json_schema: JsonSchemaSpec
    #: structgen extension: string values are verbatim spans of this document (or of one of these);
    #: with ``"x-extract": true`` in the schema, only the strings of those schemas.
    extract_from: Union[str, list[str], None] = None


class RegexFormat(_Strict):
    """``{"type": "regex", "pattern": "..."}``: the whole output full-matches the pattern."""

    type: Literal["regex"]
    pattern: str


class GrammarFormat(_Strict):
    """structgen extension: ``{"type": "grammar", "grammar": "...", "syntax": "lark" | "gbnf" |
    "ebnf" | null}``: the whole output is a string of the context-free grammar (``syntax: null``:
    GBNF when a line holds ``::=``, else Lark; ``start``: another start rule). See
    :class:`structgen.formats.Grammar` and ``docs/grammars.md``."""

    type: Literal["grammar"]
    grammar: str
    syntax: Optional[Literal["lark", "gbnf", "ebnf"]] = None
    start: Optional[str] = None


ResponseFormat = Union[TextFormat, JsonObjectFormat, JsonSchemaFormat, RegexFormat, GrammarFormat]


class _TextPart(_Strict):
    type: Literal["text"]
    text: str


class _CalledFunction(_Strict):
    name: str
    arguments: str = "{}"


class _CalledCustom(_Strict):
    name: str
    input: str = ""


class _ToolCallIn(_Strict):
    """A call in an assistant message sent back (OpenAI's ``tool_calls`` item): a function's
    (``function``) or a custom tool's (``type: "custom"``, ``custom``)."""

    id: str | None = None
    type: Literal["function", "custom"] = "function"
    function: _CalledFunction | None = None
    custom: _CalledCustom | None = None

    @model_validator(mode="after")
    def _one_call(self) -> "_ToolCallIn":
        if (self.function is None) == (self.custom is None) or (self.custom is not None) != (self.type == "custom"):
            raise ValueError("a tool call has 'function' (type 'function') or 'custom' (type 'custom')")
        return self


class ChatMessage(_Strict):
    """One chat message; ``content`` is a string or a list of text parts. An assistant message
    may carry the ``tool_calls`` it made, a ``tool`` message the ``tool_call_id`` it answers."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[str, list[_TextPart], None] = None
    name: str | None = None
    tool_calls: list[_ToolCallIn] | None = None
    tool_call_id: str | None = None
    #: sent back by clients that keep the whole message; not shown to the model again
    reasoning_content: str | None = None

    def text(self) -> str:
        """The message's text (text parts joined)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content)


class FunctionSpec(_Strict):
    """A tool's ``function``: its name, description and the JSON Schema of its arguments.
    ``strict`` is accepted: structgen always enforces the schema exactly."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class ToolSpec(_Strict):
    """One of ``tools``: ``{"type": "function", "function": {...}}``."""

    type: Literal["function"]
    function: FunctionSpec


class CustomFormatText(_Strict):
    """A custom tool's ``format`` ``{"type": "text"}``: free-text input."""

    type: Literal["text"]


class CustomGrammar(_Strict):
    """A custom tool's grammar: OpenAI's ``lark`` and ``regex``; structgen's ``gbnf`` / ``ebnf``."""

    syntax: Literal["lark", "regex", "gbnf", "ebnf"]
    definition: str


class CustomFormatGrammar(_Strict):
    """A custom tool's ``format`` ``{"type": "grammar", "grammar": {"syntax", "definition"}}``."""

    type: Literal["grammar"]
    grammar: CustomGrammar


class CustomSpec(_Strict):
    """A custom tool's ``custom``: its name, description and the ``format`` of its input (free
    text when absent)."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str | None = None
    format: Optional[Annotated[Union[Annotated[CustomFormatText, Tag("type=text")],
                                     Annotated[CustomFormatGrammar, Tag("type=grammar")]],
                               _by_type("text", "grammar")]] = None

    def input_format(self) -> dict[str, Any] | None:
        """The format in the Responses API's flat form (``None``: free text)."""
        if isinstance(self.format, CustomFormatGrammar):
            return {"type": "grammar", **self.format.grammar.model_dump()}
        return None


class CustomToolSpec(_Strict):
    """One of ``tools``: ``{"type": "custom", "custom": {"name", "description", "format"}}``, a
    tool whose input is free text or a string of a grammar (called as ``tool_calls`` items of
    type ``custom``)."""

    type: Literal["custom"]
    custom: CustomSpec


class ReasoningOptions(_Strict):
    """structgen's ``reasoning`` extension: the model thinks between ``start`` and ``end``
    (``start: ""`` when the chat template already opened the thinking) for at most
    ``max_tokens`` tokens, then answers under ``response_format`` / ``tools``; the thinking comes
    back as the message's ``reasoning_content``."""

    start: str = "<think>"
    end: str = Field(default="</think>", min_length=1)
    max_tokens: int | None = Field(default=None, ge=0)


class StreamOptions(_Strict):
    """``stream_options``: ``include_usage`` adds a last chunk with the token counts;
    ``include_obfuscation`` is accepted (this server adds no obfuscation padding)."""

    include_usage: Optional[bool] = False
    include_obfuscation: Optional[bool] = None


#: Most ``top_logprobs`` (OpenAI's limit) and ``logprobs`` of the completions endpoint.
MAX_TOP_LOGPROBS = 20
MAX_COMPLETION_LOGPROBS = 5

#: Fields OpenAI defines that this server cannot honour: field -> why (sent back in the 400).
_LEGACY_FUNCTIONS = "the legacy functions / function_call form is not supported; send tools and tool_choice"
_REFUSED: dict[str, str] = {
    "functions": _LEGACY_FUNCTIONS,
    "function_call": _LEGACY_FUNCTIONS,
    "audio": "this server generates text only",
    "prediction": "predicted outputs are not supported",
    "web_search_options": "this server does not search the web",
    "reasoning_effort": "send reasoning: {\"max_tokens\": N} (structgen's extension) to let the model think first",
    "verbosity": "the model served here has no verbosity setting",
    "suffix": "insertion (suffix) is not supported",
}


class StructuredOutputs(_Strict):
    """vLLM's ``structured_outputs``: one constraint (``json``, ``regex``, ``choice``,
    ``grammar``, ``json_object``; ``structural_tag`` is refused) and the JSON whitespace options.
    ``disable_additional_properties`` is accepted: structgen never writes a key the schema does
    not declare (``SchemaOptions.extra_properties`` is off), which is what it asks for."""

    json_: Union[dict[str, Any], bool, str, None] = Field(default=None, alias="json")
    regex: str | None = None
    choice: list[str] | None = None
    grammar: str | None = None
    json_object: bool | None = None
    structural_tag: Union[str, dict[str, Any], None] = None
    disable_any_whitespace: bool = False
    disable_additional_properties: bool = False
    whitespace_pattern: str | None = None
    #: accepted and ignored (vLLM's backend fallback: structgen has one backend)
    disable_fallback: bool | None = None


class _Sampling(_Strict):
    """Options shared by the OpenAI endpoints (see the module docstring for the three sets)."""

    model: str
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stop: Union[str, list[str], None] = None
    n: int = Field(default=1, ge=1, le=16)
    stream: bool = False
    stream_options: StreamOptions | None = None
    response_format: ResponseFormat | None = Field(default=None, discriminator="type")
    frequency_penalty: float = Field(default=0.0, ge=-2.0, le=2.0)
    presence_penalty: float = Field(default=0.0, ge=-2.0, le=2.0)
    #: token id (as a string, OpenAI's form) -> bias added to its logit, -100 to 100
    logit_bias: dict[str, float] | None = None
    #: vLLM's extension: > 1 discourages tokens already in the prompt or the output (at least
    #: 0.01: a logit divided by 1e-184 is inf, and sampling from it fails; the HTTP fuzz found it)
    repetition_penalty: float = Field(default=1.0, ge=0.01, le=10.0)
    # accepted and ignored (OpenAI lets them change nothing in the output)
    user: str | None = None
    safety_identifier: str | None = None
    prompt_cache_key: str | None = None
    metadata: dict[str, str] | None = None
    service_tier: str | None = None
    store: bool | None = None
    # chat completions only (see unsupported())
    tools: list[Annotated[Union[Annotated[ToolSpec, Tag("type=function")], Annotated[CustomToolSpec, Tag("type=custom")]],
                          _by_type("function", "custom")]] | None = None
    tool_choice: Union[Literal["none", "auto", "required"], dict[str, Any], None] = None
    parallel_tool_calls: bool | None = None
    #: structgen's extension: think first (true: the defaults of ReasoningOptions)
    reasoning: Union[bool, ReasoningOptions, None] = None
    #: shorthand for reasoning: {"max_tokens": N}
    max_reasoning_tokens: int | None = Field(default=None, ge=0)
    # vLLM's constraint fields (structgen.server.vllm_fields): one constraint per request
    structured_outputs: StructuredOutputs | None = None
    guided_json: Union[dict[str, Any], bool, str, None] = None
    guided_regex: str | None = None
    guided_choice: list[str] | None = None
    guided_grammar: str | None = None
    guided_whitespace_pattern: str | None = None
    #: accepted and ignored, as vLLM itself now asks clients to drop it (structgen has one backend)
    guided_decoding_backend: str | None = None
    # refused (see unsupported())
    functions: list[Any] | None = None
    function_call: Union[str, dict[str, Any], None] = None
    audio: dict[str, Any] | None = None
    modalities: list[str] | None = None
    prediction: dict[str, Any] | None = None
    web_search_options: dict[str, Any] | None = None
    reasoning_effort: str | None = None
    verbosity: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_defaults(cls, data: Any) -> Any:
        """``null`` for an optional field means its default, as in OpenAI's API."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data

    @field_validator("logit_bias")
    @classmethod
    def _check_bias(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for key, bias in (value or {}).items():
            if not key.isdigit():
                raise ValueError(f"keys are token ids, got {key!r}")
            if not -100 <= bias <= 100:
                raise ValueError(f"token {key}: bias {bias} is outside [-100, 100]")
        return value

    def bias(self) -> dict[int, float]:
        """``logit_bias`` with integer token ids."""
        return {int(k): v for k, v in (self.logit_bias or {}).items()}

    def unsupported(self) -> tuple[str, str] | None:
        """``(field, why)`` for the first field this server cannot honour, or ``None``."""
        for name, why in _REFUSED.items():
            value = getattr(self, name, None)
            if value not in (None, [], "none", {}, "") and not (name == "function_call" and value == "auto"):
                return name, why
        if self.modalities is not None and set(self.modalities) - {"text"}:
            return "modalities", "this server generates text only"
        if self.store:
            return "store", "this server does not store completions"
        return None

    def reasoning_options(self) -> ReasoningOptions | None:
        """The thinking asked for (``reasoning`` and ``max_reasoning_tokens``), or ``None``."""
        if self.reasoning is False or (self.reasoning is None and self.max_reasoning_tokens is None):
            return None
        opts = self.reasoning if isinstance(self.reasoning, ReasoningOptions) else ReasoningOptions()
        if self.max_reasoning_tokens is not None:
            opts = opts.model_copy(update={"max_tokens": self.max_reasoning_tokens})
        return opts

    def stop_list(self) -> list[str]:
        """``stop`` as a list without empty strings."""
        if self.stop is None:
            return []
        stops = [self.stop] if isinstance(self.stop, str) else self.stop
        return [s for s in stops if s]


class ChatCompletionRequest(_Sampling):
    """``POST /v1/chat/completions``."""

    messages: list[ChatMessage] = Field(min_length=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    logprobs: bool = False
    top_logprobs: int | None = Field(default=None, ge=0, le=MAX_TOP_LOGPROBS)

    def logprobs_top(self) -> int | None:
        """How many top tokens to report per token (``None``: no logprobs)."""
        if self.top_logprobs is not None and not self.logprobs:
            raise HTTPProblem(400, "top_logprobs needs logprobs: true", param="top_logprobs")
        return (self.top_logprobs or 0) if self.logprobs else None


class CompletionRequest(_Sampling):
    """``POST /v1/completions`` (``response_format`` is a structgen extension here)."""

    prompt: Union[str, list[str]]
    echo: bool = False
    #: the legacy form: how many top tokens to report per token (0 to 5)
    logprobs: int | None = Field(default=None, ge=0, le=MAX_COMPLETION_LOGPROBS)
    best_of: int | None = Field(default=None, ge=1)
    suffix: str | None = None

    def unsupported(self) -> tuple[str, str] | None:
        for name in ("tools", "tool_choice"):
            if getattr(self, name) not in (None, [], "none"):
                return name, "tools are for /v1/chat/completions"
        return super().unsupported()

    def logprobs_top(self) -> int | None:
        """How many top tokens to report per token (``None``: no logprobs)."""
        if self.best_of is not None and self.best_of != self.n:
            raise HTTPProblem(400, f"best_of={self.best_of} is not supported (only best_of equal to n={self.n}); "
                                   "ask for n choices instead", param="best_of", code="unsupported_parameter")
        return self.logprobs


class GenerateRequest(_Strict):
    """``POST /generate`` and ``/generate_stream``: raw text in, greedy by default."""

    text: str
    max_new_tokens: int = Field(default=64, ge=1)
    response_format: ResponseFormat | None = Field(default=None, discriminator="type")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stop: list[str] | None = None
    frequency_penalty: float = Field(default=0.0, ge=-2.0, le=2.0)
    repetition_penalty: float = Field(default=1.0, ge=0.01, le=10.0)
