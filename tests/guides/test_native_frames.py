"""The pushdown guide's native pieces (issue 39, slice 3) against the Python they replaced
(``tests/guides/reference/``): the frame walk (tokens, end states and branch points in one native
pass) against the trie walk, the tokens at its nodes and the branch points found with numpy, on
random vocabularies and networks whose automata call one another, from the root, from several
nodes and through tries cut out of the vocabulary's; the branch points sorted out from arrays;
the masks packed natively against the bool masks; the native frames below the root
(``cpp/engine/frames.h``) against the Python frames (the solver switched off) on grammars, random
vocabularies and the corpus; and grammar masks against a token-by-token run."""

from __future__ import annotations

import json
import random
from typing import Any, Callable, Sequence

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.expr import KINDS
from structgen.automata.markers import CLOSE_GUARD
from structgen.automata.markers import call_marker as C
from structgen.automata.network import Network
from structgen.cfg import grammar_network
from structgen._engine import FrameSolver
from structgen.guides import frame_masks, pushdown
from structgen.guides.network_view import NetworkView
from structgen.guides.pushdown import PushdownGuide
from structgen.guides.token_walks import TokenWalk
from structgen.vocab.trie import TokenTrie, tokens_at, walk_frame, walk_trie

from ..support.paths import ROOT
from .reference.token_walks import branch_points

NETWORKS = [
    [C(1), r"\[(?:" + C(1) + r"(?:, ?" + C(1) + r")*)?\]|\"[a-z]{0,4}\"|[0-9]+"],
    [r"\{\"a\":" + C(1) + r"(?:,\"b\":" + C(2) + r")?\}", r"\"[^\"\\]*\"", r"-?[0-9]+(?:\.[0-9]+)?"],
    [r"(?:select|from) " + C(1) + r"(?:, ?" + C(1) + r")*;?", r"[a-z_][a-z0-9_]*|\(" + C(0) + r"\)"],
]
_TOKEN = st.binary(min_size=1, max_size=4) | st.sampled_from(
    [b"[", b"[]", b"],", b'"', b'",', b'"}', b"1", b"12", b", ", b"select", b"sel", b"from ", b" x", b"a_b", b"(", b");"])
TOKENS = st.lists(_TOKEN, min_size=1, max_size=40)


def _two(regexes: list[str], k: int) -> tuple[Any, Any]:
    """Automaton k of two fresh views of one network: walked alike, their states are numbered alike."""
    return (NetworkView(Network(regexes, []), frozenset()).auto(k), NetworkView(Network(regexes, []), frozenset()).auto(k))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(NETWORKS) - 1), st.integers(0, 2), TOKENS, st.binary(max_size=4) | st.sampled_from([b"[", b"sel", b'{"a":']),
       st.booleans(), st.data())
def test_frame_walks_are_the_python_walks(which: int, k: int, tokens: list[bytes], before: bytes, clamp: bool, data: Any) -> None:
    regexes = NETWORKS[which]
    a, b = _two(regexes, k % len(regexes))
    q = a.auto.walk(0, before)
    if q < 0:
        return
    assert b.auto.walk(0, before) == q
    trie = TokenTrie.from_tokens(tokens)
    inner = [n for n in range(1, trie.num_nodes) if trie.num_children[n]]
    roots: int | list[int] = 0
    if inner and data.draw(st.booleans()):  # (several nodes, none below another: one depth)
        depth = trie.depth_of(np.array([data.draw(st.sampled_from(inner))]))[0]
        roots = [n for n in inner if trie.depth_of(np.array([n]))[0] == depth]
    ids, ends, bnodes, bstates = walk_frame(a.auto, trie, roots, q, clamp)
    branches = list(zip(bnodes.tolist(), bstates.tolist()))
    nodes, states = walk_trie(b.auto, trie, roots, q, clamp)
    want_ids, want_ends = tokens_at(trie, nodes, states)
    assert ids.tolist() == want_ids.tolist() and ends.tolist() == want_ends.tolist()
    assert ids.dtype == np.int64 and ends.dtype == np.int32
    assert branches == branch_points(b, nodes, states, trie.num_children)
    assert a.num_states == b.num_states
    first = (ids, ends, bnodes, bstates, branches)
    sub = data.draw(st.lists(st.sampled_from(trie.token_ids.tolist()), unique=True))
    if sub:  # (a trie cut out of the vocabulary's: its branch points as the vocabulary's nodes)
        cut = trie.restrict(np.array(sub, dtype=np.int64))
        ids, ends, bnodes, bstates = walk_frame(a.auto, cut, 0, q, clamp, trie)
        branches = list(zip(bnodes.tolist(), bstates.tolist()))
        nodes, states = walk_trie(b.auto, cut, 0, q, clamp)
        want_ids, want_ends = tokens_at(cut, nodes, states)
        assert ids.tolist() == want_ids.tolist() and ends.tolist() == want_ends.tolist()
        assert branches == branch_points(b, nodes, states, trie.num_children, cut.origin)
    # the branch points sorted out from the arrays as from the tuples, in walk order (last: this
    # reads the states' symbols, which may number new states in a alone)
    ids, ends, bnodes, bstates, branches = first
    root = [(0, q)] if a.branching(q) else []
    assert TokenWalk(ids, ends, root, inner=(bnodes, bstates)).split(a) == TokenWalk(ids, ends, root + branches).split(a)
    assert TokenWalk(ids, ends, root, inner=(bnodes, bstates)).branches == root + branches


def test_a_frame_walk_through_a_trie_not_cut_from_full_is_refused() -> None:
    a, _ = _two(NETWORKS[0], 1)
    trie = TokenTrie.from_tokens([b"[", b"]", b"[]"])
    with pytest.raises(ValueError, match="not cut out of full"):
        walk_frame(a.auto, trie, 0, 0, False, trie)


def _pieces_vocab(samples: list[str], seed: int) -> structgen.Vocabulary:
    """Every printable byte, and pieces of the samples of 2 to 7 bytes (tokens that cross rules)."""
    rng = random.Random(seed)
    pieces = {bytes([b]) for b in range(32, 127)} | {bytes([b]) for text in samples for b in text.encode()}
    for text in samples:
        data = text.encode()
        for _ in range(4 * len(data)):
            i = rng.randrange(len(data))
            pieces.add(data[i:i + rng.randint(2, 7)])
    tokens = sorted(pieces) + [b""]
    return structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1])


def _greedy(vocab: structgen.Vocabulary, data: bytes) -> list[int]:
    ids = {t: i for i, t in enumerate(vocab.tokens) if t}
    out, i = [], 0
    while i < len(data):
        n = max(k for k in range(1, 8) if data[i:i + k] in ids)
        out.append(ids[data[i:i + n]])
        i += n
    return out


