"""A walk's branch points found from its nodes and states with numpy (the Python version of the
native frame walk's, ``cpp/engine/frame_walk.h``; was ``structgen/guides/token_walks.py``)."""

from __future__ import annotations

import numpy as np

from structgen.guides.network_view import AutomatonView


def branch_points(auto: AutomatonView, nodes: np.ndarray, states: np.ndarray, num_children: np.ndarray,
              origin: np.ndarray | None = None) -> list[tuple[int, int]]:
    """``(node, state)`` of the walk's ``nodes`` (reached in ``states``) that have children
    (``num_children``, over the vocabulary's trie: ``origin`` maps a cut-out trie's nodes to it)
    and whose state may branch off (call, guard or return). The states are checked first, each
    once (a string's walk reaches 200,000 nodes in a handful of states, and most walks have no
    state that branches: then no node is read)."""
    if states.size == 0:
        return []
    if states.size <= 4096:  # (a small walk: its states read directly, not through arrays over every state)
        branching = [q for q in set(states.tolist()) if auto.branching(q)]
        if not branching:
            return []
        at = np.flatnonzero(np.isin(states, branching))
    else:
        present = np.zeros(auto.num_states, dtype=bool)
        present[states] = True
        branching = [q for q in np.flatnonzero(present).tolist() if auto.branching(q)]
        if not branching:
            return []
        flags = np.zeros(auto.num_states, dtype=bool)
        flags[branching] = True
        at = np.flatnonzero(flags[states])
    real = nodes[at] if origin is None else origin[nodes[at]]
    inner = num_children[real] > 0
    return list(zip(real[inner].tolist(), states[at[inner]].tolist()))
