"""Regexes for JSON lexical values: strings (free text, ``pattern``, ``format``) and integer ranges.

Every regex here describes the *serialised* JSON text and is written in the part of Python ``re``
syntax that interegular parses: no anchors, back-references or ``\\d \\w \\s``
shorthands, non-ASCII characters written raw, controls as ``\\xHH``, ``(?:...)`` groups only.

A JSON string holds *decoded* characters; each one is one of

- a raw character other than ``"``, ``\\`` and the controls U+0000-U+001F;
- a two-character escape ``\\" \\\\ \\/ \\b \\f \\n \\r \\t``;
- ``\\uXXXX`` outside the surrogate range D800-DFFF, or a surrogate pair ``\\uD83D\\uDE00`` (a
  high surrogate then a low one: one astral character, as ``json.dumps`` writes an emoji),

so one "unit" of the string regex is exactly one decoded code point, which keeps
``minLength``/``maxLength`` exact. A ``pattern`` (ECMA-262, matched against the decoded string) is
read with Python's own regex parser and re-emitted unit by unit: ``"`` becomes ``\\"``, a newline
``\\n`` or ``\\u000a``. Where ECMA-262 and Python's ``re`` (what ``jsonschema`` runs) read a construct
differently, each character set is the intersection of both readings (``\\d`` is ``[0-9]``, ``.``
excludes CR and U+2028/U+2029; inside a negative look-around, the union), so an accepted string
satisfies the pattern under either engine; ``\\b``/``\\B`` read ECMA's ASCII ``\\w``. Look-arounds
and ``^``/``$`` inside the pattern are written as Python look-arounds over encoded units (a
look-behind anchored at the string's start, so it only starts on a unit boundary): such a
translation reads the whole string, and is compiled to its own automaton (:func:`has_assertions`).
Unicode property classes (``\\p{L}``, ``\\P{Lu}``, ECMA-262 with the ``u`` flag) are expanded into
plain classes first (:mod:`structgen.unicode_props`). Constructs with no exact regular translation
raise :class:`SchemaNotSupported`.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Iterable, Optional, Sequence

try:  # Python 3.11+
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

from ..errors import SchemaNotSupported
from ..automata.unicode_props import expand_properties
from ..automata.utf8 import complement_intervals

__all__ = [
    "CHAR",
    "FORMATS",
    "FREE_STRING_FORMATS",
    "INTEGER",
    "NUMBER",
    "NUMBER_FORMATS",
    "STRING",
    "compiled_format",
    "compiled_pattern",
    "encode_set",
    "format_regex",
    "has_assertions",
    "integer_range",
    "literal",
    "matches_only",
    "pattern_language_is_python",
    "pattern_regex",
    "quantify",
    "regex_width",
]

# ---------------------------------------------------------------------------------------------
# Basic pieces

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


def _alt(parts: Iterable[str]) -> str:
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
        return lo[0] + _same_length(lo[1:], hi[1:])
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
    return _alt(alts)


def _group(regex: str) -> str:
    return regex if regex.isdigit() or "|" not in regex else f"(?:{regex})"


def _natural_range(lo: int, hi: Optional[int]) -> str:
    """Canonical decimal naturals in [lo, hi] (0 <= lo, hi None: unbounded)."""
    parts = []
    top = len(str(hi)) if hi is not None else len(str(lo))
    for width in range(len(str(lo)), top + 1):
        a = max(lo, 10 ** (width - 1) if width > 1 else 0)
        b = 10**width - 1 if hi is None else min(hi, 10**width - 1)
        if a <= b:
            parts.append(_same_length(str(a), str(b)))
    if hi is None:
        parts.append(f"[1-9][0-9]{{{len(str(lo))},}}")
    return _alt(parts)


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
        return _natural_range(lo, hi)
    if hi is not None and hi < 0:
        return "-" + _group(_natural_range(-hi, None if lo is None else -lo))
    negative = "-" + _group(_natural_range(1, None if lo is None else -lo))
    return _alt([negative, _natural_range(0, hi)])


# ---------------------------------------------------------------------------------------------
# Character sets (sorted tuples of inclusive code point ranges)

_MAX = 0x10FFFF
Ranges = tuple  # tuple[tuple[int, int], ...]


def _norm(ranges: Iterable[tuple[int, int]]) -> Ranges:
    out: list[list[int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


def _complement(s: Ranges) -> Ranges:
    return complement_intervals(s)


def _union(*sets: Ranges) -> Ranges:
    return _norm(r for s in sets for r in s)


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    return _complement(_union(_complement(a), _complement(b)))


def _size(s: Ranges) -> int:
    return sum(b - a + 1 for a, b in s)


def _chars(text: str) -> Ranges:
    return _norm((ord(c), ord(c)) for c in text)


@functools.lru_cache(maxsize=None)
def _python_category(name: str) -> Ranges:
    """Code points Python's ``re`` puts in ``\\d``, ``\\s`` or ``\\w`` for str patterns (asked of ``re``)."""
    every = "".join(map(chr, range(_MAX + 1)))
    shorthand = {"digit": r"\d+", "space": r"\s+", "word": r"\w+"}[name]
    return tuple((m.start(), m.end() - 1) for m in re.finditer(shorthand, every))


