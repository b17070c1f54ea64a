"""Building terms from terms (:mod:`.expr`): what a vocabulary can spell (:func:`restrict`),
counters cut to what a token can tell apart (:func:`clamp`, native), concatenations of long chains
(:func:`concat_all`), substitution of sub-terms (:func:`substitute`: a call symbol by the callee's
term) and copies between pools (:func:`copy_from`: a template pool's terms, built once per process,
shared by every compile). The maps are memoised in the pool; substitution and copies walk a term
without recursion, however deep it is (a long literal is a chain of thousands of concatenations).

Example:
    >>> from structgen.automata.expr import ExprPool, byte_mask
    >>> pool, template = ExprPool(), ExprPool()
    >>> e = pool.repeat(pool.byte_range(97, 99), 0, 1000)
    >>> clamp(pool, e, 4) == pool.star(pool.byte_range(97, 99))
    True
    >>> restrict(pool, pool.literal(b"ab"), byte_mask(b"a")) == NOTHING
    True
    >>> e = concat_all(pool, [pool.literal(b"a"), pool.symbol(1)])
    >>> b = copy_from(pool, template, template.literal(b"b"))
    >>> e2 = substitute(pool, e, {pool.symbol(1): b})
    >>> pool.nullable(pool.derive(pool.derive(e2, ord("a")), ord("b")))
    True
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .._engine import SubstitutionMemo
from .embedded import EmbeddedDfa
from .expr import ALL_BYTES, EPSILON, KINDS, NOTHING, ExprPool
from .markers import GUARD_FIRST
from .string_length import note_restricted

__all__ = ["SubstitutionMemo", "clamp", "concat_all", "copy_from", "copy_term", "factored", "readable_bytes", "restrict", "substitute"]

_BYTES, _SEQ, _ALT, _REP, _SYM, _DFA, _AND, _NOT = (
    KINDS["bytes"], KINDS["seq"], KINDS["alt"], KINDS["rep"], KINDS["sym"], KINDS["dfa"], KINDS["and"], KINDS["not"],
)

def readable_bytes(pool: ExprPool, e: int) -> int:
    """Every byte ``e`` may read anywhere (a 256-bit mask; memoised in the native pool).

    >>> pool = ExprPool()
    >>> readable_bytes(pool, pool.literal(b"ab")) == (1 << ord("a")) | (1 << ord("b"))
    True
    """
    return pool.readable_bytes(e)


def _children_first(table: dict[Any, int], e: int, key_of: Callable[[int], Any], parts_of: Callable[[int], Sequence[int]],
                    make: Callable[[int], int]) -> int:
    """``make(e)`` memoised in ``table`` under ``key_of(e)``, the parts it reads (``parts_of``)
    made first, without recursion: a term may nest hundreds of levels (an object with
    ``maxProperties: 300`` holds one level per key), deeper than Python's stack."""
    facts = table
    stack = [e]
    while stack:
        x = stack[-1]
        k = key_of(x)
        if k in facts:
            stack.pop()
            continue
        pending = [p for p in parts_of(x) if key_of(p) not in facts]
        if pending:
            stack.extend(pending)
            continue
        facts[k] = make(x)
        stack.pop()
    return facts[key_of(e)]


def restrict(pool: ExprPool, e: int, allowed: int, dead: frozenset[int] = frozenset()) -> int:
    """``e`` read only through the bytes of ``allowed`` (a mask), and with the symbols of ``dead``
    (calls of automata that accept nothing) taken away: what a vocabulary that cannot spell the
    other bytes can still produce. Empty parts become ``NOTHING``."""
    if allowed == ALL_BYTES and not dead:
        return e
    table = pool.memo.restricted
    got = table.get((e, allowed, dead))
    if got is not None:
        return got

    def key_of(x: int) -> tuple[int, int, frozenset[int]]:
        return (x, allowed, dead)

    def parts_of(x: int) -> Sequence[int]:
        node = pool.node(x)
        kind = node[0]
        return node[1:3] if kind == _SEQ else node[1] if kind == _ALT or kind == _AND else node[1:2] if kind == _REP or kind == _NOT else ()

    def make(x: int) -> int:
        node = pool.node(x)
        kind = node[0]

        def done(p: int) -> int:
            return table[key_of(p)]

        if kind == _BYTES:
            got = pool.bytes_of(node[1] & allowed)
        elif kind == _SEQ:
            got = pool.seq(done(node[1]), done(node[2]))
        elif kind == _ALT:
            got = pool.alt([done(p) for p in node[1]])
        elif kind == _REP:
            got = pool.repeat(done(node[1]), node[2], None if node[3] < 0 else node[3])
        elif kind == _DFA:
            got = pool.embed_state(_restricted_dfa(pool, node[1], allowed, dead), node[2])
        elif kind == _SYM:
            got = NOTHING if node[1] in dead else x
        elif kind == _AND:
            got = pool.both([done(p) for p in node[1]])
        elif kind == _NOT:  # the strings of the vocabulary's bytes that the operand does not match
            got = pool.both((pool.negate(done(node[1])), pool.star(pool.bytes_of(allowed))))
        else:
            got = x
        note_restricted(pool, x, got)
        return got

    return _children_first(table, e, key_of, parts_of, make)


