"""No input a user can send crashes the process: the native API driven by random terms, bytes,
ids and counters (hypothesis as the fuzzer; ``tools/fuzz_engine.py`` runs it for longer, and
``tools/sanitize.sh`` runs it under AddressSanitizer and UndefinedBehaviorSanitizer). Every
failure is an exception: ``IndexError`` for a term or state that does not exist, ``ValueError``
for a bad argument, :class:`~structgen.errors.CompileBudgetExceeded` for a limit."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structgen import _engine
from structgen.automata.embedded import EmbeddedDfa
from structgen.automata.expr import EPSILON, NOTHING, ExprPool
from structgen.automata.expr_rewrite import SubstitutionMemo
from structgen.automata.lazy import LazyAutomaton
from structgen.errors import CompileBudgetExceeded

#: what the native API may raise (anything else, or a crash, is a bug)
EXPECTED = (IndexError, ValueError, TypeError, OverflowError, CompileBudgetExceeded)

ints = st.one_of(st.integers(-3, 40), st.integers(-(1 << 70), 1 << 70), st.sampled_from([255, 256, (1 << 31) - 1, 1 << 31, 1 << 62, (1 << 62) + 1]))
OPS = ["bytes_of", "byte_range", "literal", "seq", "alt", "repeat", "symbol", "both", "negate", "minus", "derive",
       "derive_symbol", "node", "nullable", "is_live", "liveness", "witness_length", "byte_classes", "first_symbols",
       "chain", "embed_state", "lazy", "string_length", "min_length", "symbols_in", "readable_bytes", "substitute", "factored",
       "code_points_rows", "canonical_dfa"]


#: per pool of the run (by id, the pool held beside it), the substitution memo its calls share
_MEMOS: dict[int, tuple[ExprPool, SubstitutionMemo]] = {}


def _run(pool: ExprPool, terms: list[int], op: str, a: int, b: int, c: int, data: bytes) -> None:
    pick = lambda i: terms[i % len(terms)] if i >= 0 else i  # noqa: E731  (a term, or a bad id)
    if op == "bytes_of":
        terms.append(pool.bytes_of(a))
    elif op == "byte_range":
        terms.append(pool.byte_range(a, b))
    elif op == "literal":
        terms.append(pool.literal(data))
    elif op == "seq":
        terms.append(pool.seq(pick(a), pick(b)))
    elif op == "alt":
        terms.append(pool.alt([pick(a), pick(b), pick(c)]))
    elif op == "chain":
        terms.append(pool.chain([pick(a), pick(b)], pick(c)))
    elif op == "repeat":
        terms.append(pool.repeat(pick(a), b, None if c % 3 == 0 else c))
    elif op == "symbol":
        terms.append(pool.symbol(a))
    elif op == "both":
        terms.append(pool.both([pick(a), pick(b)], checked=c % 2 == 0))
    elif op == "negate":
        terms.append(pool.negate(pick(a), checked=c % 2 == 0))
    elif op == "minus":
        terms.append(pool.minus(pick(a), pick(b)))
    elif op == "derive":
        terms.append(pool.derive(pick(a), b))
    elif op == "derive_symbol":
        terms.append(pool.derive_symbol(pick(a), b))
    elif op == "node":
        pool.node(pick(a))
    elif op == "nullable":
        pool.nullable(pick(a))
    elif op == "is_live":
        pool.is_live(pick(a))
    elif op == "liveness":
        pool.liveness(pick(a), abs(b) % 500)
    elif op == "witness_length":
        pool.witness_length(pick(a), abs(b) % 500)
    elif op == "byte_classes":
        assert sum(bin(m).count("1") for m in pool.byte_classes(pick(a))) == 256
    elif op == "first_symbols":
        pool.first_symbols(pick(a))
    elif op == "symbols_in":
        pool.symbols_in(pick(a))
    elif op == "readable_bytes":  # (a 256-bit mask; a derivative reads no byte its term does not)
        x = pick(a)
        read = pool.readable_bytes(x)
        assert 0 <= read < 1 << 256
        if 0 <= b < 256:
            assert pool.readable_bytes(pool.derive(x, b)) & ~read == 0
    elif op == "embed_state":
        terms.append(pool.embed_state(a, b))
    elif op == "substitute":  # (any terms as keys and values, a memo kept per pool across calls)
        if id(pool) not in _MEMOS:
            _MEMOS[id(pool)] = (pool, SubstitutionMemo())
            pool.substitute(EPSILON, {}, _MEMOS[id(pool)][1])  # (its first use: the memo is this pool's)
        memo = _MEMOS[id(pool)][1]
        got = pool.substitute(pick(a), {pick(b): pick(c)}, memo if c % 2 else None, symbols=b % 2 == 0)
        terms.append(got)
        if b % 3 == 0:  # (a memo of another pool is refused)
            with pytest.raises(ValueError):
                ExprPool().substitute(EPSILON, {EPSILON: EPSILON}, memo)
    elif op == "factored":
        terms.append(pool.factored([pick(a), pick(b), pick(c), pool.literal(data)]))
    elif op == "code_points_rows":  # (any ranges: negative ones refused, empty or past U+10FFFF ones cut)
        rows, finals = _engine.code_points_rows([(a, b), (c, c + len(data)), (b, a)])
        assert rows.shape == (finals.size, 256) and rows.max() < finals.size
    elif op == "canonical_dfa":  # (a table of random moves, start and classes: bad ones refused)
        n = 1 + abs(a) % 4
        table = np.array([[(x + i) % (n + 2) - 2 for x in data.ljust(3, b"\0")[:3]] for i in range(n)], dtype=np.int32)
        class_of = np.array([(b + k * c) % 5 - 1 for k in range(256)], dtype=np.int32)
        trans, kept, classes = _engine.canonical_dfa(table, np.arange(n) % 2 == 0, c % (n + 1), class_of)
        assert trans.shape == (kept.size, trans.shape[1]) and classes.max() < trans.shape[1]
    elif op == "string_length":
        pool.mark_string_length(pick(a), pick(b))
        pool.string_length_verdict(pick(c))
    elif op == "min_length":
        pool.min_length(pick(a))
    elif op == "lazy":
        auto = LazyAutomaton(pool, pick(a))
        q = auto.walk(0, data)
        if q >= 0:
            auto.build(q)
            auto.symbols_of(q)
            auto.table_for([q])
        auto.step(b % max(auto.num_states, 1), c)
        auto.flat[a]
        auto.finals[b]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(steps=st.lists(st.tuples(st.sampled_from(OPS), ints, ints, ints, st.binary(max_size=6)), min_size=1, max_size=40))
def test_random_calls_raise_named_errors_or_succeed(steps: list[tuple[str, int, int, int, bytes]]) -> None:
    pool = ExprPool()
    terms = [NOTHING, 1, pool.literal(b"ab"), pool.star(pool.byte_range(48, 57)), pool.symbol(2)]
    emb = EmbeddedDfa([[1 if b == 97 else -1 for b in range(256)], [-1] * 256], [False, True], {})
    pool.add_embedded(emb)
    for op, a, b, c, data in steps:
        try:
            _run(pool, terms, op, a, b, c, data)
        except EXPECTED:
            pass
    _MEMOS.clear()
    restored = pickle.loads(pickle.dumps(pool))
    assert len(restored) == len(pool)


@pytest.mark.parametrize("rows,finals,symbols,columns", [
    ([[5] * 256], [True], {}, None),  # a transition to no state
    ([[-1] * 255], [True], {}, None),  # a short row
    ([[-1] * 256], [True, False], {}, None),  # finals and rows disagree
    ([[-1] * 256], [True], {3: ((1, 0),)}, None),  # symbols of no state
    ([[-1] * 256], [True], {0: ((1, 4),)}, None),  # a symbol edge to no state
    ([[-1] * 256], [True], {}, [1, 1]),  # column classes that overlap
    ([[-1] * 256], [True], {}, [1]),  # column classes that miss bytes
])
def test_a_malformed_embedded_automaton_is_refused(rows: list, finals: list, symbols: dict, columns: list | None) -> None:
    with pytest.raises(ValueError):
        EmbeddedDfa(rows, finals, symbols, columns)


def test_bad_ids_bytes_and_counters_are_named_errors() -> None:
    pool = ExprPool()
    with pytest.raises(IndexError):
        pool.derive(len(pool) + 5, 0)
    with pytest.raises(ValueError, match="a byte is in 0 .. 255"):
        pool.derive(1, 256)
    with pytest.raises(ValueError, match="not a range"):
        pool.repeat(pool.literal(b"a"), 3, 2)
    with pytest.raises(CompileBudgetExceeded, match="a repetition's counter"):
        pool.repeat(pool.literal(b"a"), 0, 1 << 70)
    with pytest.raises(ValueError, match="256-bit"):
        pool.bytes_of(1 << 256)
    with pytest.raises(ValueError, match="call other automata"):
        pool.both([pool.symbol(1), pool.literal(b"a")])
    with pytest.raises(IndexError):
        LazyAutomaton(pool, 1).step(3, 0)
    with pytest.raises(ValueError, match="not a pickled expression pool"):
        pool._load(b"garbage")


def test_a_deep_term_is_a_budget_error_not_a_crash() -> None:
    """Derivatives recurse into a term's structure; past the engine's depth (8,000 levels) a walk
    stops with CompileBudgetExceeded instead of overflowing the C++ stack."""
    pool = ExprPool()
    e = pool.literal(b"a")
    for _ in range(20_000):  # (each level a nullable head: the derivative recurses into the tail)
        e = pool.seq(pool.optional(pool.literal(b"b")), pool.alt([e, pool.literal(b"c")]))
    with pytest.raises(CompileBudgetExceeded, match="nesting depth"):
        pool.derive(e, ord("a"))
    assert pool.derive(pool.literal(b"xy"), ord("x")) == pool.literal(b"y")  # (the pool still works)
