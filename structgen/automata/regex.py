"""Regex → byte DFA or expression, with Python's own parser (``re._parser``) as the reader and
:mod:`structgen.automata.nfa` as the construction. (A large bracket class, such as a ``\\p{..}``
spelled out, and a registered group are read once and embedded as automata of their own.)

Patterns use Python `re` syntax with full-match semantics (the whole output must match).
Constructs no finite automaton enforces exactly raise :class:`RegexNotSupported` naming the
construct and where it is; syntax errors raise :class:`RegexSyntaxError` with the position Python's
own parser reports.

Semantics to know:

* ``\\d``, ``\\w``, ``\\s`` (and their negations) are ASCII classes, as with ``re.ASCII`` (and as in
  JSON Schema's ECMA-262 patterns): ``\\d`` is ``[0-9]``.
* ``^`` at the very start and ``$`` at the very end mean nothing more (the match is already
  anchored). Elsewhere they are assertions, as in Python: ``^`` and ``\\A`` hold at the start,
  ``\\Z`` at the end, ``$`` at the end or before a final ``\\n``. Under the multiline flag ``(?m)``
  they are refused (it changes nothing else).
* Look-arounds ``(?=X)``, ``(?!X)``, ``(?<=X)``, ``(?<!X)`` (look-behinds of any width, as in the
  ``regex`` module and ECMA-262) and the word boundaries ``\\b``, ``\\B`` (over the ASCII ``\\w``,
  as with ``re.ASCII``) are compiled exactly, wherever they sit (see :mod:`structgen.automata.lookaround`).
  A look-ahead's body may hold look-aheads and a look-behind's look-behinds; the other direction
  inside a body (``\\b``, ``^`` and ``$`` count as both) raises :class:`RegexNotSupported`.
* Back-references, conditional groups, possessive quantifiers and atomic groups raise
  :class:`RegexNotSupported` (back-references are not regular).
* Lazy quantifiers (``*?``) match the same language as greedy ones and are accepted.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ..errors import RegexNotSupported, RegexSyntaxError
from .dfa import DEFAULT_MAX_STATES, ByteDFA, canonical_dfa
from .embedded import spelled_as
from .markers import MAX_SLOTS, SLOT_FIRST, slot_marker
from .expr import ExprPool
from .nfa import Parsed, Unsupported, pattern_to_dfa, pattern_to_expr
from .regex_syntax import is_plain, plain_syntax
from .utf8 import code_points_rows, complement_intervals, merge_intervals

try:  # Python >= 3.11
    from re import _constants as _sre_c  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_c
    import sre_parse as _sre_parse

__all__ = [
    "READER_ERRORS", "not_supported", "parse_regex", "prepared_regex", "regex_to_dfa", "regex_to_expr", "register_group",
    "slotted_regex_to_dfa", "strip_anchors",
]

# What each unsupported node of Python's regex parser is, for the error message, and the text that
# marks it in the pattern (to report a position).
_UNSUPPORTED_OPS: dict[Any, tuple[str, str]] = {
    _sre_c.GROUPREF: ("a back-reference", r"\\[1-9]|\(\?P="),
    _sre_c.GROUPREF_EXISTS: ("a conditional group", r"\(\?\("),
}
for _name, _desc, _mark in (
    ("POSSESSIVE_REPEAT", "a possessive quantifier", r"[*+?}]\+"),
    ("ATOMIC_GROUP", "an atomic group", r"\(\?>"),
):
    if hasattr(_sre_c, _name):
        _UNSUPPORTED_OPS[getattr(_sre_c, _name)] = (_desc, _mark)

# Assertions spelled as the look-arounds they are (outside classes): the construction reads look-arounds only.
_WORD = "[0-9A-Za-z_]"
_ANY = "(?s:.)"
_ASSERTION_SPELLINGS = {
    "^": f"(?<!{_ANY})",
    "\\A": f"(?<!{_ANY})",
    "$": f"(?=\\n?(?!{_ANY}))",
    "\\Z": f"(?!{_ANY})",
    "\\b": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "\\B": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
}


#: Where :func:`_spell_assertions` looks: an escape, a class, a group's opening or closing, ``^``, ``$``.
_ASSERTION_STOPS = re.compile(r"[\\\[()^$]")


def _spell_assertions(pattern: str) -> str:
    """``pattern`` with ``^ $ \\A \\Z \\b \\B`` written as look-arounds, and each look-around
    group wrapped in ``(?:...)`` (Python lets one be quantified; a reference reader may not).

    >>> _spell_assertions(r"a\\Z[$]")
    'a(?!(?s:.))[$]'
    """
    out: list[str] = []
    closers: list[str] = []  # per open group: what its ")" becomes
    i, n = 0, len(pattern)
    while i < n:
        m = _ASSERTION_STOPS.search(pattern, i)  # (the text up to the next one copied whole)
        if m is None:
            out.append(pattern[i:])
            break
        if m.start() > i:
            out.append(pattern[i : m.start()])
            i = m.start()
        c = pattern[i]
        if c == "\\":
            two = pattern[i : i + 2]
            out.append(_ASSERTION_SPELLINGS.get(two, two))
            i += 2
        elif c == "[":  # a class: copied as is (a leading "]" or "^]" is a literal)
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i : j + 1])
            i = j + 1
        elif pattern.startswith("(?#", i):
            j = pattern.find(")", i)
            j = n if j < 0 else j
            out.append(pattern[i : j + 1])
            i = j + 1
        elif c == "(":
            look = pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i)
            out.append("(?:(" if look else "(")
            closers.append("))" if look else ")")
            i += 1
        elif c == ")":
            out.append(closers.pop() if closers else ")")
            i += 1
        else:
            out.append(_ASSERTION_SPELLINGS.get(c, c))
            i += 1
    return "".join(out)


def strip_anchors(pattern: str) -> str:
    """Drop a leading ``^`` and a trailing unescaped ``$``: no-ops under full-match semantics.

    >>> strip_anchors(r"^\\d+$"), strip_anchors(r"a\\$")
    ('\\\\d+', 'a\\\\$')
    """
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$"):
        backslashes = len(pattern) - 1 - len(pattern[:-1].rstrip("\\"))
        if backslashes % 2 == 0:
            pattern = pattern[:-1]
    return pattern


def _without_anchors(parsed: Any, first: bool, last: bool) -> Any:
    """Python's parse of a pattern holding no ``|``, without its leading ``^`` (``first``) and
    trailing ``$`` (``last``), where they stand as the parse's first and last items (the parse of
    the pattern without them is the rest); else ``None``. (With a ``|`` at the top the parser
    factors a ``^`` every branch starts with out of them: ``^a|^b`` reads as ``^(?:a|b)``.)"""
    data = list(parsed.data)
    if first:
        if not data or data[0] != (_sre_c.AT, _sre_c.AT_BEGINNING):
            return None
        data = data[1:]
    if last:
        if not data or data[-1] != (_sre_c.AT, _sre_c.AT_END):
            return None
        data = data[:-1]
    return _sre_parse.SubPattern(parsed.state, data)


def _position(pattern: str, marker: str) -> int | None:
    m = re.search(marker, pattern)
    return m.start() if m else None


def _check_supported(pattern: str, parsed: Any) -> None:
    """Walk Python's parse tree and refuse what an automaton cannot enforce."""
    stack = [(parsed, bool(parsed.state.flags & re.MULTILINE))]
    while stack:
        node, multiline = stack.pop()
        for op, av in node if isinstance(node, _sre_parse.SubPattern) else node:
            if op in _UNSUPPORTED_OPS:
                what, mark = _UNSUPPORTED_OPS[op]
                raise RegexNotSupported(pattern, what, _position(pattern, mark))
            if op is _sre_c.AT and multiline and str(av) in ("AT_BEGINNING", "AT_END"):
                raise RegexNotSupported(pattern, "'^' or '$' under the multiline flag (?m)", _position(pattern, r"[\^$]"))
            if op is _sre_c.IN:
                for item_op, item_av in av:
                    if item_op is _sre_c.CATEGORY and "UNI" in str(item_av) and "LOC" in str(item_av):
                        raise RegexNotSupported(pattern, "a locale-dependent class")
            if op in _LEAF_OPS:
                continue  # (no sub-pattern inside: most items)
            inner = multiline
            if op is _sre_c.SUBPATTERN:
                inner = bool((multiline or av[1] & re.MULTILINE) and not av[2] & re.MULTILINE)
            # Recurse into every sub-pattern, wherever the parser nests it.
            for sub in _children(av):
                stack.append((sub, inner))


