"""DFA × vocabulary → token masks: the token trie and its walks.

The vocabulary is flattened once into a breadth-first *token trie*: every distinct token prefix is
a node, and the nodes of one depth are contiguous. A state's mask is computed by walking the trie
from that state, depth-first, where only the children of nodes that are still alive are visited,
so a dead byte prunes its whole subtree (the idea of lm-format-enforcer's and llguidance's trie
walks). Both are native (``cpp/engine/trie.cpp``, ``cpp/engine/walk.h``): the trie's arrays are
read-only numpy views of the engine's, and a walk is one call that builds the automaton's rows it
needs as it goes.
"""

from __future__ import annotations

from array import array
from functools import cached_property
from typing import NamedTuple, Sequence

import numpy as np

from .. import _engine
from ..automata.lazy import LazyAutomaton
from .vocabulary import Vocabulary

__all__ = ["TokenTrie", "TrieLookup", "expand_ranges", "tokens_at", "walk_frame", "walk_nodes", "walk_tokens", "walk_trie"]


class TrieLookup(NamedTuple):
    """A trie's nodes as sorted keys, and the tokens that end at each node (see :attr:`TokenTrie.lookup`)."""

    keys: list[int]  # parent << 8 | byte of node i + 1, ascending
    tok_first: np.ndarray  # int64 [n_nodes]: where node n's tokens start in tok_ids
    tok_count: np.ndarray  # int64 [n_nodes]: how many tokens end at node n
    tok_ids: np.ndarray  # int64: token ids, grouped by the node they end at


class TokenTrie:
    """The prefix trie of a vocabulary's token byte strings, in breadth-first arrays (native).

    Node 0 is the root (the empty prefix). ``byte[n]`` is the last byte of node ``n``'s prefix,
    ``first_child[n]``/``num_children[n]`` give its children (contiguous), and ``token_ids`` /
    ``token_nodes`` say at which node each walkable token ends. A trie cut out of a larger one
    (:meth:`restrict`) knows where each of its nodes came from: node ``i`` is node ``origin[i]``
    of the larger trie (``None`` for a trie built from token bytes). The arrays are read-only
    views of the engine's (int32 for the nodes' structure, int64 for token ids and nodes).

    Example:
        >>> trie = TokenTrie.from_tokens([b"ab", b"a", b"b"])
        >>> trie.num_nodes, trie.byte.tolist(), trie.node_of(b"ab"), trie.bytes_between(0, 3)
        (4, [0, 97, 98, 98], 3, b'ab')
    """

    def __init__(self, native: _engine.TokenTrie) -> None:
        self.native = native

    def __repr__(self) -> str:
        return f"<TokenTrie: {self.num_nodes} nodes, {self.token_ids.size} tokens>"

    @property
    def num_nodes(self) -> int:
        return int(self.native.num_nodes)

    @cached_property
    def byte(self) -> np.ndarray:
        return self.native.byte

    @cached_property
    def first_child(self) -> np.ndarray:
        return self.native.first_child

    @cached_property
    def num_children(self) -> np.ndarray:
        return self.native.num_children

    @cached_property
    def parent(self) -> np.ndarray:
        return self.native.parent

    @cached_property
    def token_ids(self) -> np.ndarray:
        return self.native.token_ids

    @cached_property
    def token_nodes(self) -> np.ndarray:
        return self.native.token_nodes

    @cached_property
    def origin(self) -> np.ndarray | None:
        return self.native.origin

    @cached_property
    def lookup(self) -> TrieLookup:
        """Sorted ``parent << 8 | byte`` keys (node ``i`` is ``keys[i - 1]``: the breadth-first
        order sorts nodes by parent, then byte) and the token ids ending at each node."""
        keys = (self.parent[1:].astype(np.int64) << 8) | self.byte[1:].astype(np.int64)
        return TrieLookup(keys.tolist(), self.native.tok_first, self.native.tok_count, self.native.tok_ids)

    def bytes_between(self, top: int, node: int) -> bytes:
        """The bytes from node ``top`` down to ``node`` (``top`` is ``node`` or above it)."""
        return self.native.bytes_between(top, node)

    def child(self, node: int, b: int) -> int:
        """The child of ``node`` by byte ``b`` (-1: none, or ``node`` is -1)."""
        return self.native.child(node, b)

    def node_of(self, data: bytes) -> int:
        """The node of prefix ``data`` (-1: no token starts with it)."""
        return self.native.node_of(data)

    @cached_property
    def node_token(self) -> np.ndarray | None:
        """The token id ending at each node (-1: none), or None where some node ends several."""
        return self.native.node_token

    @cached_property
    def first_key(self) -> "array[int]":
        """Where each node's children begin in :attr:`lookup`'s keys (``first_child - 1``), as an
        int array (read per node by the plain-Python walks, instead of a search of the keys)."""
        return array("q", (self.first_child.astype(np.int64) - 1).tobytes())

    @cached_property
    def num_children_list(self) -> list[int]:
        """:attr:`num_children` as a Python list (read per node by the plain-Python walks)."""
        return self.num_children.tolist()  # type: ignore[no-any-return]

    @cached_property
    def depth_starts(self) -> list[int]:
        """Where each depth's nodes begin in the breadth-first order (one more entry than depths)."""
        return self.native.depth_starts.tolist()  # type: ignore[no-any-return]

    def depth_of(self, nodes: np.ndarray) -> np.ndarray:
        """The depth (bytes from the root) of each of ``nodes``."""
        return np.searchsorted(self.native.depth_starts, nodes, side="right") - 1

    @cached_property
    def height(self) -> np.ndarray:
        """The most bytes a token below each node has after the node's own (int64; 0 at a leaf):
        a state met at node ``n`` is read for at most ``height[n]`` more bytes by this trie.

        >>> TokenTrie.from_tokens([b"ab", b"abcd", b"x"]).height.tolist()  # (root, a, x, ab, abc, abcd)
        [4, 3, 0, 2, 1, 0]
        """
        return self.native.height

    @classmethod
    def build(cls, vocab: Vocabulary, ids: list[int] | None = None) -> "TokenTrie":
        """The trie of the tokens ``ids`` of ``vocab`` (default: every token with bytes)."""
        return cls.from_tokens(vocab.tokens, ids)

    @classmethod
    def from_tokens(cls, tokens: Sequence[bytes | None], ids: list[int] | None = None) -> "TokenTrie":
        """The trie of ``tokens[i]`` for the ids ``ids`` (default: every token with bytes)."""
        if ids is None:
            ids = [i for i, t in enumerate(tokens) if t]
        return cls(_engine.TokenTrie.build(list(tokens), [int(i) for i in ids]))

    def restrict(self, ids: np.ndarray) -> "TokenTrie":
        """The trie of only the tokens ``ids`` (a subset of this trie's), cut out of this one
        (its ``origin``: this trie's nodes)."""
        return TokenTrie(self.native.restrict(np.asarray(ids, dtype=np.int64).tolist()))