def _restricted_dfa(pool: ExprPool, index: int, allowed: int, dead: frozenset[int]) -> int:
    """The embedded automaton ``index`` without the bytes outside ``allowed`` and the symbols in
    ``dead``, its states kept (their numbers unchanged) and the ones that can no longer finish cut off."""
    key = (index, allowed, dead)
    got = pool.memo.restricted_dfa.get(key)
    if got is None:
        emb = pool.embedded(index)
        keep = np.unpackbits(np.frombuffer(allowed.to_bytes(32, "little"), dtype=np.uint8), bitorder="little").astype(bool)
        rows = np.where(keep[None, :], emb.rows, -1).astype(np.int32)
        n = rows.shape[0]
        symbols = {q: kept for q, es in emb.symbols.items() if (kept := tuple((k, r) for k, r in es if k not in dead))}
        preds: list[set[int]] = [set() for _ in range(n)]
        src, dst = np.nonzero(rows >= 0)
        for q, t in zip(src.tolist(), rows[src, dst].tolist()):
            preds[t].add(q)
        for q, es in symbols.items():
            for _, r in es:
                preds[r].add(q)
        live = list(emb.finals)
        todo = [q for q in range(n) if live[q]]
        while todo:
            t = todo.pop()
            for q in preds[t]:
                if not live[q]:
                    live[q] = True
                    todo.append(q)
        alive = np.array(live + [False], dtype=bool)  # (index -1: the last, False)
        rows = np.where(alive[rows], rows, -1).astype(np.int32)
        symbols = {q: kept for q, es in symbols.items() if (kept := tuple((k, r) for k, r in es if live[r]))}
        parts = [p for m in emb.column_classes for p in (m & allowed, m & ~allowed) if p]
        got = pool.memo.restricted_dfa[key] = pool.add_embedded(EmbeddedDfa(rows, list(emb.finals), symbols, parts))
    return got


def clamp(pool: ExprPool, e: int, n: int) -> int:
    """``e`` with every repetition's counters cut to what ``n`` bytes can tell apart: for every
    string ``w`` of at most ``n`` bytes, ``w`` leads somewhere in ``e`` iff it does in the result,
    and to a final state iff it does there. States that differ only in large counters then share
    one token mask (a token of at most ``n`` bytes cannot see the difference). An intersection or
    a complement is left whole (whether it can still be completed may depend on any counter),
    but for a string's length far from its bound (:func:`.string_length.clampable_string`).
    Native (``cpp/engine/clamp.cpp``), memoised in the pool."""
    return pool.clamp(e, n)  # type: ignore[no-any-return]


def concat_all(pool: ExprPool, parts: Iterable[int]) -> int:
    """The concatenation of ``parts`` in order, right-nested (the pool's ``concat``: each part's
    own chain unrolled natively, so a long left operand costs no recursion), kept per pool by
    ``parts``: the same parts are concatenated again and again (21,103 calls, 3,765 distinct, for
    circle-ci)."""
    parts = tuple(parts)
    memo = pool.memo.concatenated
    got = memo.get(parts)
    if got is None:
        got = memo[parts] = pool.concat(parts)
    return got  # type: ignore[no-any-return]


def factored(pool: ExprPool, parts: Iterable[int]) -> int:
    """The alternation of ``parts``, with the byte sets they begin with taken out, recursively:
    ``b·x | b·y = b·(x | y)``, a trie of the alternatives (at most 48 levels deep). The same
    language; but a derivative of it reads only the options that go on with the byte read, where
    that of a plain alternation derives every option (600 time zones: 22 ms for one mask, in
    Python). Native (``cpp/engine/factored.cpp``).

    >>> pool = ExprPool()
    >>> e = factored(pool, [pool.literal(w) for w in (b"ab", b"ac", b"b")])
    >>> pool.node(pool.derive(e, ord("a")))[0] == KINDS["bytes"], pool.nullable(pool.derive(pool.derive(e, 97), 99))
    (True, True)
    """
    return pool.factored(list(parts))  # type: ignore[no-any-return]