#: Items whose argument holds no sub-pattern (a character, a class, an anchor, a reference).
_LEAF_OPS = frozenset((_sre_c.LITERAL, _sre_c.NOT_LITERAL, _sre_c.ANY, _sre_c.IN, _sre_c.AT, _sre_c.CATEGORY,
                       _sre_c.GROUPREF))


def _children(av: Any) -> list[Any]:
    out = []
    items = av if isinstance(av, (tuple, list)) else (av,)
    for x in items:
        if isinstance(x, _sre_parse.SubPattern):
            out.append(x)
        elif isinstance(x, (tuple, list)):
            out.extend(_children(x))
    return out


def parse_regex(pattern: str) -> Parsed:
    """Validate ``pattern`` and read it (full-match semantics, anchors stripped, assertions
    spelled as look-arounds): Python's parse, the one :func:`structgen.automata.nfa.pattern_to_dfa` builds from.

    >>> [str(op) for op, _ in parse_regex(r"\\d{4}")]
    ['MAX_REPEAT']
    """
    return _parse(pattern, -1)[0]


def prepared_regex(pattern: str) -> str:
    """``pattern`` as the construction reads it: checked, in plain syntax, without the anchors
    full-match semantics make no-ops, its assertions spelled as look-arounds (what a reference
    reader is given: the tests read it with interegular too, ``tests/automata/reference/char_fsm.py``).

    >>> prepared_regex(r"^a\\Z")
    'a(?!(?s:.))'
    """
    return _prepare(pattern, -1, False)[0]


