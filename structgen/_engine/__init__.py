"""structgen's native engine (C++, built by scikit-build-core): the expression pool, its
derivatives, byte classes and liveness search, lazy automata and their clamps, the per-tokenizer
data (token tries, string slices), the trie walks, token distances and the DFA guide's core. The
Python faces are :mod:`structgen.automata.expr` (``ExprPool``), :mod:`structgen.automata.lazy`
(``LazyAutomaton``), :mod:`structgen.vocab` (``TokenTrie``, ``StringSlice``, ``VocabularyIndex``)
and :mod:`structgen.guides` (``DfaGuide``, ``SpelledDistances``). See ``docs/engine.md``.
"""

from ._core import (  # noqa: F401
    EPSILON, INF, MIXED, NOTHING, NUM_SLICES, UNBUILT, DfaGuideCore, EmbeddedDfa, ExprsView, FinalsView, FlatView,
    LazyAutomaton, MinLength, Pool, SpelledDistances, StringSlice, TokenIndex, TokenTrie, slice_characters,
    walk_frame, walk_tokens, walk_trie,
)

__all__ = [
    "EPSILON", "INF", "MIXED", "NOTHING", "NUM_SLICES", "UNBUILT", "DfaGuideCore", "EmbeddedDfa", "ExprsView",
    "FinalsView", "FlatView", "LazyAutomaton", "MinLength", "Pool", "SpelledDistances", "StringSlice", "TokenIndex",
    "TokenTrie", "slice_characters", "walk_frame", "walk_tokens", "walk_trie",
]
