"""Vocabulary slices (free-text tokens sorted out once) give exactly the masks of a full trie walk."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.regex import regex_to_dfa
from structgen.json_schema import schema_to_dfa
from structgen.guides.dfa_guide import DfaGuide
from structgen.guides.frame_tokens import ids_of_words
from structgen.vocab.index import string_slice
from structgen.automata.expr import ExprPool
from structgen.automata.lazy import LazyAutomaton
from structgen.automata.regex import regex_to_expr
from structgen.vocab.slices import MIXED, SLICES, char_successor, ends_along

from ..support.reference import paired_states, reference_mask, restricted

CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt])'
DOT = r'(?:[^"\\\x00-\x1f\u2028\u2029]|\\["\\/bfrt])'  # (what a pattern's "." reads inside a JSON string)
PIECES = [CHAR, DOT, "[a-z]", "[A-Za-z0-9_]", "[a-z0-9]", "[0-9]", "é", r"\.", "-", " ", "[^a]"]


@st.composite
def string_patterns(draw: st.DrawFn) -> str:
    """JSON-string-like patterns: bounded and unbounded runs of slice-ish classes."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        piece = draw(st.sampled_from(PIECES))
        lo = draw(st.integers(0, 3))
        hi = draw(st.one_of(st.none(), st.integers(lo, lo + 4)))
        parts.append(f"{piece}{{{lo},}}" if hi is None else f"{piece}{{{lo},{hi}}}")
    return '"' + "".join(parts) + '"' + draw(st.sampled_from(["", ",", "[0-9]", r"\}"]))


_TOKENS = st.lists(
    st.sampled_from(["a", "ab", "abc", "Zz_9", "0", "12", "é", "aé", " x", "x ", '"', '",', 'a"', "\\", "\\n", "-", ".",
                     "}", "\x01", "😀", "abcdefgh", "a\u2028", "\u2029"]).map(str.encode)
    | st.sampled_from([b"\xc3", b"\xa9", "😀".encode()[:2]]),
    min_size=3, max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(pattern=string_patterns(), tokens=_TOKENS)
def test_slice_masks_equal_the_reference(pattern: str, tokens: list[bytes]) -> None:
    vocab = structgen.Vocabulary.from_bytes([*tokens, None], eos_token_ids=[len(tokens)])
    dfa = restricted(regex_to_dfa(pattern), vocab)
    guide = DfaGuide(regex_to_dfa(pattern), vocab)
    for s, d in paired_states(guide, dfa):
        ref = reference_mask(dfa, vocab, d)
        got = guide._slice_mask(s)
        if got is not None:
            got[list(vocab.eos_token_ids)] = bool(dfa.finals[d])
            assert (got == ref).all(), (pattern, tokens, s, np.flatnonzero(got != ref))


def test_char_successor_of_a_lazy_automaton_counts_down() -> None:
    pool = ExprPool()
    auto = LazyAutomaton(pool, regex_to_expr('"[^"\\\\\\x00-\\x1f]{0,2}"', pool))
    q1 = auto.step(0, ord('"'))
    q2 = char_successor(auto, q1)
    assert q2 >= 0 and char_successor(auto, q2) >= 0 and char_successor(auto, char_successor(auto, q2)) == -1
    assert char_successor(auto, 0) == -1
    letters = LazyAutomaton(pool, regex_to_expr('"[a-z]*"', pool))
    assert char_successor(letters, letters.step(0, ord('"'))) == MIXED


def test_slice_membership_and_lengths() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"ab", "é".encode(), b'a"', b"\xc3", b"a\x01", b"Zz9", None],
                                            eos_token_ids=[6])
    sl = string_slice(vocab)
    assert sl.is_slice.tolist() == [True, True, False, False, False, True, False]
    assert sl.up_to(1).tolist() == [False, True, False, False, False, False, False]
    assert sorted(sl.rest.token_ids.tolist()) == [2, 3, 4]
    word = string_slice(vocab, SLICES.index("[A-Za-z0-9_]"))
    assert np.flatnonzero(word.is_slice).tolist() == [0, 5]
    dot = string_slice(structgen.Vocabulary.from_bytes([b"ab", "a\u2028".encode(), "\u2029".encode(), "é".encode(), None],
                                                      eos_token_ids=[4]), 1)
    assert dot.is_slice.tolist() == [True, False, False, True, False]


SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "bio": {"type": "string"},
                                      "tags": {"type": "array", "items": {"type": "string", "minLength": 2}}},
     "required": ["name"]},
    {"type": "object", "properties": {"url": {"type": "string", "format": "uri"}, "email": {"type": "string",
                                      "format": "email"}, "slug": {"type": "string", "pattern": "^[a-z0-9-]{1,20}$"}}},
    # (a string nearer its bound than the longest tokens: rest walks cut by token length)
    {"type": "object", "properties": {"title": {"type": "string", "minLength": 3, "maxLength": 60}}, "required": ["title"]},
    # (a pattern's "." under a length bound: the slice without U+2028 and U+2029)
    {"type": "object", "properties": {"arn": {"type": "string", "pattern": "^arn:.*$", "maxLength": 50}}, "required": ["arn"]},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_slice_masks_equal_full_walks_on_a_real_vocabulary(schema: dict, smollm2_vocabulary: Any) -> None:
    dfa = restricted(schema_to_dfa(schema), smollm2_vocabulary)
    guide = DfaGuide(schema_to_dfa(schema), smollm2_vocabulary)  # (the flat guide's slices)
    used = 0
    pairs = paired_states(guide, dfa, limit=300)
    for s, _ in pairs:
        fast = guide._slice_mask(s)
        if fast is not None:
            used += 1
            full = np.zeros(smollm2_vocabulary.size, dtype=bool)
            full[guide._walk(s)[0]] = True
            assert (fast == full).all(), s
    assert used > len(pairs) // 4


@pytest.mark.parametrize("schema", SCHEMAS)
def test_pushdown_sliced_walks_equal_full_walks(schema: dict, smollm2_vocabulary: Any) -> None:
    """Root walks of a pushdown guide that use slices find the same tokens, end states and
    branch nodes as the walk of the whole trie."""
    from structgen.json_schema import schema_to_network
    from structgen.automata.network import Network
    from structgen.guides.pushdown import PushdownGuide

    from structgen.json_schema import calls as json_schema

    was = json_schema.CALL_THRESHOLD
    json_schema.CALL_THRESHOLD = 0  # every sub-schema an automaton of its own
    try:
        network = schema_to_network(schema)
    finally:
        json_schema.CALL_THRESHOLD = was
    assert isinstance(network, Network)
    guide = PushdownGuide(network, smollm2_vocabulary)
    used = 0
    for k in range(len(network)):
        auto = guide._view.auto(k)
        states, seen = [0], {0}
        for q in states:  # (breadth first over the lazily built automaton, up to 300 states)
            for t in auto.edges(q).values():
                if t not in seen and len(states) < 300:
                    seen.add(t)
                    states.append(t)
        for q in states:
            sliced = guide._frames.sliced_walk(k, auto, q)
            if sliced is None:
                continue
            used += 1
            full = guide._frames.full_walk(auto, q)
            assert dict(zip(sliced.ids.tolist(), sliced.ends.tolist())) == dict(zip(full.ids.tolist(), full.ends.tolist()))
            assert sorted(sliced.branches) == sorted(full.branches)
            # Not exact (a plain frame's walk): states clamped, the same tokens and branch points.
            clamped = guide._frames.walk(k, q, 0, exact=False)
            assert sorted(clamped.ids.tolist()) == sorted(full.ids.tolist())
            got, want = clamped.split(auto), full.split(auto)
            assert sorted(set(got.pops)) == sorted(set(want.pops))
            assert {(m, s) for m, s, _ in got.calls} == {(m, s) for m, s, _ in want.calls}
            assert {(m, s) for m, s, _ in got.guards} == {(m, s) for m, s, _ in want.guards}
    assert used > 0