#: Parses kept per process (:func:`_parse`), the least recently used dropped past this many: a
#: schema's patterns are read again by every compile of it or of a schema sharing them, and a
#: parse is read only (never changed once made).
PARSE_CACHE = 256
_PARSES: OrderedDict[tuple[str, int, bool, int], tuple[Parsed, tuple[ByteDFA, ...]]] = OrderedDict()
_PARSES_LOCK = threading.Lock()


def _parse(pattern: str, num_slots: int, groups: bool = True) -> tuple[Parsed, tuple[ByteDFA, ...]]:
    """:func:`parse_regex`; with ``num_slots >= 0``, each large bracket class and each known group
    (unless not ``groups``) is read on its own and stands in the pattern for slot
    ``num_slots + k`` (:func:`_slot_parts`): the parse, and the automata of those slots (cached:
    :data:`PARSE_CACHE`; a group registered since reads the pattern anew)."""
    if not isinstance(pattern, str):
        raise RegexSyntaxError(repr(pattern), None, f"a pattern must be a str, not {type(pattern).__name__}")
    key = (pattern, num_slots, groups, sum(len(same) for same in _KNOWN_GROUPS.values()))
    with _PARSES_LOCK:
        got = _PARSES.get(key)
        if got is not None:
            _PARSES.move_to_end(key)
            return got
    got = _parse_anew(pattern, num_slots, groups)
    with _PARSES_LOCK:
        _PARSES[key] = got
        while len(_PARSES) > PARSE_CACHE:
            _PARSES.popitem(last=False)
    return got


def _parse_anew(pattern: str, num_slots: int, groups: bool) -> tuple[Parsed, tuple[ByteDFA, ...]]:
    """:func:`_parse`, not cached. The registered groups are slotted first, so that Python's
    parser and the checks read the rest only: a JSON string's character group is 250 characters,
    most of an unanchored ``pattern``'s text. So are its large classes, in a pattern whose syntax
    is plain already (a ``\\p{L}`` spelled out is 1,900 characters that Python's parser read
    twice, 7 ms, in every pattern holding it; a class read alone is cached). An error is raised by
    reading the pattern again whole: its position is then the pattern's own."""
    if groups and num_slots >= 0:
        text, dfas = _slot_parts(pattern, num_slots, classes=is_plain(pattern))
        if dfas:
            try:
                parsed, classes = _read(text, num_slots + len(dfas), groups)
            except (RegexSyntaxError, RegexNotSupported):
                pass  # (the same construct raises below, named where it stands in the pattern)
            else:
                return parsed, (*dfas, *classes)
    return _read(pattern, num_slots, groups)


