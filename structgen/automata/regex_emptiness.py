"""Why no string matches a regex: the explanation :class:`UnsatisfiableConstraint` gives when a
pattern's language is empty.

The usual cause is an assertion that looks outside the output: under full-match semantics the
output is the whole text, so ``(?<=a)b`` (a look-behind at the start) or ``b(?=c)`` (a look-ahead
at the end) can never hold. :func:`why_no_match` tells them apart by compiling the pattern again
with any text allowed before it, or after it: if that matches something, the pattern needs text
outside the output.

>>> why_no_match("(?<=a)b")
'it needs text before the output (a look-behind or \\\\b at its start looks back past it), and the output has nothing before it'
"""

from __future__ import annotations

import re

from ..errors import StructgenError
from .dfa import DEFAULT_MAX_STATES
from .regex import regex_to_dfa, strip_anchors

__all__ = ["why_no_match"]

_GLOBAL_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))+")
_ANY = "(?s:.)*"


def why_no_match(pattern: str, *, max_states: int = DEFAULT_MAX_STATES) -> str:
    """The reason no string full-matches ``pattern`` (whose language is empty), in words."""
    flags = _GLOBAL_FLAGS.match(pattern)
    lead = flags.group(0) if flags else ""
    body = f"(?:{strip_anchors(pattern[len(lead):])})"

    def matches_something(regex: str) -> bool:
        try:
            return not regex_to_dfa(lead + regex, max_states=max_states).is_empty
        except StructgenError:
            return False

    if matches_something(_ANY + body):
        return (
            "it needs text before the output (a look-behind or \\b at its start looks back past it), "
            "and the output has nothing before it"
        )
    if matches_something(body + _ANY):
        return (
            "it needs text after the output (a look-ahead or \\b at its end looks past it), and "
            "nothing follows the output"
        )
    if matches_something(_ANY + body + _ANY):
        return "it needs text both before and after the output (look-arounds at its ends look past them), and there is none"
    return (
        "its parts exclude one another (an assertion that no position satisfies, or a character "
        "class with no character UTF-8 text can hold)"
    )