def test_guide_memory_is_reported_and_bounded() -> None:
    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(32, 127)] + [None], eos_token_ids=[95])
    dfa = regex_to_dfa("[a-z]{0,40}")
    guide = DfaGuide(dfa, vocab, mask_cache_bytes=20 * vocab.size)
    guide.precompute()
    assert len(guide._masks) == 20
    assert guide.memory_bytes == guide.automaton.memory_bytes + guide._core.memory_bytes + 20 * vocab.size
    # (the native masks, packed: 12 bytes each here, within the same bound)
    assert guide._core.max_masks == 20 * vocab.size // 12 and guide._core.num_masks <= guide._core.max_masks
    small = DfaGuide(dfa, vocab, mask_cache_bytes=0)
    small.precompute()
    assert small._core.num_masks == small._core.max_masks == 16  # (the least kept)
    assert (guide.token_mask(0) == reference_mask(dfa, vocab, 0)).all()  # recomputed after eviction


def test_compile_cache_is_bounded_by_bytes(smollm2_vocabulary: Any) -> None:
    from structgen import compiler

    try:
        compiler.clear_cache()
        compiler.set_cache_limits(entries=8, guide_bytes=1)
        a = structgen.compile_regex("[a-z]+", smollm2_vocabulary)
        b = structgen.compile_regex("[0-9]+", smollm2_vocabulary)
        assert structgen.compile_regex("[0-9]+", smollm2_vocabulary) is b
        assert structgen.compile_regex("[a-z]+", smollm2_vocabulary) is not a  # dropped: over the byte bound
        with pytest.raises(ValueError, match="positive"):
            compiler.set_cache_limits(entries=0)
    finally:
        compiler.set_cache_limits()
        compiler.clear_cache()


def test_a_slice_never_leads_into_a_dead_intersection(llama3_vocabulary: Any) -> None:
    """A pattern with a length bound is an intersection; near the bound, a long slice token leaves
    too few characters for the rest of the pattern. The slice walk must drop such tokens as a byte
    walk does (seen on cfn ``AWS::IVS::RecordingConfiguration``: the mask offered 16,931 tokens that
    ``next_state`` refused)."""
    vocab = llama3_vocabulary
    schema = {"type": "string", "maxLength": 128, "pattern": "^arn:aws[-a-z]*:ivs:[a-z]+:recording-configuration/[a-z]+$"}
    guide = structgen.compile_json_schema(schema, vocab)
    s = guide.advance(guide.initial_state, [vocab.tokens.index(bytes([b])) for b in b'"arn:aws' + b"x" * 84])
    allowed = guide.allowed_token_ids(s).tolist()
    assert allowed and all(guide.next_state(s, t) >= 0 for t in allowed)
    assert vocab.tokens.index(b":") in allowed and vocab.tokens.index(b"import") not in allowed