def _read(pattern: str, num_slots: int, groups: bool) -> tuple[Parsed, tuple[ByteDFA, ...]]:
    """:func:`_parse_anew` of a pattern as it stands: the parse of its prepared text."""
    text, parsed, classes = _prepare(pattern, num_slots, groups)
    if parsed is None:
        try:
            parsed = _sre_parse.parse(text, 0)
        except (re.error, OverflowError, RecursionError) as e:  # pragma: no cover - rewrites keep Python's syntax
            raise RegexSyntaxError(pattern, None, f"the prepared pattern {text!r} does not parse: {e}") from e
    return parsed, tuple(classes)


def _prepare(pattern: str, num_slots: int, groups: bool) -> tuple[str, Parsed | None, list[ByteDFA]]:
    """``pattern`` checked (:class:`RegexSyntaxError`, :class:`RegexNotSupported`) and prepared:
    in plain syntax, without its no-op anchors, assertions spelled as look-arounds, slotted (with
    ``num_slots >= 0``); its parse where the check's parse is that text's; the slots' automata."""
    spelled = plain_syntax(pattern)  # (\u, \p{..}, POSIX classes, ...: see structgen.automata.regex_syntax)
    try:
        parsed = _sre_parse.parse(spelled.text, 0)
    except re.error as e:
        raise RegexSyntaxError(pattern, spelled.position(e.pos), e.msg) from e
    except (OverflowError, RecursionError) as e:
        raise RegexSyntaxError(pattern, None, str(e)) from e
    if parsed.state.flags & (re.VERBOSE | re.LOCALE):
        raise RegexNotSupported(pattern, "the verbose (?x) or locale (?L) flag", _position(pattern, r"\(\?[a-zA-Z]*[xL]"))
    body = strip_anchors(spelled.text)
    body_parsed = parsed
    if body != spelled.text:  # (the parse without the anchors that went: cut from it, else read again)
        body_parsed = None
        if "|" not in spelled.text:  # (a "|" at the top may have the parser factor "^" out of its branches)
            body_parsed = _without_anchors(parsed, spelled.text.startswith("^"), len(body) + spelled.text.startswith("^") < len(spelled.text))
        if body_parsed is None:
            try:
                body_parsed = _sre_parse.parse(body, 0)
            except re.error as e:  # stripping an anchor can only remove a no-op; report against the original
                raise RegexSyntaxError(pattern, spelled.position(e.pos), e.msg) from e
    _check_supported(pattern, body_parsed)
    text = _spell_assertions(body)
    classes: list[ByteDFA] = []
    if num_slots >= 0:
        text, classes = _slot_parts(text, num_slots, groups)
    return text, body_parsed if text == body else None, classes


#: A bracket class of at least this many characters is read on its own, once per process, and
#: stands in the pattern for one slot: a ``\\p{..}`` class spelled out is about 2,000 characters
#: that Python's parser would read again in every pattern holding it.
_LARGE_CLASS = 64
#: ... or holding a range of at least this many code points (``\\ud800-\\udfff``, the surrogates
#: a JSON string's raw characters leave out: its automaton is then made once).
_WIDE_RANGE = 256
_RANGE = re.compile(r"(?<!\\)([^\\])-([^\\\]])")
#: Flag groups that change what a class matches ((?i), (?a), (?u), (?L), and their negations):
#: classes stay in place under them. ``(?s:`` only changes ``.``.
_CLASS_FLAGS = re.compile(r"\(\?(?!s:)[-aiLmsux]")


