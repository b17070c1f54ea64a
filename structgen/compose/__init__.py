"""Composed constraints: free text and constrained regions in one guide.

- :mod:`.formats`: the pieces (``Text``, ``Literal``, ``Regex``, ``JsonSchema``, ``Extract``) and
  how they combine (``Sequence``, ``Choice``, ``Repeat``, ``Tag``, ``Triggered``);
- :mod:`.build`: :func:`compile_composed`, a format as one network and its guide;
- :mod:`.reasoning`: :class:`Reasoning` (think, then answer) and the token budget of the thinking;
- :mod:`.tools`: tool calls (OpenAI's ``tools`` / ``tool_choice``), their default format, parsing.
"""

from .build import clear_composed_cache, compile_composed
from .formats import Choice, Extract, Format, JsonSchema, Literal, Regex, Repeat, Sequence, Tag, Text, Triggered
from .reasoning import Reasoning, TextBudget, split_reasoning
from .tools import HERMES, Tool, ToolCall, ToolCallFormat, parse_tool_calls, tool_calls_format

__all__ = [
    "Choice", "Extract", "Format", "HERMES", "JsonSchema", "Literal", "Reasoning", "Regex", "Repeat", "Sequence", "Tag",
    "Text", "TextBudget", "Tool", "ToolCall", "ToolCallFormat", "Triggered", "clear_composed_cache",
    "compile_composed", "parse_tool_calls", "split_reasoning", "tool_calls_format",
]
