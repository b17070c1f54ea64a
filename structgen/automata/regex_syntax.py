"""The syntax of the regex API: Python ``re`` plus what the ``regex`` module adds that an
automaton can enforce, rewritten into the plain syntax that both Python's parser and
interegular read.

:func:`plain_syntax` is the first step of :func:`structgen.automata.regex.parse_regex`. It rewrites

* ``\\uXXXX``, ``\\UXXXXXXXX``, ``\\N{NAME}`` and octal escapes (Python ``re`` escapes that
  interegular does not read, or misreads: ``\\0``) into the character itself (``\\xHH`` up to
  U+00FF, letters aside); a surrogate code point has no UTF-8 form and raises
  :class:`RegexNotSupported`;
* ``\\p{..}`` / ``\\P{..}`` (also ``\\pL``, ``\\p{^L}``, loose names such as ``\\p{letter}``), as the
  ``regex`` module reads them (Unicode, whatever the ASCII classes ``\\d \\w \\s`` do), into a
  character class, through :mod:`structgen.automata.unicode_props`: general categories, ``Any``,
  ``ASCII`` and ``Assigned``, each taken among the code points this Python's Unicode database
  assigns (sound whichever Unicode version the reader has). Scripts and other properties, and
  a property inside a negated class (``[^\\p{L}]``: write ``\\P{L}``), raise
  :class:`RegexNotSupported`;
* POSIX classes inside a class (``[[:alpha:]]``, ``[[:^digit:]]``), as the ``regex`` module reads
  them with its ASCII flag, the reading that matches the ASCII ``\\d \\w \\s``: ``[:alpha:]`` is
  ``[A-Za-z]``. An unknown name raises :class:`RegexSyntaxError`;
* inside a class, a literal ``[`` and doubled ``&& ~~ || --`` (Python warns that a future
  version may read them as set operations; both ``re`` and the ``regex`` module read them as
  literals today), escaped so that no ``FutureWarning`` leaks;
* comments ``(?#...)``, dropped (interegular cannot read them); the ASCII flag ``(?a)``, dropped
  (``\\d \\w \\s`` are ASCII classes here anyway), and the Unicode flag ``(?u)``, refused.

Everything else is copied as it is. Positions in the rewritten text map back to the pattern's
(:class:`Spelled`), so syntax errors name the user's position.

>>> plain_syntax(r"\\u00e9+[[:digit:]]").text
'\\\\xe9+[\\\\x30-\\\\x39]'
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Optional

from ..errors import RegexNotSupported, RegexSyntaxError
from .unicode_props import property_set
from .utf8 import merge_intervals, subtract_intervals

__all__ = ["POSIX_CLASSES", "Spelled", "is_plain", "plain_syntax"]

Ranges = tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive

_MAX = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)

#: The POSIX classes of the ``regex`` module, read with its ASCII flag.
POSIX_CLASSES: dict[str, Ranges] = {
    "alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
    "alpha": ((0x41, 0x5A), (0x61, 0x7A)),
    "ascii": ((0x00, 0x7F),),
    "blank": ((0x09, 0x09), (0x20, 0x20)),
    "cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    "digit": ((0x30, 0x39),),
    "graph": ((0x21, 0x7E),),
    "lower": ((0x61, 0x7A),),
    "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    "space": ((0x09, 0x0D), (0x20, 0x20)),
    "upper": ((0x41, 0x5A),),
    "word": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
    "xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
}

# Anything this module may rewrite (a pattern without any is returned as it is: the regexes
# structgen writes itself are long and never need it). A false alarm only costs a scan.
_ESCAPE_CANDIDATES = re.compile(r"\\[pPuUN0-7]|\\[dDwWsS]-|-\\[dDwWsS]")
_TEXT_CANDIDATES = re.compile(r"\[:|\[\^?\]|\[\^?[^\]]*\[|\(\?#|\(\?[iLmsux]*[au]|--|&&|~~|\|\|")
_ESCAPED_CHAR = re.compile(r"\\.", re.DOTALL)


def _may_need_rewriting(pattern: str) -> bool:
    if "\\" in pattern:
        pattern = pattern.replace("\\\\", "")  # (an escaped backslash never starts an escape)
        if _ESCAPE_CANDIDATES.search(pattern):
            return True
        pattern = _ESCAPED_CHAR.sub("", pattern)  # (an escaped character is a literal)
    return _TEXT_CANDIDATES.search(pattern) is not None


_FLAGS = re.compile(r"\(\?([aiLmsux]*[au][aiLmsux]*)(?:-([imsx]+))?([:)])")
_POSIX = re.compile(r"\[:(\^?)([A-Za-z]+):\]")
_HEX = "0123456789abcdefABCDEF"
_OCTAL = "01234567"


@dataclass
class Spelled:
    """A pattern rewritten by :func:`plain_syntax`: ``text``, and where its pieces came from."""

    text: str
    # (start in text, start in the pattern, copied verbatim?) of each piece, in order
    pieces: list[tuple[int, int, bool]] = field(default_factory=list)

    def position(self, pos: Optional[int]) -> Optional[int]:
        """The pattern's position of ``text[pos]`` (for error messages)."""
        if pos is None or not self.pieces:
            return pos
        k = bisect.bisect_right(self.pieces, (pos, float("inf"), True)) - 1
        if k < 0:
            return pos
        start, origin, verbatim = self.pieces[k]
        return origin + (pos - start) if verbatim else origin


