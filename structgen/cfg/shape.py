"""The rules' terms (:mod:`.build`) shaped into a network the pushdown guide runs exactly.

A pushdown guide enters a callee when a byte it can start with comes, and keeps at most
``max_depth`` frames. Two shapes of grammar would defeat it:

- **left recursion** (``expr: expr "+" term | term``, or through other rules: ``a: b "x"``,
  ``b: a "y" | "z"``): a call that reads nothing before calling itself again would push frames
  until the depth bound, and the language would be cut at that many ``+``. The standard
  elimination (Paull's algorithm, on terms: substitute the earlier rules of a left-recursive
  group at the start of the later ones, then turn ``A = A·α | β`` into ``A = β·α*``) gives a
  grammar of the same language whose calls all start after the caller read something of its
  own, or start a rule later in the group, so a byte step pushes finitely many frames;
- **right recursion** (``list: item "," list | item``, ``ws ::= [ \\t] ws | ""``): exact, but one
  frame per item, so a list longer than the depth bound would be refused. ``A = γ·A | δ`` is
  turned into ``A = γ*·δ``, the same language in one frame.

Rules that are not recursive (after this) are inlined into their users, so a grammar's regular
parts are one lazy automaton and calls remain only where the grammar really nests. Every step
preserves the language; the terms it builds are counted, and a grammar whose elimination would
build more than ``max_terms`` raises :class:`~structgen.errors.CompileBudgetExceeded` naming the
rule (substitution can grow a term exponentially with the size of a left-recursive group).

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> from .build import GrammarTerms
    >>> from .grammar import Grammar, alt, ref, seq, term
    >>> g = Grammar("gbnf", ExprPool(), start="root")
    >>> lit = lambda s: term(g.pool.literal(s))
    >>> g.add_rule("root", ref("expr", 1), line=1)
    >>> g.add_rule("expr", alt(seq(ref("expr", 2), lit(b"+"), lit(b"1")), lit(b"1")), line=2)
    >>> net = shape_network(GrammarTerms(g))
    >>> len(net)                      # expr = "1" ("+" "1")*: inlined into the root
    1
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..automata.expr import NOTHING
from ..automata.expr_rewrite import SubstitutionMemo, copy_term, substitute
from ..automata.graphs import strongly_connected
from ..automata.markers import GUARD_FIRST
from ..automata.network import Network
from ..errors import CompileBudgetExceeded
from .build import GrammarTerms

__all__ = ["DEFAULT_MAX_TERMS", "shape_network"]

#: The most terms the recursion elimination and inlining may build for one grammar.
DEFAULT_MAX_TERMS = 500_000


def shape_network(terms: GrammarTerms, *, max_terms: int = DEFAULT_MAX_TERMS) -> Network:
    """The network of ``terms``: automaton 0 is the start rule, the others the rules that stay
    called (recursive ones), then the automata of each ``%json`` schema that calls its own."""
    return _Shaper(terms, max_terms).run()


class _Shaper:
    def __init__(self, terms: GrammarTerms, max_terms: int) -> None:
        self.terms = terms
        self.pool = terms.pool
        self.algebra = terms.algebra
        self.bodies = dict(terms.bodies)
        self.root = terms.root
        self.order = {k: i for i, k in enumerate(terms.bodies)}
        self.max_terms = max_terms
        self.first_term = len(self.pool)

    def check_budget(self, k: int) -> None:
        if len(self.pool) - self.first_term > self.max_terms:
            raise CompileBudgetExceeded("terms built to remove recursion", self.max_terms, self.terms.names[k])

    def run(self) -> Network:
        self.inline()
        self.remove_left_recursion()
        self.remove_tail_recursion()
        self.inline(cycles=True)
        self.remove_tail_recursion()
        self.inline()
        self.unfold()
        self.check_no_left_recursion()
        return self.network()

    # -- the call graph ------------------------------------------------------------------------

    def callees(self, k: int) -> list[int]:
        return [s for s in self.pool.symbols_in(self.bodies[k]) if s in self.bodies]

    def inline(self, cycles: bool = False) -> None:
        """Substitute every rule that is not recursive (and not opaque) into its users; with
        ``cycles``, also every member of a recursive group but a few that break its cycles
        (:meth:`feedback_set`), so that a group of rules that call one another in a ring
        (``expr -> term -> atom -> "(" expr ")"``) is one automaton that calls itself: a token
        that ends a name then returns through one frame, not through every level of the ring."""
        pool, bodies = self.pool, self.bodies
        mapping: dict[int, int] = {}
        done = SubstitutionMemo()
        for group in strongly_connected(list(bodies), self.callees):  # (callees first)
            for k in group:
                if mapping:
                    bodies[k] = substitute(pool, bodies[k], mapping, done, symbols=True)
            k = group[0]
            if len(group) == 1 and k not in self.terms.opaque and k not in pool.symbols_in(bodies[k]):
                mapping[pool.symbol(k)] = bodies.pop(k)
            elif cycles:
                mapping.update(self.inline_group(group))
                done = SubstitutionMemo()  # (the group's bodies went through it before their own symbols were mapped)
            self.check_budget(k)
        if mapping:
            self.root = substitute(pool, self.root, mapping, done, symbols=True)

    def inline_group(self, group: list[int]) -> dict[int, int]:
        """Inline the members of recursive ``group`` outside its feedback set into one another and
        into the members kept; their terms (to inline into the group's users too), by symbol."""
        pool, bodies = self.pool, self.bodies
        keep = self.feedback_set(group)
        rest = [k for k in group if k not in keep]
        inside = set(rest)
        local: dict[int, int] = {}
        done = SubstitutionMemo()
        order = strongly_connected(rest, lambda k: [s for s in self.callees(k) if s in inside])  # (acyclic: singletons)
        for (k,) in order:
            bodies[k] = substitute(pool, bodies[k], local, done, symbols=True)
            local[pool.symbol(k)] = bodies.pop(k)
            self.check_budget(k)
        for k in keep:
            bodies[k] = substitute(pool, bodies[k], local, done, symbols=True)
        return local

    def feedback_set(self, group: list[int]) -> set[int]:
        """Members of recursive ``group`` whose removal leaves no cycle (opaque ones always): a
        greedy choice, in each remaining cycle the member with the most calls in and out of it."""
        keep = {k for k in group if k in self.terms.opaque}
        while True:
            rest = [k for k in group if k not in keep]
            inside = set(rest)
            edges = {k: [s for s in self.callees(k) if s in inside] for k in rest}
            cyclic = [c for c in strongly_connected(rest, edges.__getitem__) if len(c) > 1 or c[0] in edges[c[0]]]
            if not cyclic:
                return keep
            for c in cyclic:
                members = set(c)
                into = {k: 0 for k in c}
                for k in c:
                    for s in edges[k]:
                        if s in members:
                            into[s] += 1
                keep.add(max(c, key=lambda k: (into[k] * sum(s in members for s in edges[k]), -self.order[k])))

    def unfold(self) -> None:
        """Substitute into the root, and into each rule that stays called, the rules it calls,
        level after level, each rule once (its own calls stay): every automaton then reads the
        outermost level of the rules it uses itself, and calls are left only where the grammar
        nests (after a ``(``, a ``[``, a ``:``...).

        A call that starts and returns inside one token costs the guide a walk of the token trie
        per place the callee may end, and a name may end after any of its letters: at the
        outermost level, where every word of the vocabulary is such a place, that was one walk per
        trie node (seconds a mask)."""
        pool, bodies = self.pool, self.bodies
        kept = {k for k in bodies if k not in self.terms.opaque}
        self.root = self._unfolded(self.root, kept)
        for k in sorted(kept, key=self.order.__getitem__):
            bodies[k] = self._unfolded(bodies[k], kept - {k})

    def _unfolded(self, e: int, allowed: set[int]) -> int:
        """``e`` unfolded (see :meth:`unfold`); as it is where that would build more terms than the
        budget allows (unfolding only spares the guide work: the calls stay exact)."""
        pool, start = self.pool, e
        done: set[int] = set()
        while True:
            mapping = {pool.symbol(k): self.bodies[k] for k in pool.symbols_in(e) if k in allowed and k not in done}
            if not mapping:
                return e
            done.update(pool.node(sym)[1] for sym in mapping)
            e = substitute(pool, e, mapping, symbols=True)
            if len(pool) - self.first_term > self.max_terms:
                return start

    # -- left recursion ------------------------------------------------------------------------

    def left_callees(self, k: int) -> list[int]:
        return [s for s in self.pool.first_symbols(self.bodies[k]) if s in self.bodies]

    def remove_left_recursion(self) -> None:
        pool, alg, bodies = self.pool, self.algebra, self.bodies
        for group in strongly_connected(list(bodies), self.left_callees):
            if len(group) == 1 and group[0] not in self.left_callees(group[0]):
                continue
            members = sorted(group, key=self.order.__getitem__)
            for i, a in enumerate(members):
                e = bodies[a]
                for b in members[:i]:  # (in order: what b brings starts with later members only)
                    if b in pool.first_symbols(e):
                        e = pool.alt([pool.seq(bodies[b], pool.derive_symbol(e, b)), alg.strip_first(e, b)])
                        self.check_budget(a)
                if a in pool.first_symbols(e):  # A = A·α | β  ->  A = β·α*
                    e = pool.seq(alg.strip_first(e, a), pool.star(pool.derive_symbol(e, a)))
                    self.check_budget(a)
                bodies[a] = e

    def check_no_left_recursion(self) -> None:
        """The invariant the guide needs: no call reads nothing before calling itself again."""
        for group in strongly_connected(list(self.bodies), self.left_callees):
            if len(group) > 1 or group[0] in self.left_callees(group[0]):
                raise AssertionError(f"left recursion left in {[self.terms.names[k] for k in group]}")

    # -- right recursion -----------------------------------------------------------------------

    def remove_tail_recursion(self) -> None:
        pool, alg = self.pool, self.algebra
        for a, e in list(self.bodies.items()):
            if a in alg.last_symbols(e):
                gamma, delta = alg.split_last(e, a)
                if gamma != NOTHING and delta != NOTHING:  # A = γ·A | δ  ->  A = γ*·δ
                    self.bodies[a] = pool.seq(pool.star(gamma), delta)
                    self.check_budget(a)

    # -- the network ---------------------------------------------------------------------------

    def network(self) -> Network:
        pool, bodies, foreign = self.pool, self.bodies, self.terms.foreign
        kept: list[int] = []
        seen: set[int] = set()
        todo = [s for s in pool.symbols_in(self.root) if s < GUARD_FIRST]
        while todo:  # (the rules the root still calls, directly or not)
            k = todo.pop()
            if k in seen:
                continue
            seen.add(k)
            kept.append(k)
            if k in bodies:
                todo.extend(s for s in pool.symbols_in(bodies[k]) if s < GUARD_FIRST)
        own = sorted((k for k in kept if k not in foreign), key=self.order.__getitem__)
        renumber = {k: i + 1 for i, k in enumerate(own)}
        size = len(own) + 1
        for k in sorted(k for k in kept if k in foreign):
            renumber[k] = size
            size += len(foreign[k])
        if size > GUARD_FIRST:
            raise CompileBudgetExceeded("automata in the grammar's network", GUARD_FIRST, self.terms.grammar.start)
        mapping = {pool.symbol(k): pool.symbol(v) for k, v in renumber.items() if k != v}
        done = SubstitutionMemo()
        exprs = [substitute(pool, self.root, mapping, done, symbols=True)]
        exprs += [substitute(pool, bodies[k], mapping, done, symbols=True) for k in own]
        required: dict[int, int] = {}
        unique: dict[int, tuple[int, ...]] = {}
        for k in sorted(k for k in kept if k in foreign):
            net, base = foreign[k], renumber[k]
            memo: dict[int, int] = {}
            exprs += [copy_term(pool, net.pool, e, base, memo) for e in net.exprs]
            required.update((a + base, bits) for a, bits in net.required.items())
            unique.update((a + base, tuple(i + base for i in items)) for a, items in net.unique_items.items())
        return Network.from_exprs(pool, exprs, required=required, unique_items=unique)
