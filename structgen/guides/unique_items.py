r"""``uniqueItems`` over items with infinitely many values, while a pushdown guide runs.

The schema compiler makes such an array an automaton of its own that calls an item automaton
which calls nothing (:attr:`~structgen.automata.network.Network.unique_items`). Then:

* the array frame's data names the set of item values written so far (compared as JSON values:
  numbers by value, objects whatever their key order, ``true`` apart from ``1``);
* an item frame's data names the item's text so far (every byte the frame reads is appended);
* the array calls, instead of the item automaton itself, the item automaton *minus every text of
  the values written so far* (:func:`value_texts`, a lazy difference), so the mask never offers a
  token after which only an earlier value could finish the item;
* where an item returns, its text is parsed and its value added to the array's set. A value already
  there is refused: a check beside the difference, for the rare texts it does not cover (a float
  written with more digits than it keeps, or an object with a repeated key).

Items call nothing but the unique arrays nested in them (``uniqueItems`` inside ``uniqueItems``):
every byte a frame reads is also read by each item frame below it on the stack
(:meth:`.StackTable.read_below`), so an item's text is its whole value. Where such an item may
still spell a written value, its liveness is read off its remaining language with the nested
calls inlined (:meth:`UniqueItems.flat`: their own uniqueness aside, an over-approximation of
what may follow).

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> from structgen.automata.lazy import LazyAutomaton
    >>> texts = LazyAutomaton(pool, value_texts(pool, {"a": [1, "x"]}))
    >>> [texts.accepts(t) for t in (b'{"a":[1,"x"]}', b'{ "a" : [1.0, "\\u0078"] }', b'{"a":[1,"y"]}')]
    [True, True, False]
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
import threading
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterator

import numpy as np

from ..automata.expr import NOTHING, ExprPool
from ..automata.expr_rewrite import SubstitutionMemo, substitute

__all__ = ["UniqueItems", "value_key", "value_texts"]

_WS = b" \t\n\r"
_NOT_WS = np.ones(256, dtype=bool)
_NOT_WS[list(_WS)] = False
#: Values of short item texts kept per item automaton (a set without one of them is not full).
WITNESSES = 16
#: Most steps of the search for witnesses.
WITNESS_STATES = 2048
#: Most completions of an item in progress told apart where an array nested in items is checked.
COMPLETIONS = 16
_SHORT_ESCAPES = {'"': b'"', "\\": b"\\", "/": b"/", "\b": b"b", "\f": b"f", "\n": b"n", "\r": b"r", "\t": b"t"}


def value_key(v: Any) -> Hashable:
    """A key equal for JSON values that JSON Schema calls equal (as ``jsonschema`` does)."""
    if isinstance(v, bool):
        return ("b", v)
    if v is None:
        return ("n",)
    if isinstance(v, (int, float)):
        return ("#", v)  # (1 == 1.0 and hash(1) == hash(1.0))
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, list):
        return ("a", tuple(value_key(x) for x in v))
    return ("o", frozenset((k, value_key(x)) for k, x in v.items()))


@dataclass
class _WitnessSearch:
    """A search for the values an item automaton spells (see ``UniqueItems._witness_outside``)."""

    auto: Any  # the item's LazyAutomaton
    heap: list  # (length at least, tie, state, text so far)
    found: set = field(default_factory=set)
    steps: int = 0
    order: Iterator[int] = field(default_factory=lambda: itertools.count(1))  # (ties: the first pushed first)


def _length_at_least(auto: Any, q: int) -> int:
    """A witness search's guide to the end of an item from state ``q``: the fewest bytes there,
    or where ``q`` holds algebra a lower bound of them (its exact length is a search of its own,
    milliseconds on a first mask; a lower bound only orders the search, which stays exact)."""
    e = auto.exprs[q]
    return auto.pool.lower_bound(e) if auto.pool.is_algebraic(e) else auto.min_length(q)  # type: ignore[no-any-return]


def _ways_on(row: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """``(next state, its first two bytes)`` per state a row of transitions leads to, whitespace
    left out where another byte goes on (a witness search's steps, on numpy: a row is 256 bytes)."""
    if (row[_NOT_WS] >= 0).any():
        row = np.where(_NOT_WS, row, -1)
    targets, first = np.unique(row, return_index=True)
    rest = row.copy()
    rest[first] = -1
    again, second = np.unique(rest, return_index=True)
    seconds = dict(zip(again.tolist(), second.tolist()))
    return [(t, (b, seconds[t]) if t in seconds else (b,)) for t, b in zip(targets.tolist(), first.tolist()) if t >= 0]


def value_texts(pool: ExprPool, v: Any, chars: dict[str, int] | None = None) -> int:
    """Every JSON text of the value ``v`` (any whitespace, any escape, any spelling of a number with
    its significant digits, any key order): a term of ``pool``. Numbers: a superset (any exponent).
    ``chars`` caches the spellings of each character (per pool)."""
    chars = {} if chars is None else chars
    ws = pool.star(pool.bytes_of(_mask(_WS)))
    lit = pool.literal
    if v is None or isinstance(v, bool):
        return lit(json.dumps(v).encode())
    if isinstance(v, (int, float)):
        return _number_texts(pool, v)
    if isinstance(v, str):
        spelled = []
        for c in v:
            got = chars.get(c)
            if got is None:
                got = chars[c] = _char_texts(pool, c)
            spelled.append(got)
        return pool.concat([lit(b'"'), *spelled, lit(b'"')])
    if isinstance(v, list):
        if not v:
            return pool.concat([lit(b"["), ws, lit(b"]")])
        parts = [lit(b"["), ws, value_texts(pool, v[0], chars)]
        for x in v[1:]:
            parts += [ws, lit(b","), ws, value_texts(pool, x, chars)]
        return pool.concat([*parts, ws, lit(b"]")])
    if not v:
        return pool.concat([lit(b"{"), ws, lit(b"}")])
    # n members, each one of v's (a repeated key makes another value: a superset, never a loss)
    member = pool.alt(pool.concat([value_texts(pool, k, chars), ws, lit(b":"), ws, value_texts(pool, x, chars)]) for k, x in v.items())
    more = pool.repeat(pool.concat([ws, lit(b","), ws, member]), len(v) - 1, len(v) - 1)
    return pool.concat([lit(b"{"), ws, member, more, ws, lit(b"}")])


def _mask(chars: bytes) -> int:
    out = 0
    for b in chars:
        out |= 1 << b
    return out


def _char_texts(pool: ExprPool, c: str) -> int:
    """The spellings of the character ``c`` inside a JSON string."""
    forms = []
    cp = ord(c)
    if cp >= 0x20 and c not in '"\\' and not 0xD800 <= cp < 0xE000:
        forms.append(pool.literal(c.encode("utf-8")))
    if c in _SHORT_ESCAPES:
        forms.append(pool.literal(b"\\" + _SHORT_ESCAPES[c]))
    units = [cp] if cp < 0x10000 else [0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)]
    escaped = []
    for u in units:
        escaped.append(pool.literal(b"\\u"))
        for d in f"{u:04x}":
            escaped.append(pool.bytes_of(_mask(bytes({ord(d), ord(d.upper())}))))
    forms.append(pool.concat(escaped))
    return pool.alt(forms)