def is_plain(pattern: str) -> bool:
    """Whether :func:`plain_syntax` surely leaves ``pattern`` as it is (no escape or class it
    rewrites; a quick look, ``False`` where unsure).

    >>> is_plain(r"[a-z]+\\d"), is_plain(r"\\p{L}"), is_plain("[[:alpha:]]")
    (True, False, False)
    """
    return not _may_need_rewriting(pattern)


def plain_syntax(pattern: str) -> Spelled:
    """``pattern`` in the syntax both Python's parser and interegular read (see the module docs).

    >>> plain_syntax(r"\\p{Zl}|\\N{EM DASH}").text
    '[\\u2028]|—'
    """
    if not _may_need_rewriting(pattern):
        return Spelled(pattern)
    return _Rewriter(pattern).run()


class _Rewriter:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.out: list[str] = []
        self.pieces: list[tuple[int, int, bool]] = []
        self.size = 0

    # -- output --------------------------------------------------------------------------------

    def copy(self, i: int, j: int) -> None:
        if i < j:
            self.pieces.append((self.size, i, True))
            self.out.append(self.pattern[i:j])
            self.size += j - i

    def put(self, text: str, at: int) -> None:
        if text:
            self.pieces.append((self.size, at, False))
            self.out.append(text)
            self.size += len(text)

    def run(self) -> Spelled:
        p, n, i = self.pattern, len(self.pattern), 0
        while i < n:
            j = i
            while j < n and p[j] not in "\\[(":
                j += 1
            self.copy(i, j)
            i = j
            if i >= n:
                break
            c = p[i]
            if c == "\\":
                i = self.escape_outside(i)
            elif c == "[":
                i = self.char_class(i)
            elif _FLAGS.match(p, i):
                i = self.flags(i)
            elif p.startswith("(?#", i):  # a comment: dropped, as Python's parser drops it
                end = p.find(")", i)
                if end < 0:  # unterminated: left for Python's parser to report
                    self.copy(i, n)
                    break
                i = end + 1
            else:
                self.copy(i, i + 1)
                i += 1
        return Spelled("".join(self.out), self.pieces)

    def flags(self, i: int) -> int:
        """A flag group: ``a`` (ASCII classes: what ``\\d \\w \\s`` are here anyway) dropped;
        ``u`` (Unicode classes) refused."""
        m = _FLAGS.match(self.pattern, i)
        assert m is not None
        on, off, end = m.group(1), m.group(2) or "", m.group(3)
        if "u" in on:
            raise RegexNotSupported(
                self.pattern, "the Unicode flag (?u) (\\d \\w \\s are ASCII classes here, as with (?a))", i
            )
        on = on.replace("a", "")
        if on or off or end == ":":
            self.put(f"(?{on}{'-' + off if off else ''}{end}", i)
        return m.end()

    # -- escapes -------------------------------------------------------------------------------

    def code_point(self, i: int, in_class: bool) -> tuple[Optional[int], int]:
        """The code point of a ``\\u``, ``\\U``, ``\\N{..}`` or octal escape at ``i`` and its end;
        None for any other escape, and for a malformed one (Python's parser then reports it)."""
        p = self.pattern
        kind = p[i + 1 : i + 2]
        if kind and kind in _OCTAL:  # (as Python reads them: \0, \0NN, \NNN; inside a class \N too)
            j = i + 1
            while j < min(len(p), i + 4) and p[j] in _OCTAL:
                j += 1
            if (in_class or kind == "0" or j == i + 4) and int(p[i + 1 : j], 8) <= 0o377:
                return int(p[i + 1 : j], 8), j
            return None, i + 2
        if kind in ("u", "U"):
            size = 4 if kind == "u" else 8
            digits = p[i + 2 : i + 2 + size]
            if len(digits) == size and all(d in _HEX for d in digits) and int(digits, 16) <= _MAX:
                cp = int(digits, 16)
                if _SURROGATES[0] <= cp <= _SURROGATES[1]:
                    raise RegexNotSupported(
                        p, f"the surrogate code point \\{kind}{digits} (UTF-8 text cannot contain one)", i
                    )
                return cp, i + 2 + size
        elif kind == "N" and p[i + 2 : i + 3] == "{":
            end = p.find("}", i + 3)
            if end > 0:
                try:
                    return ord(unicodedata.lookup(p[i + 3 : end])), end + 1
                except (KeyError, TypeError):
                    pass
        return None, i + 2

    def escape_end(self, i: int, in_class: bool) -> int:
        """Where a plain escape at ``i`` ends (``\\xHH``, octal digits, else two characters)."""
        p = self.pattern
        kind = p[i + 1 : i + 2]
        if kind == "x" and len(p) >= i + 4 and all(d in _HEX for d in p[i + 2 : i + 4]):
            return i + 4
        if kind in _OCTAL and (in_class or kind == "0"):
            j = i + 2
            while j < min(len(p), i + 4) and p[j] in _OCTAL:
                j += 1
            return j
        return min(len(p), i + 2)

    def escape_outside(self, i: int) -> int:
        p = self.pattern
        if p[i + 1 : i + 2] in ("p", "P"):
            ranges, end = self.property(i, negated_class=False)
            self.put(_class_text(ranges, False), i)
            return end
        cp, end = self.code_point(i, in_class=False)
        if cp is None:
            end = self.escape_end(i, in_class=False)
            self.copy(i, end)
        else:
            self.put(_char(cp), i)
        return end

    def property(self, i: int, negated_class: bool) -> tuple[Ranges, int]:
        """The code points of a ``\\p``/``\\P`` escape at ``i`` (surrogates left out), and its end."""
        p = self.pattern
        negated = p[i + 1] == "P"
        if p[i + 2 : i + 3] == "{":
            end = p.find("}", i + 3)
            if end < 0:
                raise RegexSyntaxError(p, i, "missing } after \\p{")
            name, end = p[i + 3 : end], end + 1
        elif p[i + 2 : i + 3].isalpha():
            name, end = p[i + 2], i + 3
        else:
            raise RegexSyntaxError(p, i, "\\p and \\P need a property name: \\p{L} or \\pL")
        spelled = p[i:end]
        if name.startswith("^"):
            name, negated = name[1:], not negated
        if negated_class:
            raise RegexNotSupported(
                p, f"the Unicode property {spelled} inside a negated class (write \\P{{..}} for \\p{{..}} "
                "outside a class instead of [^\\p{..}])", i,
            )
        ranges = _property_ranges(name, negated)
        if ranges is None:
            raise RegexNotSupported(
                p, f"the Unicode property {spelled} (general categories such as \\p{{L}} or \\p{{Lu}}, and Any, "
                "ASCII, Assigned, White_Space, Graph and Print are supported; scripts and other properties are not)", i,
            )
        return ranges, end

    # -- character classes ---------------------------------------------------------------------

    def char_class(self, i: int) -> int:
        """Rewrite the class starting at ``i``; returns where it ends."""
        p, n = self.pattern, len(self.pattern)
        j = i + 1
        negated = p[j : j + 1] == "^"
        if negated:
            j += 1
        items: list[tuple[str, int]] = []  # (text, origin) of the class's body
        complements: list[tuple[Ranges, int]] = []  # negated POSIX classes ([:^alpha:])
        first = True
        while True:
            if j >= n:  # unterminated: copied as it is, for Python's parser to report
                self.copy(i, n)
                return n
            if p[j] == "]" and not first:
                break
            start = j
            j, text, single, posix = self.class_item(j, negated, range_end=False)
            self.add_item(items, complements, text, posix, start)
            first = False
            if p[j : j + 1] == "-" and j + 1 < n and p[j + 1] != "]":
                if not single:  # (the regex module reads a "-" next to a set as a literal)
                    items.append(("\\-", j))
                    j += 1
                    continue
                end_at = j + 1
                j, end_text, end_single, end_posix = self.class_item(end_at, negated, range_end=True)
                if end_single:  # a range: its start joins its end
                    text = items.pop()[0]
                    items.append((f"{text}-{end_text}", start))
                else:
                    items.append(("\\-", end_at - 1))
                    self.add_item(items, complements, end_text, end_posix, end_at)
        end = j + 1
        if complements:
            if items:
                raise RegexNotSupported(
                    p, "a negated POSIX class such as [:^alpha:] beside other items of a class "
                    "(write the class with [^...] instead)", complements[0][1],
                )
            common = complements[0][0]
            for ranges, _ in complements[1:]:
                common = _intersect(common, ranges)
            self.put(_class_text(common, not negated), i)
            return end
        items = [(text, at) for text, at in items if text]  # (an empty property adds nothing)
        if not items:
            self.put(_class_text((), negated), i)
            return end
        self.put("[" + ("^" if negated else ""), i)
        for text, at in items:
            self.put(text, at)
        self.put("]", j)
        return end

    @staticmethod
    def add_item(
        items: list[tuple[str, int]], complements: list[tuple[Ranges, int]], text: str,
        posix: Optional[tuple[Ranges, bool]], at: int,
    ) -> None:
        if posix is not None and posix[1]:
            complements.append((posix[0], at))
        else:
            items.append((text, at))

    def class_item(
        self, j: int, negated_class: bool, range_end: bool
    ) -> tuple[int, str, bool, Optional[tuple[Ranges, bool]]]:
        """One item of a class at ``j``: (its end, its text, whether it is one character, the
        ranges and negation of a POSIX class)."""
        p = self.pattern
        c = p[j]
        if c == "\\":
            kind = p[j + 1 : j + 2]
            if kind in ("p", "P"):
                ranges, end = self.property(j, negated_class)
                return end, _ranges_text(ranges), False, None
            cp, end = self.code_point(j, in_class=True)
            if cp is not None:
                return end, _char(cp), True, None
            end = self.escape_end(j, in_class=True)
            return end, p[j:end], kind not in tuple("dDwWsS"), None
        if c == "[":
            m = _POSIX.match(p, j)
            if m:
                name = m.group(2)
                if name not in POSIX_CLASSES:
                    raise RegexSyntaxError(
                        p, j, f"unknown POSIX class [:{name}:] (known: {', '.join(sorted(POSIX_CLASSES))})"
                    )
                ranges = POSIX_CLASSES[name]
                return m.end(), _ranges_text(ranges), False, (ranges, m.group(1) == "^")
            return j + 1, "\\[", True, None
        if c == "]":  # (only as the first item: a literal)
            return j + 1, "\\]", True, None
        if (range_end and c == "-") or (c in "-&~|" and p[j + 1 : j + 2] == c):
            return j + 1, "\\" + c, True, None
        return j + 1, c, True, None