@pytest.mark.parametrize("returns_from", [2, frame_masks.RETURNS_FROM])
@pytest.mark.parametrize("name", ["sql-select.lark", "python-call.lark", "arithmetic.gbnf", "json.gbnf"])
def test_grammar_masks_are_the_tokens_a_token_by_token_run_accepts(name: str, returns_from: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Along the grammar's samples, each step's mask holds the sample's next token, and on the
    first steps exactly the tokens a token-by-token run accepts; callers read from all their
    return nodes at once from 2 nodes on as from 8 (a small vocabulary's return nodes are few)."""
    monkeypatch.setattr(frame_masks, "RETURNS_FROM", returns_from)
    text = (ROOT / "grammars" / name).read_text(encoding="utf-8")
    samples = [json.loads(line) for line in (ROOT / "grammars" / (name.rsplit(".", 1)[0] + ".valid.jsonl")).read_text(
        encoding="utf-8").splitlines() if line.strip()][:4]
    vocab = _pieces_vocab(samples, seed=len(name))
    guide = PushdownGuide(grammar_network(text), vocab)
    for k, sample in enumerate(samples):
        s = guide.initial_state
        for step, t in enumerate(_greedy(vocab, sample.encode())):
            got = guide.token_mask(s)
            if k == 0 and step < 6:
                assert np.flatnonzero(got).tolist() == [u for u in range(vocab.size) if guide.next_state(s, u) >= 0], (sample, step)
            assert got[t], (sample, step)
            s = guide.next_state(s, t)
        assert guide.is_final(s)


def _allowed_of_words(words: np.ndarray, size: int) -> list[int]:
    return np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")[:size]).tolist()


@pytest.mark.parametrize("name", ["sql-select.lark", "python-call.lark", "arithmetic.gbnf", "json.gbnf"])
def test_packed_masks_are_the_tokens_next_state_takes(name: str) -> None:
    """The pushdown guide's packed mask (frames' token sets OR-ed natively into int32 words) and
    its bool mask are exactly the tokens ``next_state`` takes (EOS where final), at every step of
    the grammar's samples."""
    text = (ROOT / "grammars" / name).read_text(encoding="utf-8")
    samples = [json.loads(line) for line in (ROOT / "grammars" / (name.rsplit(".", 1)[0] + ".valid.jsonl")).read_text(
        encoding="utf-8").splitlines() if line.strip()][:4]
    vocab = _pieces_vocab(samples, seed=len(name))
    guide = PushdownGuide(grammar_network(text), vocab)
    eos = vocab.size - 1
    for sample in samples:
        s = guide.initial_state
        for t in [*_greedy(vocab, sample.encode()), None]:
            want = [u for u in range(vocab.size - 1) if guide.next_state(s, u) >= 0] + ([eos] if guide.is_final(s) else [])
            got = guide._packed(s)
            assert got is not None and got.dtype == np.int32
            assert _allowed_of_words(got, vocab.size) == want, sample
            assert np.flatnonzero(guide.token_mask(s)).tolist() == want, sample
            if t is not None:
                s = guide.next_state(s, t)
        assert guide.is_final(s)


def test_packed_masks_of_corpus_schemas_on_llama3(llama3_vocabulary: structgen.Vocabulary, llama3_tokenizer: Any) -> None:
    """The same on the corpus's schemas (unique items, guards, recursion) over Llama-3, along
    each schema's first valid instance, through the matcher a server uses: every token of the
    mask is taken by ``next_state``, and so is none of 400 tokens drawn from outside it."""
    from structgen.guides.matcher import Matcher

    from ..support.json_order import in_schema_order
    rng = random.Random(7)
    checked = 0
    vocab = llama3_vocabulary
    for path in sorted((ROOT / "benchmarks" / "corpus").glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if not case.get("valid"):
            continue
        guide = structgen.compile_json_schema(case["schema"], vocab)
        if not isinstance(guide, PushdownGuide):
            continue
        text = json.dumps(in_schema_order(case["valid"][0], case["schema"]))
        s = guide.initial_state
        for t in llama3_tokenizer.encode(text, add_special_tokens=False)[:25]:
            allowed = _allowed_of_words(Matcher(guide).packed_mask(s), vocab.size)
            assert allowed == np.flatnonzero(guide.token_mask(s)).tolist(), path.name
            eos = set(vocab.eos_token_ids)
            assert all(guide.next_state(s, u) >= 0 for u in allowed if u not in eos), path.name
            inside = set(allowed)
            outside = [u for u in rng.sample(range(vocab.size), 400) if u not in inside and u not in eos]
            assert all(guide.next_state(s, u) < 0 for u in outside), path.name
            s = guide.next_state(s, t)
            if s < 0:
                break
        checked += 1
    assert checked >= 10


def _python_frames(make: Callable[[], PushdownGuide]) -> PushdownGuide:
    """The guide ``make()`` builds, with its stacks, byte step and frames in Python (the native
    solver switched off: ``pushdown.NATIVE``)."""
    pushdown.NATIVE = False
    try:
        guide = make()
    finally:
        pushdown.NATIVE = True
    assert guide._native is None and guide._frames.solver is None
    return guide


def _shape(guide: PushdownGuide, state: int) -> set[tuple[tuple[int, int], ...]]:
    """``state``'s stacks as frames (automaton, state's term) from the top: alike in two guides
    of one network (one pool), however each numbered its stacks and states."""
    table, view, out = guide._stacks, guide._view, set()
    for sid in table.configs[state]:
        frames = []
        while sid >= 0:
            a, q, sid, _ = table.stacks[sid]
            frames.append((a, view.auto(a).auto.exprs[q]))
        out.add(tuple(frames))
    return out


@pytest.mark.parametrize("name", ["sql-select.lark", "python-call.lark", "arithmetic.gbnf", "json.gbnf"])
def test_native_frames_give_the_python_frames_masks(name: str) -> None:
    """The frames below the root made natively (cpp/engine/frames.h) give the masks the Python
    frames give, at every step of the grammar's samples."""
    text = (ROOT / "grammars" / name).read_text(encoding="utf-8")
    samples = [json.loads(line) for line in (ROOT / "grammars" / (name.rsplit(".", 1)[0] + ".valid.jsonl")).read_text(
        encoding="utf-8").splitlines() if line.strip()][:6]
    vocab = _pieces_vocab(samples, seed=len(name) + 1)
    native = PushdownGuide(grammar_network(text), vocab)
    python = _python_frames(lambda: PushdownGuide(grammar_network(text), vocab))
    for sample in samples:
        sn = sp = native.initial_state
        for t in _greedy(vocab, sample.encode()):
            assert np.array_equal(native.token_mask(sn), python.token_mask(sp)), sample
            sn, sp = native.next_state(sn, t), python.next_state(sp, t)
        assert native.is_final(sn) and python.is_final(sp)
    assert isinstance(native._frames._solver, FrameSolver) and native._frames._solver.num_frames > 0


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(NETWORKS) - 1), TOKENS, st.lists(st.integers(0, 40), max_size=12))
def test_native_frames_on_random_vocabularies(which: int, tokens: list[bytes], picks: list[int]) -> None:
    """The same on the test networks over random vocabularies, along walks of allowed tokens."""
    tokens = list(dict.fromkeys(tokens)) + [b""]
    vocab = structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1])
    native = PushdownGuide(Network(NETWORKS[which], []), vocab)
    python = _python_frames(lambda: PushdownGuide(Network(NETWORKS[which], []), vocab))
    sn = sp = native.initial_state
    for pick in picks:
        try:
            got = native.token_mask(sn)
        except structgen.errors.VocabularyError:
            with pytest.raises(structgen.errors.VocabularyError):
                python.token_mask(sp)
            return
        assert np.array_equal(got, python.token_mask(sp))
        allowed = [t for t in np.flatnonzero(got).tolist() if vocab.tokens[t]]
        if not allowed:
            return
        t = allowed[pick % len(allowed)]
        sn, sp = native.next_state(sn, t), python.next_state(sp, t)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(NETWORKS) - 1), TOKENS, st.lists(st.integers(0, 40), max_size=12), st.integers(1, 6))
def test_native_stacks_step_as_the_python_stacks(which: int, tokens: list[bytes], picks: list[int], depth: int) -> None:
    """The native stacks and byte step (``cpp/engine/stack_table.h``) against the Python ones on
    one network (so one pool: states compare by their terms), under a small nesting bound: the
    same stacks after every token, the same refusals, finality and forced bytes, and the same
    answers for byte strings."""
    tokens = list(dict.fromkeys(tokens)) + [b""]
    vocab = structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1])
    net = Network(NETWORKS[which], [])
    native = PushdownGuide(net, vocab, max_depth=depth)
    python = _python_frames(lambda: PushdownGuide(net, vocab, max_depth=depth))
    assert native._native is not None
    sn = sp = native.initial_state
    for pick in picks:
        assert _shape(native, sn) == _shape(python, sp)
        assert native.is_final(sn) == python.is_final(sp)
        assert native.forced_bytes(sn) == python.forced_bytes(sp)
        nexts = [(native.next_state(sn, t), python.next_state(sp, t)) for t in range(len(tokens) - 1)]
        assert [n < 0 for n, _ in nexts] == [p < 0 for _, p in nexts]
        live = [pair for pair in nexts if pair[0] >= 0]
        if not live:
            return
        sn, sp = live[pick % len(live)]
    text = b"".join(tokens[p % len(tokens)] for p in picks)
    for end in range(len(text) + 1):
        assert native.accepts_bytes(text[:end]) == python.accepts_bytes(text[:end])