def expand_ranges(first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Concatenate the ranges [first[i], first[i] + count[i])."""
    total = int(count.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    ends = np.cumsum(count)
    offsets = np.repeat(first - (ends - count), count)
    return offsets + np.arange(total, dtype=np.int64)


def walk_trie(auto: LazyAutomaton, trie: TokenTrie, node: int | Sequence[int], state: int, clamp: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes, states)``: every trie node below ``node`` whose bytes ``auto`` reads from
    ``state``, in depth-first order, and the state each reaches (int64, int32 arrays). The
    transitions a node's children need are built as the walk meets them (their byte classes).
    ``node`` may be several nodes (none below another), walked from ``state`` in one walk.

    ``clamp`` (for a trie of long tokens: few, deep paths): a state met at a node whose
    children need transitions not built yet is first replaced by its head clamped to the node's
    :attr:`~TokenTrie.height` (:meth:`.LazyAutomaton.clamped_head`), where that changes it: a
    long token inside a string under a length bound then goes on through the string's states
    without the bound, shared by every position, instead of a new state per position and byte.
    Which tokens are read is exact; the states below such a node read alike only the bytes of
    the tokens there (what a plain frame's mask needs, not a distance)."""
    return _engine.walk_trie(auto, trie.native, node if isinstance(node, int) else list(node), state, clamp)


def walk_frame(auto: LazyAutomaton, trie: TokenTrie, node: int | Sequence[int], state: int, clamp: bool = False,
               full: TokenTrie | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(token ids, states, branch nodes, branch states)``: the tokens of ``trie`` below ``node``
    that ``auto`` reads from ``state`` with the state each ends in (as :func:`walk_tokens`), and
    the nodes reached, in walk order, that have children and whose state may branch off (a final
    state, or a call or a guard may come first), with the state at each: where a pushdown frame
    goes on in other frames. One native walk (``cpp/engine/frame_walk.h``): the nodes it passes
    are never gathered. ``full``: ``trie`` was cut out of ``full`` (:meth:`TokenTrie.restrict`),
    and the branch points are ``full``'s nodes, their children counted there."""
    return _engine.walk_frame(
        auto, trie.native, node if isinstance(node, int) else list(node), state, clamp, None if full is None else full.native)


def walk_nodes(auto: LazyAutomaton, trie: TokenTrie, state: int) -> np.ndarray:
    """The state every trie node's prefix reaches from ``state`` in ``auto`` (-1 where the prefix
    dies): an int32 array over the trie's nodes, from one depth-first walk of the trie where a
    dead byte prunes its whole subtree; the rows of the states it meets are built as it goes."""
    node_state = np.full(trie.num_nodes, -1, dtype=np.int32)
    node_state[0] = state
    nodes, states = walk_trie(auto, trie, 0, state)
    node_state[nodes] = states
    return node_state


def walk_tokens(auto: LazyAutomaton, trie: TokenTrie, state: int) -> tuple[np.ndarray, np.ndarray]:
    """``(token ids, next states)`` of every token of ``trie`` that ``auto`` reads from
    ``state``: the tokens that end at the nodes :func:`walk_trie` reaches (one native call)."""
    return _engine.walk_tokens(auto, trie.native, 0, state)


def tokens_at(trie: TokenTrie, nodes: np.ndarray, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(token ids, states)``: the tokens that end at ``nodes``, each with its node's state."""
    single = trie.node_token
    if single is not None:  # (no node ends two tokens: a selection, without ranges)
        ids = single.take(nodes)
        keep = np.flatnonzero(ids >= 0)  # (positions, then take: 4x a boolean mask's selection of 200,000 nodes)
        return ids.take(keep), states.take(keep)
    _, tok_first, tok_count, tok_ids = trie.lookup
    cnt = tok_count[nodes]
    return tok_ids[expand_ranges(tok_first[nodes], cnt)], np.repeat(states, cnt)
