"""One per tokenizer: the :class:`~.vocabulary.Vocabulary` (token byte strings, EOS and special
tokens) and everything derived from it once, owned by its :class:`~.index.VocabularyIndex`.

- :mod:`.vocabulary`: a tokenizer's tokens normalised to raw bytes.
- :mod:`.trie`: the breadth-first token trie and its walks against a byte DFA.
- :mod:`.slices`: the free-text tokens of a vocabulary, sorted out once (string bodies).
- :mod:`.index`: the per-tokenizer data (trie, slices, token sets), built lazily or all at once
  by :func:`~.index.prepare_vocabulary`; :func:`~.index.index_of` is its one cache.
"""