def test_native_frames_of_corpus_schemas_on_llama3(llama3_vocabulary: structgen.Vocabulary, llama3_tokenizer: Any) -> None:
    """The same on the corpus's schemas whose networks need no frame data, over Llama-3."""
    import pickle

    from ..support.json_order import in_schema_order
    checked = 0
    for path in sorted((ROOT / "benchmarks" / "corpus").glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        guide = structgen.compile_json_schema(case["schema"], llama3_vocabulary)
        if not isinstance(guide, PushdownGuide) or not case.get("valid"):
            continue
        native: PushdownGuide = pickle.loads(pickle.dumps(guide))
        python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
        text = json.dumps(in_schema_order(case["valid"][0], case["schema"]))
        sn = sp = native.initial_state
        for t in llama3_tokenizer.encode(text, add_special_tokens=False)[:60]:
            assert np.array_equal(native.token_mask(sn), python.token_mask(sp)), path.name
            sn, sp = native.next_state(sn, t), python.next_state(sp, t)
            if sn < 0:
                break
        checked += isinstance(native._frames._solver, FrameSolver)
    assert checked >= 5


_BOUNDED = {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "maxLength": 12}  # (see _BOUNDED_PATTERNS)
_STRINGS = st.sampled_from([{"type": "string"}, {"type": "string", "maxLength": 6}, {"type": "string", "pattern": "^[a-c]+$"},
                             {"type": "string", "format": "date"}, _BOUNDED])
_PLAIN = st.sampled_from([{"type": "integer"}, {"type": "boolean"}, {"type": "string", "minLength": 2}, _BOUNDED])


@st.composite
def _frame_data_schemas(draw: st.DrawFn) -> tuple[dict, str]:
    """A schema whose network carries frame data: unique arrays of free strings (maybe nested in
    a unique item) beside plain values, or objects with any key order (key guards)."""
    item = draw(_STRINGS)
    if draw(st.booleans()):
        item = {"type": "array", "items": item, "uniqueItems": True, "maxItems": 3}
    unique = {"type": "array", "items": item, "uniqueItems": True}
    props = {"tags": unique, "name": draw(_PLAIN), "more": {"type": "array", "items": draw(_PLAIN)}}
    order = draw(st.sampled_from(["schema", "any"]))
    return {"type": "object", "properties": props, "required": draw(st.sampled_from([["tags"], ["tags", "name"], []]))}, order


@settings(max_examples=25, deadline=None)
@given(_frame_data_schemas(), st.randoms(use_true_random=False))
def test_native_frames_in_networks_with_frame_data_give_the_python_masks(smollm2_vocabulary: structgen.Vocabulary,
                                                                         case: tuple[dict, str], rng: random.Random) -> None:
    """Where the network carries frame data (unique items, key guards), the frames that need none
    are made natively and the others in Python, and where it is only unique arrays' over items
    that call nothing and objects in any key order the stacks, steps and masks are native too
    (``data_stacks``): the masks, next
    states and finality are the whole Python engine's, along random walks over SmolLM2's tokens."""
    import pickle

    schema, order = case
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, key_order=order)
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    solver = native._frames.solver
    shared = schema["properties"]["tags"]["items"].get("type") == "string"  # (no unique array nested in an item)
    assert solver is not None and solver.has_frame_data and (native._native is not None) == shared  # (data_stacks)
    sn = sp = native.initial_state
    for _ in range(30):
        got = native.token_mask(sn)
        assert np.array_equal(got, python.token_mask(sp)), json.dumps(schema)
        assert native.is_final(sn) == python.is_final(sp)
        allowed = [t for t in np.flatnonzero(got).tolist() if smollm2_vocabulary.tokens[t]]
        if not allowed:
            break
        t = rng.choice(allowed)
        sn, sp = native.next_state(sn, t), python.next_state(sp, t)
        assert sn >= 0 and sp >= 0, (json.dumps(schema), order, sn, sp, smollm2_vocabulary.tokens[t])


def _walk_alike(native: PushdownGuide, python: PushdownGuide, vocab: structgen.Vocabulary, rng: random.Random,
                favoured: list[int], share: float, steps: int, what: Any, forced: Sequence[int] = ()) -> None:
    """Walk two guides of one network alike: the ``forced`` tokens first, then ``steps`` random
    tokens (one of ``favoured`` with probability ``share`` where the mask allows one). At every
    state their masks and finality must be equal, and every token taken must be accepted by both."""
    sn = sp = native.initial_state
    for step in range(len(forced) + steps):
        got = native.token_mask(sn)
        assert np.array_equal(got, python.token_mask(sp)), what
        assert native.is_final(sn) == python.is_final(sp)
        if step < len(forced):
            sn, sp = native.next_state(sn, forced[step]), python.next_state(sp, forced[step])
            assert sn >= 0 and sp >= 0, (what, step)
            continue
        allowed = [t for t in np.flatnonzero(got).tolist() if vocab.tokens[t]]
        if not allowed:
            break
        near = [t for t in favoured if got[t]]
        t = rng.choice(near if near and rng.random() < share else allowed)
        sn, sp = native.next_state(sn, t), python.next_state(sp, t)
        assert sn >= 0 and sp >= 0, (what, sn, sp, vocab.tokens[t])


@st.composite
def _nested_unique_schemas(draw: st.DrawFn) -> tuple[dict, str]:
    """A schema with unique arrays nested in unique items (an item that is a string or a unique
    array of strings, or a unique array alone), beside an object in any key order or not."""
    inner = {"type": "array", "items": draw(_STRINGS), "uniqueItems": True}
    if draw(st.booleans()):
        inner["maxItems"] = 3
    item = draw(st.sampled_from([inner, {"anyOf": [{"type": "string"}, inner]}, {"oneOf": [{"type": "integer"}, inner]}]))
    props = {"ports": {"type": "array", "items": item, "uniqueItems": True}, "name": draw(_PLAIN),
             "env": {"type": "object", "properties": {"a": {"type": "string"}, "ab": draw(_PLAIN)}}}
    order = draw(st.sampled_from(["schema", "any"]))
    return {"type": "object", "properties": props, "required": draw(st.sampled_from([["ports"], ["ports", "name"], []]))}, order


@settings(max_examples=12, deadline=None)
@given(_nested_unique_schemas(), st.randoms(use_true_random=False))
def test_frames_with_data_beside_unique_arrays_nested_in_items_give_the_python_masks(
        smollm2_vocabulary: structgen.Vocabulary, case: tuple[dict, str], rng: random.Random) -> None:
    """Where unique arrays nest in items, the stacks stay the guide's but the solver shares the
    frame data for the frames (``FrameSolver.frames_only``): the guide makes the outer items' and
    arrays' frames, the solver every other frame with its data (``FrameSolver.data_frame``: the
    object in any key order, the nested arrays and their items). Along random walks that favour
    opening, repeating and closing items, the masks, next states and finality are the whole
    Python engine's, and frames with data were made natively."""
    import pickle

    schema, order = case
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, key_order=order)
    assert isinstance(guide, PushdownGuide) and guide._view.unique is not None and guide._view.unique.nested
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    solver = native._frames.solver
    assert native._native is None and solver is not None and solver.frames_only
    vocab = smollm2_vocabulary
    favoured = [vocab.tokens.index(t) for t in (b'["', b'"a"', b'"b"', b'a', b'"', b'",', b'"]', b",", b"]", b"[", b' "')
                if t in vocab.tokens]
    forced = _greedy(vocab, b'{"ports": [') if order == "schema" else []
    _walk_alike(native, python, vocab, rng, favoured, 0.7, 40, (json.dumps(schema), order), forced)
    made = [key for key in native._frames._native if len(key) == 4]  # (FrameSolver.data_frame's)
    assert made and native._frames._data_held


