"""Per-tokenizer data lives in one place: one VocabularyIndex per vocabulary, built lazily and
thread-safely, all at once by prepare_vocabulary, and dropped with its vocabulary."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np

import structgen
from structgen.vocab import index as index_module
from structgen.vocab.index import index_of, prepare_vocabulary
from structgen.vocab.slices import SLICES


def _vocab() -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes([b"a", b"ab", b"abc", b"b", b'"', None], eos_token_ids=[5])


def test_one_index_per_vocabulary_with_what_it_derives() -> None:
    vocab, other = _vocab(), _vocab()
    index = index_of(vocab)
    assert index_of(vocab) is index and index_of(other) is not index
    assert index.trie is index.trie and index.trie.num_nodes == 6  # root, a, b, ", ab, abc
    assert index.single_bytes == {ord("a"), ord("b"), ord('"')}
    trie = index.trie
    nodes = {text: trie.node_of(text) for text in (b"a", b"ab", b"abc", b"b", b'"', b"ac", b"abcd", b"c")}
    assert [text for text, n in nodes.items() if n >= 0] == [b"a", b"ab", b"abc", b"b", b'"']  # (prefixes of tokens)
    assert [text for text, n in nodes.items() if n >= 0 and trie.num_children_list[n]] == [b"a", b"ab"]  # (proper ones)
    assert all(trie.lookup.tok_count[n] == 1 for n in nodes.values() if n >= 0)  # (each is a token too)
    assert trie.child(-1, 97) == -1 and trie.child(nodes[b"ab"], ord("c")) == nodes[b"abc"]
    assert index.longest_token == 3 and index.tokens is vocab.tokens
    sl = index.string_slice(0)
    assert sl is index.string_slice(0) and sl.rest.token_ids.tolist() == [4]
    assert sl.rest.origin is not None and index.trie.byte[sl.rest.origin].tolist() == [0, ord('"')]


def test_prepare_builds_everything() -> None:
    vocab = _vocab()
    index = prepare_vocabulary(vocab)
    assert index is index_of(vocab)
    assert {"trie", "single_bytes", "longest_token", "token_lengths"} <= set(index._built)
    assert sorted(index._slices) == list(range(len(SLICES)))
    assert {"lookup", "num_children_list", "depth_starts"} <= set(vars(index.trie))
    assert "missing_bytes" in vars(vocab)


def test_the_index_does_not_keep_its_vocabulary_alive() -> None:
    vocab = _vocab()
    index_of(vocab).prepare()
    alive = weakref.ref(vocab)
    assert vocab in index_module._INDEXES
    del vocab
    gc.collect()
    assert alive() is None  # (and its entry left the cache with it)


def test_concurrent_first_use_builds_once() -> None:
    vocab = structgen.Vocabulary.from_bytes([bytes([b]) * k for b in range(97, 123) for k in (1, 2, 3)] + [None],
                                            eos_token_ids=[78])
    index = index_of(vocab)
    got: list[object] = []
    barrier = threading.Barrier(8)

    def use() -> None:
        barrier.wait()
        got.append((index_of(vocab), index.trie, index.string_slice(1), index.token_lengths))

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(all(a is b for a, b in zip(g, got[0])) for g in got)


def test_trie_lookups_match_the_arrays() -> None:
    trie = index_of(_vocab()).trie
    keys, tok_first, tok_count, tok_ids = trie.lookup
    assert keys == ((trie.parent[1:] << 8) | trie.byte[1:]).tolist()
    assert trie.num_children_list == trie.num_children.tolist()
    assert trie.depth_starts == [0, 1, 4, 5, 6]  # root; a b "; ab; abc
    at = {n: sorted(tok_ids[tok_first[n] : tok_first[n] + tok_count[n]].tolist()) for n in range(trie.num_nodes)}
    assert at == {n: sorted(trie.token_ids[trie.token_nodes == n].tolist()) for n in range(trie.num_nodes)}
    assert np.array_equal(tok_count, np.bincount(trie.token_nodes, minlength=trie.num_nodes))
