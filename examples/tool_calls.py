"""Tool calls and reasoning: the model calls a tool whose arguments follow its schema, by construction,
and thinks before a JSON answer.

Run: python examples/tool_calls.py

Tools are pydantic classes (a class's name is the tool's name, its docstring the description, its
fields the arguments' schema) or OpenAI tool dicts. ``generate_tool_call`` returns an instance of
the class the model called (or a ``ToolCall`` for a dict tool): the guide lets the model write only
``<tool_call>{"name": <one of the tools>, "arguments": <valid for that tool>}</tool_call>``, so the
call always parses and validates. The model still chooses which tool and which values.
"""

import json
from typing import Literal

import pydantic

import structgen
from structgen.compose import Reasoning


class GetWeather(pydantic.BaseModel):
    """Get the current weather in a city."""

    city: str = pydantic.Field(max_length=30)
    unit: Literal["celsius", "fahrenheit"]


class GetStockPrice(pydantic.BaseModel):
    """Get the latest price of a stock, by its ticker symbol."""

    ticker: str = pydantic.Field(pattern=r"^[A-Z]{1,5}$")


TOOLS = [GetWeather, GetStockPrice]
QUESTIONS = ["What is the weather in Paris, in celsius?", "How much is one Apple share (AAPL) worth today?"]
ANSWER = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 30}, "country": {"type": "string", "maxLength": 30}},
    "required": ["city", "country"],
    "additionalProperties": False,
}
REASONING_PROMPT = "Which city is the capital of Italy? Answer in JSON with the city and its country."


def main() -> None:
    model, tokenizer = structgen.load_default_model()
    for question in QUESTIONS:
        call = structgen.generate_tool_call(model, tokenizer, question, TOOLS, max_new_tokens=80)
        print(f"question: {question}")
        print(f"   call: {type(call).__name__}({call.model_dump_json()})")

    # Parallel calls: one or more calls, each valid; a named tool_choice forces that tool.
    calls = structgen.generate_tool_call(model, tokenizer, "What is the weather in Paris and in London?",
                                         TOOLS, tool_choice="GetWeather", parallel=True, max_new_tokens=120)
    print("parallel: " + ", ".join(f"{type(c).__name__}({c.model_dump_json()})" for c in calls))

    # Think first (at most 32 tokens between <think> and </think>), then answer under the schema.
    value, thinking = structgen.generate_json(model, tokenizer, REASONING_PROMPT, ANSWER, max_new_tokens=120,
                                              reasoning=Reasoning(max_tokens=32), with_reasoning=True)
    print(f"question: {REASONING_PROMPT}")
    print(f"thinking: {thinking.strip()!r}")
    print(f"  answer: {json.dumps(value, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