_ECMA_SPACE = _norm(
    [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
     (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
)
_ECMA = {"digit": _chars("0123456789"), "space": _ECMA_SPACE,
         "word": _norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])}
#: ``.`` without the s flag: ECMA excludes all line terminators, Python only ``\n``.
_DOT = _complement(_chars("\n\r\u2028\u2029"))
_CATEGORIES = {
    _sre.CATEGORY_DIGIT: ("digit", False), _sre.CATEGORY_NOT_DIGIT: ("digit", True),
    _sre.CATEGORY_SPACE: ("space", False), _sre.CATEGORY_NOT_SPACE: ("space", True),
    _sre.CATEGORY_WORD: ("word", False), _sre.CATEGORY_NOT_WORD: ("word", True),
}
_SUPERSET_CATEGORIES = {_sre.CATEGORY_DIGIT, _sre.CATEGORY_WORD}  # Python's set contains ECMA's
_MAX_CLASS_CHARS = 300_000  # (\p{L} has about 140,000)


def _class_char(cp: int) -> str:
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    ch = chr(cp)
    return "\\" + ch if ch in "\\]-[^&~|" else ch


def _write_class(s: Ranges, negate: bool) -> str:
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


_MUST_ESCAPE = _norm([(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C)])
_SHORT_ESCAPES = {0x22: '"', 0x5C: "\\\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"}
_FULL = ((0, _MAX),)
# Surrogates have no UTF-8 form (and a raw one in a structgen regex marks a slot: see nfa.py).
_MUST_ESCAPE_OR_SURROGATE = _union(_MUST_ESCAPE, ((0xD800, 0xDFFF),))


def _contains(s: Ranges, cp: int) -> bool:
    return any(a <= cp <= b for a, b in s)


def _hex_digit_class(digits: Sequence[int]) -> str:
    chars = set()
    for d in digits:
        chars.update({f"{d:x}", f"{d:X}"})
    return _write_class(_chars("".join(chars)), False)


def encode_set(s: Ranges, path: str = "") -> Optional[str]:
    """The regex of one JSON-encoded character whose decoded value is in ``s`` (None if empty)."""
    if s == _FULL:
        return CHAR
    alts = []
    raw = _intersect(s, _complement(_MUST_ESCAPE_OR_SURROGATE))
    if raw:
        rest = _complement(raw)
        if _size(raw) <= _size(rest):
            chosen, negate = raw, False
        else:
            chosen, negate = rest, True
        if _size(chosen) > _MAX_CLASS_CHARS:
            raise SchemaNotSupported("pattern", path, "a character class with too many characters")
        alts.append(_write_class(chosen, negate))
    short = "".join(v for k, v in _SHORT_ESCAPES.items() if _contains(s, k))
    if short:
        alts.append("\\\\" + (short if len(short) == 1 else f"[{short}]"))
    for high in (0, 1):
        lows = [c & 0xF for c in range(high * 16, high * 16 + 16) if _contains(s, c)]
        if lows:
            alts.append(f"\\\\u00{high}{_hex_digit_class(lows)}")
    if not alts:
        return None
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


# ---------------------------------------------------------------------------------------------
# ECMA-262 patterns

_ALLOWED_ESCAPE_LETTERS = set("dDwWsSbBnrtfvxu0pP")  # (\\p{..}: see structgen.unicode_props)


def _prescan(pattern: str, path: str) -> None:
    """Refuse the spellings ECMA-262 and Python's ``re`` read differently."""
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt.isalnum() and nxt not in _ALLOWED_ESCAPE_LETTERS:
                raise SchemaNotSupported("pattern", path, f"the escape \\{nxt} reads differently in ECMA-262 and Python")
            if nxt == "0" and pattern[i + 2 : i + 3].isdigit():
                raise SchemaNotSupported("pattern", path, "octal escapes")
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]":
                raise SchemaNotSupported("pattern", path, "'[]' and '[^]' read differently in ECMA-262 and Python")
            if pattern[i + 1 : i + 2] == "^":
                i += 1
        elif c == "{" and pattern[i + 1 : i + 2] == ",":
            raise SchemaNotSupported("pattern", path, "'{,n}' is a quantifier in Python but literal text in ECMA-262")
        i += 1


