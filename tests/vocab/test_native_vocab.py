"""The native token tries, trie walks, string slices and clamps (issue 39, slice 2) against the
Python they replaced (``tests/vocab/reference/``): the same arrays, the same nodes walked (in preorder),
the same terms (one pool: equal terms are one id), the same slice tokens, on random inputs, the
corpus and real vocabularies; and the DFA guide's native masks against plain walks of the trie."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structgen
from structgen import _engine
from structgen.automata.expr import ExprPool
from structgen.automata.lazy import LazyAutomaton
from structgen.automata.regex import regex_to_expr
from structgen.guides.dfa_guide import DfaGuide
from structgen.guides.pushdown import PushdownGuide
from structgen.vocab.index import index_of
from structgen.vocab.slices import SLICES
from structgen.vocab.trie import TokenTrie, walk_tokens, walk_trie

from ..support.json_order import in_schema_order
from ..support.paths import CORPUS, ROOT
from ..support.strategies import patterns
from .reference import clamp as ref_clamp
from .reference import slices as ref_slices
from .reference import trie as ref_trie

_TOKEN = st.binary(min_size=1, max_size=5) | st.sampled_from(
    [b"a", b"ab", b"abc", b'"', b'",', b"\\n", "é".encode(), "😀".encode(), "😀".encode()[:2], b"\xc3", b"Zz_9", b" x"])
TOKENS = st.lists(_TOKEN, min_size=1, max_size=40)
STRINGISH = st.sampled_from([
    '"[^"\\\\\\x00-\\x1f]{0,40}"', '"[a-z]{2,9}"-?', '"[A-Za-z0-9_]*"[0-9]', '(ab|é)*"', '"(?:[^"\\\\]|\\\\n){1,300}",',
    '"[a-z0-9]{0,5}[a-z]{3,}"', 'x{0,1000}y', '[0-9]{2,70}(\\.[0-9]+)?',
])


def _fresh(pattern: str) -> LazyAutomaton:
    pool = ExprPool()
    return LazyAutomaton(pool, regex_to_expr(pattern, pool))


def _same_trie(native: TokenTrie, ref: Any) -> None:
    for name in ("byte", "parent", "first_child", "num_children", "token_ids", "token_nodes"):
        assert np.array_equal(getattr(native, name), getattr(ref, name)), name
    assert native.depth_starts == ref.depth_starts and np.array_equal(native.height, ref.height)
    assert native.lookup.keys == ref.lookup.keys
    for a, b in zip(native.lookup[1:], ref.lookup[1:]):
        assert np.array_equal(a, b)
    assert (native.node_token is None) == (ref.node_token is None)
    if ref.node_token is not None:
        assert np.array_equal(native.node_token, ref.node_token)
    assert (native.origin is None) == (ref.origin is None)
    if ref.origin is not None:
        assert np.array_equal(native.origin, ref.origin)


@settings(max_examples=200, deadline=None)
@given(TOKENS, st.data())
def test_tries_and_their_cuts_are_the_reference_s(tokens: list[bytes], data: Any) -> None:
    with_none: list[bytes | None] = [*tokens, None, b""]
    native, ref = TokenTrie.from_tokens(with_none), ref_trie.TokenTrie.from_tokens(with_none)
    _same_trie(native, ref)
    ids = data.draw(st.lists(st.sampled_from(native.token_ids.tolist()), unique=True))
    _same_trie(native.restrict(np.array(ids, dtype=np.int64)), ref.restrict(np.array(ids, dtype=np.int64)))
    for text in {t[:k] for t in tokens for k in range(len(t) + 1)} | {b"zz", b"\x00"}:
        node = native.node_of(text)
        assert node == ref.node_of(text)
        if node >= 0:
            assert native.bytes_between(0, node) == text
            for b in (0, 97, 255):
                assert native.child(node, b) == ref.child(node, b)
    with pytest.raises(ValueError, match="restrict"):
        native.restrict(np.array([len(with_none) + 5]))


@settings(max_examples=200, deadline=None)
@given(patterns | STRINGISH, TOKENS, st.text("ab\"é-", max_size=3), st.booleans(), st.data())
def test_walks_are_the_reference_walks_in_preorder(pattern: str, tokens: list[bytes], before: str, clamp: bool,
                                                   data: Any) -> None:
    """From the same state of two fresh automata of the pattern (both built by the walks alone),
    from the root or from several nodes: the same nodes reached, in preorder (the order of their
    bytes), each with the state its bytes reach (without a clamp: the state walked byte by byte)."""
    trie = TokenTrie.from_tokens(tokens)
    ref = ref_trie.TokenTrie.from_tokens(tokens)
    a, b = _fresh(pattern), _fresh(pattern)
    q = a.walk(0, before.encode())
    if q < 0:
        return
    assert b.walk(0, before.encode()) == q
    inner = [n for n in range(1, trie.num_nodes) if trie.num_children[n]]
    roots: int | list[int] = 0
    if inner and data.draw(st.booleans()):  # (several nodes, none below another: one depth)
        depth = trie.depth_of(np.array([data.draw(st.sampled_from(inner))]))[0]
        roots = [n for n in inner if trie.depth_of(np.array([n]))[0] == depth]
    got = walk_trie(a, trie, roots, q, clamp)
    want = ref_trie.walk_trie(b, ref, roots, q, clamp)
    assert sorted(got[0].tolist()) == sorted(want[0].tolist())
    spelled = [trie.bytes_between(0, n) for n in got[0].tolist()]
    assert spelled == sorted(spelled)
    if not clamp:  # (each root's nodes read from q below it)
        tops = [0] if roots == 0 else roots
        top_of = {n: next(r for r in tops if trie.bytes_between(0, n).startswith(trie.bytes_between(0, r)))
                  for n in got[0].tolist()}
        assert got[1].tolist() == [a.walk(q, trie.bytes_between(top_of[n], n)) for n in got[0].tolist()]
    assert got[0].dtype == np.int64 and got[1].dtype == np.int32
    if not clamp and roots == 0:  # (and the tokens they reach, each read on its own)
        ids, ends = walk_tokens(_fresh(pattern), trie, 0)
        c = _fresh(pattern)
        want_ids = {i for i, t in enumerate(tokens) if c.walk(0, t) >= 0}
        assert set(ids.tolist()) == want_ids


def _states(auto: LazyAutomaton, limit: int) -> Iterator[int]:
    """Breadth first over an automaton's states, at most ``limit``."""
    order, seen = [0], {0}
    for q in order:
        yield q
        for t in auto.row(q):
            if t >= 0 and t not in seen and len(order) < limit:
                seen.add(t)
                order.append(t)