def test_the_stacks_a_guide_keeps_ask_the_solver_which_keys_block_a_state(smollm2_vocabulary: structgen.Vocabulary) -> None:
    """Where unique arrays nest in items the guide keeps the stacks, and a step drops the stacks that
    can no longer finish (``StackTable.is_stuck``): the key guards every way on meets first, all of
    them written. The guide asks the solver (``FrameSolver.blocking_guards``: the frontier read off
    the terms, kept per term), and its answers are the search's (``NetworkView._frontier``) at every
    position along a long string (a pattern's: inline in the object), for no key and every key
    written. The search itself is breadth
    first and ends at a close guard: from inside a string of up to 1,600 characters it builds a
    few rows, not the string's rest (depth first, it walked every position to the bound: about
    140 ms a token along Transfer::Workflow's ARN)."""
    schema = {"type": "object", "properties": {
        "ports": {"type": "array", "uniqueItems": True, "items": {"type": "array", "uniqueItems": True, "items": {"type": "string"}}},
        "arn": {"type": "string", "pattern": "arn:.*", "minLength": 20, "maxLength": 1600}, "name": {"type": "string"}},
        "required": ["name"]}
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, key_order="any")
    assert isinstance(guide, PushdownGuide) and guide._native is None
    view, solver = guide._view, guide._frames.solver
    assert solver is not None and view._guards_solver is solver
    text = b'{"ports": [["a"]], "arn": "arn:aws:transfer:us-east-1:123456789012:workflow/w-1234567890abcdef'
    s, asked, built, dead = guide.initial_state, 0, 0, 0
    for t in _greedy(smollm2_vocabulary, text):
        s = guide.next_state(s, t)
        assert s >= 0
        for sid in guide._stacks.configs[s]:
            a, q, _, _ = guide._stacks.stacks[sid]
            if not view.auto(a).has_guards:
                continue
            before = view.auto(a).num_states
            free, guards = view._frontier(a, q)
            built += view.auto(a).num_states - before
            for data in (0, (1 << 3) - 1):
                searched = not free and all(g != CLOSE_GUARD and data >> g & 1 for g in guards)
                assert view.is_dead(a, q, data) == searched, (a, q, data)
                dead += searched
            asked += 1
    assert asked >= 30 and dead >= 2  # (inside a key, `"ar`: dead once every key is written)
    assert built < 5_000  # (about 1,300: the first search in the string reads 20 characters ahead, to the
    # pattern's and the length's ends; depth first, 75,367)


_KEY_NAMES = st.lists(st.sampled_from(["a", "ab", "abc", "b", "ba", "name", "names", "xy", "stat", "status"]),
                      min_size=1, max_size=6, unique=True)


@st.composite
def _any_order_schemas(draw: st.DrawFn) -> tuple[dict, bool]:
    """An object in any key order (key guards): keys that prefix one another, plain values or a
    nested object, some required, closed, open or open to patterned keys; and whether extra keys
    are written where the schema allows them."""
    names = draw(_KEY_NAMES)
    props: dict[str, Any] = {}
    for n in names:
        props[n] = draw(_PLAIN) if draw(st.integers(0, 3)) else {"type": "object", "properties": {"a": {"type": "integer"}, "ab": _BOUNDED}}
    required = draw(st.lists(st.sampled_from(names), unique=True, max_size=3))
    rest = draw(st.sampled_from([{"additionalProperties": False}, {},
                                 {"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False}]))
    return {"type": "object", "properties": props, "required": required, **rest}, draw(st.booleans())


@settings(max_examples=30, deadline=None)
@given(_any_order_schemas(), st.randoms(use_true_random=False))
def test_objects_in_any_key_order_natively_give_the_python_masks(smollm2_vocabulary: structgen.Vocabulary,
                                                                  case: tuple[dict, bool], rng: random.Random) -> None:
    """Objects in any key order carry the keys written as frame data: their stacks, steps and masks
    are native (``data_stacks``, ``FrameSolver.collect_data``), never left to the guide, and give
    the whole Python engine's masks, next states and finality along random walks over SmolLM2's
    tokens that favour keys (a token may not end where only written keys go on)."""
    import pickle

    schema, extra = case
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, key_order="any", extra_properties=extra)
    assume(isinstance(guide, PushdownGuide))  # (one key and no other: a regex)
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    assert native._native is not None and native._frames.solver is not None and native._frames.solver.has_frame_data
    made: list[bool] = []
    data_words = PushdownGuide._data_words

    def recorded(self: PushdownGuide, state: int, words: np.ndarray) -> bool:
        got = data_words(self, state, words)
        if self is native:
            made.append(got)
        return got

    keyish = [t for t, b in enumerate(smollm2_vocabulary.tokens) if b and b.lstrip(b" ,{")[:1] in (b'"', b"") and len(b) <= 6]
    PushdownGuide._data_words = recorded  # type: ignore[method-assign]
    try:
        _walk_alike(native, python, smollm2_vocabulary, rng, keyish, 0.7, 40, (json.dumps(schema), extra))
    finally:
        PushdownGuide._data_words = data_words  # type: ignore[method-assign]
    assert made and all(made), (json.dumps(schema), extra, made)  # (every mask native: none left to the guide)


_V = '{"v": "'


def _tree(value: dict) -> dict:
    """A recursive object (a pushdown guide) whose property "v" is ``value``."""
    return {"$defs": {"n": {"type": "object", "properties": {"v": value, "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}},
            "$ref": "#/$defs/n"}


_MIXED_ROOTS = [  # (schema, key order, extra keys, the text up to the string's root, whether the root
    # walk there reads the slice though its characters lead different ways)
    ({"type": "object", "properties": {"a": {"type": "integer"}, "ab": {"type": "string"}, "name": {"type": "boolean"}}}, "any", True, '{"', True),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "names": {"type": "string"}}, "required": ["a"]}, "schema", True, '{"a": 1, "', True),
    (_tree({"anyOf": [{"const": "abc"}, {"const": "abd"}, {"type": "string"}]}), "schema", False, _V, True),
    (_tree({"type": "string", "pattern": "^(ab|[a-z]+)$"}), "schema", False, _V, True),  # (the slice of [a-z])
    (_tree({"type": "string", "pattern": "^(ab|[A-Z]+)$"}), "schema", False, _V, False),
    # (a spaced slice's characters lead different ways: its closure is not tried, [a-z]'s is)
    (_tree({"type": "string", "pattern": "^(ab|[a-z ]+)$"}), "schema", False, _V, True),
    (_tree({"type": "string", "pattern": "^(ab|[^x]+)$"}), "schema", False, _V, False),
    (_tree({"anyOf": [{"const": "abc"}, {"type": "string", "maxLength": 3}]}), "schema", False, _V, False),
    # ("z" leads to a term that is not nothing but is empty, and stays so along every letter: an
    # even number of letters and an odd one; the slice of [a-z] is refused)
    (_tree({"anyOf": [{"type": "string", "pattern": "^[a-y][a-z]*$"},
                      {"allOf": [{"type": "string", "pattern": "^z([a-z][a-z])*$"},
                                 {"type": "string", "pattern": "^z[a-z]([a-z][a-z])*$"}]}]}), "schema", False, _V, False),
]


@settings(max_examples=24, deadline=None)
@given(st.sampled_from(_MIXED_ROOTS), st.randoms(use_true_random=False))
def test_string_roots_whose_characters_lead_different_ways_give_the_python_masks(
        smollm2_vocabulary: structgen.Vocabulary, case: tuple[dict, str, bool, str, bool], rng: random.Random) -> None:
    """A string's root whose characters lead different ways (a key's first characters where other
    keys are allowed too, a constant beside any string) takes the vocabulary's slice of free-text
    tokens where every state its characters lead to reads every one of them (``closure_slices``),
    and walks the whole trie where a character dies (a pattern, a length bound) or a state would
    branch: the masks, next states and finality are the whole Python engine's along random walks
    over SmolLM2's tokens that favour short tokens inside strings."""
    import pickle

    schema, order, extra, prefix, sliced = case
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, key_order=order, extra_properties=extra)
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    solver = native._frames.solver
    assert solver is not None
    short = [t for t, b in enumerate(smollm2_vocabulary.tokens) if b and len(b) <= 3]
    byte_tokens = [smollm2_vocabulary.tokens.index(bytes([b])) for b in prefix.encode()]  # (the root reached: its walk from the root)
    _walk_alike(native, python, smollm2_vocabulary, rng, short, 0.8, 30, json.dumps(schema), forced=byte_tokens)
    assert (solver.closure_slices > 0) == sliced, (json.dumps(schema), solver.closure_slices)


_SPACED = [  # (a string whose characters include the space: a spaced slice where all lead one way)
    {"type": "string", "pattern": "^[\\w -]+$", "minLength": 1, "maxLength": 64},
    {"type": "string", "pattern": "^[a-zA-Z0-9 ]*$"},
    {"type": "string", "pattern": "^[-_A-Za-z0-9][-_A-Za-z0-9 ]{1,126}[-_A-Za-z0-9]$"},  # (mixed: a narrower slice)
]


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(_SPACED), st.randoms(use_true_random=False))
def test_strings_of_words_and_spaces_take_a_spaced_slice(
        smollm2_vocabulary: structgen.Vocabulary, value: dict, rng: random.Random) -> None:
    """A string of words and spaces (``[\\w -]``, ``[a-zA-Z0-9 ]``) takes the slice of tokens
    made of letters, digits and spaces (``[ A-Za-z0-9_]`` or ``[ A-Za-z0-9]``, twice the tokens of
    the slices without the space) at its root; where the space leads another way than the letters
    (a last character that is not a space), a narrower slice: the masks, next states and finality
    are the whole Python engine's along random walks that favour tokens of words and spaces."""
    import pickle

    guide = structgen.compile_json_schema(_tree(value), smollm2_vocabulary)
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    spaced = [t for t, b in enumerate(smollm2_vocabulary.tokens) if b and len(b) <= 6 and all(c in b" abcxyzABZ019_-" for c in b)]
    byte_tokens = [smollm2_vocabulary.tokens.index(bytes([b])) for b in _V.encode()]
    _walk_alike(native, python, smollm2_vocabulary, rng, spaced, 0.8, 40, json.dumps(value), forced=byte_tokens)


def test_objects_in_any_key_order_that_the_root_does_not_reach(smollm2_vocabulary: structgen.Vocabulary,
                                                                   smollm2_tokenizer: Any) -> None:
    """``oneOf`` compiles its branches to subtract what two of them accept: their objects in any key
    order become automata with required keys that the root never calls. The stacks carry the keys
    of the objects it does reach (a real-world schema's first compile once failed here), and the
    masks are the Python engine's along an instance that writes keys in another order."""
    import pickle

    obj = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a"]}
    other = {"type": "object", "properties": {"c": {"type": "integer"}, "b": {"type": "string"}}, "required": ["c"]}
    schema = {"type": "object", "properties": {"x": {"oneOf": [obj, other]}, "y": obj}, "required": ["y"]}
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, key_order="any", extra_properties=True)
    assert isinstance(guide, PushdownGuide) and guide._native is not None
    from structgen.guides.native_stacks import guarded_automata
    assert set(guide.network.required) - guarded_automata(guide._view)  # (required keys of automata not reached)
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    sn = sp = guide.initial_state
    for t in smollm2_tokenizer.encode('{"y": {"b": 2, "a": 1}, "x": {"b": "s", "c": 3}}', add_special_tokens=False):
        assert np.array_equal(guide.token_mask(sn), python.token_mask(sp))
        sn, sp = guide.next_state(sn, t), python.next_state(sp, t)
        assert sn >= 0 and sp >= 0
    assert guide.is_final(sn) and python.is_final(sp)


