"""Python ``re`` patterns read exactly as Python reads them, as terms of an expression pool.

Lark compiles its terminals with Python's ``re`` (a ``str`` pattern, no ``re.ASCII``), which is
not quite structgen's regex syntax (:mod:`structgen.automata.regex`, whose ``\\d \\w \\s`` are
ASCII classes, as in JSON Schema). A Lark terminal is read here with Python's own parser
(``re._parser``), then every character set is computed as Python matches it:

- ``\\d``, ``\\w``, ``\\s`` (and ``\\D \\W \\S``, ``\\b \\B``) are Unicode classes, taken from this
  Python's ``re`` itself (the characters it matches, found once per process); with ``(?a)`` they
  are ASCII;
- under ``i`` (``re.IGNORECASE``) a character or class matches the characters Python's case
  folding relates it to (``k`` also matches KELVIN SIGN U+212A): the cased characters are tried
  against the compiled class, so the set is Python's, whatever the Unicode version;
- ``.`` is any character but ``\\n`` (any at all under ``s``); ``m`` changes ``^`` and ``$``; ``x``
  is read by Python's parser; ``u`` changes nothing; ``L`` (locale) is refused.

A pattern without anchors or look-arounds is built as terms directly (no regex text is printed to
be parsed again); one with them is written in structgen's regex syntax, the character sets
spelled out, and compiled by :func:`~structgen.automata.regex.regex_to_expr`. Back-references,
conditional groups, possessive quantifiers and atomic groups raise
:class:`~structgen.errors.RegexNotSupported`.

:func:`python_regex` also says whether the pattern repeats lazily (``*?``, ``+?``, ``??``,
``{m,n}?``) and whether it repeats greedily a variable number of times: Lark reads a terminal with
``re.match``, which for a lazy pattern stops at the shortest match.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> e, lazy, greedy = python_regex(r"\\d+", "", pool)
    >>> def accepts(e, text):
    ...     for b in text.encode():
    ...         e = pool.derive(e, b)
    ...     return pool.nullable(e)
    >>> accepts(e, "42"), accepts(e, "٤٢"), (lazy, greedy)      # Arabic-Indic digits are \\d in Python
    (True, True, (False, True))
    >>> accepts(python_regex("k", "i", pool)[0], "\\u212a")
    True
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

from ..automata.dfa import DEFAULT_MAX_STATES
from ..automata.expr import ExprPool
from ..automata.regex import regex_to_expr
from ..automata.utf8 import complement_intervals, merge_intervals, subtract_intervals
from ..errors import RegexNotSupported, RegexSyntaxError

try:  # Python >= 3.11
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c
    import sre_parse as _parser

__all__ = ["FLAGS", "python_regex"]

Ranges = tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive

#: Lark's regex flags, as ``re`` flags (``l``: locale, refused).
FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "u": re.UNICODE, "l": re.LOCALE}
_ALL: Ranges = ((0, 0x10FFFF),)
_NEWLINE: Ranges = ((10, 10),)
_CATEGORIES = {
    _c.CATEGORY_DIGIT: (r"\d", False), _c.CATEGORY_NOT_DIGIT: (r"\d", True),
    _c.CATEGORY_SPACE: (r"\s", False), _c.CATEGORY_NOT_SPACE: (r"\s", True),
    _c.CATEGORY_WORD: (r"\w", False), _c.CATEGORY_NOT_WORD: (r"\w", True),
}
_CATEGORY_TEXT = {
    _c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D", _c.CATEGORY_SPACE: r"\s", _c.CATEGORY_NOT_SPACE: r"\S",
    _c.CATEGORY_WORD: r"\w", _c.CATEGORY_NOT_WORD: r"\W",
}
_ANY_TEXT = "(?s:.)"


def python_regex(pattern: str, flags: str, pool: ExprPool, *, max_states: int = DEFAULT_MAX_STATES) -> tuple[int, bool, bool]:
    """``(term, lazy, greedy)``: the strings ``pattern`` matches as a whole under Lark-style
    ``flags`` (letters of ``imsxu``) as a term of ``pool``; whether it holds a lazy repetition,
    and whether it holds a greedy one of variable count."""
    re_flags = 0
    for f in flags:
        if f not in FLAGS:
            raise RegexSyntaxError(pattern, None, f"unknown flag {f!r} (Lark's flags are i, m, s, x, u, l)")
        re_flags |= FLAGS[f]
    if re_flags & re.LOCALE:
        raise RegexNotSupported(pattern, "the locale flag (l)")
    try:
        parsed = _parser.parse(pattern, re_flags)
    except re.error as e:
        raise RegexSyntaxError(pattern, e.pos, e.msg) from e
    except (OverflowError, RecursionError) as e:
        raise RegexSyntaxError(pattern, None, str(e)) from e
    reader = _Reader(pattern, pool)
    global_flags = parsed.state.flags
    if global_flags & re.LOCALE:
        raise RegexNotSupported(pattern, "the locale flag (?L)")
    if reader.has_assertions(parsed):
        reader.check_edges(parsed, True, True)
        text = reader.text(parsed, global_flags)
        try:
            term = regex_to_expr(text, pool, max_states=max_states)
        except RegexNotSupported as e:
            raise RegexNotSupported(pattern, e.construct) from e
    else:
        term = reader.term(parsed, global_flags)
    return term, reader.lazy, reader.greedy


class _Reader:
    """One pattern's walk: terms or regex text, and what its repetitions are."""

    def __init__(self, pattern: str, pool: ExprPool) -> None:
        self.pattern = pattern
        self.pool = pool
        self.lazy = False
        self.greedy = False

    def refuse(self, op: Any) -> RegexNotSupported:
        what = {
            _c.GROUPREF: "a back-reference", _c.GROUPREF_EXISTS: "a conditional group",
        }.get(op, "a possessive quantifier or an atomic group" if str(op) in ("POSSESSIVE_REPEAT", "ATOMIC_GROUP") else str(op))
        return RegexNotSupported(self.pattern, what)

    def has_assertions(self, sub: Any) -> bool:
        for op, av in sub:
            if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
                return True
            if op == _c.BRANCH and any(self.has_assertions(p) for p in av[1]):
                return True
            if op == _c.SUBPATTERN and self.has_assertions(av[3]):
                return True
            if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and self.has_assertions(av[2]):
                return True
        return False

    def check_edges(self, sub: Any, at_start: bool, at_end: bool) -> None:
        """Refuse an assertion that would look outside the terminal: a look-ahead, ``$``, ``\\Z``
        or ``\\b`` where the rest of the terminal may be empty, a look-behind, ``^``, ``\\A`` or
        ``\\b`` where what comes before it in the terminal may be empty. Read within the
        terminal's own text they would always see its end (or start), so their purpose, which is
        the text around the terminal, would be silently lost."""
        items = list(sub)
        widths = [_min_width(op, av) for op, av in items]
        for k, (op, av) in enumerate(items):
            before = at_start and not any(widths[:k])
            after = at_end and not any(widths[k + 1 :])
            edge = None
            if op == _c.AT:
                if av in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING) and before:
                    edge = "an anchor ^ or \\A at its start"
                elif av in (_c.AT_END, _c.AT_END_STRING) and after:
                    edge = "an anchor $ or \\Z at its end"
                elif av in (_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY) and (before or after):
                    edge = "a word boundary \\b or \\B at its start or end"
            elif op in (_c.ASSERT, _c.ASSERT_NOT):
                if av[0] == 1 and after:
                    edge = "a look-ahead at its end"
                elif av[0] == -1 and before:
                    edge = "a look-behind at its start"
            elif op == _c.BRANCH:
                for p in av[1]:
                    self.check_edges(p, before, after)
            elif op == _c.SUBPATTERN:
                self.check_edges(av[3], before, after)
            elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
                self.check_edges(av[2], before, after)
            if edge is not None:
                raise RegexNotSupported(self.pattern, f"{edge}, which would look at the text around the terminal "
                                        "(structgen reads a terminal's look-arounds within its own text)")

    def note_repeat(self, op: Any, lo: int, hi: int) -> None:
        if op == _c.MIN_REPEAT:
            self.lazy = True
        elif lo != hi:
            self.greedy = True

    # -- character sets --------------------------------------------------------------------------

    def charset(self, op: Any, av: Any, flags: int) -> Ranges:
        """The code points one character item (LITERAL, NOT_LITERAL, ANY, IN) matches."""
        if op == _c.ANY:
            return _ALL if flags & re.DOTALL else complement_intervals(_NEWLINE)
        if op == _c.LITERAL or op == _c.NOT_LITERAL:
            items = [(_c.LITERAL, av)] if op == _c.LITERAL else [(_c.NEGATE, None), (_c.LITERAL, av)]
        else:
            items = av
        return _class_ranges(tuple((o, a) for o, a in items), flags & (re.IGNORECASE | re.ASCII))

    # -- terms -----------------------------------------------------------------------------------

    def term(self, sub: Any, flags: int) -> int:
        pool = self.pool
        parts = []
        for op, av in sub:
            if op in (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN):
                parts.append(pool.code_points(self.charset(op, av, flags)))
            elif op == _c.BRANCH:
                parts.append(pool.alt([self.term(p, flags) for p in av[1]]))
            elif op == _c.SUBPATTERN:
                parts.append(self.term(av[3], (flags | av[1]) & ~av[2]))
            elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
                lo, hi, p = av
                self.note_repeat(op, lo, hi)
                parts.append(pool.repeat(self.term(p, flags), lo, None if hi == _c.MAXREPEAT else hi))
            else:
                raise self.refuse(op)
        return pool.concat(parts)

    # -- regex text (patterns with anchors and look-arounds) ---------------------------------------

    def text(self, sub: Any, flags: int) -> str:
        out = []
        for op, av in sub:
            if op in (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN):
                out.append(_class_text(self.charset(op, av, flags)))
            elif op == _c.BRANCH:
                out.append("(?:" + "|".join(self.text(p, flags) for p in av[1]) + ")")
            elif op == _c.SUBPATTERN:
                out.append("(?:" + self.text(av[3], (flags | av[1]) & ~av[2]) + ")")
            elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
                lo, hi, p = av
                self.note_repeat(op, lo, hi)
                out.append("(?:" + self.text(p, flags) + ")" + ("{%d,}" % lo if hi == _c.MAXREPEAT else "{%d,%d}" % (lo, hi)))
            elif op == _c.AT:
                out.append(self.anchor(av, flags))
            elif op in (_c.ASSERT, _c.ASSERT_NOT):
                direction, p = av
                mark = ("=" if op == _c.ASSERT else "!") if direction == 1 else ("<=" if op == _c.ASSERT else "<!")
                out.append(f"(?{mark}" + self.text(p, flags) + ")")
            else:
                raise self.refuse(op)
        return "".join(out)

    def anchor(self, at: Any, flags: int) -> str:
        start, end = f"(?<!{_ANY_TEXT})", f"(?!{_ANY_TEXT})"
        if at == _c.AT_BEGINNING_STRING:
            return start
        if at == _c.AT_END_STRING:
            return end
        if at == _c.AT_BEGINNING:
            return f"(?:{start}|(?<=\\n))" if flags & re.MULTILINE else start
        if at == _c.AT_END:
            return f"(?=\\n|{end})" if flags & re.MULTILINE else f"(?=\\n?{end})"
        word = _class_text(_category(r"\w", bool(flags & re.ASCII)))
        if at == _c.AT_BOUNDARY:
            return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
        if at == _c.AT_NON_BOUNDARY:
            return f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"
        raise self.refuse(at)