def test_the_compile_cache_measures_guides_again_as_they_grow() -> None:
    """Guides grow as masks are cached: the byte bound sees that within ``REMEASURE`` inserts,
    even while the sizes known from the inserts stay under it. Each insert measures a few guides
    again (those measured longest ago), never all of them at once: every cached guide's walk
    landed in one compile every ``REMEASURE`` inserts."""
    from structgen.compiler import _Cache

    class Sized:
        def __init__(self, n: int) -> None:
            self.memory_bytes = n

    measured: list[Sized] = []

    def measure(v: Sized) -> int:
        measured.append(v)
        return v.memory_bytes

    lru: _Cache[Sized] = _Cache(1000, max_bytes=100, measure=measure)
    first, made = lru.get_or_make("first", lambda: Sized(10))
    assert made
    first.memory_bytes = 95  # (its masks were cached after the insert)
    for i in range(_Cache.REMEASURE):
        lru.get_or_make(i, lambda: Sized(1))
    assert lru.get_or_make("first", lambda: Sized(10))[0] is not first  # measured again: over the bound, dropped
    lru.clear()
    assert lru.get_or_make("first", lambda: Sized(10))[0] is not first

    many: _Cache[Sized] = _Cache(1000, max_bytes=10**9, measure=measure)
    held = [many.get_or_make(i, lambda: Sized(1))[0] for i in range(64)]
    seen: set[int] = set()
    for i in range(100, 100 + _Cache.REMEASURE):
        measured.clear()
        many.get_or_make(i, lambda: Sized(1))
        assert len(measured) <= 1 + -(-(65 + i - 100) // _Cache.REMEASURE)  # (the new one, and a few again)
        seen.update(id(v) for v in measured)
    assert all(id(v) in seen for v in held)  # (each measured again within REMEASURE inserts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), max_size=40), st.lists(st.integers(0, 50), min_size=1, max_size=12), st.data())
def test_ends_along_a_chain_are_each_token_s_state(lengths: list[int], chain: list[int], data: Any) -> None:
    """The state each slice token (sorted by length) ends in along a chain: ``chain[length]``, the
    chain's last state for longer tokens, then the rest tokens' states."""
    lengths_arr = np.array(sorted(lengths), dtype=np.int64)
    starts = np.searchsorted(lengths_arr, np.arange(int(lengths_arr.max(initial=0)) + 2), side="left")
    count = data.draw(st.integers(0, len(lengths)))
    rest = np.array(data.draw(st.lists(st.integers(0, 9), max_size=4)), dtype=np.int32)
    got = ends_along(starts, chain, count, rest)
    want = [chain[min(n, len(chain) - 1)] for n in sorted(lengths)[:count]] + rest.tolist()
    assert got.dtype == np.int32 and got.tolist() == want


def _long_token_vocabulary() -> structgen.Vocabulary:
    """Every byte, and runs of ``a`` up to 100 bytes long, alone and followed by a quote, a comma
    after the quote, an escape, a newline or half a character: long rest tokens that a string
    near its bound accepts or not by their length."""
    runs = [b"a" * n for n in (2, 3, 5, 8, 13, 20, 31, 47, 70, 99)]
    ends = [b"", b'"', b'",', b"\\n", b"\n", b"\xc3"]
    extra = sorted({r + e for r in runs for e in ends} | {b'"' + r for r in runs[:4]})
    return structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + extra + [None], eos_token_ids=[256 + len(extra)])


def test_walks_near_a_length_bound_are_cut_by_token_length_and_equal_exact_walks() -> None:
    """At every position of a string under ``maxLength`` (nearer its bound than the longest rest
    tokens), a plain frame's walk (states clamped, the rest trie cut by token length: the short
    part shared by the positions, the long part walked from the position itself) finds the
    tokens and branch points of the exact walk of the whole trie."""
    from structgen.guides.pushdown import PushdownGuide
    from structgen.json_schema import calls as json_schema
    from structgen.json_schema import schema_to_network

    was = json_schema.CALL_THRESHOLD
    json_schema.CALL_THRESHOLD = 0  # (the string an automaton of its own)
    try:
        network = schema_to_network({"type": "object", "properties": {"title": {"type": "string", "minLength": 3, "maxLength": 90}},
                                     "required": ["title"]})
    finally:
        json_schema.CALL_THRESHOLD = was
    guide = PushdownGuide(network, _long_token_vocabulary())
    frames = guide._frames
    k = next(k for k in range(len(network)) if guide._view.auto(k).step(0, ord('"')) >= 0)
    auto = guide._view.auto(k)
    sl = frames.index.string_slice(0)
    assert sl.cuttable and sl.cuts(frames.index.short_token_cuts)
    q, cut_at, accepted_long = auto.step(0, ord('"')), [], 0
    for position in range(92):
        full = frames.full_walk(auto, q)
        walk = frames.walk(k, q, 0, exact=False)
        assert sorted(walk.ids.tolist()) == sorted(full.ids.tolist()), position
        got, want = walk.split(auto), full.split(auto)
        assert set(got.pops) == set(want.pops) and {c[:2] for c in got.calls} == {c[:2] for c in want.calls}, position
        cut_at.append(auto.auto.head_cut(q, sl.cuts(frames.index.short_token_cuts))[0])
        accepted_long += sum(len(frames.index.tokens[t]) > 16 and not sl.is_slice[t] for t in full.ids.tolist())
        q = auto.step(q, ord("a"))
        if q < 0:
            break
    assert position == 90 and q < 0  # (91 characters is one too many)
    assert {n for n in cut_at if n} == {n for n in sl.cuts(frames.index.short_token_cuts) if n < 90}  # (each cut taken somewhere)
    assert accepted_long > 0  # (long rest tokens accepted: the long part of a cut walk matters)


