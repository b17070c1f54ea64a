"""Building terms from terms (:mod:`.expr`): concatenations of long chains, substitution of
sub-terms, copies between pools. All three walk a term without recursion, however deep it is
(a long literal is a chain of thousands of concatenations).

- :func:`concat_all`: the concatenation of terms, each one's chain unrolled first;
- :func:`substitute`: a term with some sub-terms replaced (a call symbol by the callee's term);
- :func:`copy_from`: a term of another pool, copied once (a template pool's terms, built once
  per process, shared by every compile).

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool, template = ExprPool(), ExprPool()
    >>> e = concat_all(pool, [pool.literal(b"a"), pool.symbol(1)])
    >>> b = copy_from(pool, template, template.literal(b"b"))
    >>> e2 = substitute(pool, e, {pool.symbol(1): b})
    >>> pool.nullable(pool.derive(pool.derive(e2, ord("a")), ord("b")))
    True
"""

from __future__ import annotations

import weakref
from typing import Iterable

from .expr import EPSILON, KINDS, NOTHING, ExprPool

__all__ = ["concat_all", "copy_from", "substitute"]

_BYTES, _SEQ, _ALT, _REP, _SYM, _DFA = (KINDS[k] for k in ("bytes", "seq", "alt", "rep", "sym", "dfa"))


def concat_all(pool: ExprPool, parts: Iterable[int]) -> int:
    """The concatenation of ``parts`` in order. Each part's own chain (but the last's) is
    unrolled first, so a long left operand (a long literal) costs no recursion, unlike
    :meth:`ExprPool.seq`."""
    parts = list(parts)
    if not parts:
        return EPSILON
    if NOTHING in parts:
        return NOTHING
    items: list[int] = []
    for p in parts[:-1]:
        node = pool.node(p)
        while node[0] == _SEQ:
            items.append(node[1])
            p = node[2]
            node = pool.node(p)
        if p != EPSILON:
            items.append(p)
    out = parts[-1]
    for p in reversed(items):
        out = pool.seq(p, out)  # (p is no concatenation: no recursion)
    return out


def _children(node: tuple) -> tuple[int, ...]:
    kind = node[0]
    if kind == _SEQ:
        return (node[1], node[2])
    if kind == _ALT:
        return node[1]  # type: ignore[no-any-return]
    if kind == _REP:
        return (node[1],)
    return ()


def _rebuilt(pool: ExprPool, node: tuple, done: dict[int, int]) -> int:
    """A concatenation, alternation or repetition ``node`` over the parts ``done`` maps to."""
    kind = node[0]
    if kind == _SEQ:
        head, tail = done[node[1]], done[node[2]]
        if pool.node(head)[0] != _SEQ:
            return pool.seq(head, tail)
        return concat_all(pool, (head, tail))
    if kind == _ALT:
        return pool.alt([done[p] for p in node[1]])
    return pool.repeat(done[node[1]], node[2], None if node[3] < 0 else node[3])


def substitute(pool: ExprPool, e: int, mapping: dict[int, int]) -> int:
    """``e`` with every sub-term that is a key of ``mapping`` replaced by its value; embedded
    automata are kept as they are."""
    if not mapping:
        return e
    done: dict[int, int] = {}
    stack = [e]
    while stack:
        x = stack[-1]
        if x in done:
            stack.pop()
            continue
        if x in mapping:
            done[x] = mapping[x]
            stack.pop()
            continue
        node = pool.node(x)
        kids = _children(node)
        pending = [k for k in kids if k not in done]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        done[x] = _rebuilt(pool, node, done) if kids else x
    return done[e]


#: Per destination pool, per source pool: (the source, its terms copied, its automata adopted).
_COPIES: "weakref.WeakKeyDictionary[ExprPool, dict[int, tuple[ExprPool, dict[int, int], dict[int, int]]]]" = (
    weakref.WeakKeyDictionary()
)


def copy_from(pool: ExprPool, other: ExprPool, e: int) -> int:
    """Term ``e`` of pool ``other`` as a term of ``pool``: a structural copy, memoised per pair of
    pools (what was copied once is not copied again; embedded automata are shared)."""
    if other is pool:
        return e
    copies = _COPIES.setdefault(pool, {})
    entry = copies.get(id(other))
    if entry is None or entry[0] is not other:
        entry = copies[id(other)] = (other, {NOTHING: NOTHING, EPSILON: EPSILON}, {})
    _, done, adopted = entry
    stack = [e]
    while stack:
        x = stack[-1]
        if x in done:
            stack.pop()
            continue
        node = other.node(x)
        kids = _children(node)
        pending = [k for k in kids if k not in done]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        kind = node[0]
        if kind == _BYTES:
            done[x] = pool.bytes_of(node[1])
        elif kind == _SYM:
            done[x] = pool.symbol(node[1])
        elif kind == _DFA:
            index = adopted.get(node[1])
            if index is None:
                index = adopted[node[1]] = pool.adopt(other.embedded(node[1]))
            done[x] = pool.embedded_term(index, node[2])
        else:
            done[x] = _rebuilt(pool, node, done)
    return done[e]