def _is_anchor(item: tuple, which: object) -> bool:
    return item[0] is _sre.AT and item[1] is which


_ENDS = (_sre.AT_BEGINNING, _sre.AT_END)


def _has_anchor(items: Iterable[tuple]) -> bool:
    for op, av in items:
        if op is _sre.AT and av in _ENDS:
            return True
        if op is _sre.BRANCH and any(_has_anchor(sub) for sub in av[1]):
            return True
        if op is _sre.SUBPATTERN and _has_anchor(av[3]):
            return True
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and _has_anchor(av[2]):
            return True
    return False


def _is_group(item: tuple) -> bool:
    op, av = item
    return op is _sre.BRANCH or (op is _sre.SUBPATTERN and not av[1] and not av[2])


def _split(items: list, path: str) -> list[tuple[bool, list, bool]]:
    """Alternatives of a pattern as (anchored at start, items, anchored at end)."""
    if len(items) == 1 and _is_group(items[0]):
        op, av = items[0]
        subs = av[1] if op is _sre.BRANCH else [av[3]]
        return [alt for sub in subs for alt in _split(list(sub), path)]
    start = end = False
    while items and _is_anchor(items[0], _sre.AT_BEGINNING):
        start, items = True, items[1:]
    while items and _is_anchor(items[-1], _sre.AT_END):
        end, items = True, items[:-1]
    if not _has_anchor(items):
        return [(start, items, end)]
    out = []
    if items and _is_group(items[-1]) and not _has_anchor(items[:-1]):
        for s2, core, e2 in _split([items[-1]], path):
            if s2 and items[:-1]:
                break
            out.append((start or s2, items[:-1] + core, end or e2))
        else:
            return out
    elif items and _is_group(items[0]) and not _has_anchor(items[1:]):
        for s2, core, e2 in _split([items[0]], path):
            if e2 and items[1:]:
                break
            out.append((start or s2, core + items[1:], end or e2))
        else:
            return out
    return [(False, items, False)]  # anchors inside: assertions of the translation (\A, \Z)


def _single_set(op: object, av: object, either: bool = False) -> Optional[Ranges]:
    """The decoded characters a one-character item matches under both engines (None: not one);
    ``either``: under one engine or the other (inside a negative look-around)."""
    if op is _sre.LITERAL:
        return ((av, av),)
    if op is _sre.NOT_LITERAL:
        return _complement(((av, av),))
    if op is _sre.ANY:
        return _complement(_chars("\n")) if either else _DOT
    if op is not _sre.IN:
        return None
    negate = bool(av) and av[0][0] is _sre.NEGATE
    if not either and not negate and all(iop is not _sre.CATEGORY or iav in _SUPERSET_CATEGORIES for iop, iav in av):
        # Python's \d and \w contain ECMA's: the intersection is the ECMA reading
        py_needed = False
    else:
        py_needed = True
    py: list[Ranges] = []
    ecma: list[Ranges] = []
    for iop, iav in av:
        if iop is _sre.NEGATE:
            continue
        if iop is _sre.LITERAL:
            both: Ranges = ((iav, iav),)
        elif iop is _sre.RANGE:
            both = (tuple(iav),)
        elif iop is _sre.CATEGORY and iav in _CATEGORIES:
            name, negated = _CATEGORIES[iav]
            e = _ECMA[name]
            p = _python_category(name) if py_needed else e
            py.append(_complement(p) if negated else p)
            ecma.append(_complement(e) if negated else e)
            continue
        else:
            return None
        py.append(both)
        ecma.append(both)
    p_set, e_set = _union(*py), _union(*ecma)
    if negate:
        p_set, e_set = _complement(p_set), _complement(e_set)
    return _union(p_set, e_set) if either else _intersect(p_set, e_set)



_ONE_CHAR_OPS = (_sre.LITERAL, _sre.NOT_LITERAL, _sre.ANY, _sre.IN)


def _width(items: Iterable[tuple]) -> tuple[int, Optional[int]]:
    """Fewest and most characters (None: unbounded) the parsed items match."""
    lo, hi = 0, 0
    for op, av in items:
        a: int
        b: Optional[int]
        if op in _ONE_CHAR_OPS:
            a, b = 1, 1
        elif op is _sre.BRANCH:
            widths = [_width(sub) for sub in av[1]]
            a = min(w[0] for w in widths)
            tops = [w[1] for w in widths]
            b = None if None in tops else max(t for t in tops if t is not None)
        elif op is _sre.SUBPATTERN:
            a, b = _width(av[3])
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            ia, ib = _width(av[2])
            a = ia * av[0]
            if ib == 0:
                b = 0
            elif ib is None or av[1] == _sre.MAXREPEAT:
                b = None
            else:
                b = ib * av[1]
        else:
            a, b = 0, 0
        lo += a
        hi = None if hi is None or b is None else hi + b
    return lo, hi


