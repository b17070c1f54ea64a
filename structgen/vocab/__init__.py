"""One per tokenizer: the :class:`~.vocabulary.Vocabulary` (token byte strings, EOS and special
tokens) and everything derived from it once (the token trie, string slices).

- :mod:`.vocabulary`: a tokenizer's tokens normalised to raw bytes.
- :mod:`.trie`: the breadth-first token trie and its walks against a byte DFA.
- :mod:`.slices`: the free-text tokens of a vocabulary, sorted out once (string bodies).
"""
