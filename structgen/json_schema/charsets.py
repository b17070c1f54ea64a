"""Sets of characters as sorted tuples of inclusive code point ranges, the two readings (ECMA-262's
and Python's) of the class shorthands, and :func:`encode_set`: one JSON-encoded character whose
decoded value is in a set, in every spelling JSON allows (raw, ``\\n``-style, ``\\u00XX``).

>>> union(chars("ab"), ((0x63, 0x7A),))
((97, 122),)
>>> encode_set(chars("a\\n"))
'(?:a|\\\\\\\\n|\\\\\\\\u000[Aa])'
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Optional, Sequence

import numpy as np

from ..automata.regex import register_group
from ..automata.utf8 import complement_intervals, merge_intervals
from ..errors import SchemaNotSupported
from .python_regex import sre
from .regex_text import CHAR, literal

__all__ = [
    "CATEGORIES", "DOT", "ECMA", "FULL", "SUPERSET_CATEGORIES", "Ranges", "chars", "complement", "contains",
    "encode_set", "intersect", "norm", "python_category", "size", "union", "write_class",
]

_MAX = 0x10FFFF
#: A set of code points: sorted, disjoint, inclusive ranges (``norm`` makes one).
Ranges = tuple[tuple[int, int], ...]


def norm(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """The ranges sorted, overlapping and adjacent ones merged."""
    return tuple(merge_intervals(ranges))


def complement(s: Ranges) -> Ranges:
    return complement_intervals(s)


def union(*sets: Ranges) -> Ranges:
    return norm(r for s in sets for r in s)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    return complement(union(complement(a), complement(b)))


def size(s: Ranges) -> int:
    return sum(b - a + 1 for a, b in s)


def chars(text: str) -> Ranges:
    return norm((ord(c), ord(c)) for c in text)


def contains(s: Ranges, cp: int) -> bool:
    return any(a <= cp <= b for a, b in s)


@functools.lru_cache(maxsize=1)
def _every_character() -> str:
    """Every code point in order, surrogates too (decoded from a numpy array: 12 ms, where a
    join of ``chr`` over them took 130 ms)."""
    return np.arange(_MAX + 1, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")


@functools.lru_cache(maxsize=None)
def python_category(name: str) -> Ranges:
    """Code points Python's ``re`` puts in ``\\d``, ``\\s`` or ``\\w`` for str patterns (asked of ``re``)."""
    every = _every_character()
    shorthand = {"digit": r"\d+", "space": r"\s+", "word": r"\w+"}[name]
    return tuple((m.start(), m.end() - 1) for m in re.finditer(shorthand, every))


_ECMA_SPACE = norm(
    [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
     (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
)
#: ECMA-262's ``\d``, ``\s`` and ``\w`` (ASCII, except white space).
ECMA = {"digit": chars("0123456789"), "space": _ECMA_SPACE,
        "word": norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])}
#: ``.`` without the s flag: ECMA excludes all line terminators, Python only ``\n``.
DOT = complement(chars("\n\r\u2028\u2029"))
#: Every character.
FULL = ((0, _MAX),)
#: The class shorthands of Python's parser: (ECMA / Python name, negated).
CATEGORIES = {
    sre.CATEGORY_DIGIT: ("digit", False), sre.CATEGORY_NOT_DIGIT: ("digit", True),
    sre.CATEGORY_SPACE: ("space", False), sre.CATEGORY_NOT_SPACE: ("space", True),
    sre.CATEGORY_WORD: ("word", False), sre.CATEGORY_NOT_WORD: ("word", True),
}
#: The shorthands whose Python set contains ECMA's.
SUPERSET_CATEGORIES = {sre.CATEGORY_DIGIT, sre.CATEGORY_WORD}
_MAX_CLASS_CHARS = 300_000  # (\p{L} has about 140,000)


def _class_char(cp: int) -> str:
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    ch = chr(cp)
    return "\\" + ch if ch in "\\]-[^&~|" else ch


def write_class(s: Ranges, negate: bool) -> str:
    """The regex class of ``s`` (of its complement with ``negate``); one character as a literal."""
    if not negate and len(s) == 1 and s[0][0] == s[0][1]:
        return literal(chr(s[0][0]))
    body = []
    for a, b in s:
        if a == b:
            body.append(_class_char(a))
        elif b == a + 1:
            body.append(_class_char(a) + _class_char(b))
        else:
            body.append(f"{_class_char(a)}-{_class_char(b)}")
    return "[" + ("^" if negate else "") + "".join(body) + "]"


_MUST_ESCAPE = norm([(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C)])
_SHORT_ESCAPES = {0x22: '"', 0x5C: "\\\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"}
#: The last code point with an escape of its own (short, or ``\\u00XX`` below 0x20).
_LAST_ESCAPED = max(0x1F, *_SHORT_ESCAPES)
# Surrogates have no UTF-8 form (and a raw one in a structgen regex marks a slot: see structgen.automata.markers).
_MUST_ESCAPE_OR_SURROGATE = union(_MUST_ESCAPE, ((0xD800, 0xDFFF),))


def _hex_digit_class(digits: Sequence[int]) -> str:
    found = set()
    for d in digits:
        found.update({f"{d:x}", f"{d:X}"})
    return write_class(chars("".join(found)), False)


def encode_set(s: Ranges, path: str = "") -> Optional[str]:
    """The regex of one JSON-encoded character whose decoded value is in ``s`` (None if empty)."""
    got = _encoded(tuple(s))
    if got is _TOO_MANY:
        raise SchemaNotSupported("pattern", path, "a character class with too many characters")
    return got


_TOO_MANY = "(too many characters)"


@functools.lru_cache(maxsize=4096)
def _encoded(s: Ranges) -> Optional[str]:
    """:func:`encode_set`, cached: patterns repeat the same classes (a compile met 828 of them)."""
    if s == FULL:
        return CHAR
    alts = []
    raw = intersect(s, complement(_MUST_ESCAPE_OR_SURROGATE))
    if raw:
        rest = complement(raw)
        if size(raw) <= size(rest):
            chosen, negate = raw, False
        else:
            chosen, negate = rest, True
        if size(chosen) > _MAX_CLASS_CHARS:
            return _TOO_MANY
        alts.append(write_class(chosen, negate))
    near = tuple(r for r in s if r[0] <= _LAST_ESCAPED)  # (the ranges that may hold a character escaped on its own)
    short = "".join(v for k, v in _SHORT_ESCAPES.items() if contains(near, k))
    if short:
        alts.append("\\\\" + (short if len(short) == 1 else f"[{short}]"))
    for high in (0, 1):
        lows = [c & 0xF for c in range(high * 16, high * 16 + 16) if contains(near, c)]
        if lows:
            alts.append(f"\\\\u00{high}{_hex_digit_class(lows)}")
    if not alts:
        return None
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


_ENCODED_DOT = encode_set(DOT)
assert _ENCODED_DOT is not None  # ("." matches most characters)
register_group(_ENCODED_DOT)  # (ECMA's "." is in many patterns: its spellings are read once per process)
