"""The reference (pure Python) expression pool the native one replaced: kept only for the
differential tests (tests/automata/test_native_differential.py). Byte regular expressions as hash-consed terms, and their derivatives: automata built lazily.

An :class:`ExprPool` holds expressions over bytes as integer ids (``NOTHING`` = 0 is the empty
language, ``EPSILON`` = 1 the empty string). Constructors simplify as they build (``∅·x = ∅``,
``ε·x = x``, alternatives flattened, sorted and deduplicated, byte sets merged), so two equal
expressions built twice are one id, and an expression is ``NOTHING`` exactly when its language is
empty. The *derivative* of an expression by a byte (Brzozowski) is the expression of what may
follow that byte; the states of an automaton are expressions, and a state's transitions are
computed the first time a walk needs them (:mod:`.lazy`): nothing is built for a part of the
language that generation never reaches, and no whole automaton is ever determinised or minimised.

Kinds of terms:

- a byte set (one byte of a 256-bit mask);
- concatenation, alternation;
- bounded repetition ``x{lo,hi}`` as **one term with counters**: its derivative is
  ``d(x)·x{lo-1,hi-1}``, so ``maxLength: 1024`` is a number in a term, not 1,024 copies;
- a *symbol* ``k`` (a call of automaton ``k`` of a network, or a guard: zero-width steps a
  pushdown guide takes, see :mod:`.markers`), read by :meth:`ExprPool.derive_symbol`;
- an embedded :class:`~.dfa.ByteDFA` at one of its states (look-arounds, algebra results,
  document spans: automata built eagerly elsewhere).

Example:
    >>> pool = ExprPool()
    >>> digit = pool.byte_range(ord("0"), ord("9"))
    >>> e = pool.seq(pool.repeat(digit, 1, 3), pool.literal(b"!"))   # [0-9]{1,3}!
    >>> for b in b"12!":
    ...     e = pool.derive(e, b)
    >>> pool.nullable(e), pool.derive(pool.derive(pool.derive(pool.derive(
    ...     pool.seq(pool.repeat(digit, 1, 3), pool.literal(b"!")), 49), 50), 51), 52) == NOTHING
    (True, True)
"""

from __future__ import annotations

import threading
from typing import Iterable, Optional, Sequence

from structgen.automata.byte_masks import ALL_BYTES, byte_mask, bytes_of_mask
from structgen.automata.dfa import ByteDFA
from .embedded import EmbeddedDfa
from .expr_firsts import NO_SYMBOLS as _NO_SYMBOLS
from .expr_firsts import Firsts
from .liveness import INF, LIVENESS_LIMIT, Liveness
from .utf8_terms import code_points_expr

__all__ = ["ALL_BYTES", "EPSILON", "KINDS", "NOTHING", "ExprPool", "byte_mask", "bytes_of_mask"]

NOTHING = 0
EPSILON = 1
_BIG = 1 << 62  # (sizes stop there; the largest counter of an intersection)

# term kinds (the first item of a node tuple)
_NOTHING, _EPSILON, _BYTES, _SEQ, _ALT, _REP, _SYM, _DFA, _AND, _NOT = range(10)
#: The kind of a term, by name: the first item of :meth:`ExprPool.node`.
KINDS = {
    "nothing": _NOTHING, "epsilon": _EPSILON, "bytes": _BYTES, "seq": _SEQ, "alt": _ALT, "rep": _REP, "sym": _SYM,
    "dfa": _DFA, "and": _AND, "not": _NOT,
}