def test_the_solver_refuses_frames_that_need_frame_data(smollm2_vocabulary: structgen.Vocabulary) -> None:
    """A frame of an automaton marked as carrying frame data, or one that enters it, raises
    ``NeedsFrameData`` (kept: asked again, it raises again), a frame that needs none is made; so is
    a frame of an item that calls nothing (its data only narrows its frames), but not one that
    enters it; where the stacks cannot carry the data (a unique array inside an item), the stacks
    and the states' masks are the guide's (``next_state``, ``state_mask`` and ``fill_rows`` raise
    ``ValueError``)."""
    from structgen._engine import NeedsFrameData, fill_rows
    from structgen.guides.matcher import Matcher
    from structgen.guides.native_stacks import frame_data_automata, held_automata

    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                                               "b": {"type": "string"}}}
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary)
    assert isinstance(guide, PushdownGuide)
    frames = guide._frames
    solver = frames.solver
    assert solver is not None and solver.has_frame_data
    marked, held = frame_data_automata(guide._view), frame_data_automata(guide._view, held=True)
    assert held and held == frames._held and marked - held == guide._view.recording  # (the string items)
    for k in range(len(guide.network)):
        frames.solved(solver, lambda: solver.set_automaton(k, guide._view.auto(k).auto))
    for k in sorted(held):
        for _ in range(2):
            with pytest.raises(NeedsFrameData):
                solver.frame(k, 0, 0)
    for k in sorted(marked - held):
        ids, pops, words, size = solver.frame(k, 0, 0)  # (an item's own frame: the opening quote)
        assert size > 0 and pops.size <= 1  # (the empty string returns after its two quotes)
    state = guide.advance(guide.initial_state, _greedy(smollm2_vocabulary, b'{"a":'))
    (top,) = guide._stacks.configs[state]
    a, q, _, _ = guide._stacks.stacks[top]
    assert a == 0 and a not in held
    with pytest.raises(NeedsFrameData):  # (the root object enters the array with its next byte)
        solver.frame(a, q, 0)
    assert frames.frame(a, q, 0).size > 0 and (a, guide._view.auto(a).auto.clamped(q, frames.index.longest_token), 0) in frames._refused
    state = guide.advance(guide.initial_state, _greedy(smollm2_vocabulary, b'{"b":"x'))
    assert guide.token_mask(state).sum() > 1000 and frames._native  # (inside a plain string: its frames are native)
    assert solver.next_state(0, b'{"a":["x') >= 0  # (unique items over items that call nothing: the stacks are the solver's)
    nested = {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True, "items": schema["properties"]["a"]}}}
    guarded = structgen.compile_json_schema(nested, smollm2_vocabulary)  # (a unique array inside an item: the guide's stacks)
    assert isinstance(guarded, PushdownGuide) and guarded._native is None and guarded._frames.solver is not None
    other = guarded._frames.solver
    # (the data is shared for the frames only: the outer item and its array are the guide's, the inner ones the solver's)
    assert other.frames_only and guarded._frames._data_held == held_automata(guarded._view) != frozenset()
    for k in range(len(guarded.network)):
        guarded._frames.solved(other, lambda: other.set_automaton(k, guarded._view.auto(k).auto))
    for k in sorted(guarded._frames._data_held):
        with pytest.raises(NeedsFrameData):
            other.data_frame(k, 0, 0, 0)
    inner = next(iter(set(guarded._view.arrays) - guarded._frames._data_held))
    assert other.data_frame(inner, 0, 0, 0)[3] > 0
    with pytest.raises(IndexError, match="frame data"):
        other.data_frame(inner, 0, 0, 1 << 40)  # (no such set)
    with pytest.raises(ValueError, match="carries no frame data"):
        other.data_frame(0, 0, 0, 1)  # (the root object, in schema order)
    with pytest.raises(ValueError, match="frame data"):
        other.next_state(0, b"{")
    with pytest.raises(ValueError, match="frame data"):
        other.state_mask(0)
    bitmask = Matcher.allocate_token_bitmask(2, smollm2_vocabulary.size)
    with pytest.raises(ValueError, match="frame data"):
        fill_rows([(other, 0, 0)], bitmask, 1)
    assert guarded._native_row(0) is None
    # (where the stacks carry the data, the solver makes the states' masks and a batch fills their rows)
    assert guide._native_row(0) is not None and np.array_equal(solver.state_mask(0), guide._packed(0))
    assert fill_rows([(solver, 0, 1)], bitmask, 1) == [] and np.array_equal(bitmask[1], guide._packed(0))