_WORD_ECMA = _ECMA["word"]
def _after_caret(items: list) -> Optional[list]:
    """``items`` without the ``^`` that every way through them starts with (None: not so)."""
    if not items:
        return None
    op, av = items[0]
    if op is _sre.AT and av is _sre.AT_BEGINNING:
        return items[1:]
    if op is _sre.SUBPATTERN and not av[1] and not av[2]:
        inner = _after_caret(list(av[3]))
        return None if inner is None else [(op, (av[0], av[1], av[2], inner)), *items[1:]]
    if op is _sre.BRANCH:
        alts = [_after_caret(list(sub)) for sub in av[1]]
        if any(a is None for a in alts):
            return None
        return [(op, (av[0], alts)), *items[1:]]
    return None


_LOOKS = {(1, False): "(?=", (1, True): "(?!", (-1, False): "(?<=", (-1, True): "(?<!"}


def has_assertions(regex: str) -> bool:
    """Whether a translated regex holds a look-around or ``\\A``/``\\Z``: they read the *whole*
    string, so its automaton is built on its own (not inside a larger regex's)."""
    return re.search(r"(?<!\\)(?:\\\\)*(?:\(\?<?[=!]|\\[AZ])", regex) is not None


class _Translator:
    """ECMA-262 items → a regex over the encoded string. Look-arounds are written as Python
    look-arounds over encoded units (a look-behind anchored at the string's start, ``\\A(?:CHAR)*X``,
    so it only ever starts on a unit boundary); ``^``/``$`` inside the pattern become ``\\A``/``\\Z``;
    ``\\b``/``\\B`` read ECMA's ASCII ``\\w``. Inside a negative look-around (``negative``) sets take
    the reading of *either* engine, so that the look-around fails wherever one engine's does."""

    def __init__(self, pattern: str, path: str) -> None:
        self.pattern = pattern
        self.path = path
        self.negative = False
        self.scope = ""  # inside a look-"ahead" / look-"behind"

    def direction(self, direction: str, what: str) -> None:
        """Refuse an assertion looking the other way than the look-around it sits in: the
        look-around's automaton reads only one side of its position."""
        if self.scope and self.scope != direction:
            raise self.refuse(f"{what} inside a look-{self.scope}")

    def behind(self, regex: str, negate: bool = False) -> str:
        return f"(?<{'!' if negate else '='}\\A(?:{CHAR})*{regex})"

    def boundary(self, non: bool) -> str:
        """``\\b`` (``\\B``): whether the characters on each side are ``\\w`` differs (is the same),
        over ECMA's ASCII ``\\w`` (Python's ``re`` reads it over Unicode; its ``\\w`` is too large a
        class to intersect here)."""
        if self.scope:
            raise self.refuse(f"a word boundary inside a look-{self.scope}")
        e = encode_set(_WORD_ECMA, self.path)
        if non:
            return f"(?:{self.behind(e)}(?={e})|{self.behind(e, True)}(?!{e}))"
        return f"(?:{self.behind(e)}(?!{e})|{self.behind(e, True)}(?={e}))"

    def assertion(self, op: object, av: object) -> str:
        if op is _sre.AT:
            if av is _sre.AT_BEGINNING:
                self.direction("behind", "'^'")
                return "\\A"
            if av is _sre.AT_END:  # Python's "$" also holds before a final newline
                self.direction("ahead", "'$'")
                return f"(?=(?:{encode_set(_chars(chr(10)))})?\\Z)" if self.negative else "\\Z"
            if av in (_sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY):
                return self.boundary(av is _sre.AT_NON_BOUNDARY)
            raise self.refuse(f"the anchor {av}")
        direction, sub = av  # type: ignore[misc]
        negate = op is _sre.ASSERT_NOT
        if direction > 0 and not self.scope:
            rest = _after_caret(list(sub))
            if rest is not None:  # (?=^X) is \A(?=X); (?!^X) holds off the start, or where (?!X) does
                inner = self.assertion(op, (direction, rest))
                return f"(?:\\A{inner}|(?<!\\A))" if negate else f"\\A{inner}"
        where = "ahead" if direction > 0 else "behind"
        self.direction(where, f"a look-{where}")
        saved = self.negative, self.scope
        self.negative ^= negate
        self.scope = where
        try:
            inner = self.seq(sub)
        finally:
            self.negative, self.scope = saved
        if inner is None:  # the body matches nothing: (?=X) never holds, (?!X) always does
            return "" if negate else "(?!)"
        if direction < 0:
            return self.behind(inner, negate)
        return f"{_LOOKS[(1, negate)]}{inner})"

    def refuse(self, what: str) -> SchemaNotSupported:
        return SchemaNotSupported("pattern", self.path, f"{self.pattern!r} uses {what}")

    def seq(self, items: Iterable[tuple]) -> Optional[str]:
        out = []
        for item in items:
            r = self.item(*item)
            if r is None:
                return None
            out.append(r)
        return "".join(out)

    def item(self, op: object, av: object) -> Optional[str]:
        s = _single_set(op, av, self.negative)
        if s is not None:
            return encode_set(s, self.path)
        if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            return self.assertion(op, av)
        if op is _sre.IN:
            raise self.refuse("an unsupported character class item")
        if op is _sre.BRANCH:
            alts = [r for r in (self.seq(sub) for sub in av[1]) if r is not None]  # type: ignore[index]
            return "(?:" + "|".join(alts) + ")" if alts else None
        if op is _sre.SUBPATTERN:
            _, add_flags, del_flags, sub = av  # type: ignore[misc]
            if add_flags or del_flags:
                raise self.refuse("inline flags")
            inner = self.seq(sub)
            return None if inner is None else f"(?:{inner})"
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
            lo, hi, sub = av  # type: ignore[misc]
            inner = self.seq(sub)
            if inner is None:
                return "" if lo == 0 else None
            return quantify(inner, lo, None if hi == _sre.MAXREPEAT else hi)
        names = {"GROUPREF": "a back-reference", "GROUPREF_EXISTS": "a conditional group",
                 "POSSESSIVE_REPEAT": "a possessive quantifier", "ATOMIC_GROUP": "an atomic group"}
        raise self.refuse(names.get(str(op), str(op)))

    def ir(self, item: tuple) -> tuple:
        """('fixed', regex, width) | ('rep', unit, lo, hi) | ('var', regex, lo, hi)."""
        op, av = item
        if op is _sre.SUBPATTERN and not av[1] and not av[2] and len(av[3]) == 1:
            return self.ir(av[3][0])  # ("(X*)" is "X*")
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and len(av[2]) == 1:
            sub = av[2][0]
            s = _single_set(*sub)
            if s is not None:
                unit = encode_set(s, self.path)
                if unit is None:
                    return ("fixed", "" if av[0] == 0 else None, 0)
                return ("rep", unit, av[0], None if av[1] == _sre.MAXREPEAT else av[1])
        regex = self.item(op, av)
        lo, hi = _width([item])
        return ("fixed", regex, lo) if lo == hi else ("var", regex, lo, hi)


