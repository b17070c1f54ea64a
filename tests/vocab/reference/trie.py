"""The reference (pure Python) token trie and trie walk the native ones replaced: kept only for the
differential tests (tests/vocab/test_native_vocab.py). (The numba kernel ran this same loop.)"""
from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple, Sequence

import numpy as np

from structgen.automata.expr import byte_mask
from structgen.automata.lazy import UNBUILT, LazyAutomaton
from structgen.vocab.vocabulary import Vocabulary

DONE = -1


def compiled_kernel():  # type: ignore[no-untyped-def]
    return walk_kernel


def walk_kernel(table, first_child, num_children, byte, stack_nodes, stack_states, top, out_nodes, out_states, count):  # type: ignore[no-untyped-def]
    """The removed numba kernel, as plain Python (see the module docstring)."""
    while top > 0:
        node = stack_nodes[top - 1]
        s = stack_states[top - 1]
        c0 = first_child[node]
        for j in range(c0, c0 + num_children[node]):
            if table[s, byte[j]] == UNBUILT:
                return s, top, count
        top -= 1
        for j in range(c0, c0 + num_children[node]):
            t = table[s, byte[j]]
            if t >= 0:
                out_nodes[count] = j
                out_states[count] = t
                count += 1
                if num_children[j] > 0:
                    stack_nodes[top] = j
                    stack_states[top] = t
                    top += 1
    return DONE, top, count

__all__ = ["TokenTrie", "TrieLookup", "expand_ranges", "tokens_at", "walk_nodes", "walk_tokens", "walk_trie"]


class TrieLookup(NamedTuple):
    """A trie's nodes as sorted keys, and the tokens that end at each node (see :attr:`TokenTrie.lookup`)."""

    keys: list[int]  # parent << 8 | byte of node i + 1, ascending
    tok_first: np.ndarray  # int64 [n_nodes]: where node n's tokens start in tok_ids
    tok_count: np.ndarray  # int64 [n_nodes]: how many tokens end at node n
    tok_ids: np.ndarray  # int64: token ids, grouped by the node they end at