def test_the_engine_reads_guards_where_the_front_ends_write_them() -> None:
    """The solver tells calls from guards by the symbol the front ends give the first guard."""
    from structgen import _engine
    from structgen.automata.markers import GUARD_FIRST
    assert _engine.GUARD_FIRST == GUARD_FIRST


@pytest.mark.parametrize("count", [0, 1, 7, "most", "most+1", 9000])
def test_a_kept_mask_reads_back_as_it_was_kept(smollm2_vocabulary: Any, count: Any) -> None:
    """A state's mask is kept as its ids where they are at most one in eight words' worth, else as
    the packed words (``TokenSet::of``: one pass that skips runs of zero words): either way it reads
    back bit for bit, at the threshold too, with ids in the first and last words."""
    guide = structgen.compile_json_schema({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
                                           "$ref": "#/$defs/t", "title": f"kept {count}"}, smollm2_vocabulary)  # (a guide of its own)
    assert isinstance(guide, PushdownGuide)
    solver = guide._frames.solver
    assert solver is not None
    size = smollm2_vocabulary.size
    words = (size + 31) // 32
    n = {"most": words // 8, "most+1": words // 8 + 1}.get(count, count)
    rng = random.Random(n)
    ids = set(rng.sample(range(size), n)) | ({0, size - 1} if n >= 2 else set())
    while len(ids) > n:
        ids.discard(rng.choice(sorted(ids - {0, size - 1})))
    bits = np.zeros(words, dtype=np.uint32)
    for t in ids:
        bits[t >> 5] |= np.uint32(1 << (t & 31))
    state = guide.advance(guide.initial_state, _greedy(smollm2_vocabulary, b"[[["))  # (a state no mask was made for)
    solver.keep_mask(state, bits.view(np.int32))
    got = solver.state_mask(state)
    assert got is not None and got.view(np.uint32).tolist() == bits.tolist()


def test_the_stack_mirror_is_whole_for_every_reader_while_threads_step(smollm2_vocabulary: Any) -> None:
    """A native table's Python mirror is read when Python asks after the solver made more: four
    threads step one guide along different texts and each reads the stacks of every state it got
    at once (never a state the mirror lacks); at the end the mirror is the solver's own."""
    import threading

    from structgen.guides.native_stacks import NativeStackTable

    guide = structgen.compile_json_schema({"$defs": {"t": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/t"}}]}},
                                           "$ref": "#/$defs/t", "title": "mirror"}, smollm2_vocabulary)
    assert isinstance(guide, PushdownGuide)
    table = guide._stacks
    assert isinstance(table, NativeStackTable)
    texts = [b"[[1,[2,[3]]],[[4]]]", b"[[[[[[5]]]]],6]", b"[7,[8,[9,[10,[11]]]]]", b"[[],[[]],[[[]]]]"]
    failures: list[BaseException] = []

    def run(text: bytes) -> None:
        try:
            for _ in range(20):
                state = guide.initial_state
                for t in _greedy(smollm2_vocabulary, text):
                    state = guide.next_state(state, t)
                    assert state >= 0
                    assert all(0 <= sid < len(table.stacks) for sid in table.configs[state])
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            failures.append(e)

    threads = [threading.Thread(target=run, args=(text,)) for text in texts]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures
    solver = table.solver
    assert table.num_states() == len(table.configs) == solver.num_configs
    assert table.configs == [tuple(c) for c in solver.configs_from(0)]
    assert len(table.stacks) == len(table.depths) == len(table.records) == solver.num_stacks


def test_a_walk_of_many_tokens_is_kept_packed_and_listed_where_ids_are_read(smollm2_vocabulary: structgen.Vocabulary) -> None:
    """A frame whose walk reads more tokens than half the mask's words is kept as packed words
    (``cpp/engine/frames.cpp``), a smaller one as ids; ``expand``, whose caller reads ids, lists
    the packed ones. Both against ``regex`` over the token bytes: a word after a space, then ``)``."""
    import regex

    vocab = smollm2_vocabulary
    net = Network([r"\(" + C(1) + r"\)", r"[a-z]+"], [])
    guide = PushdownGuide(net, vocab)
    frames = guide._frames
    solver = frames.solver
    assert solver is not None
    for k in range(len(net)):
        frames.solved(solver, lambda: solver.set_automaton(k, guide._view.auto(k).auto))
    trie = frames.trie
    space = trie.node_of(b" ")
    word = regex.compile(rb"[a-z]+\)?")

    def below(pattern: regex.Pattern[bytes], head: bytes) -> list[int]:
        return sorted(t for t, b in enumerate(vocab.tokens) if b and b.startswith(head) and len(b) > len(head)
                      and pattern.fullmatch(b[len(head):]))

    ids, pops, words, size = solver.frame(1, 0, space)  # (the word automaton from the space's node)
    want = below(regex.compile(rb"[a-z]+"), b" ")
    assert len(want) * 2 > (vocab.size + 31) // 32 and words is not None and ids.size == 0 and size == len(want)
    assert _allowed_of_words(words, vocab.size) == want
    small = trie.node_of(b" qu")
    s_ids, _, s_words, _ = solver.frame(1, 0, small)
    assert s_words is None and sorted(s_ids.tolist()) == below(regex.compile(rb"[a-z]+"), b" qu")
    after_paren = guide._view.auto(0).auto.step(0, ord("("))
    ((symbol, ret),) = guide._view.auto(0).auto.symbols_of(after_paren)
    assert symbol == 1
    listed, _ = frames.solved(solver, lambda: solver.expand(0, [], [space], [1], [ret]))
    assert sorted(listed.tolist()) == below(word, b" ")


def _cut_tops(guide: PushdownGuide, state: int) -> int:
    """How many of ``state``'s stacks have a top at the root of a string under a length bound whose
    walk the solver cuts (``LazyAutomaton.head_cut``: a short token cannot reach the bound, a long one can)."""
    cuts = guide._index.short_token_cuts
    count = 0
    for sid in guide._stacks.configs[state]:
        a, q, _, _ = guide._stacks.stacks[sid]
        auto = guide._view.auto(a).auto
        count += auto.in_bounded_string(q) and auto.head_cut(q, cuts)[0] > 0
    return count



def _bounded_tree(string: dict[str, Any]) -> dict[str, Any]:
    """A recursive schema (so a pushdown guide) whose nodes hold ``string``."""
    node = {"type": "object", "properties": {"a": string, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["a"]}
    return {"$defs": {"node": node}, "$ref": "#/$defs/node"}


#: Patterns whose strings under a length bound are an intersection with the length term
#: (``LazyAutomaton.in_bounded_string``), not one counted repetition.
_BOUNDED_PATTERNS = ["^[a-z]+(-[a-z]+)*$", "^(x|yz)+$", "^[^\\\\]*b"]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 90), st.integers(0, 3), st.sampled_from(_BOUNDED_PATTERNS), st.randoms(use_true_random=False))
def test_roots_in_strings_under_a_length_bound_give_the_python_masks(smollm2_vocabulary: structgen.Vocabulary, max_length: int,
                                                                    min_length: int, pattern: str, rng: random.Random) -> None:
    """At the root of a string under a length bound, the solver's walk (``FrameSolver::cut_walk``:
    the short tokens shared by the string's positions, the long ones walked from the position
    itself) gives the Python engine's masks (``FrameMasks.clamped_walk``), packed and unpacked,
    along random walks that mostly stay inside the string: nearer its bound than the longest token."""
    import pickle

    string = {"type": "string", "pattern": pattern, "minLength": min(min_length, max_length), "maxLength": max_length}
    guide = structgen.compile_json_schema(_bounded_tree(string), smollm2_vocabulary)
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    assert native._native is not None
    words = (smollm2_vocabulary.size + 31) // 32
    sn = sp = native.initial_state
    for _ in range(40):
        want = python.token_mask(sp)
        assert np.array_equal(native.token_mask(sn), want), (json.dumps(string), sn)
        packed = native._packed(sn)
        assert packed is not None and packed.size == words
        assert np.array_equal(np.unpackbits(packed.view(np.uint8), bitorder="little")[: want.size].view(bool), want)
        allowed = [t for t in np.flatnonzero(want).tolist() if smollm2_vocabulary.tokens[t]]
        if not allowed:
            break
        t = rng.choice(allowed)
        sn, sp = native.next_state(sn, t), python.next_state(sp, t)
        assert sn >= 0 and sp >= 0


#: Patterns whose strings read a counted repetition first (no length bound): each position its own
#: state, the counter under the longest token.
_COUNTED_PATTERNS = ["^[a-z0-9](-?[a-z0-9]){2,62}$", "^h://[a-z0-9]((.|-+)?[a-z0-9]){0,90}/[a-z]{3,50}$", "^[ab]{0,70}c$"]


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(_COUNTED_PATTERNS), st.sampled_from(["schema", "any"]), st.randoms(use_true_random=False))
def test_roots_at_counted_repetitions_give_the_python_masks(smollm2_vocabulary: structgen.Vocabulary, pattern: str, order: str,
                                                            rng: random.Random) -> None:
    """At the root of a string whose pattern reads a counted repetition first, the solver cuts its
    walk where the next position shares the cut (``LazyAutomaton::head_cut``: the short tokens from
    the clamped state, shared, the long ones from the position), and in an object in any key order
    the end groups of the short tokens are the clamped state's (``DataMasks::end_groups``): the
    masks, next states and finality are the Python engine's along walks that mostly stay inside
    the string, and some tops were cut so."""
    import pickle

    guide = structgen.compile_json_schema(_bounded_tree({"type": "string", "pattern": pattern}), smollm2_vocabulary, key_order=order,
                                          extra_properties=order == "any")
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    vocab = smollm2_vocabulary
    favoured = [vocab.tokens.index(t) for t in (b"a", b"b", b"ab", b"-a", b"0", b"ba", b"a.", b"aa") if t in vocab.tokens]
    forced = _greedy(vocab, b'{"a": "h://' if "h:" in pattern else b'{"a": "')
    _walk_alike(native, python, vocab, rng, favoured, 0.9, 60, (pattern, order), forced)
    cuts = native._index.short_token_cuts
    sn, cut = native.initial_state, 0
    for t in forced + [favoured[0]] * 30:  # (again, counting the tops cut at counted heads)
        for sid in native._stacks.configs[sn]:
            a, q, _, _ = native._stacks.stacks[sid]
            auto = native._view.auto(a).auto
            cut += not auto.in_bounded_string(q) and auto.head_cut(q, cuts)[0] > 0
        native.token_mask(sn)
        sn = native.next_state(sn, t)
        if sn < 0:
            break
    assert cut >= 5