def _reduce_free_ends(ir: list, start: bool, end: bool) -> list:
    """In an unanchored search, ``.* X{m,n}`` matches what ``.* X{m}`` does (and symmetrically)."""
    ir = list(ir)
    if not start:
        while len(ir) > 1 and ir[1][0] == "rep":
            if ir[1][2] == 0:
                del ir[1]
            else:
                ir[1] = ("fixed", None if ir[1][1] is None else quantify(ir[1][1], ir[1][2], ir[1][2]), ir[1][2])
                break
    if not end:
        while len(ir) > 1 and ir[-2][0] == "rep":
            if ir[-2][2] == 0:
                del ir[-2]
            else:
                ir[-2] = ("fixed", None if ir[-2][1] is None else quantify(ir[-2][1], ir[-2][2], ir[-2][2]), ir[-2][2])
                break
    merged: list = []
    for it in ir:
        if merged and it[0] == "rep" and merged[-1][0] == "rep" and merged[-1][1] == it[1]:
            prev = merged[-1]
            hi = None if prev[3] is None or it[3] is None else prev[3] + it[3]
            merged[-1] = ("rep", it[1], prev[2] + it[2], hi)
        else:
            merged.append(it)
    return merged


def _emit(ir: list, counts: dict[int, tuple[int, Optional[int]]]) -> str:
    out = []
    for i, it in enumerate(ir):
        if it[0] == "rep":
            lo, hi = counts.get(i, (it[2], it[3]))
            out.append(quantify(it[1], lo, hi))
        else:
            out.append(it[1])
    return "".join(out)


_MAX_LENGTH_SPLITS = 256