#: Groups that mean the same wherever they stand (no anchor, look-around, flag or capture inside),
#: each read once per process: a pattern holding one gets a slot in its place
#: (:func:`register_group`; a JSON string's one character is one, twice in every unanchored
#: ``pattern``, where reading it was most of reading the pattern).
_KNOWN_GROUPS: dict[str, list[str]] = {}  # (by their first characters)
_KEY = 12


def register_group(group: str) -> None:
    """Read ``group`` (a regex ``(?:...)`` of at least 12 characters that means the same wherever
    it stands: no anchor, look-around, flag or capture inside) once per process, as a slot,
    wherever a pattern holds it outside look-arounds.

    >>> register_group("(?:xyz|[0-9]+)")
    >>> text, dfas = _slot_parts("a(?:xyz|[0-9]+)*", 0)
    >>> text == "a" + slot_marker(0) + "*", dfas[0].accepts(b"xyz"), dfas[0].accepts(b"x")
    (True, True, False)
    """
    if not (group.startswith("(?:") and group.endswith(")") and len(group) >= _KEY):
        raise ValueError(f"not a non-capturing group of at least {_KEY} characters: {group!r}")
    same = _KNOWN_GROUPS.setdefault(group[:_KEY], [])
    if group not in same:
        same.append(group)


@functools.lru_cache(maxsize=64)
def _group_dfa(group: str) -> ByteDFA:
    """The automaton of a registered group (read with its large classes slotted, no group)."""
    parsed, classes = _parse(group, 0, groups=False)  # (its large classes slotted, as anywhere)
    return spelled_as(pattern_to_dfa(parsed, max_states=DEFAULT_MAX_STATES, slots=classes), group)


def _slot_parts(text: str, first: int, groups: bool = True, classes: bool = True) -> tuple[str, list[ByteDFA]]:
    """``text`` with each bracket class of at least :data:`_LARGE_CLASS` characters or with a range
    of :data:`_WIDE_RANGE` code points, made of characters and ranges only (unless not
    ``classes``), and each registered group (:func:`register_group`; unless not ``groups``),
    outside look-arounds, replaced by ``slot_marker(first + k)`` (a class or group met again takes
    the same slot), and their automata, by slot. Nothing is replaced under a flag that changes
    classes.

    >>> text, dfas = _slot_parts("a[" + "bc" * 40 + "]+c[d]", 2)
    >>> text == "a" + chr(0xD802) + "+c[d]", dfas[0].accepts(b"b"), dfas[0].accepts(b"bc")
    (True, True, False)
    """
    if _CLASS_FLAGS.search(text):
        return text, []
    out: list[str] = []
    slots: dict[str, int] = {}
    dfas: list[ByteDFA] = []
    looks = [False]  # per open group: whether it is, or lies in, a look-around
    i, n = 0, len(text)
    while i < n:
        m = _SLOT_STOPS.search(text, i)  # (the text up to the next escape, group or class, copied whole)
        if m is None:
            out.append(text[i:])
            break
        if m.start() > i:
            out.append(text[i : m.start()])
            i = m.start()
        c = text[i]
        if c == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if c == "(":
            known = () if looks[-1] or not groups else _KNOWN_GROUPS.get(text[i : i + _KEY], ())
            group = next((g for g in known if text.startswith(g, i)), None)
            if group is not None and (group in slots or first + len(slots) < MAX_SLOTS):
                k = slots.get(group)
                if k is None:
                    k = slots[group] = len(slots)
                    dfas.append(_group_dfa(group))
                out.append(slot_marker(first + k))
                i += len(group)
                continue
            looks.append(looks[-1] or text.startswith(("(?=", "(?!", "(?<=", "(?<!"), i))
        elif c == ")" and len(looks) > 1:
            looks.pop()
        elif c == "[":
            j = i + 1
            if j < n and text[j] == "^":
                j += 1
            if j < n and text[j] == "]":  # (a "]" first is a literal)
                j += 1
            while j < n and text[j] != "]":
                j += 2 if text[j] == "\\" else 1
            whole = text[i : j + 1]
            k = slots.get(whole)
            large = len(whole) >= _LARGE_CLASS or any(ord(b) - ord(a) >= _WIDE_RANGE for a, b in _RANGE.findall(whole))
            if k is None and large and classes and not looks[-1] and first + len(slots) < MAX_SLOTS:
                dfa = _class_dfa(whole)
                if dfa is not None:
                    k = slots[whole] = len(slots)
                    dfas.append(dfa)
            out.append(whole if k is None else slot_marker(first + k))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), dfas


