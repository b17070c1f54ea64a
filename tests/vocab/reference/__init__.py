"""The reference (pure Python) token tries, trie walks, string slices and clamps the native engine
replaced (issue 39, slice 2): kept only for the differential tests (tests/vocab/test_native_vocab.py)."""