def _constrain(ir: list, min_len: int, max_len: Optional[int], t: _Translator) -> Optional[str]:
    """Concatenate the IR items, keeping only strings of min_len..max_len decoded characters."""
    if any(it[1] is None for it in ir):
        return None
    fixed = sum(it[2] for it in ir if it[0] == "fixed")
    reps = [i for i, it in enumerate(ir) if it[0] == "rep"]
    variables = [it for it in ir if it[0] == "var"]
    lo = fixed + sum(ir[i][2] for i in reps) + sum(v[2] for v in variables)
    his = [ir[i][3] for i in reps] + [v[3] for v in variables]
    hi = None if any(h is None for h in his) else fixed + sum(his)  # type: ignore[arg-type]
    if lo >= min_len and (max_len is None or (hi is not None and hi <= max_len)):
        return _emit(ir, {})
    if (max_len is not None and lo > max_len) or (hi is not None and hi < min_len):
        return None
    if variables:
        raise t.refuse("a variable-width group together with minLength/maxLength")
    need_lo = min_len - fixed
    need_hi = None if max_len is None else max_len - fixed
    if len(reps) == 1:
        (i,) = reps
        a = max(ir[i][2], need_lo)
        b = ir[i][3] if need_hi is None else need_hi if ir[i][3] is None else min(ir[i][3], need_hi)
        return None if b is not None and a > b else _emit(ir, {i: (a, b)})
    if len(reps) != 2:
        raise t.refuse("more than two repetitions together with minLength/maxLength")
    i, j = reps
    (m1, n1), (m2, n2) = ir[i][2:], ir[j][2:]
    top1 = n1 if need_hi is None else need_hi - m2 if n1 is None else min(n1, need_hi - m2)
    groups: list[tuple[int, Optional[int], int, Optional[int]]] = []
    k1 = m1
    while top1 is None or k1 <= top1:
        if need_hi is None and k1 >= need_lo - m2:
            groups.append((k1, top1, m2, n2))  # from here on any k2 in [m2, n2] is long enough
            break
        a2 = max(m2, need_lo - k1)
        b2 = n2 if need_hi is None else need_hi - k1 if n2 is None else min(n2, need_hi - k1)
        if b2 is None or a2 <= b2:
            if groups and groups[-1][1] == k1 - 1 and groups[-1][2:] == (a2, b2):
                groups[-1] = (groups[-1][0], k1, a2, b2)
            else:
                groups.append((k1, k1, a2, b2))
        if len(groups) > _MAX_LENGTH_SPLITS:
            raise t.refuse("a length range too wide to combine with its repetitions")
        k1 += 1
    alts = [_emit(ir, {i: (g[0], g[1]), j: (g[2], g[3])}) for g in groups]
    return "(?:" + "|".join(alts) + ")" if alts else None


@functools.lru_cache(maxsize=256)
def _parse(pattern: str, path: str) -> list:
    _prescan(pattern, path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = _sre_parse.parse(expand_properties(pattern, path))
    except re.error as e:
        raise SchemaNotSupported("pattern", path, f"{pattern!r} is not a Python regex: {e}") from e
    if parsed.state.flags & ~re.UNICODE:
        raise SchemaNotSupported("pattern", path, f"{pattern!r} sets regex flags")
    return list(parsed)


def pattern_regex(pattern: str, min_length: int = 0, max_length: Optional[int] = None, *, path: str = "") -> Optional[str]:
    """The contents (no quotes) of the JSON strings whose decoded value has a match of ``pattern``
    (ECMA-262, unanchored search) and ``min_length``..``max_length`` characters; None when no string does."""
    t = _Translator(pattern, path)
    alts = []
    for start, items, end in _split(_parse(pattern, path), path):
        ir = ([] if start else [("rep", CHAR, 0, None)]) + [t.ir(it) for it in items]
        ir += [] if end else [("rep", CHAR, 0, None)]
        r = _constrain(_reduce_free_ends(ir, start, end), min_length, max_length, t)
        if r is not None:
            alts.append(r)
    if not alts:
        return None
    return _alt(alts)


class _AutomatonMatcher:
    """``fullmatch`` by a byte automaton (for translations with look-arounds, which Python's
    ``re`` may refuse: its look-behinds must have a fixed width)."""

    def __init__(self, regex: str) -> None:
        from ..automata.regex import regex_to_dfa  # (imported here: the translation itself needs no automata)

        self.dfa = regex_to_dfa(regex)

    def fullmatch(self, text: str) -> Optional[bool]:
        return True if self.dfa.accepts(text.encode("utf-8", "surrogatepass")) else None


def _plain(items: Iterable[tuple]) -> bool:
    for op, av in items:
        if op in (_sre.LITERAL, _sre.NOT_LITERAL):
            continue
        if op is _sre.IN:
            if any(iop not in (_sre.LITERAL, _sre.RANGE, _sre.NEGATE) for iop, _ in av):
                return False
        elif op is _sre.BRANCH:
            if not all(_plain(sub) for sub in av[1]):
                return False
        elif op is _sre.SUBPATTERN:
            if av[1] or av[2] or not _plain(av[3]):
                return False
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
            if not _plain(av[2]):
                return False
        elif not (op is _sre.AT and av is _sre.AT_BEGINNING):
            return False
    return True


def pattern_language_is_python(pattern: str) -> bool:
    """Whether :func:`pattern_regex` reads ``pattern`` exactly as Python's ``re.search`` does (the
    engine ``jsonschema`` runs): literals, classes of literals and ranges, groups, alternations,
    repetitions and ``^`` only (no ``\\d``/``\\w``/``.``, whose readings differ, and no ``$``,
    which Python also matches before a final newline)."""
    try:
        return "\\p" not in pattern and "\\P" not in pattern and _plain(_parse(pattern, ""))
    except SchemaNotSupported:
        return False


@functools.lru_cache(maxsize=256)
def compiled_pattern(pattern: str) -> "re.Pattern[str] | _AutomatonMatcher":
    """``pattern`` translated, compiled to match the *encoded* contents of a JSON string."""
    r = pattern_regex(pattern)
    if r is not None and has_assertions(r):
        return _AutomatonMatcher(r)
    return re.compile("(?!)" if r is None else r)


# ---------------------------------------------------------------------------------------------
# Formats (ASCII, no characters JSON would escape: the encoded and decoded strings coincide)

_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
              r"|(?:0[13578]|1[02])-31)")
