"""Graphs of automata and of what calls what: the strongly connected components of a directed
graph, callees first (a grammar's rules, a schema's ``$ref`` targets).

Example:
    >>> strongly_connected([0], {0: [1], 1: [0, 2], 2: []}.__getitem__)
    [[2], [1, 0]]
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, TypeVar

__all__ = ["strongly_connected"]

N = TypeVar("N", bound=Hashable)


def strongly_connected(nodes: Iterable[N], successors: Callable[[N], Iterable[N]]) -> list[list[N]]:
    """The strongly connected components of a graph (Tarjan's algorithm, without recursion), each
    listed after every component it reaches (callees first)."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    out: list[list[N]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(successors(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(successors(w))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                out.append(group)
    return out
