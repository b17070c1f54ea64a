"""Expressions as text, and their lengths: what an :class:`~.expr.ExprPool` term looks like as a
regex (:func:`describe` for messages and debugging; :func:`to_regex`, a Python regex of the same
language), and the fewest bytes of its strings.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> e = pool.seq(pool.literal(b"a"), pool.repeat(pool.byte_range(48, 57), 2, 5))
    >>> describe(pool, e), MinLength(pool, {}).of(e)
    ('a(?:[0-9]){2,5}', 3)
    >>> to_regex(pool, pool.seq(pool.literal("é".encode()), pool.code_points([(0x61, 0x62), (0xE0, 0xFF)])))
    'é[abà-ÿ]'
"""

from __future__ import annotations

from typing import Optional

from .. import _engine
from .expr import ALL_BYTES, EPSILON, NOTHING, KINDS, ExprPool, bytes_of_mask
from .utf8 import MAX_CODE_POINT, merge_intervals

__all__ = ["MaxObligation", "MinLength", "NotARegex", "describe", "to_regex"]

_INF = 1 << 60
_BYTES, _SEQ, _ALT, _REP, _SYM, _DFA, _AND, _NOT = (
    KINDS["bytes"], KINDS["seq"], KINDS["alt"], KINDS["rep"], KINDS["sym"], KINDS["dfa"], KINDS["and"], KINDS["not"],
)


def describe(pool: ExprPool, e: int, limit: int = 200) -> str:
    """A regex-like text of ``e``, cut at ``limit`` characters."""
    out: list[str] = []
    _describe(pool, e, out, limit)
    text = "".join(out)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(pool: ExprPool, e: int, out: list[str], limit: int) -> None:
    if sum(map(len, out)) > limit:
        return
    node = pool.node(e)
    kind = node[0]
    if e == NOTHING:
        out.append("∅")
    elif e == EPSILON:
        out.append("ε")
    elif kind == _BYTES:
        out.append(_describe_mask(node[1]))
    elif kind == _SEQ:
        _describe(pool, node[1], out, limit)
        _describe(pool, node[2], out, limit)
    elif kind == _ALT:
        out.append("(?:")
        for i, p in enumerate(node[1]):
            if i:
                out.append("|")
            _describe(pool, p, out, limit)
        out.append(")")
    elif kind == _REP:
        out.append("(?:")
        _describe(pool, node[1], out, limit)
        out.append(f"){{{node[2]},{'' if node[3] < 0 else node[3]}}}")
    elif kind == _SYM:
        out.append(f"<{node[1]}>")
    elif kind == _AND:
        out.append("(?&")
        for i, p in enumerate(node[1]):
            if i:
                out.append("&")
            _describe(pool, p, out, limit)
        out.append(")")
    elif kind == _NOT:
        out.append("(?!")
        _describe(pool, node[1], out, limit)
        out.append(")")
    else:
        out.append(f"<dfa{node[1]}@{node[2]}>")


class MinLength(_engine.MinLength):
    """The fewest bytes of a string of each expression of a pool, a symbol ``k`` weighing
    ``weights.get(k, 0)`` bytes (read when made); memoised for one set of weights. Native: an
    intersection or a complement weighs its shortest witness (searched), chains are read in loops."""

    def __init__(self, pool: ExprPool, weights: dict[int, int]) -> None:
        super().__init__(pool, weights)
        self.pool = pool
        self.weights = weights


def _describe_mask(mask: int) -> str:
    if mask == ALL_BYTES:
        return "."
    bits = [b for b in range(256) if mask >> b & 1]
    if len(bits) == 1:
        return _describe_byte(bits[0])
    ranges: list[tuple[int, int]] = []
    for b in bits:
        if ranges and ranges[-1][1] == b - 1:
            ranges[-1] = (ranges[-1][0], b)
        else:
            ranges.append((b, b))
    return "[" + "".join(_describe_byte(a) if a == b else f"{_describe_byte(a)}-{_describe_byte(b)}" for a, b in ranges) + "]"