#: Where :func:`_slot_parts` looks: an escape, a group's opening or closing, a class.
_SLOT_STOPS = re.compile(r"[\\()\[]")
#: One item of a bracket class the fast reader takes: ``\\uXXXX``, ``\\UXXXXXXXX``, ``\\xXX``, a
#: backslash before a character that is not an ASCII letter or digit (that character), any other
#: character but a backslash; the last group: any other escape (the class goes to Python's parser).
_CLASS_ITEM = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\x([0-9a-fA-F]{2})|\\([^0-9A-Za-z])|([^\\])|(\\.?)", re.S)
#: What Python's parser warns of inside a class (a nested set, set operations): left to it. Read
#: with each escape blanked out (:data:`_CLASS_ESCAPE`): ``\\[`` is a plain "[", and the class of a
#: JSON string's characters, ``[ !#-\\[\\]-...]``, holds no set operation.
_CLASS_WARNED = re.compile(r"\[|--|&&|~~|\|\|")
_CLASS_ESCAPE = re.compile(r"\\.", re.S)


def class_ranges(text: str) -> tuple[bool, list[tuple[int, int]]] | None:
    """``(negated, code-point ranges)`` of the bracket class ``text`` (``[...]``, as
    :func:`_slot_parts` cuts it out) read as Python's parser reads it, without it: one regex
    scan, where the parser spends a Python call per character (a ``\\p{L}`` spelled out is
    3,000 escapes). ``None`` where the class holds anything else (``\\d``, an octal escape, a
    reversed range, what the parser warns of): the parser reads it.

    >>> class_ranges("[^a-c\\u00e9\\-]"), class_ranges("[]x-]"), class_ranges("[\\d]")
    ((True, [(97, 99), (233, 233), (45, 45)]), (False, [(93, 93), (120, 120), (45, 45)]), None)
    """
    if len(text) < 3 or text[0] != "[" or text[-1] != "]":
        return None
    negated = text[1] == "^"
    body = text[2 if negated else 1 : -1]
    if not body or _CLASS_WARNED.search(_CLASS_ESCAPE.sub("e", body)):
        return None
    codes: list[int] = []
    dashes: list[bool] = []  # (an unescaped "-": what makes a range)
    for m in _CLASS_ITEM.finditer(body):
        u, big, x, punct, plain, other = m.groups()
        if other is not None or (plain == "]" and m.start()):  # (a "]" past the first ends the class)
            return None
        cp = int(u or big or x, 16) if plain is None and punct is None else ord(plain or punct)
        if cp > 0x10FFFF:
            return None
        codes.append(cp)
        dashes.append(plain == "-")
    out: list[tuple[int, int]] = []
    i, n = 0, len(codes)
    while i < n:
        lo = codes[i]
        i += 1
        if i < n and dashes[i]:
            if i + 1 == n:  # ("x-" at the end: x and "-")
                out += [(lo, lo), (45, 45)]
                break
            hi = codes[i + 1]
            if hi < lo:
                return None
            out.append((lo, hi))
            i += 2
        else:
            out.append((lo, lo))
    return negated, out


@functools.lru_cache(maxsize=256)
def _class_dfa(text: str) -> ByteDFA | None:
    """The automaton of one bracket class (one character of it, as UTF-8), read by
    :func:`class_ranges` or else Python's parser; ``None`` for a class holding more than
    characters and ranges (``\\d``, ``\\w``: classes whose meaning is ours, left in the pattern)."""
    fast = class_ranges(text)
    if fast is not None:
        negated, ranges = fast
        return _code_points_dfa(ranges, negated, text)
    try:
        parsed = list(_sre_parse.parse(text, 0))
    except re.error:
        return None
    if len(parsed) != 1:
        return None
    op, av = parsed[0]
    if op is _sre_c.LITERAL or op is _sre_c.NOT_LITERAL:  # (a class of one character, repeated)
        items = [(_sre_c.LITERAL, av)] if op is _sre_c.LITERAL else [(_sre_c.NEGATE, None), (_sre_c.LITERAL, av)]
    elif op is _sre_c.IN:
        items = av
    else:
        return None
    negated, ranges = False, []
    for op, av in items:
        if op is _sre_c.NEGATE:
            negated = True
        elif op is _sre_c.LITERAL:
            ranges.append((av, av))
        elif op is _sre_c.RANGE:
            ranges.append(av)
        else:
            return None
    return _code_points_dfa(ranges, negated, text)


