"""The native pool and lazy automata against the oracles we trust (the ``regex`` module, and
the eager automata of the same patterns): regex guides run on the native engine, so every
random pattern's lazy automaton must accept exactly what ``regex.fullmatch`` does."""

from __future__ import annotations

import pickle

import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from structgen.automata.expr import NOTHING, ExprPool
from structgen.automata.lazy import LazyAutomaton
from structgen.automata.regex import regex_to_dfa, regex_to_expr
from structgen.errors import CompileBudgetExceeded

from ..support.strategies import _ALPHABET, patterns


def _fullmatch(pattern: str, s: str) -> bool:
    try:
        return regex.fullmatch(pattern, s, flags=regex.ASCII | regex.V0, timeout=0.5) is not None
    except TimeoutError:
        assume(False)
        raise


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, data=st.data())
def test_lazy_automaton_agrees_with_the_regex_module(pattern: str, data: st.DataObject) -> None:
    pool = ExprPool()
    auto = LazyAutomaton(pool, regex_to_expr(pattern, pool))
    for s in data.draw(st.lists(st.text(alphabet=_ALPHABET, max_size=8), max_size=20)):
        assert auto.accepts(s.encode()) == _fullmatch(pattern, s), (pattern, s)
        # every prefix of an accepted string stays alive (a state from which the end is reachable)
        if _fullmatch(pattern, s):
            data_bytes = s.encode()
            for i in range(len(data_bytes)):
                assert auto.walk(0, data_bytes[:i]) >= 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=patterns, b=patterns, data=st.data())
def test_intersections_and_differences_agree_with_the_regex_module(a: str, b: str, data: st.DataObject) -> None:
    """``a ∩ b`` and ``a − b`` built lazily (their dead states decided by the native liveness
    search) accept exactly what both patterns say; an empty one is ``is_empty``."""
    pool = ExprPool()
    x, y = regex_to_expr(a, pool), regex_to_expr(b, pool)
    both, minus = LazyAutomaton(pool, pool.both([x, y])), LazyAutomaton(pool, pool.minus(x, y))
    for s in data.draw(st.lists(st.text(alphabet=_ALPHABET, max_size=6), max_size=20)):
        in_a, in_b = _fullmatch(a, s), _fullmatch(b, s)
        assert both.accepts(s.encode()) == (in_a and in_b), (a, b, s)
        assert minus.accepts(s.encode()) == (in_a and not in_b), (a, b, s)
        if in_a and in_b:
            assert not both.is_empty


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, data=st.data())
def test_an_embedded_automaton_reads_as_its_eager_twin(pattern: str, data: st.DataObject) -> None:
    """An eager automaton inside a term (native table) accepts what the eager automaton does
    (a pattern whose eager automaton is past the compile budget, a named error, has no twin)."""
    try:
        dfa = regex_to_dfa(pattern)
    except CompileBudgetExceeded:
        assume(False)
    pool = ExprPool()
    auto = LazyAutomaton(pool, pool.embed(dfa))
    for s in data.draw(st.lists(st.text(alphabet=_ALPHABET, max_size=8), max_size=20)):
        assert auto.accepts(s.encode()) == dfa.accepts(s.encode()), (pattern, s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, data=st.data())
def test_a_pickled_pool_derives_alike(pattern: str, data: st.DataObject) -> None:
    """A pool that went through pickle holds the same terms under the same ids."""
    pool = ExprPool()
    e = regex_to_expr(pattern, pool)
    restored = pickle.loads(pickle.dumps(pool))
    assert len(restored) == len(pool)
    assert all(restored.node(x) == pool.node(x) for x in range(len(pool)))
    for s in data.draw(st.lists(st.binary(max_size=6), max_size=10)):
        x, y = e, e
        for b in s:
            x, y = pool.derive(x, b), restored.derive(y, b)
            assert x == y
            if x == NOTHING:
                break
        assert pool.nullable(x) == restored.nullable(y)