def _describe_byte(b: int) -> str:
    c = chr(b)
    if 0x21 <= b < 0x7F and c not in "\\[]-^.()|*+?{}":
        return c
    return f"\\x{b:02x}"


# ---------------------------------------------------------------------------------------------
# Terms printed as Python regexes


class NotARegex(ValueError):
    """A term that no regex spells (it holds a symbol or an embedded automaton, or bytes that are
    no whole UTF-8 characters), or whose regex would be longer than asked (``too_long``)."""

    def __init__(self, message: str, too_long: bool = False) -> None:
        super().__init__(message)
        self.too_long = too_long


def to_regex(pool: ExprPool, e: int, *, max_length: Optional[int] = None) -> str:
    """A Python regex (full-match semantics; also read by interegular) of the strings of ``e``
    decoded as UTF-8: ASCII byte sets as classes, UTF-8 encodings of code points as classes of
    characters, ``(?:...)`` groups, ``{m,n}`` counters. Shared sub-terms are printed at every use.

    Raises :class:`NotARegex` for a term with symbols or embedded automata, and past
    ``max_length`` characters."""
    return _Printer(pool, max_length).text(e)


_SPECIAL = frozenset(".^$*+?{}[]()|\\")
_CLASS_SPECIAL = frozenset("\\]-[^&~|")
_SURROGATES = (0xD800, 0xDFFF)
_CONTINUATION = ((1 << 0xC0) - 1) & ~((1 << 0x80) - 1)
_ASCII = (1 << 0x80) - 1
#: UTF-8 lead bytes by sequence length.
_LEADS = {
    2: ((1 << 0xE0) - 1) & ~((1 << 0xC2) - 1),
    3: ((1 << 0xF0) - 1) & ~((1 << 0xE0) - 1),
    4: ((1 << 0xF5) - 1) & ~((1 << 0xF0) - 1),
}
_MAX_PATHS = 4096


def _char(cp: int, in_class: bool) -> str:
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    ch = chr(cp)
    return "\\" + ch if ch in (_CLASS_SPECIAL if in_class else _SPECIAL) else ch


def _class(intervals: list[tuple[int, int]]) -> str:
    """A class of the code points ``intervals`` (negated where that is shorter; surrogates,
    which no UTF-8 text holds, count as either side)."""
    s = merge_intervals(intervals)
    if len(s) == 1 and s[0][0] == s[0][1]:
        return _char(s[0][0], False)
    lo, hi = _SURROGATES
    with_gap = merge_intervals(s + [(lo, hi)])
    positive = with_gap if any(a <= lo - 1 and b >= lo - 1 for a, b in s) and any(a <= hi + 1 <= b for a, b in s) else s
    negative: list[tuple[int, int]] = []
    nxt = 0
    for a, b in with_gap:
        if a > nxt:
            negative.append((nxt, a - 1))
        nxt = b + 1
    if nxt <= MAX_CODE_POINT:
        negative.append((nxt, MAX_CODE_POINT))
    negate = bool(negative) and (len(negative) < len(positive) or (with_gap[-1][1] == MAX_CODE_POINT and len(negative) <= len(positive)))
    body = []
    for a, b in negative if negate else positive:
        if a == b:
            body.append(_char(a, True))
        elif b == a + 1:
            body.append(_char(a, True) + _char(b, True))
        else:
            body.append(f"{_char(a, True)}-{_char(b, True)}")
    return "[" + ("^" if negate else "") + "".join(body) + "]"


