"""Regex text for the translation of the user's ``pattern`` keywords (:mod:`.ecma_pattern`,
:mod:`.charsets`): one JSON string character, literals, repetition, alternation. The schema
compiler itself builds terms (:mod:`.terms`); only a user's pattern, translated, is regex text,
which :func:`structgen.automata.regex.regex_to_expr` then parses.

Written in the part of Python ``re`` syntax that interegular parses: no anchors, back-references
or ``\\d \\w \\s`` shorthands, non-ASCII characters written raw, controls as ``\\xHH``, ``(?:...)``
groups only. :data:`CHAR` is one decoded character of a JSON string in any of its encodings (as
:attr:`.terms.JsonTerms.char`, which the tests check it against).

>>> literal("a.b"), quantify("x", 2, None), alt(["a", "b", "a"])
('a\\\\.b', '(?:x){2,}', '(?:a|b)')
"""

from __future__ import annotations

from typing import Iterable, Optional

from ..automata.regex import register_group

__all__ = ["CHAR", "alt", "literal", "quantify"]

_UNICODE_ESCAPE = (
    r"\\u(?:[0-9A-Ca-c][0-9A-Fa-f]{3}|[Dd][0-7][0-9A-Fa-f]{2}|[EFef][0-9A-Fa-f]{3}"
    r"|[Dd][89ABab][0-9A-Fa-f]{2}\\u[Dd][C-Fc-f][0-9A-Fa-f]{2})"
)
#: One decoded character of a JSON string, in any of its encodings.
CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|' + _UNICODE_ESCAPE + ")"
register_group(CHAR)  # (read once per process, not in every pattern that holds it)

_SPECIAL = set(".^$*+?{}[]()|\\")


def literal(text: str) -> str:
    """The regex matching exactly ``text``."""
    out = []
    for ch in text:
        if ch in _SPECIAL:
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:  # (no UTF-8 form; in a structgen regex it marks a slot)
            raise ValueError(f"a lone surrogate U+{ord(ch):04X} cannot be written in UTF-8 text")
        else:
            out.append(ch)
    return "".join(out)


def quantify(regex: str, lo: int, hi: Optional[int]) -> str:
    """``regex`` repeated ``lo`` to ``hi`` times (``None``: unbounded)."""
    if hi is not None and hi <= 0:
        return ""
    if lo == 1 and hi == 1:
        return regex
    group = f"(?:{regex})"
    if hi is None:
        return group + ("*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}")
    if lo == hi:
        return f"{group}{{{lo}}}"
    if lo == 0 and hi == 1:
        return group + "?"
    return f"{group}{{{lo},{hi}}}"


def alt(parts: Iterable[str]) -> str:
    """The alternation of ``parts`` (duplicates dropped; one part is itself)."""
    unique = list(dict.fromkeys(parts))
    return unique[0] if len(unique) == 1 else "(?:" + "|".join(unique) + ")"