def test_root_walks_of_a_pattern_under_a_length_bound_equal_exact_walks() -> None:
    """At every position of a string under a pattern and ``maxLength`` (an intersection, a
    Kubernetes name's), a root frame's walk (the short tokens from the state with its bound cut
    for them, the long ones from the position itself) reads the tokens of the exact walk of the
    whole trie; where a slice holds the short ones they are packed (one AND of the slice's tokens
    of a length and the vocabulary's of a byte length), and the packed words list the same tokens."""
    from structgen.guides.pushdown import PushdownGuide

    vocab = _long_token_vocabulary()
    name = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}
    guide = structgen.compile_json_schema({"type": "object", "properties": {"name": name, "labels": {
        "type": "object", "additionalProperties": {"type": "string"}}}, "required": ["name"], "additionalProperties": False}, vocab)
    assert isinstance(guide, PushdownGuide)
    frames = guide._frames
    state, walked, packed = guide.advance(guide.initial_state, list(b'{"name":"')), 0, 0
    for position in range(65):
        (sid,) = guide._stacks.configs[state]
        a, q, _, _ = guide._stacks.stacks[sid]
        auto = guide._view.auto(a)
        want = sorted(frames.full_walk(auto, q).ids.tolist())
        root = frames.clamped_walk(a, q)
        if root is not None:
            walked += 1
            assert sorted(root.ids.tolist()) == want and root.size == len(want), position
            if root.words is not None:
                packed += 1
                assert ids_of_words(root.words(), len(frames.index.tokens)).tolist() == want, position
        state = guide.next_state(state, ord("a"))
        if state < 0:
            break
    assert position == 63 and state < 0  # (64 characters is one too many)
    assert walked > 10 and packed > 10


def test_masks_near_a_length_bound_with_calls_past_the_string_equal_the_tokens_that_step() -> None:
    """A string under a pattern and a length (an intersection), inlined in an object whose next
    value is a call (recursion): along the string, the mask (clamped walks, calls within the cut
    taken from the clamped walk) is exactly the set of tokens that ``next_state`` accepts."""
    runs = [b"a" * n for n in (1, 2, 3, 5, 8, 13, 20, 31, 47, 70, 99)]
    tails = [b"", b'"', b'",', b'","next":{', b'","next":{"s":"', b'","next":{"s":"ba', b'","next":{"s":"bb', b'"}', b"b", b"\\n"]
    # (and tokens that go on past the call into a string under a larger bound than the cut: a
    # clamped state goes on exactly past the string it clamps, or these would pass)
    past = {b'a","next":{"s":"a"},"t":"' + b"a" * n + b'"' for n in (10, 69, 70, 71, 90)}
    extra = sorted({r + t for r in runs for t in tails} | {b'","next":{"s":"' + r for r in runs} | past)
    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + extra + [None], eos_token_ids=[256 + len(extra)])
    # (a pattern the length does not fold into: the string is an intersection)
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|ba)*$", "maxLength": 90}, "next": {"$ref": "#"},
                                               "t": {"type": "string", "maxLength": 70}},
              "required": ["s"], "additionalProperties": False}
    guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    state = guide.initial_state
    for b in b'{"s":"':
        state = guide.next_state(state, b)
    checked = 0
    while state >= 0:
        mask = guide.token_mask(state)
        for t in range(vocab.size - 1):
            assert bool(mask[t]) == (guide.next_state(state, t) >= 0), (checked, vocab.tokens[t])
        checked += 1
        state = guide.next_state(state, ord("a"))
    assert checked == 91
