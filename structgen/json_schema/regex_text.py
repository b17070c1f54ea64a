"""Writing regexes: JSON's lexical pieces (a string character, a string, a number), literals,
repetition, alternation and integer ranges.

Every regex here describes the *serialised* JSON text and is written in the part of Python ``re``
syntax that interegular parses: no anchors, back-references or ``\\d \\w \\s`` shorthands,
non-ASCII characters written raw, controls as ``\\xHH``, ``(?:...)`` groups only.

A JSON string holds *decoded* characters; each one is one of

- a raw character other than ``"``, ``\\`` and the controls U+0000-U+001F;
- a two-character escape ``\\" \\\\ \\/ \\b \\f \\n \\r \\t``;
- ``\\uXXXX`` outside the surrogate range D800-DFFF, or a surrogate pair ``\\uD83D\\uDE00`` (a
  high surrogate then a low one: one astral character, as ``json.dumps`` writes an emoji),

so one "unit" of :data:`CHAR` is exactly one decoded code point, which keeps
``minLength``/``maxLength`` exact.

>>> literal("a.b"), quantify("x", 2, None), alt(["a", "b", "a"])
('a\\\\.b', '(?:x){2,}', '(?:a|b)')
"""

from __future__ import annotations

from typing import Iterable, Optional

__all__ = [
    "CANON_CHAR", "CANON_STRING", "CHAR", "INTEGER", "NUMBER", "PLAIN_INTEGER_VALUE", "PLAIN_NUMBER", "STRING",
    "alt", "integer_range", "literal", "natural_range", "quantify",
]

_UNICODE_ESCAPE = (
    r"\\u(?:[0-9A-Ca-c][0-9A-Fa-f]{3}|[Dd][0-7][0-9A-Fa-f]{2}|[EFef][0-9A-Fa-f]{3}"
    r"|[Dd][89ABab][0-9A-Fa-f]{2}\\u[Dd][C-Fc-f][0-9A-Fa-f]{2})"
)
#: One decoded character of a JSON string, in any of its encodings.
CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|' + _UNICODE_ESCAPE + ")"
#: Any JSON string, quotes included.
STRING = '"' + CHAR + '*"'
#: Any JSON integer (no fraction, no exponent; ``-0`` is JSON and equals 0).
INTEGER = r"-?(?:0|[1-9][0-9]*)"
#: Any JSON number.
NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"

# The canonical spellings (see structgen.json_schema.universe): equal values, few texts.
#: One character of a JSON string as ``json.dumps(..., ensure_ascii=False)`` writes it.
CANON_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\bfnrt]|\\u00(?:0[0-7bef]|1[0-9a-f]))'
#: A JSON string as ``json.dumps(..., ensure_ascii=False)`` writes it.
CANON_STRING = '"' + CANON_CHAR + '*"'
#: JSON numbers without exponent.
PLAIN_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
#: JSON numbers without exponent whose value is a whole number.
PLAIN_INTEGER_VALUE = r"-?(?:0|[1-9][0-9]*)(?:\.0+)?"

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


# ---------------------------------------------------------------------------------------------
# Integer ranges


def _same_length(lo: str, hi: str) -> str:
    """Decimal strings of equal length, lo <= hi: the strings of that length in [lo, hi]."""
    if lo == hi:
        return lo
    n = len(lo)
    if n == 1:
        return f"[{lo}-{hi}]"
    if lo[0] == hi[0]:
        return lo[0] + _group(_same_length(lo[1:], hi[1:]))
    alts = []
    first_full, last_full = int(lo[0]), int(hi[0])
    if lo[1:] != "0" * (n - 1):
        alts.append(lo[0] + _group(_same_length(lo[1:], "9" * (n - 1))))
        first_full += 1
    tail = None
    if hi[1:] != "9" * (n - 1):
        tail = hi[0] + _group(_same_length("0" * (n - 1), hi[1:]))
        last_full -= 1
    if first_full <= last_full:
        head = str(first_full) if first_full == last_full else f"[{first_full}-{last_full}]"
        alts.append(head + ("[0-9]" if n == 2 else f"[0-9]{{{n - 1}}}"))
    if tail is not None:
        alts.append(tail)
    return alt(alts)


def _group(regex: str) -> str:
    return regex if regex.isdigit() or "|" not in regex else f"(?:{regex})"


def natural_range(lo: int, hi: Optional[int]) -> str:
    """Canonical decimal naturals in [lo, hi] (0 <= lo, hi None: unbounded).

    >>> natural_range(7, 12)
    '(?:[7-9]|1[0-2])'
    """
    parts = []
    top = len(str(hi)) if hi is not None else len(str(lo))
    for width in range(len(str(lo)), top + 1):
        a = max(lo, 10 ** (width - 1) if width > 1 else 0)
        b = 10**width - 1 if hi is None else min(hi, 10**width - 1)
        if a <= b:
            parts.append(_same_length(str(a), str(b)))
    if hi is None:
        parts.append(f"[1-9][0-9]{{{len(str(lo))},}}")
    return alt(parts)


def integer_range(lo: Optional[int], hi: Optional[int]) -> str:
    """The canonical JSON integers ``n`` with ``lo <= n <= hi`` (``None``: unbounded side).

    >>> integer_range(-5, 12)
    '(?:-[1-5]|(?:[0-9]|1[0-2]))'
    """
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"empty integer range [{lo}, {hi}]")
    if lo is None and hi is None:
        return INTEGER
    if lo is not None and lo >= 0:
        return natural_range(lo, hi)
    if hi is not None and hi < 0:
        return "-" + _group(natural_range(-hi, None if lo is None else -lo))
    negative = "-" + _group(natural_range(1, None if lo is None else -lo))
    return alt([negative, natural_range(0, hi)])
