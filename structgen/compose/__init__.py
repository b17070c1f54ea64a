"""Composed constraints: free text and constrained regions in one guide (see :mod:`.formats`)."""

from .build import clear_composed_cache, compile_composed
from .formats import Choice, Extract, Format, JsonSchema, Literal, Regex, Repeat, Sequence, Tag, Text, Triggered

__all__ = [
    "Choice", "Extract", "Format", "JsonSchema", "Literal", "Regex", "Repeat", "Sequence", "Tag", "Text", "Triggered",
    "clear_composed_cache", "compile_composed",
]