_DATE = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_TIME = (r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
         r"(?:Z|[+\-](?:[01][0-9]|2[0-3]):[0-5][0-9])")
_D = "[0-9]+"
_DUR_TIME = rf"T(?:{_D}H(?:{_D}M(?:{_D}S)?)?|{_D}M(?:{_D}S)?|{_D}S)"
_DURATION = rf"P(?:(?:{_D}D|{_D}M(?:{_D}D)?|{_D}Y(?:{_D}M(?:{_D}D)?)?)(?:{_DUR_TIME})?|{_DUR_TIME}|{_D}W)"
_HEX = "[0-9a-fA-F]"
_UUID = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}"


def _ipv6() -> str:
    h = f"{_HEX}{{1,4}}"

    def groups(n: int) -> str:  # n hextets separated by ':'
        return "" if n == 0 else h if n == 1 else f"{h}(?::{h}){{{n - 1}}}"

    alts = [f"(?:{h}:){{7}}{h}", f"(?:{h}:){{6}}{_IPV4}"]
    for k in range(8):  # k hextets before '::', at most 7 - k after it
        right = "" if k == 7 else f"(?:{h}(?::{h}){{0,{6 - k}}})?"
        alts.append(f"{groups(k)}::{right}")
    for k in range(6):  # with a dotted quad: at most 5 - k hextets between '::' and it
        alts.append(f"{groups(k)}::(?:{h}:){{0,{5 - k}}}{_IPV4}")
    return "(?:" + "|".join(alts) + ")"


def _label(n: int) -> str:
    """An LDH label of at most n characters, without "--" in positions 3-4 (reserved for
    A-labels, RFC 5891 4.2.3.1, which we do not decode)."""
    a, h = "[A-Za-z0-9]", "[A-Za-z0-9\\-]"
    return f"{a}(?:{a}|{h}{a}|{h}{h}{a}|{h}(?:{a}{h}|{h}{a}){h}{{0,{n - 5}}}{a})?"