def _children(node: tuple) -> tuple[int, ...]:
    kind = node[0]
    if kind == _SEQ:
        return (node[1], node[2])
    if kind == _ALT:
        return node[1]  # type: ignore[no-any-return]
    if kind == _REP or kind == _NOT:
        return (node[1],)
    if kind == _AND:
        return node[1]  # type: ignore[no-any-return]
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
    if kind == _AND:
        return pool.both([done[p] for p in node[1]])
    if kind == _NOT:
        return pool.negate(done[node[1]])
    return pool.repeat(done[node[1]], node[2], None if node[3] < 0 else node[3])


def substitute(pool: ExprPool, e: int, mapping: dict[int, int], done: SubstitutionMemo | None = None, *,
               symbols: bool = False) -> int:
    """``e`` with every sub-term that is a key of ``mapping`` replaced by its value; embedded
    automata are kept as they are. ``done``: what earlier substitutions with the same mapping
    (or one that only grew since) made of each sub-term, kept and added to across calls (it
    belongs to ``pool``). ``symbols``: every key is a symbol, so a sub-term with no symbol in it
    is kept unread. Native (``cpp/engine/substitute.cpp``).

    >>> pool = ExprPool()
    >>> memo = SubstitutionMemo()
    >>> e = substitute(pool, pool.star(pool.symbol(1)), {pool.symbol(1): pool.literal(b"ab")}, memo, symbols=True)
    >>> e == pool.star(pool.literal(b"ab")), len(memo) > 0
    (True, True)
    """
    return pool.substitute(e, mapping, done, symbols=symbols)


#: Per destination pool, per source pool: (the source, its terms copied, its automata adopted).
_COPIES: "weakref.WeakKeyDictionary[ExprPool, dict[int, tuple[ExprPool, dict[int, int], dict[int, int]]]]" = (
    weakref.WeakKeyDictionary()
)


def copy_from(pool: ExprPool, other: ExprPool, e: int) -> int:
    """Term ``e`` of pool ``other`` as a term of ``pool``: a structural copy, memoised per pair of
    pools (what was copied once is not copied again; embedded automata are shared)."""
    if other is pool:
        return e
    same = pool.fork_of[1] if pool.fork_of is not None and pool.fork_of[0] is other else 0
    if e < same:  # (a fork of other: its first terms are other's)
        return e
    copies = _COPIES.setdefault(pool, {})
    entry = copies.get(id(other))
    if entry is None or entry[0] is not other:
        entry = copies[id(other)] = (other, {NOTHING: NOTHING, EPSILON: EPSILON}, {})
    _, done, adopted = entry
    return _copy(pool, other, e, done, adopted, 0, same)


def copy_term(dst: ExprPool, src: ExprPool, e: int, shift: int = 0, memo: dict[int, int] | None = None) -> int:
    """Term ``e`` of pool ``src`` as a term of ``dst``, every call ``k`` (a symbol below
    :data:`~structgen.automata.markers.GUARD_FIRST`) renumbered ``k + shift`` (guards kept).
    Embedded automata are shared, or copied when a call inside them is renumbered. ``memo``
    (source term -> copy) may be shared by several calls with the same pools and shift."""
    done = memo if memo is not None else {}
    done.setdefault(NOTHING, NOTHING)
    done.setdefault(EPSILON, EPSILON)
    adopted: dict[int, int] = done.setdefault(-1, {})  # type: ignore[assignment,arg-type]
    return _copy(dst, src, e, done, adopted, shift)


def _copy(pool: ExprPool, other: ExprPool, e: int, done: dict[int, int], adopted: dict[int, int], shift: int,
          same: int = 0) -> int:
    """Term ``e`` of ``other`` copied into ``pool`` (``done``: terms copied so far, ``adopted``:
    embedded automata adopted so far), calls renumbered by ``shift``; terms below ``same`` are
    the same in both (``pool`` is a fork of ``other``)."""
    stack = [e]
    while stack:
        x = stack[-1]
        if x in done:
            stack.pop()
            continue
        if x < same:
            done[x] = x
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
            done[x] = pool.symbol(node[1] + shift if node[1] < GUARD_FIRST else node[1])
        elif kind == _DFA:
            index = adopted.get(node[1])
            if index is None:
                index = adopted[node[1]] = pool.add_embedded(_renumbered(other.embedded(node[1]), shift))
            done[x] = pool.embed_state(index, node[2])
        else:
            done[x] = _rebuilt(pool, node, done)
    return done[e]


def _renumbered(emb: Any, shift: int) -> Any:
    if not shift or not emb.symbols:
        return emb
    symbols = {q: tuple((k + shift if k < GUARD_FIRST else k, r) for k, r in es) for q, es in emb.symbols.items()}
    return EmbeddedDfa(emb.rows, emb.finals, symbols, emb.column_classes)
