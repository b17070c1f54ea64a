"""A :class:`~.grammar.Grammar` as the terms of a network: one term per rule that may be called,
each over bytes and the symbols of the rules it uses.

A called automaton may not accept the empty string (:class:`~structgen.automata.network.Network`),
so a rule's automaton holds its *non-empty* strings, and a use of a rule that may derive the
empty string is ``symbol | ε``. Rules that derive nothing at all (their every alternative uses
a rule that never finishes) are the empty language where they are used; a rule whose only string
is the empty one is ``ε``. The analyses (which rules may be empty, which derive something, which
derive something non-empty) are least fixpoints over the rule trees.

``%json`` values are compiled by the JSON Schema front end here: a schema whose automata call one
another (a :class:`Network`) keeps its automata (:mod:`.shape` appends them to the grammar's
network, its calls renumbered); one that calls nothing is a plain term of the grammar's pool.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> from .grammar import Grammar, alt, ref, seq, term
    >>> g = Grammar("gbnf", ExprPool(), start="root")
    >>> g.add_rule("root", seq(term(g.pool.literal(b"(")), ref("root", 1), term(g.pool.literal(b")"))), line=1)
    >>> g.add_rule("x", seq(), line=2)
    >>> g.rules["root"] = alt(g.rules["root"], seq())      # root ::= "(" root ")" | ""
    >>> terms = GrammarTerms(g)
    >>> sorted(terms.nullable), terms.symbols
    (['root'], {'root': 1})
"""

from __future__ import annotations

from typing import Any, Callable

from ..automata.dfa import ByteDFA
from ..automata.expr import EPSILON, NOTHING
from ..automata.expr_rewrite import copy_term
from ..automata.markers import GUARD_FIRST
from ..automata.network import Network
from ..errors import CompileBudgetExceeded, UnsatisfiableConstraint
from .grammar import Grammar, Node, walk
from .terms import TermAlgebra

__all__ = ["GrammarTerms"]


class GrammarTerms:
    """The terms of ``grammar``'s rules: ``bodies[symbol]`` (the non-empty strings of each rule
    that derives some), ``root`` (the start rule's strings, the empty one included, after
    ``grammar.prefix``), ``names[symbol]``, and ``foreign[symbol]``: the JSON Schema networks,
    each standing for its root automaton. ``compile_json(schema)`` compiles a ``%json`` schema
    (a :class:`Network`, a ``(pool, term)`` or a :class:`ByteDFA`)."""

    def __init__(self, grammar: Grammar, compile_json: Callable[[Any], Any] | None = None) -> None:
        self.grammar = grammar
        self.pool = pool = grammar.pool
        self.algebra = TermAlgebra(pool)
        self.order = grammar.reachable()
        rules = {name: grammar.rules[name] for name in self.order}
        self.nullable = _fixpoint(rules, lambda n, s: _nullable(pool, n, s))
        self.productive = _fixpoint(rules, lambda n, s: _productive(pool, n, s))
        if grammar.start not in self.productive:
            raise UnsatisfiableConstraint(f"the start rule {grammar.start!r} derives no string (every way through it "
                                          "uses a rule that never finishes)")
        productive = self.productive
        self.nonempty = _fixpoint(rules, lambda n, s: _nonempty(pool, self.algebra, n, s, productive))
        #: rule name -> its symbol, for the rules with non-empty strings
        self.symbols: dict[str, int] = {}
        self.names: dict[int, str] = {}
        for name in self.order:
            if name in self.nonempty:
                self._new_symbol(name)
        self.foreign: dict[int, Network] = {}
        self._json: dict[int, int] = {}
        self._compile_json = compile_json
        self.bodies: dict[int, int] = {}
        for name in self.order:
            if name in self.nonempty:
                self.bodies[self.symbols[name]] = self.algebra.nonempty(self.term(rules[name]))
        self.root = pool.seq(self.term(grammar.prefix), self.term(rules[grammar.start]))
        #: the symbols never inlined into their callers (rules ``grammar.opaque`` names, JSON roots)
        self.opaque = {self.symbols[n] for n in grammar.opaque if n in self.symbols} | set(self.foreign)

    def _new_symbol(self, name: str) -> int:
        k = len(self.names) + 1
        if k >= GUARD_FIRST:
            raise CompileBudgetExceeded("rules and JSON Schema automata", GUARD_FIRST - 1, name)
        self.symbols[name] = k
        self.names[k] = name
        return k

    def term(self, node: Node) -> int:
        """The strings of tree ``node``: uses of rules as their symbols (``| ε`` where a rule may be empty)."""
        pool = self.pool
        kind = node[0]
        if kind == "term":
            return node[1]  # type: ignore[no-any-return]
        if kind == "seq":
            return pool.concat([self.term(x) for x in node[1]])
        if kind == "alt":
            return pool.alt([self.term(x) for x in node[1]])
        if kind == "rep":
            return pool.repeat(self.term(node[1]), node[2], node[3])
        if kind == "ref":
            name = node[1]
            if name in self.nonempty:
                s = pool.symbol(self.symbols[name])
                return pool.alt([s, EPSILON]) if name in self.nullable else s
            return EPSILON if name in self.nullable else NOTHING
        if kind == "json":
            return self.json_term(node[1])
        raise AssertionError(f"not a grammar node: {node!r}")

    def json_term(self, key: int) -> int:
        """The term of ``%json`` schema ``key`` (compiled once per grammar)."""
        got = self._json.get(key)
        if got is not None:
            return got
        assert self._compile_json is not None, "a grammar with %json needs a schema compiler"
        compiled = self._compile_json(self.grammar.schemas[key])
        pool = self.pool
        if isinstance(compiled, Network):
            k = self._new_symbol(f"%json #{key + 1}")
            self.foreign[k] = compiled
            got = pool.symbol(k)
        elif isinstance(compiled, ByteDFA):
            got = pool.embed(compiled)
        else:
            src, e = compiled
            got = copy_term(pool, src, e)
        self._json[key] = got
        return got