# Under-approximations keeping the 253-character limit of RFC 1123 (and 254 for an address).
_HOSTNAME = f"(?:{_label(63)}(?:\\.{_label(63)}){{0,2}}|{_label(30)}(?:\\.{_label(30)}){{3,7}})"
_EMAIL_DOMAIN = f"(?:{_label(63)}(?:\\.{_label(63)})?|{_label(30)}(?:\\.{_label(30)}){{2,5}})"
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?\^_`{|}~\-]"
_EMAIL = rf"{_ATEXT}{{1,20}}(?:\.{_ATEXT}{{1,20}}){{0,2}}@{_EMAIL_DOMAIN}"
_PCT = f"%{_HEX}{{2}}"
_UNRESERVED_SUB = r"A-Za-z0-9\-._~!$&'()*+,;="
_PCHAR = f"(?:[{_UNRESERVED_SUB}:@]|{_PCT})"
_SEGMENT_NC = f"(?:[{_UNRESERVED_SUB}@]|{_PCT})"
_AUTHORITY = (f"(?:(?:[{_UNRESERVED_SUB}:]|{_PCT})*@)?"
              f"(?:\\[{_ipv6()}\\]|(?:[{_UNRESERVED_SUB}]|{_PCT})*)(?::[0-9]*)?")
_PATH_ABEMPTY = f"(?:/{_PCHAR}*)*"
_PATH_ABSOLUTE = f"/(?:{_PCHAR}+{_PATH_ABEMPTY})?"
_QUERY_FRAGMENT = f"(?:\\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_URI = (f"[A-Za-z][A-Za-z0-9+\\-.]*:(?://{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}"
        f"|{_PCHAR}+{_PATH_ABEMPTY})?{_QUERY_FRAGMENT}")
_RELATIVE_REF = (f"(?://{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}|{_SEGMENT_NC}+{_PATH_ABEMPTY})?"
                 f"{_QUERY_FRAGMENT}")

# RFC 6901: reference tokens of raw characters ("~" only as "~0" / "~1"). Characters JSON would
# escape (quote, backslash, controls) are left out, so the encoded and decoded strings coincide.
_JSON_POINTER = r'(?:/(?:[^"\\\x00-\x1f/~]|~[01])*)*'
# draft-handrews-relative-json-pointer-01: a non-negative integer, then "#" or a JSON pointer.
_RELATIVE_JSON_POINTER = f"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})"

_IDN_HOSTNAME = _HOSTNAME.replace("A-Za-z0-9", "a-z0-9")  # (IDNA 2008 disallows upper case)
_B64 = "[A-Za-z0-9+/]"
#: RFC 4648 base64 with padding (OpenAPI's ``byte``).
_BASE64 = f"(?:{_B64}{{4}})*(?:{_B64}{{2}}==|{_B64}{{3}}=)?"
# A regex valid in both ECMA-262 and Python: literal characters, ".", simple classes and one
# quantifier per atom (no escapes: a backslash would need JSON escaping), ^ and $ at the ends.
_REGEX_ATOM = r'(?:[^"\\\x00-\x1f^$.|?*+()\[\]{}]|\.|\[[A-Za-z0-9_]+\])'
_REGEX = rf"\^?(?:{_REGEX_ATOM}(?:[*+?]|\{{[0-9]{{1,3}}\}})?)*\$?"

#: Supported ``format`` values and their regexes (exact unless noted in the module docs).
FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}T{_TIME}",
    "duration": _DURATION,
    "uuid": _UUID,
    "ipv4": _IPV4,
    "ipv6": _ipv6(),
    "hostname": _HOSTNAME,
    "email": _EMAIL,
    "uri": _URI,
    "uri-reference": f"(?:{_URI}|{_RELATIVE_REF})",
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": _RELATIVE_JSON_POINTER,
    # under-approximations: ASCII URIs are IRIs, ASCII addresses and lower-case LDH names IDNs
    "iri": _URI,
    "iri-reference": f"(?:{_URI}|{_RELATIVE_REF})",
    "idn-email": _EMAIL,
    "idn-hostname": _IDN_HOSTNAME,
    "regex": _REGEX,
    # OpenAPI
    "byte": _BASE64,
}
#: Formats that constrain no string: OpenAPI's numeric formats (on numbers, ``int32`` /
#: ``int64`` are bounds: :data:`NUMBER_FORMATS`) and its UI hints.
FREE_STRING_FORMATS = frozenset({"int32", "int64", "float", "double", "binary", "password"})
#: Bounds of OpenAPI's integer formats, as ``(minimum, maximum)``.
NUMBER_FORMATS: dict[str, tuple[int, int]] = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def format_regex(name: str) -> Optional[str]:
    """The regex of a supported ``format``, None when unknown."""
    return FORMATS.get(name)


@functools.lru_cache(maxsize=None)
def compiled_format(name: str) -> "re.Pattern[str]":
    return re.compile(FORMATS[name])


@functools.lru_cache(maxsize=None)
def regex_width(regex: str) -> tuple[int, Optional[int]]:
    """Shortest and longest (None: unbounded) match of one of our regexes, in characters."""
    return _width(list(_sre_parse.parse(regex)))


def matches_only(regex: str, allowed: str) -> bool:
    """Whether every string ``regex`` (Python syntax) matches is made of characters in ``allowed``.

    Conservative: shorthands (``\\s``), negated classes, ``.`` and anything but plain
    characters, classes, groups, alternations and repetitions count as "no"."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            items = list(_sre_parse.parse(regex))
    except re.error:
        return False
    allowed_set = _chars(allowed)

    def within(s: Ranges) -> bool:
        return _union(s, allowed_set) == allowed_set

    def ok(items: Iterable[tuple]) -> bool:
        for op, av in items:
            if op is _sre.LITERAL:
                good = within(((av, av),))
            elif op is _sre.IN:
                good = all(
                    (iop is _sre.LITERAL and within(((iav, iav),))) or (iop is _sre.RANGE and within((tuple(iav),)))
                    for iop, iav in av
                )
            elif op is _sre.BRANCH:
                good = all(ok(sub) for sub in av[1])
            elif op is _sre.SUBPATTERN:
                good = ok(av[3])
            elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
                good = ok(av[2])
            else:
                good = False
            if not good:
                return False
        return True

    return ok(items)