def _masks_along(guide: PushdownGuide, vocab: structgen.Vocabulary, prefix: bytes, alphabet: bytes, text: bytes,
                 seed: int, count: Callable[[Any, int, Sequence[int]], bool]) -> tuple[int, int]:
    """Writes ``prefix`` and then ``text`` with ``guide``: at every position of ``text`` a token is in the mask
    exactly when a token-by-token run takes it (``next_state``: the byte step, no walk, no cut), for the short
    tokens of ``alphabet``, every token longer than the shortest cut (walked from the position itself) and a fixed
    sample of the rest. Answers how many of the positions' stack tops ``(automaton, state)`` ``count`` holds for
    (given the vocabulary's cuts), and the state after ``text``."""
    assert guide._native is not None
    cuts = guide._index.short_token_cuts
    chars = set(alphabet)
    checked = [t for t, b in enumerate(vocab.tokens) if b and ((len(b) <= 3 and set(b) <= chars) or len(b) > min(cuts))]
    checked += random.Random(seed).sample(sorted(set(range(vocab.size)) - set(checked)), 400)
    s = guide.advance(guide.initial_state, _greedy(vocab, prefix))
    counted, written = 0, b""
    for t in _greedy(vocab, text):
        mask = guide.token_mask(s)
        for u in checked:
            assert bool(mask[u]) == (guide.next_state(s, u) >= 0), (written, vocab.tokens[u])
        for sid in guide._stacks.configs[s]:
            a, q, _, _ = guide._stacks.stacks[sid]
            counted += count(guide._view.auto(a).auto, q, cuts)
        written += vocab.tokens[t]
        s = guide.next_state(s, t)
        assert s >= 0
    assert written == text
    return counted, s


def _masks_along_a_string(vocab: structgen.Vocabulary, pattern: str, order: str, alphabet: bytes, text: bytes,
                          seed: int, count: Callable[[Any, int, Sequence[int]], bool]) -> int:
    """:func:`_masks_along` a string of ``pattern`` (in :func:`_bounded_tree`, keys in ``order``)."""
    guide = structgen.compile_json_schema(_bounded_tree({"type": "string", "pattern": pattern}), vocab,
                                          key_order=order, extra_properties=order == "any")
    assert isinstance(guide, PushdownGuide)
    return _masks_along(guide, vocab, b'{"a": "', alphabet, text, seed, count)[0]


@pytest.mark.parametrize("key", ["arn", "u"])
def test_a_string_whose_lower_bound_is_pending_reads_as_a_token_by_token_run(llama3_vocabulary: structgen.Vocabulary,
                                                                             key: str) -> None:
    """An ARN (``arn:.*``, 20 to 1,600 characters) in an object in any key order, open to other
    keys: until its lower bound is read, every character leads a new way (the pattern's progress
    beside the length), no cut applies, and the closure of a root's slice (``FrameSolver::root_slice``,
    ``slice_closure``) is taken where it holds at most 128 states, else given up and the root walked
    (it held 254 states, or failed past 1,024 for the widest slices, deriving more than the walk
    it saves). At every position along the string a token is in the mask exactly when a
    token-by-token run takes it (``next_state``: the byte step, no walk, no cut), for the string's
    short tokens, every token longer than the shortest cut and a fixed sample of the rest."""
    vocab = llama3_vocabulary
    schema = {"type": "object", "properties": {key: {"type": "string", "pattern": "arn:.*", "minLength": 20, "maxLength": 1600},
                                               "b": {"type": "integer"}}, "required": [key]}
    guide = structgen.compile_json_schema(schema, vocab, key_order="any", extra_properties=True)
    assert isinstance(guide, PushdownGuide)
    text = ",}]( كسارةrecognizedU service/prod-2026_11/abc.def:ghi/arn:aws:s3:::my-bucket".encode()
    _, s = _masks_along(guide, vocab, b'{"' + key.encode() + b'": "', text, text, 5, lambda *_: False)
    assert guide.is_final(guide.next_state(s, vocab.tokens.index(b'"}')))


def test_a_key_string_of_many_unicode_classes_beside_a_counted_length_reads_as_a_token_by_token_run(
        llama3_vocabulary: structgen.Vocabulary) -> None:
    """cfn's ``AWS::SSM::MaintenanceWindowTarget``: a target's key is ``[\\p{L}\\p{Z}\\p{N}_.:/=\\-@]*$``
    or any text with ``resource-groups:Name`` in it, at most 163 characters (the length stays an
    intersection). Every character leads a new way, with hundreds of Unicode byte classes: a
    root's slice closure is given up after 4,096 derivatives (it failed past its 128 states after
    53,000), and a state inside a multi-byte character is proved live by the bytes of its shortest
    completion (``StringLengths::inside_a_unit``), not searched. At every position a token is in
    the mask exactly when a token-by-token run takes it, and the string closes where it may."""
    vocab = llama3_vocabulary
    key = {"type": "string", "maxLength": 163, "minLength": 1,
           "pattern": "^[\\p{L}\\p{Z}\\p{N}_.:/=\\-@]*$|resource-groups:ResourceTypeFilters|resource-groups:Name$"}
    target = {"type": "object", "properties": {"Key": key, "Values": {"type": "array", "items": {"type": "string"}}},
              "required": ["Values", "Key"], "additionalProperties": False}
    schema = {"type": "object", "properties": {"Targets": {"type": "array", "items": target, "maxItems": 5}}, "required": ["Targets"]}
    guide = structgen.compile_json_schema(schema, vocab, key_order="any", extra_properties=True)
    assert isinstance(guide, PushdownGuide)
    text = "CHANT}, ResultƐ] ANAL]],Ý5 Artists,,nit sellers䥿}},}}Recipesꖉ bully]],Da6Ȝresource-groups:Name".encode()
    _, s = _masks_along(guide, vocab, b'{"Targets": [{"Values": [], "Key": "', text, text, 11, lambda *_: False)
    assert guide.next_state(s, vocab.tokens.index(b'"}')) >= 0
    # (the pattern's first way alone: "x}" leaves it and holds no resource-groups:Name, so no quote closes it)
    t = guide.advance(guide.advance(guide.initial_state, _greedy(vocab, b'{"Targets": [{"Values": [], "Key": "')), _greedy(vocab, b"x}"))
    assert guide.next_state(t, vocab.tokens.index(b'"}')) < 0


