"""The token trie walked from one automaton state, compiled with numba.

A mask for a state not seen before is a depth-first walk of the token trie from that state: at
each (trie node, automaton state) pair, each child of the node is stepped through the state's row
of the transition table, and the children still alive are walked further. A profile of the
real-world sample's masks (issue 21) showed that walk, in plain Python, as the largest single
cost of cold masks; its loop is a few array reads per trie node, which is what a compiled kernel
is for. :func:`walk_kernel` is that loop, plain Python, jitted by numba where it is installed (a
dependency; without it, or under ``NUMBA_DISABLE_JIT=1``, the same function runs as it is: one
code path either way), cached on disk and loaded by :func:`warm_kernel` (``prepare_vocabulary``
calls it), so no request pays the compile.

The automaton is built lazily (:class:`~structgen.automata.lazy.LazyAutomaton`), byte class by
byte class: a transition exists only once something needed it. The kernel stops at the first
(node, state) pair with a child whose transition is not built and says which state;
:func:`~structgen.vocab.trie.walk_trie` builds the transitions of that node's children's bytes in
Python and resumes the walk where it stopped (its stack is kept in arrays), so a walk costs one
kernel entry per new pair it has to build for, and deep inside the trie, where a node has a few
children, only their byte classes are derived.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> from structgen.automata.lazy import LazyAutomaton
    >>> from structgen.automata.regex import regex_to_expr
    >>> from structgen.vocab.trie import TokenTrie, walk_trie
    >>> pool = ExprPool()
    >>> auto = LazyAutomaton(pool, regex_to_expr("ab?c", pool))
    >>> trie = TokenTrie.from_tokens([b"a", b"ab", b"abc", b"b", b"ac"])
    >>> nodes, states = walk_trie(auto, trie, 0, 0)
    >>> sorted(trie.bytes_between(0, n) for n in nodes.tolist())
    [b'a', b'ab', b'abc', b'ac']
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..automata.lazy import UNBUILT

__all__ = ["DONE", "compiled_kernel", "walk_kernel", "warm_kernel"]

#: The kernel's return status when the walk is over (else: a state to build).
DONE = -1
_KERNEL: Callable[..., Any] | None = None


def compiled_kernel() -> Callable[..., Any]:
    """:func:`walk_kernel` jitted by numba, made and run once on a tiny trie on first use (numba's
    import, 0.2 s, is not paid by ``import structgen``). The plain function where numba is not
    installed, where ``NUMBA_DISABLE_JIT=1`` (numba then hands the function back as it is), or
    where compiling fails (with a warning: masks are then slower, never wrong)."""
    global _KERNEL
    if _KERNEL is None:
        try:  # (numba is a dependency; a platform without its wheels still gets the same walk, slower)
            import numba
        except ImportError:  # pragma: no cover - numba is installed with structgen
            _KERNEL = walk_kernel
        else:
            try:
                try:
                    jitted = numba.njit(cache=True, nogil=True)(walk_kernel)
                except RuntimeError:  # (no writable cache directory: compiled in memory, once per process)
                    jitted = numba.njit(nogil=True)(walk_kernel)
                _tiny_walk(jitted)
                _KERNEL = jitted
            except Exception as e:  # noqa: BLE001  (pragma: no cover - a numba that cannot compile it)
                warnings.warn(f"structgen: the compiled trie walk is unavailable ({type(e).__name__}: {e}); "
                              "masks use the same walk as plain Python", RuntimeWarning, stacklevel=2)
                _KERNEL = walk_kernel
    return _KERNEL


def walk_kernel(table, first_child, num_children, byte, stack_nodes, stack_states, top, out_nodes, out_states, count):  # type: ignore[no-untyped-def]
    """Walk the trie depth-first from the pairs on the stack (``stack_*[:top]``), appending each
    child reached to ``out_*[count:]``. Returns ``(status, top, count)``: status :data:`DONE`, or
    a state ``s >= 0`` whose transition by some child's byte of the node on top of the stack is
    not built (the pair is left there: build the children's bytes, then call again)."""
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


def warm_kernel() -> None:
    """Load the compiled kernel now (from numba's disk cache; compiled there on a first run, a
    few seconds once per installation), so that no request pays for it."""
    compiled_kernel()


def _tiny_walk(kernel: Callable[..., Any]) -> None:
    """``kernel`` run on the trie of ``a`` and ``ab`` with every argument of the types walks
    pass (so a jitted kernel is compiled, or loaded, for exactly those)."""
    table = np.full((2, 256), -1, dtype=np.int32)
    table[0, ord("a")] = 1
    first_child = np.array([1, 2, 2], dtype=np.int64)
    num_children = np.array([1, 1, 0], dtype=np.int64)
    byte = np.array([0, ord("a"), ord("b")], dtype=np.uint8)
    stack_nodes, stack_states = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int32)
    out_nodes, out_states = np.empty(4, dtype=np.int64), np.empty(4, dtype=np.int32)
    status, _, count = kernel(table, first_child, num_children, byte, stack_nodes, stack_states, 1, out_nodes, out_states, 0)
    assert status == DONE and count == 1, (status, count)