def _number_texts(pool: ExprPool, v: float) -> int:
    """The JSON numbers equal to ``v`` without an exponent, and with an exponent those with the sign
    and the significant digits of ``v`` (a superset: ``1e2`` is among the spellings of 10)."""
    lit = pool.literal
    zeros = pool.star(lit(b"0"))
    more_zeros = pool.optional(pool.seq(lit(b"."), zeros))
    digit = pool.byte_range(48, 57)
    exponent = pool.concat([pool.bytes_of(_mask(b"eE")), pool.optional(pool.bytes_of(_mask(b"+-"))), pool.repeat(digit, 1, None)])
    if v == 0:
        plain = pool.concat([pool.repeat(lit(b"0"), 1, None), more_zeros])
        with_exponent = pool.concat([pool.repeat(pool.bytes_of(_mask(b"0.")), 1, None), exponent])
        return pool.seq(pool.optional(lit(b"-")), pool.alt([plain, with_exponent]))
    if not math.isfinite(v):  # (a number too large for a float: every long or exponent spelling of its sign)
        digits = pool.repeat(digit, 1, None)
        long = pool.concat([pool.repeat(digit, 309, None), pool.optional(pool.seq(lit(b"."), digits)), pool.optional(exponent)])
        spelled = pool.alt([long, pool.seq(pool.repeat(pool.bytes_of(_mask(b"0123456789.")), 1, None), exponent)])
        return pool.seq(lit(b"-"), spelled) if v < 0 else spelled
    d = Decimal(repr(v) if isinstance(v, float) else str(v)).normalize()
    digits, x = "".join(map(str, d.as_tuple().digits)), int(d.as_tuple().exponent)
    k = len(digits)
    if x >= 0:  # (an integer: its digits, x zeros, then maybe a fraction of zeros)
        plain = pool.concat([zeros, lit((digits + "0" * x).encode()), more_zeros])
    elif k > -x:
        plain = pool.concat([zeros, lit(digits[: k + x].encode()), lit(b"."), lit(digits[k + x:].encode()), zeros])
    else:
        plain = pool.concat([zeros, lit(b"."), lit(("0" * (-x - k) + digits).encode()), zeros])
    shapes = [pool.concat([zeros, lit(digits.encode()), zeros, more_zeros]),  # (the dot anywhere)
              pool.concat([zeros, lit(b"."), zeros, lit(digits.encode()), zeros])]
    shapes += [pool.concat([zeros, lit(digits[:i].encode()), lit(b"."), lit(digits[i:].encode()), zeros]) for i in range(1, k)]
    number = pool.alt([plain, pool.seq(pool.alt(shapes), exponent)])
    return pool.seq(lit(b"-"), number) if v < 0 else number