def _fixpoint(rules: dict[str, Node], holds: Callable[[Node, set[str]], bool]) -> set[str]:
    """The least set of rule names closed under ``holds(body, set)``."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, body in rules.items():
            if name not in found and holds(body, found):
                found.add(name)
                changed = True
    return found


def _nullable(pool: Any, node: Node, rules: set[str]) -> bool:
    kind = node[0]
    if kind == "term":
        return pool.nullable(node[1])  # type: ignore[no-any-return]
    if kind == "ref":
        return node[1] in rules
    if kind == "seq":
        return all(_nullable(pool, x, rules) for x in node[1])
    if kind == "alt":
        return any(_nullable(pool, x, rules) for x in node[1])
    if kind == "rep":
        return node[2] == 0 or _nullable(pool, node[1], rules)
    return False  # a JSON value


def _productive(pool: Any, node: Node, rules: set[str]) -> bool:
    kind = node[0]
    if kind == "term":
        return pool.is_live(node[1])  # type: ignore[no-any-return]
    if kind == "ref":
        return node[1] in rules
    if kind == "seq":
        return all(_productive(pool, x, rules) for x in node[1])
    if kind == "alt":
        return any(_productive(pool, x, rules) for x in node[1])
    if kind == "rep":
        return node[2] == 0 or _productive(pool, node[1], rules)
    return True  # a JSON value


def _nonempty(pool: Any, algebra: TermAlgebra, node: Node, rules: set[str], productive: set[str]) -> bool:
    """Whether ``node`` derives some non-empty string (``rules``: the rules known to)."""
    kind = node[0]
    if kind == "term":
        return pool.is_live(algebra.nonempty(node[1]))  # type: ignore[no-any-return]
    if kind == "ref":
        return node[1] in rules
    if kind == "seq":
        items = node[1]
        return all(_productive(pool, x, productive) for x in items) and any(
            _nonempty(pool, algebra, x, rules, productive) for x in items)
    if kind == "alt":
        return any(_nonempty(pool, algebra, x, rules, productive) for x in node[1])
    if kind == "rep":
        return node[3] != 0 and _nonempty(pool, algebra, node[1], rules, productive)
    return True  # a JSON value


def uses_json(grammar: Grammar) -> bool:
    """Whether some rule holds a ``%json`` value."""
    return any(n[0] == "json" for body in grammar.rules.values() for n in walk(body))