@dataclass(frozen=True, eq=False)
class TokenTrie:
    """The prefix trie of a vocabulary's token byte strings, in breadth-first arrays.

    Node 0 is the root (the empty prefix). ``byte[n]`` is the last byte of node ``n``'s prefix,
    ``first_child[n]``/``num_children[n]`` give its children (contiguous), and ``token_ids`` /
    ``token_nodes`` say at which node each walkable token ends. A trie cut out of a larger one
    (:meth:`restrict`) knows where each of its nodes came from: node ``i`` is node ``origin[i]``
    of the larger trie (``None`` for a trie built from token bytes).

    The lookups the walks need (:attr:`lookup`, :attr:`num_children_list`,
    :attr:`depth_starts`) are derived on first use and kept with the trie.
    """

    byte: np.ndarray  # uint8 [n_nodes]
    first_child: np.ndarray  # int64 [n_nodes]
    num_children: np.ndarray  # int64 [n_nodes]
    token_ids: np.ndarray  # int64 [n_walk]: ids of tokens with non-empty bytes
    token_nodes: np.ndarray  # int64 [n_walk]: the node where each ends
    parent: np.ndarray  # int64 [n_nodes]: each node's parent (0 for the root)
    origin: np.ndarray | None = None  # int64 [n_nodes]: the node of the larger trie (restrict)

    @property
    def num_nodes(self) -> int:
        return int(self.byte.shape[0])

    @cached_property
    def lookup(self) -> TrieLookup:
        """Sorted ``parent << 8 | byte`` keys (node ``i`` is ``keys[i - 1]``: the breadth-first
        order sorts nodes by parent, then byte) and the token ids ending at each node."""
        n = self.num_nodes
        keys = (self.parent[1:] << 8) | self.byte[1:].astype(np.int64)
        assert bool((np.diff(keys) > 0).all()), "trie nodes are not in (parent, byte) order"
        order = np.argsort(self.token_nodes, kind="stable")
        tok_first = np.searchsorted(self.token_nodes[order], np.arange(n))
        tok_count = np.bincount(self.token_nodes, minlength=n).astype(np.int64)
        return TrieLookup(keys.tolist(), tok_first.astype(np.int64), tok_count, self.token_ids[order])

    def bytes_between(self, top: int, node: int) -> bytes:
        """The bytes from node ``top`` down to ``node`` (``top`` is ``node`` or above it)."""
        keys = self.lookup.keys
        out = bytearray()
        while node != top:
            key = keys[node - 1]
            out.append(key & 255)
            node = key >> 8
        out.reverse()
        return bytes(out)

    def child(self, node: int, b: int) -> int:
        """The child of ``node`` by byte ``b`` (-1: none, or ``node`` is -1)."""
        if node < 0 or not self.num_children_list[node]:
            return -1
        keys = self.lookup.keys
        key = node << 8 | b
        lo = self.first_key[node]
        j = bisect_left(keys, key, lo, lo + self.num_children_list[node])
        return j + 1 if j < len(keys) and keys[j] == key else -1

    def node_of(self, data: bytes) -> int:
        """The node of prefix ``data`` (-1: no token starts with it)."""
        node = 0
        for b in data:
            node = self.child(node, b)
        return node

    @cached_property
    def node_token(self) -> np.ndarray | None:
        """The token id ending at each node (-1: none), or None where some node ends several."""
        _, tok_first, tok_count, tok_ids = self.lookup
        if tok_count.size and int(tok_count.max()) > 1:
            return None
        out = np.full(tok_count.size, -1, dtype=np.int64)
        ends = tok_count > 0
        out[ends] = tok_ids[tok_first[ends]]
        return out

    @cached_property
    def first_key(self) -> array:
        """Where each node's children begin in :attr:`lookup`'s keys (``first_child - 1``), as an
        int array (read per node by the plain-Python walks, instead of a search of the keys)."""
        return array("q", (self.first_child - 1).astype(np.int64).tobytes())

    @cached_property
    def num_children_list(self) -> list[int]:
        """:attr:`num_children` as a Python list (read per node by the plain-Python walks)."""
        return self.num_children.tolist()  # type: ignore[no-any-return]

    @cached_property
    def depth_starts(self) -> list[int]:
        """Where each depth's nodes begin in the breadth-first order (one more entry than depths)."""
        depth = np.zeros(self.num_nodes, dtype=np.int64)
        while True:  # (one round per depth level)
            nxt = depth[self.parent] + 1
            nxt[0] = 0
            if np.array_equal(nxt, depth):
                break
            depth = nxt
        return np.searchsorted(depth, np.arange(int(depth.max(initial=0)) + 2)).tolist()  # type: ignore[no-any-return]

    def depth_of(self, nodes: np.ndarray) -> np.ndarray:
        """The depth (bytes from the root) of each of ``nodes``."""
        return np.searchsorted(np.asarray(self.depth_starts), nodes, side="right") - 1

    @cached_property
    def height(self) -> np.ndarray:
        """The most bytes a token below each node has after the node's own (int64; 0 at a leaf):
        a state met at node ``n`` is read for at most ``height[n]`` more bytes by this trie.

        >>> TokenTrie.from_tokens([b"ab", b"abcd", b"x"]).height.tolist()  # (root, a, x, ab, abc, abcd)
        [4, 3, 0, 2, 1, 0]
        """
        height = np.zeros(self.num_nodes, dtype=np.int64)
        starts = self.depth_starts
        for d in range(len(starts) - 2, 0, -1):  # (deepest level first: each node raises its parent)
            level = np.arange(starts[d], starts[d + 1])
            np.maximum.at(height, self.parent[level], height[level] + 1)
        return height

    @classmethod
    def build(cls, vocab: Vocabulary, ids: list[int] | None = None) -> "TokenTrie":
        """The trie of the tokens ``ids`` of ``vocab`` (default: every token with bytes)."""
        return cls.from_tokens(vocab.tokens, ids)

    @classmethod
    def from_tokens(cls, tokens: Sequence[bytes | None], ids: list[int] | None = None) -> "TokenTrie":
        """The trie of ``tokens[i]`` for the ids ``ids`` (default: every token with bytes)."""
        if ids is None:
            ids = [i for i, t in enumerate(tokens) if t]
        distinct = sorted({tokens[i] for i in ids}, key=lambda b: (len(b), b))  # type: ignore[arg-type]
        # Every prefix of every token is a node; sort by (length, bytes) to get breadth-first order
        # in which the children of a node are contiguous and sorted by byte.
        prefixes: set[bytes] = set()
        for tok in distinct:
            for k in range(1, len(tok) + 1):
                prefixes.add(tok[:k])
        ordered = [b""] + sorted(prefixes, key=lambda b: (len(b), b))
        node_of = {p: i for i, p in enumerate(ordered)}
        n = len(ordered)
        byte = np.zeros(n, dtype=np.uint8)
        parent = np.zeros(n, dtype=np.int64)
        for i in range(1, n):
            p = ordered[i]
            byte[i] = p[-1]
            parent[i] = node_of[p[:-1]]
        token_ids = np.array(ids, dtype=np.int64)
        token_nodes = np.array([node_of[tokens[i]] for i in ids], dtype=np.int64)  # type: ignore[index]
        return cls._assemble(byte, parent, token_ids, token_nodes)

    @classmethod
    def _assemble(
        cls, byte: np.ndarray, parent: np.ndarray, token_ids: np.ndarray, token_nodes: np.ndarray,
        origin: np.ndarray | None = None,
    ) -> "TokenTrie":
        """The trie from its nodes in breadth-first order (sorted by length, then bytes)."""
        n = byte.shape[0]
        num_children = np.bincount(parent[1:], minlength=n).astype(np.int64)
        # Children of node p are the nodes whose parent is p; they are contiguous in BFS order.
        first_child = (np.searchsorted(parent[1:], np.arange(n), side="left") + 1).astype(np.int64)
        return cls(byte, first_child, num_children, token_ids, token_nodes, parent, origin)

    def restrict(self, ids: np.ndarray) -> "TokenTrie":
        """The trie of only the tokens ``ids`` (a subset of this trie's), cut out of this one
        with array operations instead of rebuilt from the token bytes."""
        where = np.full(int(self.token_ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        where[self.token_ids] = np.arange(self.token_ids.size)
        pos = where[np.asarray(ids, dtype=np.int64)]
        if (pos < 0).any():
            raise ValueError("restrict() needs tokens of this trie")
        keep = np.zeros(self.num_nodes, dtype=bool)
        keep[0] = True
        nodes = np.unique(self.token_nodes[pos])
        while nodes.size:  # mark every prefix of a kept token
            nodes = nodes[~keep[nodes]]
            keep[nodes] = True
            nodes = np.unique(self.parent[nodes])
        old = np.flatnonzero(keep)
        new_id = np.full(self.num_nodes, -1, dtype=np.int64)
        new_id[old] = np.arange(old.size)
        parent = new_id[self.parent[old]]
        parent[0] = 0
        return TokenTrie._assemble(self.byte[old], parent, self.token_ids[pos], new_id[self.token_nodes[pos]], origin=old)


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
    stack_nodes, stack_states, out_nodes, out_states = _buffers(trie.num_nodes + 1)
    first, count_of, byte = trie.first_child, trie.num_children, trie.byte
    top, count = 0, 0
    kernel = compiled_kernel()
    height = trie.height if clamp else None
    for root in [node] if isinstance(node, int) else node:
        if count_of[root] > 0:
            stack_nodes[top], stack_states[top], top = root, state, top + 1
    while True:
        status, top, count = kernel(auto.table, first, count_of, byte, stack_nodes, stack_states, top, out_nodes, out_states, count)
        if status == DONE:
            return out_nodes[:count].copy(), out_states[:count].copy()
        top_node = int(stack_nodes[top - 1])
        if clamp:
            cut = auto.clamped_head(int(status), int(height[top_node]), rounded=True)
            if cut != status:
                stack_states[top - 1] = cut
                continue
        c0 = int(first[top_node])
        kids = byte[c0 : c0 + count_of[top_node]]
        auto.fill(int(status), _mask_of(kids))


def walk_nodes(auto: LazyAutomaton, trie: TokenTrie, state: int) -> np.ndarray:
    """The state every trie node's prefix reaches from ``state`` in ``auto`` (-1 where the prefix
    dies): an int32 array over the trie's nodes, from a depth-first walk of the trie where a dead
    byte prunes its whole subtree (:func:`~structgen.vocab.trie_walk.walk_trie`, compiled); the
    rows of the states it meets are built as it goes."""
    node_state = np.full(trie.num_nodes, -1, dtype=np.int32)
    node_state[0] = state
    nodes, states = walk_trie(auto, trie, 0, state)
    node_state[nodes] = states
    return node_state


def walk_tokens(auto: LazyAutomaton, trie: TokenTrie, state: int) -> tuple[np.ndarray, np.ndarray]:
    """``(token ids, next states)`` of every token of ``trie`` that ``auto`` reads from
    ``state``: the tokens that end at the nodes :func:`walk_trie` reaches."""
    return tokens_at(trie, *walk_trie(auto, trie, 0, state))


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


_LOCAL = threading.local()


def _buffers(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A thread's walk stack and output arrays, of at least ``n`` entries each, kept from walk to
    walk: a walk touches a few of them, where four fresh arrays the size of Llama-3's trie (8 MB)
    cost page faults on every walk."""
    got = getattr(_LOCAL, "buffers", None)
    if got is None or got[0].shape[0] < n:
        got = _LOCAL.buffers = (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int64),
                                np.empty(n, dtype=np.int32))
    return got


def _mask_of(data: np.ndarray) -> int:
    """The 256-bit mask of the bytes in ``data`` (a uint8 array; a large one through numpy)."""
    if data.size <= 64:
        return byte_mask(data.tolist())
    present = np.zeros(256, dtype=bool)
    present[data] = True
    return int.from_bytes(np.packbits(present, bitorder="little").tobytes(), "little")