def _corpus() -> list[tuple[str, Any, list[Any]]]:
    """(name, schema, valid instances) of every schema of ``benchmarks/corpus/``."""
    out = []
    for p in sorted(CORPUS.glob("*.json")):
        case = json.loads(p.read_text())
        out.append((p.stem, case["schema"], case.get("valid", [])))
    return out


def _corpus_automata() -> Iterator[tuple[str, LazyAutomaton]]:
    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
    for name, schema, _ in _corpus()[:40]:
        try:
            guide = structgen.compile_json_schema(schema, vocab)
        except structgen.StructgenError:
            continue
        if isinstance(guide, DfaGuide):
            yield name, guide.automaton
        elif isinstance(guide, PushdownGuide):
            for k in guide._view.reachable()[:6]:
                yield f"{name}#{k}", guide._view.auto(k).auto


def _check_terms(auto: LazyAutomaton, limit: int) -> None:
    pool = auto.pool
    for q in _states(auto, limit):
        e = auto.exprs[q]
        for n in (0, 1, 3, 8, 16, 64, 128, 300):
            assert pool.clamp(e, n) == ref_clamp.clamp(pool, e, n), (q, n)
        assert pool.longest_shortest(e) == ref_clamp._longest_shortest(pool, e)
        for k in range(len(SLICES)):
            assert pool.uniform_successor(e, k) == ref_slices.uniform_successor(pool, e, k), (q, k)
            assert pool.counted_body(e, k) == ref_slices.counted_body(pool, e, k), (q, k)
            for longest in (1, 5, 40):
                assert auto.counted_run(q, k, longest) == ref_slices.counted_run(auto, q, k, longest)
                assert auto.slice_chain(q, k, longest) == ref_slices.slice_chain(auto, q, k, longest)
            assert auto.char_successor(q, k) == ref_slices.char_successor(auto, q, k)


@settings(max_examples=150, deadline=None)
@given(patterns | STRINGISH)
def test_clamps_and_slice_successors_are_the_reference_terms(pattern: str) -> None:
    _check_terms(_fresh(pattern), 60)


