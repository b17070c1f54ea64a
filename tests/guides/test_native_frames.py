"""The pushdown guide's native pieces (issue 39, slice 3) against the Python they replaced
(``tests/guides/reference/``): the frame walk (tokens, end states and branch points in one native
pass) against the trie walk, the tokens at its nodes and the branch points found with numpy, on
random vocabularies and networks whose automata call one another, from the root, from several
nodes and through tries cut out of the vocabulary's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.automata.markers import call_marker as C
from structgen.automata.network import Network
from structgen.guides.network_view import NetworkView
from structgen.vocab.trie import TokenTrie, tokens_at, walk_frame, walk_trie

from .reference.token_walks import branch_points

NETWORKS = [
    [C(1), r"\[(?:" + C(1) + r"(?:, ?" + C(1) + r")*)?\]|\"[a-z]{0,4}\"|[0-9]+"],
    [r"\{\"a\":" + C(1) + r"(?:,\"b\":" + C(2) + r")?\}", r"\"[^\"\\]*\"", r"-?[0-9]+(?:\.[0-9]+)?"],
    [r"(?:select|from) " + C(1) + r"(?:, ?" + C(1) + r")*;?", r"[a-z_][a-z0-9_]*|\(" + C(0) + r"\)"],
]
_TOKEN = st.binary(min_size=1, max_size=4) | st.sampled_from(
    [b"[", b"[]", b"],", b'"', b'",', b'"}', b"1", b"12", b", ", b"select", b"sel", b"from ", b" x", b"a_b", b"(", b");"])
TOKENS = st.lists(_TOKEN, min_size=1, max_size=40)


def _two(regexes: list[str], k: int) -> tuple[Any, Any]:
    """Automaton k of two fresh views of one network: walked alike, their states are numbered alike."""
    return (NetworkView(Network(regexes, []), frozenset()).auto(k), NetworkView(Network(regexes, []), frozenset()).auto(k))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(NETWORKS) - 1), st.integers(0, 2), TOKENS, st.binary(max_size=4) | st.sampled_from([b"[", b"sel", b'{"a":']),
       st.booleans(), st.data())
def test_frame_walks_are_the_python_walks(which: int, k: int, tokens: list[bytes], before: bytes, clamp: bool, data: Any) -> None:
    regexes = NETWORKS[which]
    a, b = _two(regexes, k % len(regexes))
    q = a.auto.walk(0, before)
    if q < 0:
        return
    assert b.auto.walk(0, before) == q
    trie = TokenTrie.from_tokens(tokens)
    inner = [n for n in range(1, trie.num_nodes) if trie.num_children[n]]
    roots: int | list[int] = 0
    if inner and data.draw(st.booleans()):  # (several nodes, none below another: one depth)
        depth = trie.depth_of(np.array([data.draw(st.sampled_from(inner))]))[0]
        roots = [n for n in inner if trie.depth_of(np.array([n]))[0] == depth]
    ids, ends, branches = walk_frame(a.auto, trie, roots, q, clamp)
    nodes, states = walk_trie(b.auto, trie, roots, q, clamp)
    want_ids, want_ends = tokens_at(trie, nodes, states)
    assert ids.tolist() == want_ids.tolist() and ends.tolist() == want_ends.tolist()
    assert ids.dtype == np.int64 and ends.dtype == np.int32
    assert branches == branch_points(b, nodes, states, trie.num_children)
    assert a.num_states == b.num_states
    sub = data.draw(st.lists(st.sampled_from(trie.token_ids.tolist()), unique=True))
    if sub:  # (a trie cut out of the vocabulary's: its branch points as the vocabulary's nodes)
        cut = trie.restrict(np.array(sub, dtype=np.int64))
        ids, ends, branches = walk_frame(a.auto, cut, 0, q, clamp, trie)
        nodes, states = walk_trie(b.auto, cut, 0, q, clamp)
        want_ids, want_ends = tokens_at(cut, nodes, states)
        assert ids.tolist() == want_ids.tolist() and ends.tolist() == want_ends.tolist()
        assert branches == branch_points(b, nodes, states, trie.num_children, cut.origin)


def test_a_frame_walk_through_a_trie_not_cut_from_full_is_refused() -> None:
    a, _ = _two(NETWORKS[0], 1)
    trie = TokenTrie.from_tokens([b"[", b"]", b"[]"])
    with pytest.raises(ValueError, match="not cut out of full"):
        walk_frame(a.auto, trie, 0, 0, False, trie)

