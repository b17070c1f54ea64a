"""A parsed grammar, whatever its syntax: rules as small trees whose leaves are pool terms.

Both front ends (:mod:`.gbnf`, :mod:`.lark`) read their text into a :class:`Grammar`: one tree per
rule, built from tuples (cheap, hashable, easy to walk):

- ``("seq", (x, y, ...))`` one after the other; ``("seq", ())`` is the empty string;
- ``("alt", (x, y, ...))`` any one of them;
- ``("rep", x, lo, hi)`` ``x`` repeated ``lo`` to ``hi`` times (``hi`` ``None``: unbounded);
- ``("ref", name, line)`` the rule ``name`` (``line``: where it is used, for errors);
- ``("term", e)`` the strings of term ``e`` of the grammar's pool (a literal, a character class,
  a Lark terminal with the ignored text after it);
- ``("json", key, line)`` a JSON Schema value, ``Grammar.schemas[key]`` (Lark ``%json {...}``).

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> g = Grammar("gbnf", ExprPool(), start="root")
    >>> g.add_rule("root", seq(ref("a", 1), term(g.pool.literal(b"!"))), line=1)
    >>> g.add_rule("a", alt(term(g.pool.literal(b"x")), seq()), line=2)
    >>> sorted(g.rules), g.references("root")
    (['a', 'root'], ['a'])
"""

from __future__ import annotations

from typing import Any, Iterator

from ..automata.expr import ExprPool
from ..errors import GrammarSyntaxError

__all__ = ["Grammar", "Node", "alt", "json_value", "ref", "rep", "seq", "term", "walk"]

Node = tuple


def seq(*items: Node) -> Node:
    """One after the other (a single item stands for itself)."""
    return items[0] if len(items) == 1 else ("seq", tuple(items))


def alt(*items: Node) -> Node:
    """Any one of them."""
    return items[0] if len(items) == 1 else ("alt", tuple(items))


def rep(x: Node, lo: int, hi: int | None) -> Node:
    """``x`` repeated ``lo`` to ``hi`` times (``None``: unbounded)."""
    return ("rep", x, lo, hi)


def ref(name: str, line: int | None) -> Node:
    """The rule ``name``, used at ``line``."""
    return ("ref", name, line)


def term(e: int) -> Node:
    """The strings of pool term ``e``."""
    return ("term", e)


def json_value(key: int, line: int | None) -> Node:
    """The JSON Schema ``Grammar.schemas[key]``."""
    return ("json", key, line)


def walk(node: Node) -> Iterator[Node]:
    """Every node of a tree (``node`` first), without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        kind = n[0]
        if kind == "seq" or kind == "alt":
            stack.extend(reversed(n[1]))
        elif kind == "rep":
            stack.append(n[1])


class Grammar:
    """Rules (name -> tree) over the terms of ``pool``, a start rule, and what the front end
    knows besides: ``prefix`` (a tree read before the start rule: Lark's ignored text),
    ``schemas`` (the ``%json`` schemas, by key), ``opaque`` (rules kept as automata of their
    own), the line where each rule is defined."""

    def __init__(self, syntax: str, pool: ExprPool, *, start: str) -> None:
        self.syntax = syntax
        self.pool = pool
        self.start = start
        self.rules: dict[str, Node] = {}
        self.lines: dict[str, int | None] = {}
        self.prefix: Node = ("seq", ())
        self.schemas: list[Any] = []
        #: rules never inlined into their users (terminals built with intersections or
        #: complements: their automata hold no calls, the way the pool's algebra wants them)
        self.opaque: set[str] = set()

    def __repr__(self) -> str:
        return f"<{self.syntax} Grammar of {len(self.rules)} rules, start {self.start!r}>"

    def add_rule(self, name: str, body: Node, *, line: int | None) -> None:
        """Define rule ``name`` (a second definition is an error)."""
        if name in self.rules:
            raise GrammarSyntaxError(self.syntax, f"rule {name!r} is defined twice (first at line {self.lines[name]})",
                                     line=line, rule=name)
        self.rules[name] = body
        self.lines[name] = line

    def references(self, name: str) -> list[str]:
        """The rules rule ``name`` uses, in order of first use."""
        seen: dict[str, None] = {}
        for n in walk(self.rules[name]):
            if n[0] == "ref":
                seen.setdefault(n[1])
        return list(seen)

    def reachable(self) -> list[str]:
        """The rules the start rule uses, itself first, in order of discovery; a rule used but
        never defined raises :class:`GrammarSyntaxError` naming where it is used."""
        if self.start not in self.rules:
            raise GrammarSyntaxError(self.syntax, f"the start rule {self.start!r} is not defined")
        order = [self.start]
        seen = {self.start}
        i = 0
        for n in walk(self.prefix):  # (the rules the prefix uses come after the start rule)
            if n[0] == "ref" and n[1] not in seen:
                seen.add(n[1])
                order.append(n[1])
        while i < len(order):
            here = order[i]
            i += 1
            if here not in self.rules:
                raise GrammarSyntaxError(self.syntax, f"rule {here!r} is used but never defined")
            for n in walk(self.rules[here]):
                if n[0] != "ref":
                    continue
                name = n[1]
                if name not in self.rules:
                    raise GrammarSyntaxError(self.syntax, f"rule {name!r} is used but never defined", line=n[2], rule=here)
                if name not in seen:
                    seen.add(name)
                    order.append(name)
        return order