def _min_width(op: Any, av: Any) -> int:
    """The fewest characters one item of a parse matches."""
    sub = _parser.SubPattern(_parser.State(), [(op, av)])
    return int(sub.getwidth()[0])


def _char_escape(cp: int) -> str:
    if cp < 0x100:
        return "\\x%02x" % cp
    if cp < 0x10000:
        return "\\u%04x" % cp
    return "\\U%08x" % cp


def _class_text(ranges: Ranges) -> str:
    """A bracket class of ``ranges`` in structgen's regex syntax (``(?!)`` when empty)."""
    ranges = tuple((a, b) for a, b in ranges if not (0xD800 <= a and b <= 0xDFFF))
    if not ranges:
        return "(?!)"
    body = "".join(_char_escape(a) if a == b else f"{_char_escape(a)}-{_char_escape(b)}" for a, b in ranges)
    return f"[{body}]"


@functools.lru_cache(maxsize=None)
def _all_characters() -> str:
    """Every code point but the surrogates, in order (for asking ``re`` which it matches)."""
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))


@functools.lru_cache(maxsize=None)
def _category(name: str, ascii_only: bool) -> Ranges:
    """The code points Python's ``re`` matches with ``\\d``, ``\\w`` or ``\\s`` (``name``)."""
    if ascii_only:
        return tuple(merge_intervals((ord(c), ord(c)) for c in map(chr, range(128)) if re.fullmatch(name, c, re.ASCII)))
    found = []
    text = _all_characters()
    for m in re.finditer(name + "+", text):
        lo, hi = ord(text[m.start()]), ord(text[m.end() - 1])
        found.append((lo, hi))  # (a run of consecutive code points: the text is in order, gaps aside)
    # runs cross the surrogate gap only if both ends match; split at it to stay exact
    out = []
    for lo, hi in found:
        if lo < 0xD800 < hi:
            out += [(lo, 0xD7FF), (0xE000, hi)]
        else:
            out.append((lo, hi))
    return tuple(merge_intervals(out))