def _code_points_dfa(ranges: list[tuple[int, int]], negated: bool, text: str) -> ByteDFA:
    """The automaton of one character of ``ranges`` (of the others where ``negated``), as UTF-8."""
    merged = merge_intervals(ranges)
    if negated:
        merged = list(complement_intervals(merged))
    rows, finals = code_points_rows(merged)  # (minimal already: only numbered canonically)
    return spelled_as(canonical_dfa(np.array(rows, dtype=np.int32), np.array(finals, dtype=bool), 0, np.arange(256)), text)


def regex_to_dfa(pattern: str, *, max_states: int = DEFAULT_MAX_STATES, slots: Sequence[ByteDFA] = ()) -> ByteDFA:
    """The minimal canonical byte DFA of ``pattern`` (built by :mod:`structgen.automata.nfa`); ``slots``
    are automata that :func:`structgen.automata.nfa.slot_marker` characters in the pattern stand for.

    >>> dfa = regex_to_dfa(r"\\d{4}-\\d{2}")
    >>> dfa.accepts(b"2024-05"), dfa.accepts(b"2024-5")
    (True, False)
    """
    parsed, classes = _parse(pattern, len(slots))
    try:
        return pattern_to_dfa(parsed, max_states=max_states, slots=[*slots, *classes])
    except READER_ERRORS as e:
        raise not_supported(pattern, e) from e


def regex_to_expr(
    pattern: str, pool: ExprPool, *, slots: Sequence[ByteDFA] = (), max_states: int = DEFAULT_MAX_STATES
) -> int:
    """The expression of ``pattern`` in ``pool`` (see :mod:`structgen.automata.expr`): its
    automaton is then built lazily, state by state. ``slots`` as in :func:`regex_to_dfa`; a call
    marker is a symbol of the pool. A pattern with look-arounds is compiled eagerly within
    ``max_states`` and embedded.

    >>> pool = ExprPool()
    >>> e = regex_to_expr(r"\\d{2}", pool)
    >>> pool.nullable(pool.derive(pool.derive(e, ord("4")), ord("2")))
    True
    """
    parsed, classes = _parse(pattern, len(slots))
    try:
        return pattern_to_expr(parsed, pool, max_states=max_states, slots=[*slots, *classes])
    except READER_ERRORS as e:
        raise not_supported(pattern, e) from e


def slotted_regex_to_dfa(regex: str, slots: Sequence[ByteDFA], *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """:func:`regex_to_dfa` of a regex that refers to ``slots`` (a list shared by many regexes)
    by :func:`structgen.automata.nfa.slot_marker`: only the slots the regex uses are handed over, renumbered."""
    used = sorted({c for c in regex if SLOT_FIRST <= ord(c) < SLOT_FIRST + len(slots)})
    local = regex.translate({ord(c): slot_marker(i) for i, c in enumerate(used)}) if used else regex
    return regex_to_dfa(local, max_states=max_states, slots=[slots[ord(c) - SLOT_FIRST] for c in used])


READER_ERRORS = (Unsupported, RecursionError)


def not_supported(pattern: str, e: Exception) -> RegexNotSupported:
    """Our error for one of the construction's (or a recursion limit hit while walking the parse)."""
    if isinstance(e, RecursionError):
        return RegexNotSupported(pattern, "nesting too deep for the regex parser")
    return RegexNotSupported(pattern, f"a construct the construction does not implement ({str(e).rstrip('.') or 'unknown'})")