class ExprPool:
    """Hash-consed byte expressions and their derivatives (see the module docstring).

    Thread-safe: interning is locked; memo tables may be filled twice by racing threads with the
    same ids. Everything a pool builds stays until the pool is dropped (a guide holds its pool).
    """

    def __init__(self) -> None:
        self._nodes: list[tuple] = []
        self._ids: dict[tuple, int] = {}
        self._nullable: list[bool] = []
        self._algebraic: list[bool] = []  # the term holds an intersection or a complement
        self._size: list[int] = []  # see size(); these four are kept as terms are interned
        self._counter: list[int] = []  # see largest_counter()
        self._symbols: list[frozenset[int]] = []  # see symbols_in()
        self._lower: list[int] = []  # see lower_bound()
        self._lock = threading.Lock()
        #: the liveness of algebraic terms, searched for and remembered (:class:`.Liveness`)
        self.search = Liveness(self, KINDS)
        self._derived: dict[int, int] = {}  # e << 8 | byte -> derivative
        self._derived_sym: dict[tuple[int, int], int] = {}
        self._embedded: list[EmbeddedDfa] = []
        self._embedded_ids: dict[int, int] = {}  # id(dfa) -> index
        self._held: list[ByteDFA] = []
        self._code_points: dict[tuple[tuple[int, int], ...], int] = {}
        self._one_byte = [-1] * 256  # byte -> its term, once made (literals)
        #: what terms read first: byte classes, first bytes, first symbols (:class:`.Firsts`)
        self.firsts = Firsts(self, KINDS)
        self.byte_classes, self.first_symbols = self.firsts.byte_classes, self.firsts.first_symbols
        #: facts other modules derive from terms, memoised with the pool (keys are tuples that
        #: start with the deriving module's own tag)
        self.facts: dict[tuple, object] = {}
        #: ``(template, n)``: the pool began as a copy of ``template``'s first ``n`` terms (:meth:`forked`)
        self.fork_of: tuple["ExprPool", int] | None = None
        self._intern((_NOTHING,), False)
        self._intern((_EPSILON,), True)
        #: every byte string (the complement of ``NOTHING``)
        self.anything = self.star(self.bytes_of(ALL_BYTES))

    @classmethod
    def forked(cls, template: "ExprPool") -> "ExprPool":
        """A new pool that starts with ``template``'s terms under the same ids (its memo tables
        empty): :func:`.expr_rewrite.copy_from` reads those as they are. A guide's compile
        starts as a fork of the template of shared JSON pieces instead of copying each piece it uses.

        >>> template = ExprPool()
        >>> ab = template.literal(b"ab")
        >>> pool = ExprPool.forked(template)
        >>> pool.node(ab) == template.node(ab) and pool.fork_of == (template, len(template))
        True
        """
        pool = cls()
        with template._lock:
            n = len(template._nodes)
            pool._nodes, pool._ids = template._nodes[:n], dict(template._ids)
            pool._nullable, pool._algebraic = template._nullable[:n], template._algebraic[:n]
            pool._size, pool._counter = template._size[:n], template._counter[:n]
            pool._symbols, pool._lower = template._symbols[:n], template._lower[:n]
            pool._embedded, pool._embedded_ids = list(template._embedded), dict(template._embedded_ids)
            pool._held, pool._one_byte = list(template._held), list(template._one_byte)
        pool.fork_of = (template, n)
        return pool

    def __len__(self) -> int:
        return len(self._nodes)

    def __getstate__(self) -> dict[str, object]:
        # the terms and the embedded automata; memo tables are rebuilt on use, the lock anew
        return {
            "nodes": self._nodes, "nullable": self._nullable, "algebraic": self._algebraic,
            "embedded": [e.state() for e in self._embedded],
            "search": self.search.state(),
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__()  # type: ignore[misc]
        self._nodes = list(state["nodes"])  # type: ignore[call-overload]
        self._nullable = list(state["nullable"])  # type: ignore[call-overload]
        self._algebraic = list(state["algebraic"])  # type: ignore[call-overload]
        self._ids = {key: i for i, key in enumerate(self._nodes)}
        self.search.restore(state.get("search", {}))  # type: ignore[arg-type]
        for rows, finals, symbols in state["embedded"]:  # type: ignore[attr-defined]
            self._embedded.append(EmbeddedDfa(rows, finals, symbols))
        self._size, self._counter, self._symbols, self._lower = [], [], [], []
        for key in self._nodes:  # (parts before wholes: ids ascend as terms are built)
            self._note(key)

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held by the terms, the memo tables and the embedded automata."""
        memo = len(self._derived) + len(self._derived_sym) + len(self.firsts.classes) + len(self.facts)
        dfas = sum(4 * 256 * len(e.rows) for e in self._embedded)
        return int(150 * len(self._nodes) + 100 * memo + dfas)

    def _intern(self, key: tuple, nullable: bool, algebraic: bool = False) -> int:
        got = self._ids.get(key)
        if got is not None:
            return got
        with self._lock:
            got = self._ids.get(key)
            if got is None:
                got = len(self._nodes)
                self._nodes.append(key)
                self._nullable.append(nullable)
                self._algebraic.append(algebraic)
                self._note(key)
                self._ids[key] = got
        return got

    def _note(self, key: tuple) -> None:
        """Append the size, largest counter, symbols and lower bound of the new term ``key`` (from its parts')."""
        kind, size, counter, symbols, lower = key[0], self._size, self._counter, self._symbols, self._lower
        if kind == _SEQ:
            self._note_seq(key[1], key[2])
        elif kind == _ALT or kind == _REP:
            parts = key[1] if kind == _ALT else key[1:2]
            n = c = 0
            syms = _NO_SYMBOLS
            for p in parts:
                n += size[p]
                c = max(c, counter[p])
                if symbols[p]:
                    syms = symbols[p] if not syms else syms | symbols[p]
            if kind == _REP:
                lo, hi = key[2], key[3]
                n *= max(hi if hi >= 0 else lo + 1 if lo >= 2 else 1, 1)
                c = max(c, lo, hi)
                lower.append(0 if lo == 0 else min(INF, lo * lower[key[1]]))
            else:
                lower.append(min(lower[p] for p in parts))
            size.append(min(n, _BIG))
            counter.append(c)
            symbols.append(syms)
        elif kind == _SYM:
            size.append(1), counter.append(0), symbols.append(frozenset((key[1],))), lower.append(0)
        elif kind == _DFA:
            emb = self._embedded[key[1]]
            size.append(len(emb.rows)), counter.append(0), lower.append(emb.min_lengths({})[key[2]])
            symbols.append(frozenset(k for es in emb.symbols.values() for k, _ in es) or _NO_SYMBOLS)
        else:  # (an intersection or a complement hides its parts' counters and symbols: see clamp)
            size.append(1 if kind == _BYTES else 0), counter.append(_BIG if kind == _AND else 0), symbols.append(_NO_SYMBOLS)
            lower.append(1 if kind == _BYTES else INF if kind == _NOTHING else max(lower[p] for p in key[1]) if kind == _AND else 0)

    def _note_seq(self, a: int, b: int) -> None:
        """:meth:`_note` of a new ``a·b`` (most terms: no loop, no dispatch)."""
        lower, size, counter, symbols = self._lower, self._size, self._counter, self._symbols
        lower.append(min(INF, lower[a] + lower[b]))
        size.append(size[a] + size[b])
        counter.append(counter[a] if counter[a] >= counter[b] else counter[b])
        symbols.append(symbols[b] if not symbols[a] else symbols[a] if not symbols[b] else symbols[a] | symbols[b])

    def _new_seq(self, a: int, b: int) -> int:
        """The id of ``a·b`` (``a`` no concatenation, neither part ``NOTHING`` or ``EPSILON``),
        interned under the lock: what :meth:`_intern` does, without its calls."""
        key = (_SEQ, a, b)
        with self._lock:
            got = self._ids.get(key)
            if got is None:
                got = len(self._nodes)
                self._nodes.append(key)
                self._nullable.append(self._nullable[a] and self._nullable[b])
                self._algebraic.append(self._algebraic[a] or self._algebraic[b])
                self._note_seq(a, b)
                self._ids[key] = got
        return got

    # -- constructors ---------------------------------------------------------------------------

    def bytes_of(self, mask: int) -> int:
        """One byte of ``mask`` (a 256-bit int); ``NOTHING`` for the empty mask."""
        if not mask:
            return NOTHING
        return self._intern((_BYTES, mask), False)

    def byte_range(self, lo: int, hi: int) -> int:
        """One byte in ``lo..hi`` (inclusive)."""
        return self.bytes_of(((1 << (hi + 1)) - 1) & ~((1 << lo) - 1))

    def code_points(self, intervals: Sequence[tuple[int, int]]) -> int:
        """One character whose code point is in ``intervals`` (inclusive), as UTF-8 bytes (cached)."""
        key = tuple(intervals)
        got = self._code_points.get(key)
        if got is None:
            got = self._code_points[key] = code_points_expr(self, key)
        return got

    def literal(self, data: bytes) -> int:
        """Exactly the bytes ``data``."""
        one = self._one_byte
        for b in data:
            if one[b] < 0:
                one[b] = self.bytes_of(1 << b)
        return self.chain([one[b] for b in data], EPSILON)

    def chain(self, heads: Sequence[int], tail: int) -> int:
        """``heads[0]`` then ``heads[1]`` ... then ``tail``, where no head is a concatenation: the
        right-nested chain in one loop (a literal, the parts of :func:`.concat_all`; most terms
        a compile makes are links of such chains). The links not made yet are made under one
        hold of the lock, each as :meth:`_new_seq` makes it."""
        if tail == NOTHING or NOTHING in heads:
            return NOTHING
        ids, out = self._ids, tail
        i = len(heads) - 1
        while i >= 0:  # (the links made before: no lock)
            h = heads[i]
            if h != EPSILON:
                if out == EPSILON:
                    out = h
                else:
                    got = ids.get((_SEQ, h, out))
                    if got is None:
                        break
                    out = got
            i -= 1
        if i < 0:
            return out
        nodes, nullable, algebraic = self._nodes, self._nullable, self._algebraic
        lower, size, counter, symbols = self._lower, self._size, self._counter, self._symbols
        with self._lock:
            while i >= 0:
                h = heads[i]
                i -= 1
                if h == EPSILON:
                    continue
                if out == EPSILON:
                    out = h
                    continue
                key = (_SEQ, h, out)
                got = ids.get(key)
                if got is None:
                    got = len(nodes)
                    nodes.append(key)
                    nullable.append(nullable[h] and nullable[out])
                    algebraic.append(algebraic[h] or algebraic[out])
                    lower.append(min(INF, lower[h] + lower[out]))
                    size.append(size[h] + size[out])
                    counter.append(counter[h] if counter[h] >= counter[out] else counter[out])
                    symbols.append(symbols[out] if not symbols[h] else symbols[h] if not symbols[out] else symbols[h] | symbols[out])
                    ids[key] = got  # (last: readers without the lock find a key only once its term is whole)
                out = got
        return out

    def seq(self, a: int, b: int) -> int:
        """``a`` then ``b``."""
        if a == NOTHING or b == NOTHING:
            return NOTHING
        if a == EPSILON:
            return b
        if b == EPSILON:
            return a
        node = self._nodes[a]
        if node[0] == _SEQ:  # kept right-nested: (x·y)·b = x·(y·b), a long chain without recursion
            heads = []
            while node[0] == _SEQ:
                heads.append(node[1])
                a = node[2]
                node = self._nodes[a]
            return self.chain(heads, self.seq(a, b))
        got = self._ids.get((_SEQ, a, b))
        return got if got is not None else self._new_seq(a, b)

    def concat(self, parts: Sequence[int]) -> int:
        """The concatenation of ``parts`` in order."""
        out = EPSILON
        for p in reversed(parts):
            out = self.seq(p, out)
        return out

    def alt(self, parts: Iterable[int]) -> int:
        """Any of ``parts`` (flattened, deduplicated; byte sets merged)."""
        flat: set[int] = set()
        nodes = self._nodes
        for p in parts:
            node = nodes[p]
            if node[0] == _ALT:
                flat.update(node[1])
            elif p != NOTHING:
                flat.add(p)
        if not flat:
            return NOTHING
        if len(flat) > 1:
            byte_sets = [p for p in flat if nodes[p][0] == _BYTES]
            if len(byte_sets) > 1:
                mask = 0
                for p in byte_sets:
                    mask |= nodes[p][1]
                    flat.discard(p)
                flat.add(self.bytes_of(mask))
            self._merge_counts(flat)
            if EPSILON in flat and any(self._nullable[p] for p in flat if p != EPSILON):
                flat.discard(EPSILON)  # (already in a nullable alternative)
        if len(flat) == 1:
            return next(iter(flat))
        members = tuple(sorted(flat))
        return self._intern(
            (_ALT, members), any(self._nullable[p] for p in members), any(self._algebraic[p] for p in members)
        )

    def _merge_counts(self, flat: set[int]) -> None:
        """``h·x{a,b}·t | h·x{c,d}·t`` is ``h·x{min(a,c),max(b,d)}·t`` where the counts meet or touch,
        and ``h·t`` joins a count from 1 (as the native pool's ``merge_counts``)."""
        nodes, groups = self._nodes, {}
        for p in flat:
            node = nodes[p]
            head, rep, tail = None, None, EPSILON
            if node[0] == _REP:
                rep = node
            elif node[0] == _SEQ:
                if nodes[node[1]][0] == _REP:
                    rep, tail = nodes[node[1]], node[2]
                elif nodes[node[2]][0] == _REP:
                    head, rep = node[1], nodes[node[2]]
                elif nodes[node[2]][0] == _SEQ and nodes[nodes[node[2]][1]][0] == _REP:
                    head, rep, tail = node[1], nodes[nodes[node[2]][1]], nodes[node[2]][2]
            if rep is not None:
                groups.setdefault((head, rep[1], tail), []).append((rep[2], rep[3], p))
        gone, made = set(), []
        for (head, body, tail), counts in groups.items():
            counts.sort()
            i = 0
            while i < len(counts):
                lo, hi, _ = counts[i]
                j = i + 1
                while j < len(counts) and (hi < 0 or counts[j][0] <= hi + 1):
                    hi = -1 if hi < 0 or counts[j][1] < 0 else max(hi, counts[j][1])
                    j += 1
                zero = tail if head is None else head if tail == EPSILON else self._ids.get((_SEQ, head, tail))
                absorbed = lo <= 1 and zero in flat
                if absorbed:
                    gone.add(zero)
                if j > i + 1 or absorbed:
                    gone.update(c[2] for c in counts[i:j])
                    e = self.seq(self.repeat(body, 0 if absorbed else lo, None if hi < 0 else hi), tail)
                    made.append(e if head is None else self.seq(head, e))
                i = j
        flat -= gone
        flat.update(made)

    def optional(self, x: int) -> int:
        """``x`` or nothing at all."""
        return self.alt((x, EPSILON))

    def repeat(self, x: int, lo: int, hi: int | None) -> int:
        """``x{lo,hi}`` (``hi=None``: unbounded), one term whose counters count down."""
        if lo < 0 or (hi is not None and hi < lo):
            raise ValueError(f"a repetition {{{lo},{hi}}} is not a range")
        if hi == 0 or x == EPSILON:
            return EPSILON
        if x == NOTHING:
            return EPSILON if lo == 0 else NOTHING
        if self._nullable[x]:
            lo = 0  # x{lo,hi} = x{0,hi} when x matches the empty string
        if lo == 1 and hi == 1:
            return x
        node = self._nodes[x]
        if node[0] == _REP and node[2] == 0 and node[3] == -1 and lo <= 1:
            return x if lo == 0 else self._intern((_REP, node[1], 1, -1), False, self._algebraic[x])  # (y*)* = y*
        return self._intern((_REP, x, lo, -1 if hi is None else hi), lo == 0, self._algebraic[x])

    def star(self, x: int) -> int:
        """``x*``."""
        return self.repeat(x, 0, None)

    def symbol(self, k: int) -> int:
        """The symbol ``k`` (a call or a guard of a pushdown guide), read only by
        :meth:`derive_symbol`."""
        return self._intern((_SYM, k), False)

    def both(self, parts: Iterable[int], *, checked: bool = True) -> int:
        """The strings every one of ``parts`` matches (an intersection, built lazily: its states
        are pairs read off the parts' derivatives, so no product automaton is ever built).
        ``checked=False``: the parts are known to call nothing (the derivatives of an intersection's)."""
        flat: set[int] = set()
        for p in parts:
            if p == NOTHING:
                return NOTHING
            node = self._nodes[p]
            if node[0] == _AND:
                flat.update(node[1])
            elif p != self.anything:
                flat.add(p)
        if not flat:
            return self.anything
        if len(flat) == 1:
            return next(iter(flat))
        if checked and any(self.symbols_in(p) for p in flat):
            raise ValueError("an intersection of terms that call other automata (inline the calls first)")
        members = tuple(sorted(flat))
        return self._intern((_AND, members), all(self._nullable[p] for p in members), True)

    def negate(self, x: int, *, checked: bool = True) -> int:
        """Every byte string ``x`` does not match (a complement, built lazily). ``checked=False``:
        ``x`` is known to call nothing (the derivative of a complement's operand)."""
        if x == NOTHING:
            return self.anything
        if x == self.anything:
            return NOTHING
        node = self._nodes[x]
        if node[0] == _NOT:
            return node[1]
        if checked and self.symbols_in(x):
            raise ValueError("the complement of a term that calls other automata (inline the calls first)")
        return self._intern((_NOT, x), not self._nullable[x], True)

    def minus(self, a: int, b: int) -> int:
        """The strings of ``a`` that ``b`` does not match."""
        return NOTHING if a == NOTHING else self.both((a, self.negate(b)))

    def embed(self, dfa: ByteDFA, state: int = 0) -> int:
        """The language of ``dfa`` from ``state`` (an eager automaton inside an expression)."""
        if state < 0:
            return NOTHING
        index = self._embedded_ids.get(id(dfa))
        if index is None:
            with self._lock:
                index = self._embedded_ids.get(id(dfa))
                if index is None:
                    index = len(self._embedded)
                    self._embedded.append(EmbeddedDfa.of(dfa))
                    self._embedded_ids[id(dfa)] = index
                    self._held.append(dfa)  # (keeps id(dfa) from being reused while the pool lives)
        return self._dfa_node(index, state)

    def add_embedded(self, emb: EmbeddedDfa) -> int:
        """Register an embedded automaton built elsewhere (a rewrite of one); returns its index."""
        with self._lock:
            self._embedded.append(emb)
            return len(self._embedded) - 1

    def embed_state(self, index: int, state: int) -> int:
        """The term of embedded automaton ``index`` at ``state`` (``NOTHING`` where nothing follows)."""
        return self._dfa_node(index, state)

    def _dfa_node(self, index: int, state: int) -> int:
        if state < 0:
            return NOTHING
        emb = self._embedded[index]
        if emb.is_dead(state):
            return NOTHING
        return self._intern((_DFA, index, state), emb.finals[state])

    # -- reading --------------------------------------------------------------------------------

    def node(self, e: int) -> tuple:
        """The term ``e`` as a tuple: its kind, then its parts (see :mod:`.expr_text`)."""
        return self._nodes[e]

    def embedded(self, index: int) -> EmbeddedDfa:
        """The embedded automaton ``index`` (the first part of a ``DFA`` term)."""
        return self._embedded[index]

    def nullable(self, e: int) -> bool:
        """Whether ``e`` matches the empty string (a final state)."""
        return self._nullable[e]

    def derive(self, e: int, b: int) -> int:
        """What may follow byte ``b`` in ``e`` (memoised)."""
        key = e << 8 | b
        got = self._derived.get(key)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _BYTES:
            got = EPSILON if node[1] >> b & 1 else NOTHING
        elif kind == _SEQ:
            got = self.seq(self.derive(node[1], b), node[2])
            if self._nullable[node[1]]:
                got = self.alt((got, self.derive(node[2], b)))
        elif kind == _ALT:
            parts = node[1]
            if len(parts) > 8:  # (a trie's node, a long enumeration: only the parts that read b)
                parts = self.firsts.parts_by_byte(e, parts).get(b, ())
            got = self.alt([self.derive(p, b) for p in parts])
        elif kind == _REP:
            x, lo, hi = node[1], node[2], node[3]
            dx = self.derive(x, b)
            got = NOTHING if dx == NOTHING else self.seq(dx, self.repeat(x, max(lo - 1, 0), None if hi < 0 else hi - 1))
        elif kind == _DFA:
            got = self._dfa_node(node[1], self._embedded[node[1]].rows[node[2]][b])
        elif kind == _AND:
            got = self.both([self.derive(p, b) for p in node[1]], checked=False)
        elif kind == _NOT:
            got = self.negate(self.derive(node[1], b), checked=False)
        else:  # nothing, the empty string, a symbol
            got = NOTHING
        self._derived[key] = got
        return got

    def derive_symbol(self, e: int, k: int) -> int:
        """What may follow symbol ``k`` in ``e`` (``NOTHING`` if ``k`` cannot come first)."""
        key = (e, k)
        got = self._derived_sym.get(key)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _SYM:
            got = EPSILON if node[1] == k else NOTHING
        elif kind == _SEQ:
            got = self.seq(self.derive_symbol(node[1], k), node[2])
            if self._nullable[node[1]]:
                got = self.alt((got, self.derive_symbol(node[2], k)))
        elif kind == _ALT:
            got = self.alt([self.derive_symbol(p, k) for p in node[1]])
        elif kind == _REP:
            x, lo, hi = node[1], node[2], node[3]
            dx = self.derive_symbol(x, k)
            got = NOTHING if dx == NOTHING else self.seq(dx, self.repeat(x, max(lo - 1, 0), None if hi < 0 else hi - 1))
        elif kind == _DFA:
            got = NOTHING
            for k2, r in self._embedded[node[1]].symbols.get(node[2], ()):
                if k2 == k:
                    got = self._dfa_node(node[1], r)
        else:
            got = NOTHING
        self._derived_sym[key] = got
        return got

    def symbols_in(self, e: int) -> frozenset[int]:
        """Every symbol anywhere in ``e`` (the automata it may call, its guards)."""
        return self._symbols[e]

    def size(self, e: int) -> int:
        """About how many positions ``e`` expands to where it is copied: a byte set or a symbol
        counts 1, ``x{m,n}`` ``max(m, n)`` copies of ``x`` (``x{m,}``: ``m + 1``), a
        concatenation or a choice the sum of its parts, an embedded automaton its states."""
        return self._size[e]

    def lower_bound(self, e: int) -> int:
        """A lower bound of the length of ``e``'s strings (:data:`.liveness.INF`: none): an
        intersection's is its longest part's, a complement's 0, a symbol's 0."""
        return self._lower[e]

    def largest_counter(self, e: int) -> int:
        """The largest repetition counter in ``e`` (lower or upper; huge where it holds an
        intersection, whose liveness may depend on any counter)."""
        return self._counter[e]

    # -- liveness ---------------------------------------------------------------------------------

    def is_algebraic(self, e: int) -> bool:
        """Whether ``e`` holds an intersection or a complement: then it can be empty without being
        ``NOTHING``, and :meth:`is_live` searches for a witness."""
        return self._algebraic[e]

    def is_live(self, e: int) -> bool:
        """Whether some string matches ``e`` (see :meth:`.Liveness.is_live`)."""
        return e != NOTHING and (not self._algebraic[e] or self.search.liveness(e) is True)

    def liveness(self, e: int, limit: int = LIVENESS_LIMIT) -> Optional[bool]:
        """Whether some string matches ``e``: ``None`` when the search gave up (:meth:`.Liveness.liveness`)."""
        return self.search.liveness(e, limit)

    def witness_length(self, e: int, limit: int = LIVENESS_LIMIT) -> int:
        """The length of the shortest string of an algebraic term (:meth:`.Liveness.witness_length`)."""
        return self.search.witness_length(e, limit)
