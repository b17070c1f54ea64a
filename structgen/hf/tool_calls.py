"""``generate_tool_call``: a prompt and tools in, a valid call out (a pydantic instance, or the
function's name and its arguments).

The tools are shown to the model the way its chat template expects when the template renders
tools itself, else in the default format's system text (:func:`~structgen.compose.tools.tool_messages`),
and the output is generated under :func:`~structgen.compose.tools.tool_calls_format`: every call
names one of the tools and its arguments are valid against that tool's schema, by construction.

Example:
    >>> class GetWeather(pydantic.BaseModel):
    ...     '''The weather in a city.'''
    ...     city: str
    >>> generate_tool_call(model, tokenizer, "Weather in Oslo?", [GetWeather])    # doctest: +SKIP
    GetWeather(city='Oslo')
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, Union

from ..compiler import DEFAULT_WHITESPACE
from ..compiler import compile
from ..compose.reasoning import Reasoning, split_reasoning
from ..compose.tools import (HERMES, Tool, ToolCall, ToolCallFormat, parse_tool_calls, template_renders_tools,
                             tool_calls_format, tool_messages, tools_prompt)
from .generation import generate_text, model_vocabulary

__all__ = ["generate_tool_call"]

ToolLike = Union[Tool, Mapping[str, Any], type]


def generate_tool_call(
    model: Any,
    tokenizer: Any,
    prompt: str | Sequence[Mapping[str, Any]],
    tools: Sequence[ToolLike],
    *,
    tool_choice: Union[str, Mapping[str, Any]] = "required",
    parallel: bool = False,
    reasoning: Reasoning | None = None,
    with_reasoning: bool = False,
    call_format: ToolCallFormat = HERMES,
    whitespace: str = DEFAULT_WHITESPACE,
    max_new_tokens: int = 256,
    chat: bool | None = None,
    budget_aware: bool = True,
    fast_forward: bool = True,
    **generate_kwargs: Any,
) -> Any:
    """The model's call of one of ``tools`` (OpenAI tool dicts, :class:`~structgen.compose.Tool`
    values or pydantic classes), its arguments valid against that tool's schema.

    Returns the call: an instance of the tool's class when the tool is a pydantic class
    (validated with ``model_validate_json``), else a :class:`~structgen.compose.ToolCall`
    (``.name``, ``.arguments`` as JSON text, ``.parsed``). ``parallel=True`` returns a list of
    calls (one or more). ``tool_choice``: ``"required"`` (the default: calls only), a tool's name
    (calls of that tool only), or ``"auto"`` (the model may answer in text instead: the text is
    returned, a ``str``, when it calls nothing). ``prompt`` is a string or OpenAI chat messages
    (``tool_calls`` and ``role: "tool"`` results included, for a conversation that goes on after
    a call). ``reasoning`` lets the model think first (see :func:`~structgen.generate_json`);
    ``with_reasoning=True`` returns ``(result, thinking)``. Other options as in
    :func:`~structgen.generate_json`.

    Raises :class:`SchemaError` naming the tool and the JSON pointer for a bad tool schema,
    :class:`ConstraintError` for an unknown ``tool_choice``.
    """
    listed = [Tool.of(t) for t in tools]
    classes = {Tool.of(t).name: t for t in tools if isinstance(t, type)}
    fmt = tool_calls_format(listed, tool_choice, parallel=parallel, call_format=call_format, whitespace=whitespace)
    if reasoning is not None:
        fmt = reasoning.format(fmt)
    guide = compile(fmt, model_vocabulary(model, tokenizer))
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
    template = getattr(tokenizer, "chat_template", None)
    use_chat = bool(template) if chat is None else chat
    template_kwargs: dict[str, Any] = {}
    if use_chat:
        native = template_renders_tools(template)
        rendered: Any = tool_messages(messages, listed, native=native, call_format=call_format)
        if native:
            template_kwargs["tools"] = [t.openai() for t in listed]
    else:
        if not isinstance(prompt, str):
            raise TypeError("chat messages need a chat template; pass the prompt as a string with chat=False")
        rendered = tools_prompt(listed, call_format) + "\n\n" + prompt
    text = generate_text(model, tokenizer, rendered, guide, max_new_tokens=max_new_tokens, chat=use_chat,
                         budget_aware=budget_aware, fast_forward=fast_forward,
                         text_budget=reasoning.budget() if reasoning is not None else None,
                         template_kwargs=template_kwargs, **generate_kwargs)
    thinking = None
    if reasoning is not None:
        thinking, text = split_reasoning(text, reasoning)
    answer, calls = parse_tool_calls(text, listed, call_format)
    results = [_result(c, classes) for c in calls]
    if not results:
        out: Any = answer
    else:
        out = results if parallel else results[0]
    return (out, thinking) if with_reasoning else out


def _result(call: ToolCall, classes: dict[str, Any]) -> Any:
    cls = classes.get(call.name)
    return cls.model_validate_json(call.arguments) if cls is not None else call
