"""Request and response bodies of the HTTP API: the requests as pydantic models, the error body.

Requests forbid unknown fields (``extra="forbid"``): a misspelt option is a 400 naming the field,
not a silently ignored one. Responses follow the OpenAI wire format closely enough that the
official ``openai`` client parses them unchanged; every error, whatever raised it, is answered
with :attr:`HTTPProblem.body`.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ChatCompletionRequest",
    "ChatMessage",
    "CompletionRequest",
    "GenerateRequest",
    "HTTPProblem",
    "JsonObjectFormat",
    "JsonSchemaFormat",
    "JsonSchemaSpec",
    "RegexFormat",
    "ResponseFormat",
    "TextFormat",
]


class HTTPProblem(Exception):
    """A request the server answers with an error: ``status`` and OpenAI's error body.

    Raised by the endpoints and answered by the app's handler; it never leaves the server (the
    errors a Python caller sees are those of :mod:`structgen.errors`).

    >>> HTTPProblem(404, "no such model", type_="model_not_found", param="model").body
    {'error': {'message': 'no such model', 'type': 'model_not_found', 'param': 'model', 'code': 404}}
    """

    def __init__(self, status: int, message: str, *, type_: str = "invalid_request_error",
                 param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param = status, message, type_, param

    @property
    def body(self) -> dict[str, Any]:
        """The JSON body of the answer (also sent as the last event of a stream that fails)."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.status}}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


ResponseFormat = Union[TextFormat, JsonObjectFormat, JsonSchemaFormat, RegexFormat]


class _TextPart(_Strict):
    type: Literal["text"]
    text: str


class ChatMessage(_Strict):
    """One chat message; ``content`` is a string or a list of text parts."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[str, list[_TextPart], None] = None
    name: str | None = None

    def text(self) -> str:
        """The message's text (text parts joined)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content)


class StreamOptions(_Strict):
    """``stream_options``: ``include_usage`` adds a last chunk with the token counts."""

    include_usage: bool = False


class _Sampling(_Strict):
    """Options shared by the OpenAI endpoints."""

    model: str
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stop: Union[str, list[str], None] = None
    n: int = Field(default=1, ge=1, le=16)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None
    response_format: ResponseFormat | None = Field(default=None, discriminator="type")

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


class CompletionRequest(_Sampling):
    """``POST /v1/completions`` (``response_format`` is a structgen extension here)."""

    prompt: Union[str, list[str]]
    echo: bool = False


class GenerateRequest(_Strict):
    """``POST /generate`` and ``/generate_stream``: raw text in, greedy by default."""

    text: str
    max_new_tokens: int = Field(default=64, ge=1)
    response_format: ResponseFormat | None = Field(default=None, discriminator="type")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stop: list[str] | None = None
