"""structgen's native engine (C++, built by scikit-build-core): the expression pool, its
derivatives, byte classes and liveness search, lazy automata and their clamps, the per-tokenizer
data (token tries, string slices), the trie walks, token distances, the DFA guide's core, the
pushdown guide's frames below the root, packed token sets and a batch's fill on native threads. The
Python faces are :mod:`structgen.automata.expr` (``ExprPool``), :mod:`structgen.automata.lazy`
(``LazyAutomaton``), :mod:`structgen.vocab` (``TokenTrie``, ``StringSlice``, ``VocabularyIndex``)
and :mod:`structgen.guides` (``DfaGuide``, ``SpelledDistances``). See ``docs/engine.md``.
"""

from ._core import (  # noqa: F401
    EPSILON, GUARD_FIRST, INF, MIXED, NOTHING, NUM_SLICES, UNBUILT, DfaGuideCore, EmbeddedDfa, ExprsView, FinalsView,
    FlatView, FrameSolver, JsonTexts, LazyAutomaton, MetaschemaCheck, MinLength, NeedsFrameData, Pool, SpelledDistances, StringSlice, SubstitutionMemo,
    TokenIndex, TokenTrie, UniqueData, canonical_dfa, code_points_rows, count_token_bits, fill_rows, json_texts, json_value_key, json_value_texts, or_token_bits, prefetch, set_token_bits, slice_characters, walk_frame,
    walk_schemas, walk_tokens, walk_trie,
)

__all__ = [
    "EPSILON", "GUARD_FIRST", "INF", "MIXED", "NOTHING", "NUM_SLICES", "UNBUILT", "DfaGuideCore", "EmbeddedDfa",
    "ExprsView", "FinalsView", "FlatView", "FrameSolver", "JsonTexts", "LazyAutomaton", "MetaschemaCheck", "MinLength", "NeedsFrameData", "Pool", "SpelledDistances",
    "StringSlice", "SubstitutionMemo", "TokenIndex", "TokenTrie", "UniqueData", "canonical_dfa", "code_points_rows", "count_token_bits", "fill_rows", "json_texts", "json_value_key", "json_value_texts", "or_token_bits", "prefetch", "set_token_bits",
    "slice_characters", "walk_frame", "walk_schemas", "walk_tokens", "walk_trie",
]
