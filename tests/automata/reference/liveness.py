"""Liveness of the terms of an expression pool that hold an intersection or a complement: such a
term can match nothing without being ``NOTHING``, so whether it still matches some string is
searched for, over its derivatives, and remembered (:class:`Liveness`, one per
:class:`~structgen.automata.expr.ExprPool`).

Two searches: :meth:`Liveness.liveness`, best-first towards the end of a string, for "does any
string match" (the compiler's algebra and the lazy automata's dead states ask that; it first tries
a guess read off the term's structure, the shortest string of an intersection's most demanding
plain part, and checks it by derivatives: a witness without a search), and
:meth:`Liveness.witness_length`, breadth-first, for the length of a shortest string (budgets).
Both stop after a given number of terms; a search that gives up takes its term as dead: sound,
since nothing is allowed without a witness of a completion.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> digits, letters = pool.star(pool.byte_range(48, 57)), pool.star(pool.byte_range(97, 122))
    >>> pool.search.liveness(pool.both((pool.seq(pool.byte_range(48, 57), digits), letters)))
    False
    >>> pool.search.witness_length(pool.minus(digits, pool.literal(b"")))
    1
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Iterator, Optional

__all__ = ["INF", "LIVENESS_LIMIT", "RELAXED_COUNTER", "Liveness"]

#: A search (:meth:`Liveness.liveness`, :meth:`Liveness.witness_length`) gives up past this many
#: terms: the term is then taken as dead (sound: nothing is allowed that has no witness of a completion).
LIVENESS_LIMIT = 20_000

#: The longest witness read off a term's structure (:meth:`Liveness.shortest_text`).
WITNESS_LENGTH = 512
#: How many guessed strings a liveness question tries before it searches (:meth:`Liveness._guesses`).
GUESSES = 8
#: A plain term is varied (its choices' other members) only while its strings may be this short.
GUESSED_LENGTH = 64
#: Counters above this are read as ``*`` or ``+`` in the superset that may prove a term empty
#: without a search over every count (:meth:`Liveness._relaxed`).
RELAXED_COUNTER = 16
#: The length of nothing (no string matches).
INF = 1 << 60
_INF = INF
NOTHING = 0  # (the pool's empty language)


class Liveness:
    """The liveness facts of one pool's algebraic terms, searched for on demand and remembered."""

    def __init__(self, pool: Any, kinds: dict[str, int]) -> None:  # (pool: the ExprPool that holds it)
        self.pool = pool
        self.kinds = kinds
        self.witness: dict[int, int] = {}  # algebraic term -> length of its shortest string (INF: empty)
        self.gave_up: set[int] = set()  # algebraic terms whose search ran out (taken as empty)
        self.alive: set[int] = set()  # algebraic terms some string is known to match (length unknown)
        self.lower_dfa: dict[int, list[int]] = {}  # embedded automaton -> its states' shortest lengths
        self._texts: dict[int, Optional[bytes]] = {}  # plain term -> a shortest string (shortest_text)
        self._guess_texts: dict[int, list[bytes]] = {}  # term -> strings it may match (_guesses)
        self._relax: dict[int, int] = {}  # term -> a superset without counters (_relaxed)
        #: a cheap verdict on a term's liveness, asked before a search (``None``: not known)
        self.proof: Callable[[int], Optional[bool]] | None = None

    def state(self) -> dict[str, object]:
        """What pickling keeps (a search that gave up must not find a witness after a reload)."""
        return {"witness": self.witness, "gave_up": self.gave_up, "alive": self.alive}

    def restore(self, state: dict) -> None:
        self.witness = dict(state.get("witness", {}))
        self.gave_up = set(state.get("gave_up", ()))
        self.alive = set(state.get("alive", ()))

    def liveness(self, e: int, limit: int = LIVENESS_LIMIT) -> Optional[bool]:
        """Whether some string matches ``e``, searching up to ``limit`` terms: ``None`` when the
        search gave up (``e`` is then taken as dead from here on).

        A best-first search over derivatives (byte classes, then calls and guards), the term with
        the smallest :meth:`lower_bound` first (so it heads for the end of the string), that
        stops at the first term known to match something: a nullable one, or one without
        intersection or complement (those always match a string). The terms on the path found are
        remembered as live, and when the search runs out every term it saw is dead."""
        if e == NOTHING:
            return False
        if self.witness.get(e) == _INF:
            return None if e in self.gave_up else False
        verdict = self._verdict(e)
        if verdict is not None:
            return verdict
        if self._guessed(e):
            self.alive.add(e)
            return True
        if self._relaxed_is_dead(e, limit):
            self.witness[e] = _INF
            return False
        parent: dict[int, int] = {e: -1}
        heap = [(self.lower_bound(e), 0, e)]
        while heap:
            x = heapq.heappop(heap)[2]
            for d in self._successors(x):
                if d in parent or self.witness.get(d) == _INF:
                    continue
                parent[d] = x
                verdict = self._verdict(d)
                if verdict:
                    while x >= 0:
                        self.alive.add(x)
                        x = parent[x]
                    return True
                if verdict is False:
                    continue
                heapq.heappush(heap, (self.lower_bound(d), len(parent), d))
            if len(parent) > limit:
                self.witness[e] = _INF
                self.gave_up.add(e)
                return None
        for y in parent:
            self.witness[y] = _INF
        return False

    def _relaxed_is_dead(self, e: int, limit: int) -> bool:
        """Whether :meth:`_relaxed` of ``e`` (a superset) matches nothing, searched within a
        quarter of ``limit``: then neither does ``e``. A length bound beside patterns that exclude
        each other (``maxLength: 1600`` and two ARN prefixes) made the search below walk every
        length up to the bound, and give up."""
        relaxed = self._relaxed(e)
        if relaxed == e or self.witness.get(relaxed) == _INF and relaxed not in self.gave_up:
            return relaxed != e
        if self.liveness(relaxed, limit // 4) is None:  # (gave up on the superset: forgotten, e is searched)
            self.witness.pop(relaxed, None)
            self.gave_up.discard(relaxed)
            return False
        return self.witness.get(relaxed) == _INF

    def _relaxed(self, e: int) -> int:
        """A superset of ``e`` without counters above :data:`RELAXED_COUNTER` outside complements:
        such an ``x{m,n}`` read as ``x*`` (``m`` 0) or ``x+``; a complement is kept as it is
        (relaxing inside it would take strings away). ``e`` itself where it has no such counter."""
        got = self._relax.get(e)
        if got is not None:
            return got
        pool, kinds = self.pool, self.kinds
        kind = pool.node(e)[0]
        if not pool.is_algebraic(e) and pool.largest_counter(e) <= RELAXED_COUNTER or kind == kinds["not"]:
            got = e
        elif kind == kinds["seq"]:
            heads, x = [], e
            while pool.node(x)[0] == kinds["seq"]:
                heads.append(pool.node(x)[1])
                x = pool.node(x)[2]
            got = self._relaxed(x)
            for h in reversed(heads):
                got = pool.seq(self._relaxed(h), got)
        elif kind == kinds["alt"]:
            got = pool.alt([self._relaxed(p) for p in pool.node(e)[1]])
        elif kind == kinds["and"]:
            got = pool.both([self._relaxed(p) for p in pool.node(e)[1]])
        elif kind == kinds["rep"]:
            _, x, lo, hi = pool.node(e)
            if lo > RELAXED_COUNTER or hi > RELAXED_COUNTER:
                got = pool.repeat(self._relaxed(x), min(lo, 1), None)
            else:
                got = pool.repeat(self._relaxed(x), lo, None if hi < 0 else hi)
        else:
            got = e
        self._relax[e] = got
        return got  # type: ignore[no-any-return]

    def lower_bound(self, e: int) -> int:
        """A lower bound of the length of ``e``'s strings, kept by the pool as terms are built
        (:meth:`.ExprPool.lower_bound`: an intersection's is its longest part's, a complement's 0)."""
        return self.pool.lower_bound(e)  # type: ignore[no-any-return]

    def _verdict(self, x: int) -> Optional[bool]:
        """Whether ``x`` is live as far as is known without a search (``None``: not known): a
        term without algebra, a nullable one, one searched before; a concatenation by its
        parts, a choice by its members; else the pool's :attr:`proof`. Verdicts are remembered."""
        if not self.pool.is_algebraic(x) or self.pool.nullable(x) or x in self.alive:
            return True
        known = self.witness.get(x)
        if known is not None:
            return known < _INF
        node = self.pool.node(x)
        kind = node[0]
        k = self.kinds
        got: Optional[bool]
        if kind == k["seq"]:
            both = (self._verdict(node[1]), self._verdict(node[2]))
            got = False if False in both else None if None in both else True
        elif kind == k["alt"]:
            parts = [self._verdict(p) for p in node[1]]
            got = True if True in parts else None if None in parts else False
        elif kind == k["rep"]:
            got = True if node[2] == 0 else self._verdict(node[1])
        else:
            got = None if self.proof is None else self.proof(x)

        if got:
            self.alive.add(x)
        elif got is False:
            self.witness[x] = _INF
        return got

    def _guessed(self, e: int) -> bool:
        """Whether a guess at a string of ``e`` (:meth:`_guesses`) is one: a witness without a
        search. JSON Schema's algebra mostly asks whether an over-approximation and a schema
        overlap, and the schema's smallest instance is usually in both; where a ``oneOf``
        branch's smallest (``0``) is another's, the next member of its choice (``""``) often is
        not."""
        for text in self._guesses(e):
            x = e
            for b in text:
                x = self.pool.derive(x, b)
                if x == NOTHING:
                    break
            if x != NOTHING and self.pool.nullable(x):
                return True
        return False

    def _guesses(self, e: int) -> list[bytes]:
        """Up to :data:`GUESSES` strings that may match ``e``, the likeliest first, read off its
        structure: a concatenation's first guesses with each other guess of one part, a
        choice's members in turn, an intersection through its most demanding part that has a
        guess (``[]``: none, as for a complement), a plain term by :meth:`shortest_text` (varied
        in its choices while its strings may be :data:`GUESSED_LENGTH` bytes). Memoised."""
        got = self._guess_texts.get(e)
        if got is not None:
            return got
        pool, k = self.pool, self.kinds
        node = pool.node(e)
        kind = node[0]
        out: list[bytes] = []
        if not pool.is_algebraic(e) and (kind not in (k["seq"], k["alt"]) or self.lower_bound(e) > GUESSED_LENGTH):
            first = self.shortest_text(e)
            out = [] if first is None else [first]
        elif kind == k["seq"]:
            heads, tails = self._guesses(node[1]), self._guesses(node[2])
            out = [heads[0] + t for t in tails] + [h + tails[0] for h in heads[1:]] if heads and tails else []
        elif kind == k["alt"]:
            for p in sorted(node[1], key=self.lower_bound):
                out += self._guesses(p)
                if len(out) >= GUESSES:
                    break
        elif kind == k["rep"]:
            out = [one * node[2] for one in self._guesses(node[1])]
        elif kind == k["and"]:
            for p in sorted(node[1], key=self.lower_bound, reverse=True):
                out = self._guesses(p)
                if out:
                    break
        got = self._guess_texts[e] = list(dict.fromkeys(out))[:GUESSES]
        return got

    def shortest_text(self, e: int) -> Optional[bytes]:
        """A shortest string of ``e``, read off its structure where ``e`` holds no intersection,
        complement or symbol and its strings are at most :data:`WITNESS_LENGTH` bytes; ``None``
        otherwise (memoised)."""
        if e in self._texts:
            return self._texts[e]
        got: Optional[bytes] = None
        if not self.pool.is_algebraic(e) and self.lower_bound(e) <= WITNESS_LENGTH:
            node = self.pool.node(e)
            kind = node[0]
            k = self.kinds
            if kind == k["epsilon"]:
                got = b""
            elif kind == k["bytes"]:
                mask = node[1]
                got = bytes(((mask & -mask).bit_length() - 1,))
            elif kind == k["seq"]:
                head, tail = self.shortest_text(node[1]), self.shortest_text(node[2])
                got = None if head is None or tail is None else head + tail
            elif kind == k["alt"]:
                for p in sorted(node[1], key=self.lower_bound):
                    got = self.shortest_text(p)
                    if got is not None:
                        break
            elif kind == k["rep"]:
                one = self.shortest_text(node[1])
                got = None if one is None else one * node[2]
            elif kind == k["dfa"]:
                got = self._dfa_text(node[1], node[2])
        self._texts[e] = got
        return got

    def _dfa_text(self, index: int, q: int) -> Optional[bytes]:
        """A shortest string of embedded automaton ``index`` from state ``q`` (``None``: it may call)."""
        emb = self.pool.embedded(index)
        if emb.symbols:
            return None
        lengths = self.lower_dfa.get(index)
        if lengths is None:
            lengths = self.lower_dfa[index] = emb.min_lengths({})
        if lengths[q] >= _INF:
            return None
        out = bytearray()
        while lengths[q]:
            row = emb.rows[q]
            b = next(b for b in range(256) if row[b] >= 0 and lengths[row[b]] == lengths[q] - 1)
            out.append(b)
            q = row[b]
        return bytes(out)

    def _successors(self, x: int) -> Iterator[int]:
        """The derivatives of ``x`` that are not ``NOTHING``: one per byte class, then one per symbol."""
        for mask in self.pool.byte_classes(x):
            d = self.pool.derive(x, (mask & -mask).bit_length() - 1)
            if d != NOTHING:
                yield d
        for k in self.pool.first_symbols(x):
            d = self.pool.derive_symbol(x, k)
            if d != NOTHING:
                yield d

    def witness_length(self, e: int, limit: int = LIVENESS_LIMIT) -> int:
        """The length of the shortest string of an algebraic term (``_INF``: none), by a breadth-first
        search over its derivatives (one per byte class) that ends once no term left can beat the
        best end found: a nullable term, or a term whose shortest string is known. Every term on
        the shortest path found gets its exact length (a shorter way from it would make a shorter
        path from ``e``); when the search runs out of terms every term it saw is dead. Past
        :data:`20_000` terms it stops and takes ``e`` as dead: sound (nothing is allowed without
        a witness), and never a dead end (a live term's witness path leads through terms whose own
        searches are smaller)."""
        got = self.witness.get(e)
        if got is not None:
            return got
        parent: dict[int, int] = {e: -1}
        frontier = [e]
        depth = 0
        best, found = _INF, -1  # (the shortest length found so far, and the term where its path ends)
        while frontier and depth < best:
            nxt = []
            for x in frontier:
                known = 0 if self.pool.nullable(x) else self.witness.get(x)
                if known is not None:
                    if depth + known < best:
                        best, found = depth + known, x
                    continue  # (known: _INF is dead, else its own witness ends the way)
                for mask in self.pool.byte_classes(x):
                    d = self.pool.derive(x, (mask & -mask).bit_length() - 1)
                    if d != NOTHING and d not in parent:
                        parent[d] = x
                        nxt.append(d)
                for k in self.pool.first_symbols(x):  # (a call or guard is a step too: algebra may sit after one)
                    d = self.pool.derive_symbol(x, k)
                    if d != NOTHING and d not in parent:
                        parent[d] = x
                        nxt.append(d)
                if len(parent) > limit:
                    self.witness[e] = _INF
                    self.gave_up.add(e)
                    return _INF
            frontier = nxt
            depth += 1
        if found < 0:
            for x in parent:  # (none of them reaches a final term)
                self.witness[x] = _INF
            return _INF
        # the path e -> ... -> found, lengths counted back from found's own
        path = [found]
        while parent[path[-1]] >= 0:
            path.append(parent[path[-1]])
        length = best - (len(path) - 1)
        for x in path:
            if x not in self.witness or self.witness[x] > length:
                self.witness[x] = length
            length += 1
        return self.witness[e]
