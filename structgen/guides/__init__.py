"""One per constraint × vocabulary: guides answer, state by state, which tokens may come next.

- :mod:`.base`: :class:`Guide`, the abstract base and the public API (masks, budgets, forced
  text and tokens), with the caches both kinds share.
- :mod:`.dfa_guide`: :class:`DfaGuide`, the guide over one byte DFA.
- :mod:`.pushdown`: :class:`PushdownGuide`, the guide over a network of automata that call one
  another, composed of its parts: :mod:`.network_view` (the automata as the guide walks them),
  :mod:`.stacks` (hash-consed stacks and the byte step), :mod:`.frame_masks` (masks across
  frames) and :mod:`.distances` (token distances for never-truncated budgets, for both guides).
"""

from .base import Guide
from .dfa_guide import DfaGuide
from .pushdown import PushdownGuide

__all__ = ["DfaGuide", "Guide", "PushdownGuide"]