@functools.lru_cache(maxsize=None)
def _cased() -> tuple[int, ...]:
    """The code points case folding may relate to others (a superset is fine: each is tried)."""
    try:
        import _sre  # type: ignore[import-not-found]  # (CPython's module: typeshed has no stub for it)

        iscased: Callable[[int], bool] = _sre.unicode_iscased
    except (ImportError, AttributeError):  # pragma: no cover - not CPython
        iscased = lambda cp: chr(cp).lower() != chr(cp) or chr(cp).upper() != chr(cp)  # noqa: E731
    return tuple(cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and iscased(cp))


def _item_text(op: Any, av: Any) -> str:
    if op == _c.NEGATE:
        return "^"
    if op == _c.LITERAL:
        return "\\U%08x" % av
    if op == _c.RANGE:
        return "\\U%08x-\\U%08x" % av
    if op == _c.CATEGORY:
        return _CATEGORY_TEXT[av]
    raise RegexNotSupported("", f"the class item {op}")


@functools.lru_cache(maxsize=4096)
def _class_ranges(items: tuple[tuple[Any, Any], ...], flags: int) -> Ranges:
    """The code points a bracket class of Python's parse (``items``) matches under ``flags``
    (only ``re.IGNORECASE`` and ``re.ASCII`` matter)."""
    negated = False
    ranges: list[tuple[int, int]] = []
    for op, av in items:
        if op == _c.NEGATE:
            negated = True
        elif op == _c.LITERAL:
            ranges.append((av, av))
        elif op == _c.RANGE:
            ranges.append(av)
        elif op == _c.CATEGORY:
            name, inverted = _CATEGORIES[av]
            cat = _category(name, bool(flags & re.ASCII))
            ranges.extend(complement_intervals(cat) if inverted else cat)
        else:
            raise RegexNotSupported("", f"the class item {op}")
    plain = tuple(merge_intervals(ranges))
    if negated:
        plain = complement_intervals(plain)
    if not flags & re.IGNORECASE:
        return plain
    # Under IGNORECASE a character that case folding leaves alone matches as without the flag
    # (Python lowers the character, and an uncased one lowers to itself); each cased one is
    # asked of the compiled class.
    compiled = re.compile("[" + "".join(_item_text(op, av) for op, av in items) + "]", flags)
    cased = _cased()
    matched = [cp for cp in cased if compiled.fullmatch(chr(cp))]
    cased_ranges = merge_intervals((cp, cp) for cp in cased)
    uncased_plain = subtract_intervals(plain, cased_ranges)
    return tuple(merge_intervals(list(uncased_plain) + [(cp, cp) for cp in matched]))