@pytest.mark.slow
def test_clamps_and_slice_successors_on_the_corpus() -> None:
    """Every automaton of the first corpus schemas (strings under lengths, enums, numbers), its
    first states: the native terms are the reference's."""
    for _, auto in _corpus_automata():
        _check_terms(auto, 40)


def _same_slices(vocab: structgen.Vocabulary) -> None:
    index = index_of(vocab)
    for k in range(len(SLICES)):
        sl = index.string_slice(k)
        ref = ref_slices.StringSlice.build(vocab.tokens, ref_trie.TokenTrie.from_tokens(vocab.tokens), SLICES[k])
        assert np.array_equal(sl.is_slice, ref.is_slice), k
        assert np.array_equal(sl.by_length, ref.by_length) and np.array_equal(sl.lengths, ref.lengths)
        assert np.array_equal(sl.length_starts, ref.length_starts)
        _same_trie(sl.rest, ref.rest)
        for m in (0, 1, 2, 5, 100):
            assert np.array_equal(sl.up_to(m), ref.up_to(m))
        if sl.cuttable:
            for n in sl.cuts(index.short_token_cuts)[:2]:
                for got, want in zip(sl.rest_cut(n), ref.rest_cut(n)):
                    _same_trie(got, want)


@settings(max_examples=100, deadline=None)
@given(TOKENS)
def test_slice_tokens_are_the_reference_s(tokens: list[bytes]) -> None:
    _same_slices(structgen.Vocabulary.from_bytes([*tokens, None], eos_token_ids=[len(tokens)]))


@pytest.mark.slow
def test_slice_tokens_of_a_real_vocabulary(smollm2_vocabulary: Any) -> None:
    _same_slices(smollm2_vocabulary)
    index = index_of(smollm2_vocabulary)
    ref = ref_trie.TokenTrie.from_tokens(smollm2_vocabulary.tokens)
    _same_trie(index.trie, ref)
    for n in index.short_token_cuts:
        _same_trie(index.long_tokens(n), ref.restrict(np.flatnonzero(index.token_lengths > n)))


def test_the_slice_tables_are_generated_from_the_slices() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_slice_tables.py"), "--check"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("k", range(len(SLICES)))
def test_slice_characters_are_whole_characters_of_the_class(k: int) -> None:
    import re

    whole = re.compile(f"(?:{SLICES[k]})+")
    samples = [b"a", b"ab", b"Zz_9", b"a b", b'"', b"\\", b"\x01", b"\x7f", "é".encode(), "😀".encode(), "😀".encode()[:3],
               b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"a\xc3", b"12", b"-", b"_"]
    for tok in samples:
        try:
            text: str | None = tok.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        want = len(text) if text is not None and whole.fullmatch(text) else None
        assert _engine.slice_characters(k, tok) == want, tok


def _oracle(guide: DfaGuide, state: int) -> np.ndarray:
    """The tokens a plain walk of the whole trie reaches from ``state`` (no slice, no clamp), EOS
    where the state is final."""
    mask = np.zeros(guide.vocabulary.size, dtype=bool)
    ids, _ = walk_tokens(guide.automaton, index_of(guide.vocabulary).trie, state)
    mask[ids] = True
    if guide.is_final(state):
        mask[list(guide.vocabulary.eos_token_ids)] = True
    return mask


@pytest.mark.slow
def test_native_masks_on_the_corpus_equal_plain_walks(smollm2_vocabulary: Any) -> None:
    """The DFA guides of corpus schemas along an instance, and the first states breadth first:
    each native mask (slices, clamps, cuts by token length) is a plain walk's tokens."""
    checked = 0
    for name, schema, instances in _corpus():
        if not instances:
            continue
        try:
            guide = structgen.compile_json_schema(schema, smollm2_vocabulary)
        except structgen.StructgenError:
            continue
        if not isinstance(guide, DfaGuide):
            continue
        text = json.dumps(in_schema_order(instances[0], schema)).encode()
        states = list(_states(guide.automaton, 30))
        q = 0
        for b in text:
            q = guide.automaton.step(q, b)
            if q < 0:
                break
            states.append(q)
        for s in dict.fromkeys(states):
            assert np.array_equal(guide.token_mask(s), _oracle(guide, s)), (name, s)
            checked += 1
    assert checked > 500