def _runs(mask: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for b in bytes_of_mask(mask):
        if out and out[-1][1] == b - 1:
            out[-1] = (out[-1][0], b)
        else:
            out.append((b, b))
    return out


def _decode(data: list[int]) -> int:
    return ord(bytes(data).decode("utf-8"))


def _path_code_points(path: tuple[int, ...]) -> Optional[list[tuple[int, int]]]:
    """The code points whose UTF-8 bytes are in the masks of ``path``, one per byte (None: some
    are not whole, valid characters)."""
    n = len(path)
    if n == 1:
        return _runs(path[0]) if path[0] & ~_ASCII == 0 else None
    if n not in _LEADS or path[0] & ~_LEADS[n] or any(m & ~_CONTINUATION for m in path[1:]):
        return None
    out: list[tuple[int, int]] = []
    try:
        todo: list[tuple[list[int], int]] = [([], 0)]
        while todo:
            prefix, i = todo.pop()
            rest = n - i - 1
            if all(m == _CONTINUATION for m in path[i + 1 :]):  # a contiguous block per run of byte i
                for a, b in _runs(path[i]):
                    out.append((_decode(prefix + [a] + [0x80] * rest), _decode(prefix + [b] + [0xBF] * rest)))
            else:
                todo.extend((prefix + [b], i + 1) for b in bytes_of_mask(path[i]))
    except UnicodeDecodeError:
        return None
    return out


class _Printer:
    def __init__(self, pool: ExprPool, max_length: Optional[int]) -> None:
        self.pool = pool
        self.max_length = max_length
        self._texts: dict[int, str] = {}
        self._paths: dict[int, Optional[list[tuple[int, ...]]]] = {}
        self._chars: dict[int, Optional[list[tuple[int, int]]]] = {}
        self._atoms: set[int] = set()  # terms printed as one character or one class

    def text(self, e: int) -> str:
        got = self._texts.get(e)
        if got is None:
            got = self._text(e)
            if self.max_length is not None and len(got) > self.max_length:
                raise NotARegex(f"a regex longer than {self.max_length} characters", too_long=True)
            self._texts[e] = got
        return got

    def _text(self, e: int) -> str:
        if e == NOTHING:
            return "(?!)"
        if e == EPSILON:
            return ""
        node = self.pool.node(e)
        kind = node[0]
        if kind == _BYTES:
            chars = self.chars(e)
            if chars is None:
                raise NotARegex("bytes that are not whole UTF-8 characters")
            self._atoms.add(e)
            return _class(chars)
        if kind == _SEQ:
            return self._sequence(e)
        if kind == _ALT:
            classes: list[tuple[int, int]] = []
            parts = []
            for p in node[1]:
                if p == EPSILON:
                    continue
                chars = self.chars(p)
                if chars is not None:
                    classes.extend(chars)
                else:
                    parts.append(self.text(p))
            if classes:
                parts.insert(0, _class(classes))
            if len(parts) == 1 and classes:
                self._atoms.add(e)
                return parts[0] + ("?" if EPSILON in node[1] else "")
            if EPSILON in node[1]:
                return f"(?:{'|'.join(parts)})?"
            return parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})"
        if kind == _REP:
            lo, hi = node[2], node[3]
            if hi < 0:
                q = "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
            elif lo == hi:
                q = f"{{{lo}}}"
            elif (lo, hi) == (0, 1):
                q = "?"
            else:
                q = f"{{{lo},{hi}}}"
            inner = self.text(node[1])
            return f"{inner}{q}" if node[1] in self._atoms else f"(?:{inner}){q}"
        if kind == _SYM:
            raise NotARegex(f"symbol {node[1]} (a call or a guard)")
        if kind in (_AND, _NOT):
            raise NotARegex("an intersection or a complement")
        spelled = self.pool.embedded(node[1]).regex if node[2] == 0 else None
        if spelled is None:
            raise NotARegex("an embedded automaton")
        return spelled  # (a pattern's slot: a group or a class, an atom)

    def _sequence(self, e: int) -> str:
        pool = self.pool
        items = []
        while pool.node(e)[0] == _SEQ:
            items.append(pool.node(e)[1])
            e = pool.node(e)[2]
        items.append(e)
        out = []
        i = 0
        while i < len(items):
            node = pool.node(items[i])
            if node[0] == _BYTES and node[1] & ~_ASCII:  # a lead byte: its character goes on
                size = next((n for n, m in _LEADS.items() if node[1] & ~m == 0), 0)
                paths: list[tuple[int, ...]] = [(node[1],)]
                j = i + 1
                while paths and len(paths[0]) < size and j < len(items):
                    more = self.paths(items[j])
                    if not more or len(paths) * len(more) > _MAX_PATHS:
                        break
                    paths = [p + q for p in paths for q in more]
                    j += 1
                chars = self._code_points(paths) if paths and all(len(p) == size for p in paths) else None
                if chars is None:
                    raise NotARegex("bytes that are not whole UTF-8 characters")
                out.append(_class(chars))
                i = j
                continue
            out.append(self.text(items[i]))
            i += 1
        return "".join(out)

    def paths(self, e: int) -> Optional[list[tuple[int, ...]]]:
        """The strings of ``e`` as byte-mask sequences of at most 4 bytes (None: not so)."""
        if e in self._paths:
            return self._paths[e]
        node = self.pool.node(e)
        kind = node[0]
        got: Optional[list[tuple[int, ...]]] = None
        if kind == _BYTES:
            got = [(node[1],)]
        elif kind == _SEQ:
            head, tail = self.paths(node[1]), self.paths(node[2])
            if head is not None and tail is not None and len(head) * len(tail) <= _MAX_PATHS:
                got = [p + q for p in head for q in tail if len(p) + len(q) <= 4]
                if len(got) != len(head) * len(tail):
                    got = None
        elif kind == _ALT and EPSILON not in node[1]:
            got = []
            for p in node[1]:
                sub = self.paths(p)
                if sub is None or len(got) + len(sub) > _MAX_PATHS:
                    got = None
                    break
                got.extend(sub)
        self._paths[e] = got
        return got

    def chars(self, e: int) -> Optional[list[tuple[int, int]]]:
        """The code points of ``e`` when its strings are exactly their UTF-8 encodings (None: not so)."""
        if e not in self._chars:
            paths = self.paths(e)
            self._chars[e] = None if paths is None else self._code_points(paths)
        return self._chars[e]

    @staticmethod
    def _code_points(paths: list[tuple[int, ...]]) -> Optional[list[tuple[int, int]]]:
        out: list[tuple[int, int]] = []
        for path in paths:
            got = _path_code_points(path)
            if got is None:
                return None
            out.extend(got)
        return merge_intervals(out)


