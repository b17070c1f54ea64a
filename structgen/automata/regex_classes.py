"""The characters of a class of Python's parse of a regex (``re._parser``: its items are
literals, ranges, categories and a leading negation), as code-point intervals: what
:mod:`.nfa` builds a class from. ``\\d \\w \\s`` are the ASCII classes (``re.ASCII``'s
reading); case-insensitively a character stands for its ``lower()`` and ``upper()``.

>>> from re import _parser
>>> [(_, items)] = _parser.parse("[^\\\\Wa-y]").data   # (word characters but a to y)
>>> class_set(tuple(items), False)
((48, 57), (65, 90), (95, 95), (122, 122))
>>> class_set(((_parser.LITERAL, ord("k")),), True)
((75, 75), (107, 107))
"""

from __future__ import annotations

from typing import Any

from .utf8 import complement_intervals, intervals_of, merge_intervals

try:  # Python >= 3.11
    from re import _constants as _C  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _C

__all__ = ["Intervals", "cased", "class_set"]

Intervals = tuple[tuple[int, int], ...]
_WORD_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"


#: The ASCII classes ``\d \w \s`` (re.ASCII's reading) and their negations, by Python's category.
_CATEGORIES: dict[Any, tuple[str, bool]] = {
    _C.CATEGORY_DIGIT: ("0123456789", False),
    _C.CATEGORY_NOT_DIGIT: ("0123456789", True),
    _C.CATEGORY_WORD: (_WORD_CHARS, False),
    _C.CATEGORY_NOT_WORD: (_WORD_CHARS, True),
    _C.CATEGORY_SPACE: (" \t\n\r\f\v", False),
    _C.CATEGORY_NOT_SPACE: (" \t\n\r\f\v", True),
}


def class_set(items: tuple[Any, ...], insensitive: bool) -> Intervals | None:
    """The code points of a class: the union of its items (a negated category such as ``\\W`` is
    everything but its characters), then its complement if it starts with a negation (None for an item of another kind).
    Case-insensitively each character (of an item, of a negated category's characters) stands
    for its :func:`cased` forms."""
    negated = False
    points: list[tuple[int, int]] = []
    excluded: list[Intervals] = []  # (per negated category: what it leaves out)
    for op, av in items:
        if op is _C.LITERAL:
            points.append((av, av))
        elif op is _C.RANGE:
            points.append(av)
        elif op is _C.NEGATE:
            negated = True
        elif op is _C.CATEGORY and av in _CATEGORIES:
            chars, complemented = _CATEGORIES[av]
            category = tuple(intervals_of(ord(c) for c in chars))
            if complemented:
                excluded.append(cased(category) if insensitive else category)
            else:
                points.extend(category)
        else:
            return None
    ivs: Intervals = tuple(merge_intervals(points))
    if insensitive:
        ivs = cased(ivs)
    for left_out in excluded:
        ivs = tuple(merge_intervals([*ivs, *complement_intervals(left_out)]))
    return complement_intervals(ivs) if negated else ivs


def cased(ivs: Intervals) -> Intervals:
    """Case-insensitively a character stands for ``c.lower()`` and ``c.upper()``; a result of more
    than one character (``"ß".upper() == "SS"``) is never read as one character, so it matches
    nothing."""
    cased = {f for lo, hi in ivs for cp in range(lo, hi + 1) for f in (chr(cp).lower(), chr(cp).upper()) if len(f) == 1}
    return tuple(intervals_of(ord(c) for c in cased))