@pytest.mark.parametrize("order", ["schema", "any"])
def test_positions_that_cycle_through_cut_states_are_cut_and_read_as_a_token_by_token_run(
        smollm2_vocabulary: structgen.Vocabulary, order: str) -> None:
    """A URL whose host reads any character (``(.|-+)?``) before its path's counted segments:
    each position's cut is not the next position's (the path's lower bound is read again after
    each ``-`` and ``/``), but the positions cycle through a few cut states, so a cut an earlier
    position met is taken (``LazyAutomaton::head_cut``), decided once per state. At every position
    along the URL a token is in the mask exactly when a token-by-token run takes it
    (``next_state``: the byte step, no walk, no cut), for the URL's short tokens, every token
    longer than the shortest cut (walked from the position itself) and a fixed sample of the
    rest; and some positions were cut so, with the next position's cut another state. (The
    ``regex`` module is no oracle here: its partial match of this ambiguous host backtracks
    without end past a few dozen characters.)"""
    def unshared(auto: Any, q: int, cuts: Sequence[int]) -> bool:
        n, got = auto.head_cut(q, cuts)
        assert auto.head_cut(q, cuts) == (n, got)  # (decided once)
        nxt = auto.step(q, ord("a"))
        return n > 0 and not auto.in_bounded_string(q) and nxt >= 0 and auto.clamped_head(nxt, n) != got

    pattern = "^h://[a-z0-9]((.|-+)?[a-z0-9]){0,90}/[a-z0-9](-?[a-z0-9]){2,62}$"
    text = b"h://b/k-1h-o/abc-def-ghi-jk-lmn-opq-rst-uvw-xyz-abc-def-ghi-jkl-mno-pqr-stu"
    assert _masks_along_a_string(smollm2_vocabulary, pattern, order, b"abcdefghijklmnopqrstuvwxyz0123456789-/.",
                                 text, 7, unshared) >= 3


@pytest.mark.parametrize("pattern", _COUNTED_PATTERNS[:1] + ["^[ab]{0,70}$"])
def test_a_token_that_leaves_a_counted_string_for_a_written_key_is_refused(pattern: str) -> None:
    """The property above with tokens that close the string and begin a key only a written one
    completes (``", "a``, ``a", "a``, and one longer than the cut): at every position of a string whose head the solver cuts,
    in a closed object in any key order, the end groups shared from the clamped state refuse them
    (``a`` is written) and keep ``", "k`` (``kids`` is not), as the Python engine does."""
    import pickle

    long_a, long_k = b"a" * 50 + b'", "a', b"a" * 50 + b'", "k'  # (longer than the cut: walked from each position)
    tokens = [bytes([b]) for b in range(32, 127)] + [b'", "a', b'a", "a', b'", "k', b'a", "k', b"ab", b"-a", b"a" * 20, b"a" * 40, b"a" * 70,
                                                     long_a, long_k, b""]
    vocab = structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1])
    guide = structgen.compile_json_schema(_bounded_tree({"type": "string", "pattern": pattern}), vocab, key_order="any")
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    cuts, ids = native._index.short_token_cuts, {t: i for i, t in enumerate(tokens)}
    assert cuts  # (the longest token is 70 bytes)
    sn = sp = native.advance(native.initial_state, _greedy(vocab, b'{"a": "'))
    sp = python.advance(python.initial_state, _greedy(vocab, b'{"a": "'))
    cut = 0
    for k in range(40):
        got = native.token_mask(sn)
        want = python.token_mask(sp)
        assert np.array_equal(got, want), (pattern, k, [tokens[t] for t in np.flatnonzero(got != want)], [tokens[t] for t in np.flatnonzero(want)])
        assert not got[ids[b'", "a']] and not got[ids[b'a", "a']] and (got[ids[b'a", "k']] or k < 2)
        assert not got[ids[long_a]] and (got[ids[long_k]] or k > 12 or pattern != _COUNTED_PATTERNS[0])
        for sid in native._stacks.configs[sn]:
            a, q, _, _ = native._stacks.stacks[sid]
            auto = native._view.auto(a).auto
            cut += not auto.in_bounded_string(q) and auto.head_cut(q, cuts)[0] > 0
        sn, sp = native.next_state(sn, ids[b"a"]), python.next_state(sp, ids[b"a"])
    assert cut >= 20


@pytest.mark.parametrize("pattern", _BOUNDED_PATTERNS[:2])
def test_the_walks_above_reach_roots_the_solver_cuts(smollm2_vocabulary: structgen.Vocabulary, pattern: str) -> None:
    """The property above is not vacuous: a string of 40 characters at most, written a few
    characters at a time, has tops whose walk the solver cuts, and their masks are Python's."""
    import pickle

    guide = structgen.compile_json_schema(_bounded_tree({"type": "string", "pattern": pattern, "maxLength": 40}), smollm2_vocabulary)
    assert isinstance(guide, PushdownGuide)
    native: PushdownGuide = pickle.loads(pickle.dumps(guide))
    python = _python_frames(lambda: pickle.loads(pickle.dumps(guide)))
    cut = 0
    sn = sp = native.initial_state
    for t in _greedy(smollm2_vocabulary, b'{"a":"' + b"x" * 40 + b'"}'):
        cut += _cut_tops(native, sn)
        assert np.array_equal(native.token_mask(sn), python.token_mask(sp))
        sn, sp = native.next_state(sn, t), python.next_state(sp, t)
    assert native.is_final(sn) and python.is_final(sp)
    assert cut >= 5


@pytest.mark.parametrize("order", ["schema", "any"])
def test_positions_where_a_counted_string_may_end_share_a_cut_and_read_as_a_token_by_token_run(
        smollm2_vocabulary: structgen.Vocabulary, order: str) -> None:
    """A name whose last character comes after a counted run (``[a-z][a-z0-9 ]{1,100}[a-z0-9]``):
    past its second character each position may end the string or read on, so its state is a
    choice of two ways (the string's end and the rest of the object, which calls; the counted run
    and then the end), and the head of each way is clamped alone
    (``LazyAutomaton::clamped_head``): the positions share one cut walk instead of a whole walk
    each. At every position along the name a token is in the mask exactly when a token-by-token
    run takes it (``next_state``: the byte step, no walk, no cut), for the name's short tokens,
    every token longer than the shortest cut and a fixed sample of the rest; and most positions
    that may end were cut, sharing the next position's cut."""
    def shared(auto: Any, q: int, cuts: Sequence[int]) -> bool:
        if auto.pool.node(int(auto.exprs[q]))[0] != KINDS["alt"]:
            return False
        n, got = auto.head_cut(q, cuts)
        nxt = auto.step(q, ord("a"))
        return n > 0 and nxt >= 0 and auto.clamped_head(nxt, n) == got

    pattern = "^[a-z][a-z0-9 ]{1,100}[a-z0-9]$"
    text = b"kabc defgh ijkl mnop qrstu vwxyz 0123 4567 89ab cdef ghij klmn opqr stuv wxyz"
    assert _masks_along_a_string(smollm2_vocabulary, pattern, order, b"abcdefghijklmnopqrstuvwxyz0123456789 \"",
                                 text, 11, shared) >= 10