def _without_exponents(text: bytes) -> tuple[Any] | None:
    """``(value,)`` of a JSON text whose numbers have no exponent (``value_texts`` of such a
    number is a superset), else ``None``."""
    exponents: list[str] = []

    def number(s: str) -> float:
        if "e" in s or "E" in s:
            exponents.append(s)
        return float(s)

    try:
        value = json.loads(text.decode("utf-8"), parse_float=number)
    except ValueError:
        return None
    return None if exponents else (value,)


class UniqueItems:
    """The frame data of unique arrays and their items in one pushdown guide (interned, thread-safe).

    * A unique array's data is a *set id*: the values of the items written so far (0: none).
    * An item's data is an *item id*: its text so far, the set of its array, and what of the set's
      spellings (:func:`value_texts`) may still follow that text: a term, ``NOTHING`` once the text
      spells none of them (0 is the empty text of an empty set).
    * An item's masks depend only on its set and that term, its *mask key* (0: out of danger).

    The item automaton itself is walked whatever the set (its walks are shared by every item);
    a mask in danger drops the tokens after which only values of the set could finish the item."""

    def __init__(self, arrays: dict[int, tuple[int, ...]], roots: list[int], pool: ExprPool) -> None:
        self.arrays = dict(arrays)  # array automaton -> its item automata
        self.recording: set[int] = set().union(*arrays.values())  # the automata whose frames record their text
        self.roots = roots  # (the view's list of roots: item automata for sets are added to it)
        self.pool = pool
        self._lock = threading.Lock()
        self.texts: list[bytes] = [b""]
        self._text_bytes = 0  # (summed as texts are added: a compile cache reads memory_bytes often)
        self._text_ids: dict[bytes, int] = {b"": 0}
        self._sets: list[tuple[frozenset, tuple]] = [(frozenset(), ())]  # id -> (keys, values)
        self._set_ids: dict[frozenset, int] = {frozenset(): 0}
        self.items: list[tuple[int, int, int]] = [(0, 0, NOTHING)]  # item id -> (text id, set id, spellings left)
        self._item_ids: dict[tuple[int, int, int], int] = {(0, 0, NOTHING): 0}
        self._taken: dict[int, int] = {0: NOTHING}  # set id -> every spelling of its values
        self._after: dict[tuple[int, bytes], int] = {}
        self._alive: dict[tuple[int, int], bool] = {}
        self._items: dict[tuple[int, int], int] = {}
        self._texts_of: dict[Hashable, int] = {}  # value key -> value_texts
        self._chars: dict[str, int] = {}  # character -> its spellings in a string
        self._live: dict[int, bool] = {}
        self._witnesses: dict[int, _WitnessSearch] = {}
        self._witness_lock = threading.RLock()
        #: whether some item calls a unique array nested in it (then item frames lie below others)
        self.nested = any(pool.symbols_in(roots[i]) for i in self.recording)
        self._flat_mapping: dict[int, int] = {}  # call symbol -> the callee's language, calls inlined
        self._flat_done = SubstitutionMemo()
        self._flat_lock = threading.Lock()
        self._rests: dict[tuple[int, int], int] = {}
        self._completions: dict[int, tuple[bytes, ...] | None] = {}

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held: the item texts and ids, the sets and what was decided of them."""
        texts = self._text_bytes + 90 * len(self.texts)
        decided = len(self._after) + len(self._alive) + len(self._rests) + len(self._completions)
        return int(texts + 150 * (len(self.items) + len(self._sets) + decided))

    def flat(self, e: int) -> int:
        """``e`` (a term of an item or of a nested array) with every call inlined: the callee's
        language, calls inlined too, the uniqueness of its items aside (a superset)."""
        pool = self.pool
        called = pool.symbols_in(e)
        if not called:
            return e
        mapping = self._flat_mapping
        for k in called:  # (nested arrays and their items never recurse: compiled without recursion)
            symbol = pool.symbol(k)
            if symbol not in mapping:
                mapping[symbol] = self.flat(self.roots[k])  # (racing threads write the same term)
        with self._flat_lock:
            return substitute(pool, e, mapping, self._flat_done, symbols=True)

    def completions(self, expr: int) -> tuple[bytes, ...] | None:
        """Every string the term ``expr`` matches, when they are at most :data:`COMPLETIONS` of at
        most 64 bytes (an item left with ``a"`` or ``"`` to write); else ``None``. Depth first,
        one derivative per byte class; a live class of more than :data:`COMPLETIONS` bytes
        answers ``None`` at once (each of its bytes begins another completion)."""
        got = self._completions.get(expr, ())
        if got == ():
            got = self._completions[expr] = self._enumerate(self.flat(expr))
        return got

    def _enumerate(self, start: int) -> tuple[bytes, ...] | None:
        pool = self.pool
        found: list[bytes] = []
        todo, steps = [(start, b"")], 0
        while todo and steps < 16 * COMPLETIONS:
            e, text = todo.pop()
            steps += 1
            if pool.nullable(e):
                found.append(text)
                if len(found) > COMPLETIONS:
                    return None
            nexts: list[tuple[int, int]] = []
            for m in pool.byte_classes(e):
                d = pool.derive(e, (m & -m).bit_length() - 1)
                if d == NOTHING:
                    continue
                if m.bit_count() > COMPLETIONS and pool.is_live(d):
                    return None
                while m:
                    nexts.append(((m & -m).bit_length() - 1, d))
                    m &= m - 1
            if nexts and len(text) >= 64:
                return None
            nexts.sort()  # (bytes pushed in order: the last is read first)
            todo.extend((d, text + bytes((b,))) for b, d in nexts)
        return None if todo else tuple(found)

    def array_rest(self, a: int, expr: int, written: int) -> int:
        """What unique array ``a`` may still read from its state of expression ``expr`` once the
        values of set ``written`` are written: each next item one outside the set (a superset:
        the next items are not kept apart from one another), calls inlined."""
        if not written:
            return self.flat(expr)
        key = (expr, written)
        got = self._rests.get(key)
        if got is None:
            pool = self.pool
            mapping = {pool.symbol(i): self.roots[self.item_automaton(i, written)] for i in self.arrays[a]}
            got = self._rests[key] = self.flat(substitute(pool, expr, mapping, symbols=True))
        return got

    def _intern(self, table: list, ids: dict, key: Any) -> int:
        got = ids.get(key)
        if got is None:
            with self._lock:
                got = ids.get(key)
                if got is None:
                    got = ids[key] = len(table)
                    table.append(key)
        return got

    # -- items ------------------------------------------------------------------------------------

    def item_start(self, written: int) -> int:
        """The item id of a new item of an array with set ``written``."""
        return self._intern(self.items, self._item_ids, (0, written, self.taken(written)))

    def read(self, item: int, b: int) -> int:
        """The item id after the item read byte ``b``."""
        text, written, left = self.items[item]
        known = len(self.texts)
        text = self._intern(self.texts, self._text_ids, self.texts[text] + bytes((b,)))
        if text >= known:
            self._text_bytes += len(self.texts[text])
        if left != NOTHING:
            left = self.pool.derive(left, b)
        return self._intern(self.items, self._item_ids, (text, written, left))

    def item_key(self, written: int, left: int) -> int:
        """The item id of the empty text of set ``written`` with spellings ``left`` ahead."""
        return self._intern(self.items, self._item_ids, (0, written, left))

    def in_danger(self, item: int) -> bool:
        """Whether item id ``item``'s text may still spell a value of its set."""
        return self.items[item][2] != NOTHING

    def mask_key(self, item: int) -> int:
        """The mask key of item id ``item``: the item id of the empty text with the same set and
        spellings left (0 when none are left: the item's masks are the item automaton's)."""
        _, written, left = self.items[item]
        return 0 if left == NOTHING else self.item_key(written, left)

    def taken(self, written: int) -> int:
        """Every spelling of the values of set ``written`` (a term)."""
        got = self._taken.get(written)
        if got is None:
            got = self._taken[written] = self.pool.alt(self._value_texts(v) for v in self._sets[written][1])
        return got

    def alive(self, expr: int, left: int) -> bool:
        """Whether an item in the item automaton's state of expression ``expr`` (or with what the
        frames above it need first, ``expr`` their languages in a row), with the spellings
        ``left`` still ahead of it, can be finished with a value outside its set."""
        if left == NOTHING:
            return True
        k = (expr, left)
        got = self._alive.get(k)
        if got is None:
            got = self._alive[k] = self.pool.is_live(self.pool.minus(self.flat(expr), left))
        return got

    def text(self, item: int) -> bytes:
        return self.texts[self.items[item][0]]

    def after_item(self, written: int, text: bytes) -> int:
        """The set id after an item spelled ``text`` joins set ``written``; -1 if its value is in
        the set already (or the text is not one JSON value)."""
        key = (written, text)
        got = self._after.get(key)
        if got is None:
            try:
                value = json.loads(text.decode("utf-8"))
            except ValueError:
                got = -1
            else:
                keys, values = self._sets[written]
                k = value_key(value)
                if k in keys:
                    got = -1
                else:
                    now = keys | {k}
                    with self._lock:
                        got = self._set_ids.get(now)
                        if got is None:
                            got = self._set_ids[now] = len(self._sets)
                            self._sets.append((now, (*values, value)))
            self._after[key] = got
        return got

    def item_automaton(self, item: int, written: int) -> int:
        """Item automaton ``item`` without the texts of set ``written``, as an automaton of the view
        (for distances and for whether another item can be written; the items themselves are
        walked in the item automaton)."""
        if not written:
            return item
        key = (item, written)
        got = self._items.get(key)
        if got is None:
            with self._lock:
                got = self._items.get(key)
                if got is None:
                    self.roots.append(self.pool.minus(self.flat(self.roots[item]), self.taken(written)))
                    got = len(self.roots) - 1
                    self._items[key] = got
        return got

    def _value_texts(self, v: Any) -> int:
        key = value_key(v)
        got = self._texts_of.get(key)
        if got is None:
            got = self._texts_of[key] = value_texts(self.pool, v, self._chars)
        return got

    def exhausted(self, item: int, written: int, autos: Any) -> bool:
        """Whether item automaton ``item`` can spell no value outside set ``written``."""
        if not written or self._witness_outside(item, self._sets[written][0], autos):
            return False
        k = self.item_automaton(item, written)
        got = self._live.get(k)
        if got is None:
            root = self.roots[k]
            got = self._live[k] = root != NOTHING and self.pool.is_live(root)
        return not got

    def spare(self, item: int, written: int, autos: Any) -> bool:
        """Whether item automaton ``item`` has two values outside set ``written`` among its
        witnesses: then it is not :meth:`exhausted` with one more value written, whatever it is."""
        return self._witness_outside(item, self._sets[written][0], autos, 2)

    def _witness_outside(self, item: int, keys: frozenset, autos: Any, need: int = 1) -> bool:
        """Whether one of a few short texts of item automaton ``item`` (at most
        :data:`WITNESSES`) spells a value outside ``keys``: then another item can be written. A
        best-first search towards the end of an item (at most :data:`WITNESS_STATES` steps; two
        bytes per way on, whitespace bytes skipped where another byte goes on: outside a string
        they spell no new value), kept per item automaton and taken further only while fewer than
        ``need`` values it found are outside ``keys`` (a set of one item needs two values, not all of them)."""
        with self._witness_lock:
            search = self._witnesses.get(item)
            if search is None:
                auto = autos(item).auto
                search = self._witnesses[item] = _WitnessSearch(auto, [(_length_at_least(auto, 0), 0, 0, b"")])
            if len(search.found - keys) >= need:
                return True
            auto, heap, found = search.auto, search.heap, search.found
            while search.steps < WITNESS_STATES and heap and len(found) < WITNESSES:
                search.steps += 1
                _, _, q, text = heapq.heappop(heap)
                for t, ways in _ways_on(auto.table_for((q,))[q]):
                    for b in ways:
                        heapq.heappush(heap, (len(text) + 1 + _length_at_least(auto, t), next(search.order), t, text + bytes((b,))))
                if auto.finals[q]:
                    value = _without_exponents(text)
                    if value is not None:
                        key = value_key(value[0])
                        found.add(key)
                        if key not in keys and len(found - keys) >= need:
                            return True
            return False
