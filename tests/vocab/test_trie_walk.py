"""The native trie walk (:func:`structgen.vocab.trie.walk_trie`) against each token walked on its
own through a lazily built automaton."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.automata.expr import ExprPool
from structgen.automata.lazy import LazyAutomaton
from structgen.automata.regex import regex_to_expr
from structgen.vocab.trie import TokenTrie, walk_nodes, walk_tokens, walk_trie

ALPHABET = "ab-\"é"
patterns = st.sampled_from([
    "a*", "(ab)*-?", "[ab]{2,5}", "a*b*-a*", '"[^"]*"', "(é|ab)+", "-?(a|b-)*", "[ab-]*", "b?(aa|é)*\"",
])
tokens = st.lists(st.text(ALPHABET, min_size=1, max_size=6).map(lambda s: s.encode()), min_size=1, max_size=60)


def expected_walk(auto: LazyAutomaton, trie: TokenTrie, state: int) -> dict[int, int]:
    """Every node below the root that ``auto`` reads from ``state``, by its bytes on their own."""
    got = {}
    for node in range(1, trie.num_nodes):
        t = auto.walk(state, trie.bytes_between(0, node))
        if t >= 0:
            got[node] = t
    return got


def fresh(pattern: str) -> LazyAutomaton:
    pool = ExprPool()
    return LazyAutomaton(pool, regex_to_expr(pattern, pool))


@settings(max_examples=150, deadline=None)
@given(patterns, tokens, st.text(ALPHABET, max_size=3))
def test_the_walk_reaches_what_each_prefix_reads(pattern: str, toks: list[bytes], before: str) -> None:
    """From the state after ``before`` (rows met unbuilt on the way are built as the walk goes)."""
    trie = TokenTrie.from_tokens(toks)
    reference = fresh(pattern)
    start = reference.walk(0, before.encode())
    if start < 0:
        return
    expected = set(expected_walk(reference, trie, start))
    auto = fresh(pattern)
    q = auto.walk(0, before.encode())
    nodes, states = walk_trie(auto, trie, 0, q)
    assert len(set(nodes.tolist())) == nodes.size and set(nodes.tolist()) == expected
    assert all(auto.walk(q, trie.bytes_between(0, n)) == t for n, t in zip(nodes.tolist(), states.tolist()))


def test_a_walk_below_a_node_and_the_tokens_it_reaches() -> None:
    toks = [b"ab", b"abab", b"aba", b"b", b"abb", b"-"]
    trie = TokenTrie.from_tokens(toks)
    auto = fresh("(ab)*")
    node = trie.node_of(b"ab")
    nodes, _ = walk_trie(auto, trie, node, auto.walk(0, b"ab"))
    assert sorted(trie.bytes_between(0, n) for n in nodes.tolist()) == [b"aba", b"abab"]
    ids, ends = walk_tokens(auto, trie, 0)
    assert sorted(toks[i] for i in ids.tolist()) == [b"ab", b"aba", b"abab"]
    assert all(auto.walk(0, toks[i]) == e for i, e in zip(ids.tolist(), ends.tolist()))
    node_state = walk_nodes(auto, trie, 0)
    assert node_state[0] == 0 and node_state[trie.node_of(b"abb")] == -1 and node_state[trie.node_of(b"abab")] == 0


def test_a_walk_builds_only_the_byte_classes_its_trie_nodes_need() -> None:
    """Below the root a node has a few children: a state met there gets the transitions of their
    byte classes only; the rest of its row is built when something else needs it, and agrees."""
    auto = fresh('"[a-z]{0,8}"(,|;|x[0-9]+)')
    toks = [b'"ab', b'"ab",', b'"abc']  # (after "ab: children '"' and 'c' only)
    walk_tokens(auto, TokenTrie.from_tokens(toks), 0)
    q = auto.walk(0, b'"ab')
    row = auto.table[q]
    assert row[ord("c")] >= 0 and row[ord('"')] >= 0 and row[ord("z")] >= 0  # ('z': c's class)
    assert (row == -2).sum() > 0 and not auto.is_built(q)  # (digits, quotes' neighbours: not derived)
    after = auto.table[auto.walk(0, b'"ab"')]
    assert after[ord(",")] >= 0 and after[ord("x")] == -2  # (only ',' was under '"ab"')
    reference = fresh('"[a-z]{0,8}"(,|;|x[0-9]+)')
    for data in (b'"ab', b'"ab"', b'"ab"x', b'"ab"x1', b'"ab";', b'"ab1'):
        assert (auto.walk(0, data) >= 0) == (reference.walk(0, data) >= 0), data
    derived = [auto.pool.derive(auto.exprs[q], b) for b in range(256)]
    assert list(auto.row(q)) == [-1 if d == 0 else auto.state_of(d) for d in derived]
    assert auto.is_built(q)


def test_bad_arguments_are_named_errors() -> None:
    trie = TokenTrie.from_tokens([b"ab", b"b"])
    auto = fresh("ab")
    with pytest.raises(IndexError, match="no state"):
        walk_trie(auto, trie, 0, 5)
    with pytest.raises(IndexError, match="no trie node"):
        walk_trie(auto, trie, 99, 0)
    with pytest.raises(IndexError, match="no trie node"):
        walk_trie(auto, trie, [1, -3], 0)
