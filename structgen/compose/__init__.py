"""Composed constraints: free text and constrained regions in one guide.

- :mod:`structgen.formats`: the pieces (``Text``, ``Literal``, ``Regex``, ``JsonSchema``, ``Extract``)
  and how they combine (``Sequence``, ``Choice``, ``Repeat``, ``Tag``, ``Triggered``), re-exported here;
- :mod:`.build`: a composed format as one network of automata (:func:`structgen.compile` turns it
  into a guide);
- :mod:`.reasoning`: :class:`Reasoning` (think, then answer) and the token budget of the thinking;
- :mod:`.tools`: tool calls (OpenAI's ``tools`` / ``tool_choice``), their default format, parsing.
"""

from ..formats import Choice, Extract, Format, JsonSchema, Literal, Regex, Repeat, Sequence, Tag, Text, Triggered
from ..guides.text_budget import TextBudget
from .reasoning import Reasoning, split_reasoning
from .tools import HERMES, Tool, ToolCall, ToolCallFormat, parse_tool_calls, tool_calls_format

__all__ = [
    "Choice", "Extract", "Format", "HERMES", "JsonSchema", "Literal", "Reasoning", "Regex", "Repeat", "Sequence", "Tag",
    "Text", "TextBudget", "Tool", "ToolCall", "ToolCallFormat", "Triggered", "parse_tool_calls", "split_reasoning",
    "tool_calls_format",
]