class MaxObligation:
    """An upper bound, over every state a term's derivatives reach, on the fewest bytes still
    needed to finish there (the most a prefix can oblige one to write): ``x{lo,hi}`` obliges
    ``lo`` copies of ``x``; in ``a·b`` a state inside ``a`` still owes all of ``b``. A call of ``k``
    obliges ``callee[k]`` inside it (the callee's own bound) and weighs ``lengths[k]`` after it; a
    complement or an intersection has no bound here (``_INF``). Memoised for one set of weights.

    Example:
        >>> from structgen.automata.expr import ExprPool
        >>> pool = ExprPool()
        >>> e = pool.seq(pool.literal(b"["), pool.repeat(pool.literal(b"ab"), 3, 5))
        >>> MaxObligation(pool, {}, {}).of(e), MinLength(pool, {}).of(e)
        (7, 7)
    """

    def __init__(self, pool: ExprPool, lengths: dict[int, int], callee: dict[int, int]) -> None:
        self.pool = pool
        self.callee = callee
        self.minlen = MinLength(pool, lengths)
        self._memo: dict[int, int] = {NOTHING: 0, EPSILON: 0}

    def of(self, e: int) -> int:
        got = self._memo.get(e)
        if got is not None:
            return got
        node = self.pool.node(e)
        kind = node[0]
        ml = self.minlen.of
        if kind == _BYTES:
            got = 1
        elif kind == _SEQ:
            got = max(self.of(node[1]) + ml(node[2]), self.of(node[2]))
        elif kind == _ALT:
            got = max(self.of(p) for p in node[1])
        elif kind == _REP:
            lo = node[2]
            got = self.of(node[1]) + max(lo - 1, 0) * ml(node[1])
        elif kind == _SYM:
            got = self.callee.get(node[1], 0)
        elif kind == _DFA:
            lengths = self.pool.embedded(node[1]).min_lengths(self.minlen.weights)
            got = max((d for d in lengths if d < _INF), default=0)
        else:  # an intersection or a complement
            got = _INF
        got = min(got, _INF)
        self._memo[e] = got
        return got
