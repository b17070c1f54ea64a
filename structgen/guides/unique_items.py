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

The item texts, item ids, sets and spellings are native (``cpp/engine/unique_data.h``, JSON values
in ``cpp/engine/json_values.h``); the searches over the item automata (liveness, witnesses,
completions) stay here.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> from structgen.automata.lazy import LazyAutomaton
    >>> texts = LazyAutomaton(pool, value_texts(pool, b'{"a": [1, "x"]}'))
    >>> [texts.accepts(t) for t in (b'{"a":[1,"x"]}', b'{ "a" : [1.0, "\\u0078"] }', b'{"a":[1,"y"]}')]
    [True, True, False]
    >>> value_key(b'[1, {"a": true, "b": null}]') == value_key(b'[1.0,{"b":null,"a":true}]') != value_key(b'[true]')
    True
"""

from __future__ import annotations

import heapq
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .._engine import UniqueData, json_value_key, json_value_texts
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


def value_key(text: bytes, exponents: bool = True) -> bytes | None:
    """A key equal for the JSON values that JSON Schema calls equal (numbers by value, objects
    whatever their key order, ``true`` apart from ``1``), of the value of one JSON text; ``None``
    where ``text`` is not one JSON value (or, ``exponents`` false, a number of it has an exponent)."""
    return json_value_key(text, exponents)


def value_texts(pool: ExprPool, text: bytes) -> int:
    """Every JSON text of the value of the JSON text ``text`` (any whitespace, any escape, any
    spelling of a number with its significant digits, any key order): a term of ``pool``.
    Numbers: a superset (any exponent). ``ValueError`` where ``text`` is not one JSON value."""
    return json_value_texts(pool, text)


@dataclass
class _WitnessSearch:
    """A search for the values an item automaton spells (see ``UniqueItems._witness_outside``)."""

    auto: Any  # the item's LazyAutomaton
    heap: list  # (length at least, tie, state, text so far)
    found: dict[bytes, bytes] = field(default_factory=dict)  # value key -> the text found
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


class UniqueItems:
    """The frame data of unique arrays and their items in one pushdown guide (interned natively in
    :attr:`data`; the searches here are thread-safe).

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
        #: the texts, item ids, sets and spellings (native; one call each, under the GIL)
        self.data = data = UniqueData(pool)
        #: the item id of a new item of an array with set ``written``
        self.item_start = data.item_start
        #: the item id after item ``item`` read byte ``b``
        self.read = data.read
        #: the item id of the empty text of set ``written`` with spellings ``left`` ahead
        self.item_key = data.item_key
        #: the mask key of an item id: the item id of the empty text with the same set and spellings
        #: left (0 when none are left: the item's masks are the item automaton's)
        self.mask_key = data.mask_key
        #: whether an item id's text may still spell a value of its set
        self.in_danger = data.in_danger
        #: what of its set's spellings may still follow an item id's text (a term)
        self.left = data.left
        #: the set of an item id's array
        self.written = data.written
        #: an item id's text so far
        self.text = data.text
        #: every spelling of the values of a set (a term)
        self.taken = data.taken
        #: the set id after an item spelled ``text`` joins set ``written``; -1 if its value is in
        #: the set already (or the text is not one JSON value)
        self.after_item = data.after_item
        self._items: dict[tuple[int, int], int] = {}
        self._live: dict[int, bool] = {}
        self._witnesses: dict[int, _WitnessSearch] = {}
        self._witness_lock = threading.RLock()
        self._outside: dict[tuple[int, int, int], bool] = {}  # (item automaton, set, need) -> _witness_outside
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
        decided = len(self._rests) + len(self._completions) + len(self._items) + len(self._live) + len(self._outside)
        return int(self.data.memory_bytes + 150 * decided)

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

    def alive(self, expr: int, left: int) -> bool:
        """Whether an item in the item automaton's state of expression ``expr`` (or with what the
        frames above it need first, ``expr`` their languages in a row), with the spellings
        ``left`` still ahead of it, can be finished with a value outside its set (kept natively)."""
        return left == NOTHING or self.data.alive(self.flat(expr), left)

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

    def exhausted(self, item: int, written: int, autos: Any) -> bool:
        """Whether item automaton ``item`` can spell no value outside set ``written``."""
        if not written or self._witness_outside(item, written, autos):
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
        return self._witness_outside(item, written, autos, 2)

    def _witness_outside(self, item: int, written: int, autos: Any, need: int = 1) -> bool:
        """Whether one of a few short texts of item automaton ``item`` (at most
        :data:`WITNESSES`) spells a value outside set ``written``: then another item can be written. A
        best-first search towards the end of an item (at most :data:`WITNESS_STATES` steps; two
        bytes per way on, whitespace bytes skipped where another byte goes on: outside a string
        they spell no new value), kept per item automaton and taken further only while fewer than
        ``need`` values it found are outside the set (a set of one item needs two values, not all of them)."""
        known = self._outside.get((item, written, need))
        if known is not None:  # (a set's answer stays: found values stay found, and a search that ran out stays out)
            return known
        with self._witness_lock:
            got = self._outside[(item, written, need)] = self._search_outside(item, written, autos, need)
        return got

    def _search_outside(self, item: int, written: int, autos: Any, need: int) -> bool:
        """:meth:`_witness_outside`'s search (the caller holds the lock)."""
        search = self._witnesses.get(item)
        if search is None:
            auto = autos(item).auto
            search = self._witnesses[item] = _WitnessSearch(auto, [(_length_at_least(auto, 0), 0, 0, b"")])
        has_key = self.data.has_key
        outside = sum(not has_key(written, k) for k in search.found)
        if outside >= need:
            return True
        auto, heap, found = search.auto, search.heap, search.found
        while search.steps < WITNESS_STATES and heap and len(found) < WITNESSES:
            search.steps += 1
            _, _, q, text = heapq.heappop(heap)
            for t, ways in _ways_on(auto.table_for((q,))[q]):
                for b in ways:
                    heapq.heappush(heap, (len(text) + 1 + _length_at_least(auto, t), next(search.order), t, text + bytes((b,))))
            if auto.finals[q]:
                key = json_value_key(text, False)  # (value_texts of a number with an exponent is a superset)
                if key is not None and key not in found:
                    found[key] = text
                    if not has_key(written, key):
                        outside += 1
                        if outside >= need:
                            return True
        return False
