"""The native engine against the Python pool it replaced (tests/automata/reference: the pool,
its byte classes, liveness search, string-length verdict and lazy automaton, as they were), on
every constraint of grammars/ and benchmarks/corpus/ and on random regexes: a term built natively
is copied, constructor by constructor, into a reference pool, and the two lazy automata are walked
side by side (breadth first): the same finality, the same dead and live bytes, the same symbols,
the states in one-to-one correspondence, the same facts per state (nullable, lower bound, size,
largest counter, byte classes, first and readable bytes, shortest length). Until the reference leaves the repository (issue
39's later slices), this is what says the port changed nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.expr import KINDS, ExprPool
from structgen.automata.expr_text import MinLength
from structgen.automata.lazy import LazyAutomaton
from structgen.automata.regex import regex_to_expr

from ..support.strategies import patterns
from .reference import string_length as ref_lengths
from .reference.embedded import EmbeddedDfa as RefEmbeddedDfa
from .reference.expr import ExprPool as RefPool
from .reference.expr_firsts import readable_bytes as ref_readable_bytes
from .reference.lazy import LazyAutomaton as RefLazy

ROOT = Path(__file__).resolve().parents[2]
#: every single byte a token: no byte is cut out of the automata compiled for it
BYTES_VOCAB = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
#: states compared per automaton (breadth first from the start)
STATES = 150

_K = KINDS


class Copier:
    """Terms of a native pool copied into a reference pool by the same constructors."""

    def __init__(self, src: ExprPool) -> None:
        self.src, self.dst = src, RefPool()
        self.done: dict[int, int] = {0: 0, 1: 1}
        self.dfas: dict[int, int] = {}
        quote = src.string_length_quote
        if quote is not None:
            for unit in src.string_length_units:
                ref_lengths.mark_string_length(self.dst, self.copy(unit), self.copy(quote))

    def copy(self, e: int) -> int:
        src, dst, done = self.src, self.dst, self.done
        stack = [e]
        while stack:
            x = stack[-1]
            if x in done:
                stack.pop()
                continue
            node = src.node(x)
            kind = node[0]
            kids = (node[1], node[2]) if kind == _K["seq"] else node[1] if kind in (_K["alt"], _K["and"]) else (
                (node[1],) if kind in (_K["rep"], _K["not"]) else ())
            pending = [k for k in kids if k not in done]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if kind == _K["bytes"]:
                got = dst.bytes_of(node[1])
            elif kind == _K["seq"]:
                got = dst.seq(done[node[1]], done[node[2]])
            elif kind == _K["alt"]:
                got = dst.alt([done[p] for p in node[1]])
            elif kind == _K["and"]:
                got = dst.both([done[p] for p in node[1]], checked=False)
            elif kind == _K["not"]:
                got = dst.negate(done[node[1]], checked=False)
            elif kind == _K["rep"]:
                got = dst.repeat(done[node[1]], node[2], None if node[3] < 0 else node[3])
            elif kind == _K["sym"]:
                got = dst.symbol(node[1])
            else:
                index = self.dfas.get(node[1])
                if index is None:
                    emb = src.embedded(node[1])
                    ref = RefEmbeddedDfa(emb.rows.tolist(), list(emb.finals), dict(emb.symbols), list(emb.column_classes))
                    index = self.dfas[node[1]] = dst.add_embedded(ref)
                got = dst.embed_state(index, node[2])
            done[x] = got
        return done[e]


def assert_same_automaton(pool: ExprPool, root: int, states: int = STATES) -> int:
    """Walk the native and the reference automaton of ``root`` side by side; returns the states compared."""
    copier = Copier(pool)
    ref_root = copier.copy(root)
    native, ref = LazyAutomaton(pool, root), RefLazy(copier.dst, ref_root)
    ref_pool = copier.dst
    assert pool.is_live(root) == ref_pool.is_live(ref_root)
    pairs = {0: 0}
    todo = [0]
    ml, ref_ml = MinLength(pool, {}), ref_lengths.MinLength(ref_pool, {})
    readable: dict[int, int] = {}
    for q in todo:
        if len(pairs) > states:
            break
        r = pairs[q]
        e, f = native.exprs[q], ref.exprs[r]
        assert copier.copy(e) == f, "a state's term is not the reference's"
        assert native.is_final(q) == ref.is_final(r)
        assert (pool.lower_bound(e), pool.size(e), pool.largest_counter(e), pool.is_algebraic(e)) == (
            ref_pool.lower_bound(f), min(ref_pool.size(f), 1 << 62), ref_pool.largest_counter(f), ref_pool.is_algebraic(f))
        assert set(pool.byte_classes(e)) == set(ref_pool.byte_classes(f))
        assert pool.first_bytes(e) == ref_pool.firsts.first_bytes(f)
        assert pool.readable_bytes(e) == ref_readable_bytes(ref_pool, f, readable)
        assert ml.of(e) == ref_ml.of(f)
        row, ref_row = native.row(q), ref.row(r)
        for b in range(256):
            t, u = row[b], ref_row[b]
            assert (t < 0) == (u < 0), (q, b)
            if t >= 0:
                assert pairs.setdefault(t, u) == u, "two reference states for one native state"
                if t not in todo:
                    todo.append(t)
        syms, ref_syms = native.symbols_of(q), ref.symbols_of(r)
        assert [k for k, _ in syms] == [k for k, _ in ref_syms]
        for (_, t), (_, u) in zip(syms, ref_syms):
            assert pairs.setdefault(t, u) == u
            if t not in todo:
                todo.append(t)
    assert len(set(pairs.values())) == len(pairs), "two native states for one reference state"
    return len(pairs)


def _roots(guide: object) -> tuple[ExprPool, list[int]]:
    network = getattr(guide, "network", None)
    if network is not None:
        return network.pool, list(network.exprs)
    auto = guide.automaton  # type: ignore[attr-defined]
    return auto.pool, [auto.root]


def _schemas() -> list[tuple[str, object]]:
    out = [(p.name, json.loads(p.read_text())) for p in sorted((ROOT / "benchmarks" / "corpus").glob("*.json"))]
    out += [(p.name, json.loads(p.read_text())) for p in sorted((ROOT / "grammars").glob("*.schema.json"))]
    return out


def _regexes() -> list[tuple[str, str]]:
    return [(p.name, p.read_text().strip()) for p in sorted((ROOT / "grammars").glob("*.regex"))]


@pytest.mark.parametrize("name,schema", _schemas(), ids=[n for n, _ in _schemas()])
def test_every_corpus_schema_walks_alike(name: str, schema: object) -> None:
    pool, roots = _roots(structgen.compile_json_schema(schema, BYTES_VOCAB))
    for root in roots:
        assert_same_automaton(pool, root, STATES // max(1, len(roots) // 4))


@pytest.mark.parametrize("name,pattern", _regexes(), ids=[n for n, _ in _regexes()])
def test_every_grammar_regex_walks_alike(name: str, pattern: str) -> None:
    pool = ExprPool()
    assert_same_automaton(pool, regex_to_expr(pattern, pool))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns)
def test_random_regexes_walk_alike(pattern: str) -> None:
    pool = ExprPool()
    assert_same_automaton(pool, regex_to_expr(pattern, pool), 60)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=patterns, b=patterns, op=st.sampled_from(["and", "minus", "not"]))
def test_random_algebra_walks_alike(a: str, b: str, op: str) -> None:
    """Intersections and complements: the liveness search decides which transitions are dead."""
    pool = ExprPool()
    x, y = regex_to_expr(a, pool), regex_to_expr(b, pool)
    e = pool.both([x, y]) if op == "and" else pool.minus(x, y) if op == "minus" else pool.negate(x)
    assert_same_automaton(pool, e, 40)


@settings(max_examples=40, deadline=None)
@given(pattern=st.sampled_from(["^[a-z/]+:[0-9]+$", "^(é|ab)*/?$", "^(é{3}|a+)b*$", "^[^x]*y[a-c]*$", "^[a-f0-9]{2,}$"]),
       lo=st.integers(0, 4), span=st.integers(0, 12))
def test_strings_under_a_length_walk_alike(pattern: str, lo: int, span: int) -> None:
    """The string-length verdict (native) against the Python one, through the liveness of every state."""
    schema = {"type": "string", "pattern": pattern, "minLength": lo, "maxLength": lo + span}
    try:
        guide = structgen.compile_json_schema(schema, BYTES_VOCAB)
    except structgen.UnsatisfiableConstraint:
        return
    pool, roots = _roots(guide)
    for root in roots:
        assert_same_automaton(pool, root, 80)