# ---------------------------------------------------------------------------------------------
# Code points and their spellings


def _char(cp: int) -> str:
    """One code point as both parsers read it, in a class or outside: an ASCII letter as it is,
    anything else up to U+00FF as ``\\xHH`` (a raw digit could extend a quantifier, a raw ``]``
    end a class), anything above raw (never special)."""
    if cp <= 0xFF:
        ch = chr(cp)
        return ch if ch.isascii() and ch.isalpha() else f"\\x{cp:02x}"
    return chr(cp)


def _ranges_text(ranges: Ranges) -> str:
    return "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in ranges)


def _class_text(ranges: Ranges, negated: bool) -> str:
    """A whole class of ``ranges`` (of their complement when ``negated``), valid when empty too."""
    if not ranges:
        return "(?s:.)" if negated else "(?:(?!))"
    return "[" + ("^" if negated else "") + _ranges_text(ranges) + "]"


def _minus(a: Ranges, b: Ranges) -> Ranges:
    """``a`` without ``b`` (either in any order, overlapping or not)."""
    return tuple(subtract_intervals(merge_intervals(a), merge_intervals(b)))


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    return _minus(a, _minus(((0, _MAX),), b))


def _loose_names(name: str) -> list[str]:
    """Spellings of a property name to try, as the ``regex`` module matches names loosely
    (case, spaces, ``-`` and ``_`` ignored): ``letter`` → ``Letter``, ``lu`` → ``Lu``."""
    out = [name]
    if "=" in name:
        key, value = name.split("=", 1)
        if re.sub(r"[\s_-]", "", key).lower() in ("generalcategory", "gc"):
            out += [f"General_Category={v}" for v in _loose_names(value.strip())]
        return out
    words = [w for w in re.split(r"[\s_-]+", name) if w]
    out.append("_".join(w[:1].upper() + w[1:].lower() for w in words))
    if len(name) <= 2:
        out.append(name[:1].upper() + name[1:].lower())
    out.append(name.lower())  # (digit, punct, cntrl)
    return out


def _property_ranges(name: str, negated: bool) -> Optional[Ranges]:
    for candidate in _loose_names(name):
        ranges = property_set(candidate, negated)
        if ranges is not None:
            return _minus(ranges, (_SURROGATES,))
    return None
