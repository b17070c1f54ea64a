"""ECMA-262 ``pattern`` → the regex of the JSON strings it matches (over the *encoded* contents).

A ``pattern`` (ECMA-262, matched against the decoded string, unanchored) is read with Python's own
regex parser and re-emitted unit by unit (a unit is one encoded character, see
:mod:`.regex_text`): ``"`` becomes ``\\"``, a newline ``\\n`` or ``\\u000a``. Where ECMA-262 and
Python's ``re`` (what ``jsonschema`` runs) read a construct differently, each character set is the
intersection of both readings (``\\d`` is ``[0-9]``, ``.`` excludes CR and U+2028/U+2029; inside
a negative look-around, the union), so an accepted string satisfies the pattern under either
engine; ``\\b``/``\\B`` read ECMA's ASCII ``\\w``. Look-arounds and ``^``/``$`` inside the pattern
are written as Python look-arounds over encoded units (a look-behind anchored at the string's
start, so it only starts on a unit boundary): such a translation reads the whole string, and is
compiled to its own automaton (:func:`has_assertions`). Unicode property classes (``\\p{L}``,
``\\P{Lu}``, ECMA-262 with the ``u`` flag) are expanded into plain classes first
(:mod:`structgen.automata.unicode_props`). Constructs with no exact regular translation raise
:class:`SchemaNotSupported`.

>>> pattern_regex("^a[0-9]$")
'a[0-9]'
>>> bool(compiled_pattern("^a+$").fullmatch("aaa"))
True
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Literal, Optional, Union

from ..automata.regex import regex_to_dfa
from ..automata.unicode_props import PLACEHOLDER_FIRST, expand_properties, spelled_dotall, unnamed_groups
from ..errors import ConstraintError, SchemaNotSupported
from .charsets import (
    CATEGORIES,
    DOT,
    ECMA,
    SUPERSET_CATEGORIES,
    Ranges,
    chars,
    complement,
    encode_set,
    intersect,
    python_category,
    union,
)
from .python_regex import Item, fill_placeholders, parse_items, sre, width
from .regex_text import CHAR, alt, quantify

__all__ = ["compiled_pattern", "has_assertions", "pattern_regex"]


_ALLOWED_ESCAPE_LETTERS = set("dDwWsSbBnrtfvxu0pP")  # (\\p{..}: see structgen.automata.unicode_props)


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


def _is_anchor(item: Item, which: object) -> bool:
    return item[0] is sre.AT and item[1] is which


_ENDS = (sre.AT_BEGINNING, sre.AT_END)


def _has_anchor(items: Iterable[Item]) -> bool:
    for op, av in items:
        if op is sre.AT and av in _ENDS:
            return True
        if op is sre.BRANCH and any(_has_anchor(sub) for sub in av[1]):
            return True
        if op is sre.SUBPATTERN and _has_anchor(av[3]):
            return True
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and _has_anchor(av[2]):
            return True
    return False


def _is_group(item: Item) -> bool:
    op, av = item
    return op is sre.BRANCH or (op is sre.SUBPATTERN and not av[1] and not av[2])


def _split(items: list[Item], path: str) -> list[tuple[bool, list[Item], bool]]:
    """Alternatives of a pattern as (anchored at start, items, anchored at end)."""
    if len(items) == 1 and _is_group(items[0]):
        op, av = items[0]
        subs = av[1] if op is sre.BRANCH else [av[3]]
        return [alt for sub in subs for alt in _split(list(sub), path)]
    start = end = False
    while items and _is_anchor(items[0], sre.AT_BEGINNING):
        start, items = True, items[1:]
    while items and _is_anchor(items[-1], sre.AT_END):
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


def _single_set(op: object, av: Any, either: bool = False) -> Optional[Ranges]:
    """The decoded characters a one-character item matches under both engines (None: not one);
    ``either``: under one engine or the other (inside a negative look-around). A class is read
    once per process (patterns repeat theirs, and a ``\\w`` read both ways unites a thousand ranges).

    >>> _single_set(sre.IN, [(sre.RANGE, (97, 122)), (sre.LITERAL, 95)])
    ((95, 95), (97, 122))
    """
    if op is sre.IN:
        try:
            return _class_set(tuple(av), either)
        except TypeError:  # (an item whose argument is not hashable: read here)
            pass
    return _single_set_of(op, av, either)


@functools.lru_cache(maxsize=4096)
def _class_set(items: tuple[Item, ...], either: bool) -> Optional[Ranges]:
    return _single_set_of(sre.IN, items, either)


def _single_set_of(op: object, av: Any, either: bool) -> Optional[Ranges]:
    if op is sre.LITERAL:
        return ((av, av),)
    if op is sre.NOT_LITERAL:
        return complement(((av, av),))
    if op is sre.ANY:
        return complement(chars("\n")) if either else DOT
    if op is not sre.IN:
        return None
    negate = bool(av) and av[0][0] is sre.NEGATE
    if not either and not negate and all(iop is not sre.CATEGORY or iav in SUPERSET_CATEGORIES for iop, iav in av):
        # Python's \d and \w contain ECMA's: the intersection is the ECMA reading
        py_needed = False
    else:
        py_needed = True
    py: list[Ranges] = []
    ecma: list[Ranges] = []
    for iop, iav in av:
        if iop is sre.NEGATE:
            continue
        if iop is sre.LITERAL:
            both: Ranges = ((iav, iav),)
        elif iop is sre.RANGE:
            both = (tuple(iav),)
        elif iop is sre.CATEGORY and iav in CATEGORIES:
            name, negated = CATEGORIES[iav]
            e = ECMA[name]
            p = python_category(name) if py_needed else e
            py.append(complement(p) if negated else p)
            ecma.append(complement(e) if negated else e)
            continue
        else:
            return None
        py.append(both)
        ecma.append(both)
    p_set = union(*py)
    if py == ecma:  # (no class that the engines read apart: one set, 1,000 ranges for a \p{L})
        return complement(p_set) if negate else p_set
    e_set = union(*ecma)
    if negate:
        p_set, e_set = complement(p_set), complement(e_set)
    return union(p_set, e_set) if either else intersect(p_set, e_set)



_WORD_ECMA = ECMA["word"]
def _after_caret(items: list[Item]) -> Optional[list[Item]]:
    """``items`` without the ``^`` that every way through them starts with (None: not so)."""
    if not items:
        return None
    op, av = items[0]
    if op is sre.AT and av is sre.AT_BEGINNING:
        return items[1:]
    if op is sre.SUBPATTERN and not av[1] and not av[2]:
        inner = _after_caret(list(av[3]))
        return None if inner is None else [(op, (av[0], av[1], av[2], inner)), *items[1:]]
    if op is sre.BRANCH:
        alts = [_after_caret(list(sub)) for sub in av[1]]
        if any(a is None for a in alts):
            return None
        return [(op, (av[0], alts)), *items[1:]]
    return None


#: The translation of one item (see :meth:`_Translator.ir`): ``("fixed", regex, width)``, a unit
#: repeated ``("rep", unit, lo, hi)``, or ``("var", regex, lo, hi)``; the regex is ``None`` where
#: nothing matches, ``hi`` is ``None`` where there is no upper bound.
_Piece = Union[tuple[Literal["fixed"], Optional[str], int], tuple[Literal["rep", "var"], Optional[str], int, Optional[int]]]

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
        if self.negative:  # (the reading of either engine: Python's \w is Unicode's, too large a class here)
            raise self.refuse("a word boundary read by either engine")
        e = encode_set(_WORD_ECMA, self.path)
        assert e is not None  # (ECMA's \w is not empty)
        if non:
            return f"(?:{self.behind(e)}(?={e})|{self.behind(e, True)}(?!{e}))"
        return f"(?:{self.behind(e)}(?!{e})|{self.behind(e, True)}(?={e}))"

    def assertion(self, op: object, av: Any) -> str:
        if op is sre.AT:
            if av is sre.AT_BEGINNING:
                self.direction("behind", "'^'")
                return "\\A"
            if av is sre.AT_END:  # Python's "$" also holds before a final newline
                self.direction("ahead", "'$'")
                return f"(?=(?:{encode_set(chars(chr(10)))})?\\Z)" if self.negative else "\\Z"
            if av in (sre.AT_BOUNDARY, sre.AT_NON_BOUNDARY):
                return self.boundary(av is sre.AT_NON_BOUNDARY)
            raise self.refuse(f"the anchor {av}")
        direction, sub = av
        negate = op is sre.ASSERT_NOT
        if direction > 0 and not self.scope:
            rest = _after_caret(list(sub))
            if rest is not None:  # (?=^X) is \A(?=X); (?!^X) holds off the start, or where (?!X) does
                after_start = self.assertion(op, (direction, rest))
                return f"(?:\\A{after_start}|(?<!\\A))" if negate else f"\\A{after_start}"
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

    def seq(self, items: Iterable[Item]) -> Optional[str]:
        out = []
        for item in items:
            r = self.item(*item)
            if r is None:
                return None
            out.append(r)
        return "".join(out)

    def item(self, op: object, av: Any) -> Optional[str]:
        s = _single_set(op, av, self.negative)
        if s is not None:
            return encode_set(s, self.path)
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            return self.assertion(op, av)
        if op is sre.IN:
            raise self.refuse("an unsupported character class item")
        if op is sre.BRANCH:
            alts = [r for r in (self.seq(sub) for sub in av[1]) if r is not None]
            return "(?:" + "|".join(alts) + ")" if alts else None
        if op is sre.SUBPATTERN:
            _, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                raise self.refuse("inline flags")
            inner = self.seq(sub)
            return None if inner is None else f"(?:{inner})"
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            lo, hi, sub = av
            inner = self.seq(sub)
            if inner is None:
                return "" if lo == 0 else None
            return quantify(inner, lo, None if hi == sre.MAXREPEAT else hi)
        names = {"GROUPREF": "a back-reference", "GROUPREF_EXISTS": "a conditional group",
                 "POSSESSIVE_REPEAT": "a possessive quantifier", "ATOMIC_GROUP": "an atomic group"}
        raise self.refuse(names.get(str(op), str(op)))

    def ir(self, item: Item) -> _Piece:
        """('fixed', regex, width) | ('rep', unit, lo, hi) | ('var', regex, lo, hi)."""
        op, av = item
        if op is sre.SUBPATTERN and not av[1] and not av[2] and len(av[3]) == 1:
            return self.ir(av[3][0])  # ("(X*)" is "X*")
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and len(av[2]) == 1:
            sub = av[2][0]
            s = _single_set(*sub)
            if s is not None:
                unit = encode_set(s, self.path)
                if unit is None:
                    return ("fixed", "" if av[0] == 0 else None, 0)
                return ("rep", unit, av[0], None if av[1] == sre.MAXREPEAT else av[1])
        regex = self.item(op, av)
        lo, hi = width([item])
        return ("fixed", regex, lo) if lo == hi else ("var", regex, lo, hi)


def _reduce_free_ends(ir: list[_Piece], start: bool, end: bool) -> list[_Piece]:
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
    merged: list[_Piece] = []
    for it in ir:
        if merged and it[0] == "rep" and merged[-1][0] == "rep" and merged[-1][1] == it[1]:
            prev = merged[-1]
            hi = None if prev[3] is None or it[3] is None else prev[3] + it[3]
            merged[-1] = ("rep", it[1], prev[2] + it[2], hi)
        else:
            merged.append(it)
    return merged


def _emit(ir: list[_Piece], counts: dict[int, tuple[int, Optional[int]]]) -> str:
    out = []
    for i, it in enumerate(ir):
        regex = it[1]
        assert regex is not None  # (pieces that match nothing are never emitted: see _constrain)
        if it[0] == "rep":
            lo, hi = counts.get(i, (it[2], it[3]))
            out.append(quantify(regex, lo, hi))
        else:
            out.append(regex)
    return "".join(out)


_MAX_LENGTH_SPLITS = 256


def _constrain(ir: list[_Piece], min_len: int, max_len: Optional[int], t: _Translator) -> Optional[str]:
    """Concatenate the IR items, keeping only strings of min_len..max_len decoded characters."""
    if any(it[1] is None for it in ir):
        return None
    fixed = sum(it[2] for it in ir if it[0] == "fixed")
    rep_at = {i: it for i, it in enumerate(ir) if it[0] == "rep"}
    reps = list(rep_at)
    variables = [it for it in ir if it[0] == "var"]
    lo = fixed + sum(rep_at[i][2] for i in reps) + sum(v[2] for v in variables)
    his = [rep_at[i][3] for i in reps] + [v[3] for v in variables]
    bounded = [h for h in his if h is not None]
    hi = None if len(bounded) < len(his) else fixed + sum(bounded)
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
        n = rep_at[i][3]
        a = max(rep_at[i][2], need_lo)
        b = n if need_hi is None else need_hi if n is None else min(n, need_hi)
        return None if b is not None and a > b else _emit(ir, {i: (a, b)})
    if len(reps) != 2:
        raise t.refuse("more than two repetitions together with minLength/maxLength")
    i, j = reps
    (m1, n1), (m2, n2) = rep_at[i][2:], rep_at[j][2:]
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


def _parse(pattern: str, path: str) -> list[Item]:
    """``pattern`` read once per process wherever it stands (schemas repeat theirs: a bundle's
    ``^[a-zA-Z0-9._-]+$`` stood at ten places); a refusal raised with its own ``path``."""
    try:
        return _read(pattern)
    except ConstraintError:
        return _read_at(pattern, path)  # (raises again, at this path)


@functools.lru_cache(maxsize=256)
def _read(pattern: str) -> list[Item]:
    return _read_at(pattern, "")


def _read_at(pattern: str, path: str) -> list[Item]:
    pattern = unnamed_groups(spelled_dotall(pattern))  # (a leading (?s), as CloudFormation writes it; (?<name>...))
    _prescan(pattern, path)
    sets: list[tuple[tuple[int, int], ...]] = []  # (each property's set, by placeholder)
    try:
        parsed = parse_items(expand_properties(pattern, path, placeholders=sets))
        if sets:
            fill_placeholders(parsed, sets, PLACEHOLDER_FIRST)
    except re.error as e:
        raise SchemaNotSupported("pattern", path, f"{pattern!r} is not a Python regex: {e}") from e
    if parsed.state.flags & ~re.UNICODE:
        raise SchemaNotSupported("pattern", path, f"{pattern!r} sets regex flags")
    return list(parsed)


def pattern_regex(
    pattern: str, min_length: int = 0, max_length: Optional[int] = None, *, path: str = "", wide: bool = False,
) -> Optional[str]:
    """The contents (no quotes) of the JSON strings whose decoded value has a match of ``pattern``
    (ECMA-262, unanchored search) and ``min_length``..``max_length`` characters; None when no string does.

    The strings match under both ECMA-262 and Python's ``re``; with ``wide``, under *either* (each
    set the union of both readings, ``$`` also before a final newline): an over-approximation of
    both engines' languages, for what a ``not`` or ``oneOf`` takes away. ``\\b``/``\\B`` have no
    such reading here and raise :class:`SchemaNotSupported` with ``wide``.

    >>> encoded = r"a,\\n"  # (the contents of the JSON string "a,\\n": a comma, then a newline)
    >>> bool(re.fullmatch(pattern_regex(",$"), encoded)), bool(re.fullmatch(pattern_regex(",$", wide=True), encoded))
    (False, True)
    """
    t = _Translator(pattern, path)
    t.negative = wide
    alts = []
    for start, items, end in _split(_parse(pattern, path), path):
        ir: list[_Piece] = [] if start else [("rep", CHAR, 0, None)]
        ir += [t.ir(it) for it in items]
        if not end:
            ir += [("rep", CHAR, 0, None)]
        elif wide:  # (Python's "$" also holds before a final newline)
            ir += [("rep", encode_set(chars(chr(10)), path), 0, 1)]
        r = _constrain(_reduce_free_ends(ir, start, end), min_length, max_length, t)
        if r is not None:
            alts.append(r)
    if not alts:
        return None
    return alt(alts)


class _AutomatonMatcher:
    """``fullmatch`` by a byte automaton (for translations with look-arounds, which Python's
    ``re`` may refuse: its look-behinds must have a fixed width)."""

    def __init__(self, regex: str) -> None:
        self.dfa = regex_to_dfa(regex)

    def fullmatch(self, text: str) -> Optional[bool]:
        return True if self.dfa.accepts(text.encode("utf-8", "surrogatepass")) else None


@functools.lru_cache(maxsize=256)
def compiled_pattern(pattern: str) -> "re.Pattern[str] | _AutomatonMatcher":
    """``pattern`` translated, compiled to match the *encoded* contents of a JSON string."""
    r = pattern_regex(pattern)
    if r is not None and has_assertions(r):
        return _AutomatonMatcher(r)
    return re.compile("(?!)" if r is None else r)
