"""Pushdown guides (structgen.guides.pushdown): networks of automata that call one another.

The masks, computed frame by frame and shared across stacks, must agree exactly with a token-by-
token simulation of the pushdown run; recursion must be exact; and on schemas the flat compiler
also handles, a network and the flat automaton must accept the same strings.
"""

from __future__ import annotations

import json
import pickle
import random
from typing import Any

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import structgen
from structgen.json_schema import calls as json_schema
from structgen.errors import VocabularyError
from structgen.json_schema import schema_to_dfa, schema_to_network
from structgen.automata.markers import call_marker as C
from structgen.automata.network import Network
from structgen.guides.pushdown import PushdownGuide

from ..support.json_order import in_schema_order

TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["v", "kids"],
            "additionalProperties": False,
        }
    },
    "$ref": "#/$defs/node",
}


def _nest(depth: int) -> dict:
    return {"v": depth, "kids": [_nest(depth - 1)] if depth else []}


def _byte_vocab(extra: list[bytes] = ()) -> structgen.Vocabulary:  # type: ignore[assignment]
    tokens = [bytes([b]) for b in range(32, 127)] + list(extra) + [b""]
    return structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1])


def _simulated_mask(guide: PushdownGuide, state: int) -> list[int]:
    return [t for t in range(guide.vocabulary.size) if guide.next_state(state, t) >= 0]


def _check_walks(guide: PushdownGuide, seed: int, walks: int = 40, steps: int = 40) -> None:
    """Random walks: every mask equals the simulated one, and budgets keep their promise."""
    rng = random.Random(seed)
    for _ in range(walks):
        state = guide.initial_state
        for _ in range(rng.randint(0, steps)):
            allowed = guide.allowed_token_ids(state).tolist()
            assert allowed == _simulated_mask(guide, state), state
            tokens = [t for t in allowed if guide.vocabulary.tokens[t] is not None]
            if not tokens:
                break
            state = guide.next_state(state, rng.choice(tokens))
            need = guide.distance(state)
            for budget in (need, need + 1, need + 3):
                tight = guide.token_mask(state, budget=budget)
                for t in np.flatnonzero(tight).tolist():
                    if guide.vocabulary.tokens[t] is None:
                        assert guide.is_final(state)
                        continue
                    nxt = guide.next_state(state, t)
                    assert nxt >= 0 and guide.distance(nxt) <= budget - 1, (state, t, budget)
                assert tight.any()


def test_a_toy_network_masks_match_simulation_and_budgets() -> None:
    vocab = structgen.Vocabulary.from_bytes(
        [b"[", b"]", b"[]", b"", b"]]", b"[[", b"x", b"x]", b"],[", b",", b"[x"], eos_token_ids=[3]
    )
    net = Network([C(1), rf"\[(?:(?:{C(1)}|x)(?:,(?:{C(1)}|x))*)?\]"], [])
    guide = PushdownGuide(net, vocab)
    _check_walks(guide, seed=0, walks=60)
    s = guide.advance(guide.initial_state, [5, 6, 8, 6, 4])  # [[x],[x]]
    assert guide.is_final(s) and guide.allowed_token_ids(s).tolist() == [3]


def test_recursion_is_exact_twenty_levels_deep(smollm2_tokenizer: Any, smollm2_vocabulary: Any) -> None:
    guide = structgen.compile_json_schema(TREE, smollm2_vocabulary)
    assert isinstance(guide, PushdownGuide)
    text = json.dumps(_nest(20))
    state = guide.initial_state
    for t in smollm2_tokenizer.encode(text, add_special_tokens=False):
        assert guide.token_mask(state)[t], text
        state = guide.next_state(state, t)
    assert guide.is_final(state)
    assert not guide.accepts_bytes(json.dumps({"v": 1, "kids": [{"v": 2}]}).encode())  # kids is required


def test_nesting_bound_is_enforced_by_the_mask() -> None:
    vocab = _byte_vocab()
    guide = structgen.compile_json_schema(TREE, vocab)
    shallow = PushdownGuide(guide.network, vocab, max_depth=8)  # type: ignore[attr-defined]
    assert shallow.accepts_bytes(json.dumps(_nest(2)).encode())
    assert not shallow.accepts_bytes(json.dumps(_nest(12)).encode())
    # at the bound, "[" that would open one more level is masked, and the output still closes
    state = shallow.initial_state
    text = json.dumps(_nest(12)).encode()
    for i, b in enumerate(text):
        tok = vocab.tokens.index(bytes([b]))
        mask = shallow.token_mask(state)
        if not mask[tok]:
            break
        state = shallow.next_state(state, tok)
    assert 0 < i < len(text) - 1
    assert shallow.token_mask(state).any()


def test_large_repeated_sub_schemas_are_called_once() -> None:
    item = {"type": "object", "properties": {f"f{i}": {"type": "string", "maxLength": 63} for i in range(30)}}
    schema = {"type": "array", "maxItems": 10, "items": item}
    net = schema_to_network(schema)
    assert isinstance(net, Network)
    # one automaton for the items, called up to 10 times (flat, it was over the NFA budget)
    assert len(net) <= 3 and len(net.pool) < 2_000
    vocab = _byte_vocab()
    guide = structgen.compile_json_schema(schema, vocab)
    inst = [{"f0": "a" * 63, "f29": "b"}, {}, {"f3": "é"}]
    assert guide.accepts_bytes(json.dumps(inst).encode())  # (é as \\u00e9: this vocabulary has no byte of it)
    assert not guide.accepts_bytes(json.dumps([{"f0": "a" * 64}]).encode())
    assert not guide.accepts_bytes(json.dumps([{}] * 11).encode())


def test_any_value_recurses_without_a_depth_limit() -> None:
    vocab = _byte_vocab()
    guide = structgen.compile_json_schema({"type": "object", "properties": {"meta": {}}, "required": ["meta"]}, vocab)
    deep: Any = 1
    for i in range(12):
        deep = [deep] if i % 2 else {"k": deep}
    assert guide.accepts_bytes(json.dumps({"meta": deep}).encode())
    assert not guide.accepts_bytes(b'{"meta": [1,]}')


def test_pickled_pushdown_guide_behaves_the_same() -> None:
    vocab = _byte_vocab()
    guide = structgen.compile_json_schema(TREE, vocab)
    again = pickle.loads(pickle.dumps(guide))
    assert isinstance(again, PushdownGuide)
    text = json.dumps(_nest(3)).encode()
    assert again.accepts_bytes(text) and guide.accepts_bytes(text)
    assert np.array_equal(again.token_mask(again.initial_state), guide.token_mask(guide.initial_state))


def test_forced_text_crosses_returns_and_calls() -> None:
    vocab = _byte_vocab()
    schema = {
        "$defs": {"p": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}},
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/p"}, "b": {"$ref": "#/$defs/p"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    network = schema_to_network(schema, whitespace="")
    guide = PushdownGuide(network, vocab) if isinstance(network, Network) else structgen.compile_json_schema(schema, vocab, whitespace="")
    assert guide.forced_text(guide.initial_state).startswith('{"a":{"name":"')
    state = guide.advance(guide.initial_state, [vocab.tokens.index(bytes([b])) for b in b'{"a":{"name":"x'])
    assert guide.forced_text(state) == ""
    state = guide.next_state(state, vocab.tokens.index(b'"'))
    assert guide.forced_text(state) == '},"b":{"name":"'


def test_walks_of_a_pushdown_guide_match_simulation_on_a_real_schema() -> None:
    vocab = _byte_vocab([b'",', b'"}', b'"},', b'{"', b'":', b'[{"', b"}]", b"]}", b'"]', b"12", b'1,"'])
    guide = structgen.compile_json_schema(TREE | {"$defs": {"node": TREE["$defs"]["node"] | {"properties": {
        "v": {"type": "integer"}, "tag": {"type": "string", "maxLength": 3},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}}, vocab)
    assert isinstance(guide, PushdownGuide)
    _check_walks(guide, seed=1, walks=30, steps=30)


def test_random_walks_validate(smollm2_vocabulary: Any) -> None:
    guide = structgen.compile_json_schema(TREE, smollm2_vocabulary)
    rng = random.Random(3)
    for _ in range(20):
        state, out = guide.initial_state, bytearray()
        budget = 60
        while not (guide.is_final(state) and (budget == 0 or rng.random() < 0.3)):
            ids = np.flatnonzero(guide.token_mask(state, budget=budget))
            ids = [t for t in ids.tolist() if smollm2_vocabulary.tokens[t] is not None]
            if not ids:
                break
            t = rng.choice(ids)
            out += smollm2_vocabulary.tokens[t]
            state = guide.next_state(state, t)
            budget -= 1
        assert guide.is_final(state)
        jsonschema.validate(json.loads(out), TREE)


@pytest.mark.parametrize("native", [False, True])
def test_frame_bytes_are_counted_as_frames_and_walks_are_cached(smollm2_vocabulary: Any, monkeypatch: pytest.MonkeyPatch,
                                                               native: bool) -> None:
    """The frame caches keep their byte counts as they go (a compile cache reads them on every
    insert): the counts equal a recount, through the caches' clearing when full too; the Python
    frames' (the solver off) and the native frames' (their Python copies and the solver's bytes)."""
    from structgen._engine import FrameSolver
    from structgen.guides import frame_masks, native_stacks, pushdown

    monkeypatch.setattr(pushdown, "NATIVE", native)
    monkeypatch.setattr(frame_masks, "FRAME_CACHE", 7)
    monkeypatch.setattr(native_stacks, "FRAME_CACHE", 7)
    made = []
    compute = frame_masks.FrameMasks._frame
    monkeypatch.setattr(frame_masks.FrameMasks, "_frame", lambda self, *a: made.append(a) or compute(self, *a))
    guide = PushdownGuide(schema_to_network(TREE), smollm2_vocabulary)
    frames, rng, state = guide._frames, random.Random(5), guide.initial_state
    most = 0
    for _ in range(40):
        ids = np.flatnonzero(guide.token_mask(state)).tolist()
        if not ids:
            break
        state = guide.next_state(state, rng.choice(ids))
        recount = sum(f.size * 8 + 64 for f in frames._frames.values())
        recount += sum(w.size * 16 + 64 for w in frames._walks.values() if w is not None)
        recount += sum(f.size * 8 + 16 * len(f.pops) + 64 for f in frames._native.values())
        solver = frames._solver
        recount += solver.memory_bytes if isinstance(solver, FrameSolver) else 0
        assert frames.memory_bytes == recount > 0
        if isinstance(solver, FrameSolver):
            assert solver.num_frames <= 7  # (its frames and walks together stay under FRAME_CACHE)
            most = max(most, solver.num_frames)
    if native:
        assert isinstance(frames._solver, FrameSolver) and most > 0 and not made
    else:
        assert len(made) > 2 * 7  # (so the caches were full and cleared on the way)


# -- the network and the flat automaton agree ---------------------------------------------------

_LEAVES = [
    {"type": "integer", "minimum": -3, "maximum": 40},
    {"type": "string", "maxLength": 4},
    {"type": "boolean"},
    {"enum": ["x", 1, None]},
    {"type": "number"},
]


def _schemas() -> st.SearchStrategy[dict]:
    leaf = st.sampled_from(_LEAVES)

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.builds(lambda x, n: {"type": "array", "items": x, "maxItems": n}, inner, st.integers(0, 3)),
            st.builds(
                lambda props, req: {"type": "object", "properties": props, "required": sorted(set(req) & set(props)),
                                    "additionalProperties": False},
                st.dictionaries(st.sampled_from("abcdefg"), inner, min_size=1, max_size=6),
                st.lists(st.sampled_from("abcdefg"), max_size=3),
            ),
            st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=2, max_size=3)),
        )

    body = st.recursive(leaf, extend, max_leaves=6)
    return st.builds(lambda b, d: {"$defs": {"d": d}, **b}, body, body).map(_with_refs)


def _with_refs(schema: dict) -> dict:
    """Replace each leaf equal to the first one by a $ref to a shared definition."""
    schema["$defs"]["d"] = schema["$defs"]["d"]
    text = json.dumps({k: v for k, v in schema.items() if k != "$defs"})
    leaf = json.dumps(_LEAVES[0])
    return {**json.loads(text.replace(leaf, '{"$ref": "#/$defs/d"}')), "$defs": schema["$defs"]}


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=_schemas(), data=st.data())
def test_network_and_flat_automaton_accept_the_same(schema: dict, data: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    vocab = _byte_vocab()
    monkeypatch.setattr(json_schema, "CALL_THRESHOLD", 0)  # every sub-schema its own automaton
    network = schema_to_network(schema)
    monkeypatch.undo()
    flat = schema_to_dfa(schema)
    guide = PushdownGuide(network, vocab) if isinstance(network, Network) else None
    for _ in range(4):
        inst = data.draw(from_schema(schema))
        for text in (json.dumps(in_schema_order(inst, schema)), json.dumps(inst)):
            want = flat.accepts(text.encode())
            got = guide.accepts_bytes(text.encode()) if guide is not None else network.accepts(text.encode())
            assert got == want, text
    if guide is not None:  # the network's own outputs are the flat automaton's
        rng = random.Random(0)
        for _ in range(5):
            state, out = guide.initial_state, bytearray()
            for _ in range(80):
                if guide.is_final(state) and rng.random() < 0.3:
                    break
                ids = [t for t in guide.allowed_token_ids(state).tolist() if vocab.tokens[t] is not None]
                if not ids:
                    break
                t = rng.choice(ids)
                out += vocab.tokens[t]
                state = guide.next_state(state, t)
            if guide.is_final(state):
                assert flat.accepts(bytes(out)), out
                jsonschema.validate(json.loads(out), schema)


def test_spelling_check_and_errors() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"[", b"[]", b"", b"]]"], eos_token_ids=[2])
    net = Network([C(1), rf"\[{C(1)}?\]"], [])
    guide = PushdownGuide(net, vocab)
    assert not guide.spells_every_byte  # "]" alone is no token
    with pytest.raises(VocabularyError, match="single-byte token"):
        guide.distance(guide.initial_state)
    with pytest.raises(ValueError, match="not a state"):
        guide.forced_bytes(10_000)
    assert guide.next_state(10_000, 0) == -1 and not guide.is_final(-1)


def test_masks_match_simulation_on_a_real_vocabulary(smollm2_tokenizer: Any, smollm2_vocabulary: Any) -> None:
    """String bodies (slices), numbers, keys and returns over a 49k-token vocabulary: each mask
    along an instance equals the token-by-token simulation."""
    schema = TREE | {"$defs": {"node": TREE["$defs"]["node"] | {"properties": {
        "v": {"type": "integer"}, "name": {"type": "string", "maxLength": 12},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}}
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary)
    assert isinstance(guide, PushdownGuide)
    text = json.dumps({"v": -12, "name": "Añb cd", "kids": [{"v": 3, "name": "x", "kids": []}]})
    state = guide.initial_state
    ids = smollm2_tokenizer.encode(text, add_special_tokens=False)
    for i, t in enumerate(ids):
        if i % 2 == 0:
            assert guide.allowed_token_ids(state).tolist() == _simulated_mask(guide, state), text[:i]
        state = guide.next_state(state, t)
        assert state >= 0
    assert guide.is_final(state)


# -- any key order: frames remember the keys written ---------------------------------------------

ANY_ORDER = {
    "type": "object",
    "properties": {k: {"type": "integer", "maximum": 50} for k in "abcdefghij"},
    "required": ["b", "e", "j"],
    "additionalProperties": {"type": "string", "maxLength": 3},
}


def _pairs(text: str) -> list:
    return json.loads(text, object_pairs_hook=lambda p: p)


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.sampled_from("abcdefghijxyz"), max_size=9, unique=True),
    values=st.lists(st.integers(0, 60), min_size=9, max_size=9),
    duplicate=st.booleans(),
)
def test_any_key_order_accepts_exactly_the_valid_objects(keys: list, values: list, duplicate: bool) -> None:
    vocab = _byte_vocab()
    guide = structgen.compile_json_schema(ANY_ORDER, vocab, key_order="any", extra_properties=True)
    assert isinstance(guide, PushdownGuide)
    members = [f'"{k}": {v if k < "x" else json.dumps(str(v))}' for k, v in zip(keys, values)]
    if duplicate and members:
        members.append(members[0])
    text = "{" + ", ".join(members) + "}"
    pairs = _pairs(text)
    names = [k for k, _ in pairs]
    declared_twice = any(names.count(k) > 1 for k in names if k in ANY_ORDER["properties"])
    valid = jsonschema.Draft202012Validator(ANY_ORDER).is_valid(json.loads(text))
    assert guide.accepts_bytes(text.encode()) == (valid and not declared_twice), text


def test_any_key_order_budgets_finish_required_keys() -> None:
    vocab = _byte_vocab()
    guide = structgen.compile_json_schema(ANY_ORDER, vocab, key_order="any", extra_properties=True)
    assert guide.min_length() == len('{"b":0,"e":0,"j":0}')
    state = guide.advance(guide.initial_state, [vocab.tokens.index(bytes([b])) for b in b'{"j": 1, "a": 2'])
    assert guide.distance(state) == len(',"b":0,"e":0}')
    rng = random.Random(2)
    for _ in range(25):
        state, out, budget = guide.initial_state, bytearray(), 45
        while True:
            ids = np.flatnonzero(guide.token_mask(state, budget=budget)).tolist()
            if vocab.eos_token_ids & set(ids) and (budget == 0 or rng.random() < 0.3 or len(ids) == 1):
                break
            t = rng.choice([i for i in ids if vocab.tokens[i] is not None])
            out += vocab.tokens[t]
            state = guide.next_state(state, t)
            budget -= 1
        value = json.loads(out)
        jsonschema.validate(value, ANY_ORDER)
        names = [k for k, _ in _pairs(out.decode())]
        assert len(set(n for n in names if n in ANY_ORDER["properties"])) == len([n for n in names if n in ANY_ORDER["properties"]])
    _check_walks(guide, seed=5, walks=15, steps=25)


@pytest.mark.slow
def test_any_key_order_in_algebra_falls_back_to_the_finite_automaton() -> None:
    vocab = _byte_vocab()
    schema = {"not": {"type": "object", "properties": {"a": {"const": 1}, "b": {"const": 1}}, "required": ["a", "b"]},
              "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    guide = structgen.compile_json_schema(schema, vocab, key_order="any")
    assert guide.accepts_bytes(b'{"b": 2, "a": 1}')
    assert not guide.accepts_bytes(b'{"b": 1, "a": 1}')


def test_any_key_order_never_leads_into_a_written_key(llama3_tokenizer: Any, llama3_vocabulary: Any) -> None:
    """No extra keys: after "status" is written, a token spelling '"status' again would be a dead
    end (its only way on is a key already written), so the mask must not offer it."""
    schema = {"type": "object", "additionalProperties": False,
              "properties": {"status": {"type": "string"}, "reason": {"type": "string"}, "stat": {"type": "integer"}}}
    guide = structgen.compile_json_schema(schema, llama3_vocabulary, key_order="any", extra_properties=True)
    state = guide.initial_state
    for t in llama3_tokenizer.encode('{"status":"","reason":"",', add_special_tokens=False):
        state = guide.next_state(state, t)
    assert state >= 0
    allowed = guide.token_mask(state)
    for text in ('"status', ' "status', '"stat'):
        ids = llama3_tokenizer.encode(text, add_special_tokens=False)
        after = guide.advance(state, ids)
        assert after < 0 or guide.token_mask(after).any(), text
    spelled = [t for t in np.flatnonzero(allowed).tolist() if (llama3_vocabulary.tokens[t] or b"").strip() in (b'"status', b'"status"')]
    assert not spelled
    assert guide.advance(state, llama3_tokenizer.encode('"stat":1}', add_special_tokens=False)) >= 0


@settings(max_examples=100, deadline=None)
@given(
    walk=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 7)), max_size=60),
    branching=st.frozensets(st.integers(0, 7)), cut=st.booleans(),
)
def test_branch_points_are_the_reached_nodes_with_children_whose_state_branches(
    walk: list[tuple[int, int]], branching: frozenset, cut: bool
) -> None:
    """A walk's branch points, found from its states (each checked once), are exactly the nodes
    it reached that have children and whose state may call, guard or return, in walk order; a
    cut-out trie's nodes are read through its origin."""
    from .reference.token_walks import branch_points as _branches

    class View:
        num_states = 8

        def branching(self, q: int) -> bool:
            return q in branching

    rng = random.Random(len(walk))
    num_children = np.array([rng.randint(0, 2) for _ in range(100)], dtype=np.int64)
    origin = np.array([rng.randrange(100) for _ in range(41)], dtype=np.int64) if cut else None
    nodes = np.array([n for n, _ in walk], dtype=np.int64)
    states = np.array([q for _, q in walk], dtype=np.int32)
    real = [int(origin[n]) if cut else n for n, _ in walk]
    want = [(m, q) for m, (_, q) in zip(real, walk) if num_children[m] > 0 and q in branching]
    assert _branches(View(), nodes, states, num_children, origin) == want  # type: ignore[arg-type]


def test_tokens_at_reached_nodes_are_picked_in_walk_order() -> None:
    from structgen.vocab.trie import TokenTrie, tokens_at

    trie = TokenTrie.from_tokens([b"a", b"ab", b"b", b"abc"])
    nodes = np.arange(trie.num_nodes, dtype=np.int64)[::-1].copy()
    states = np.arange(trie.num_nodes, dtype=np.int32) * 10
    ids, ends = tokens_at(trie, nodes, states)
    assert sorted(ids.tolist()) == [0, 1, 2, 3]
    assert [trie.bytes_between(0, int(n)) for n in nodes if trie.node_token[n] >= 0] == [
        [b"a", b"ab", b"b", b"abc"][i] for i in ids.tolist()]
    assert ends.tolist() == [int(s) for n, s in zip(nodes.tolist(), states.tolist()) if trie.node_token[n] >= 0]


def test_a_frame_from_several_nodes_is_the_union_of_the_frames_from_each(smollm2_vocabulary: Any) -> None:
    """Where a string may close inside many tokens, its caller's frame is walked from all those
    nodes at once (FrameMasks.returns): the same tokens and return nodes as one walk per node."""
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 30}, "tags": {"type": "array", "items": {"$ref": "#"}}},
              "required": ["name"], "additionalProperties": False}
    was = json_schema.CALL_THRESHOLD
    json_schema.CALL_THRESHOLD = 0  # (the string an automaton of its own: it returns to the object)
    try:
        guide = PushdownGuide(schema_to_network(schema), smollm2_vocabulary)
    finally:
        json_schema.CALL_THRESHOLD = was
    state = guide.initial_state
    for b in b'{"name": "ab':
        state = guide.next_state(state, smollm2_vocabulary.tokens.index(bytes([b])))
    frames, stacks = guide._frames, guide._stacks
    (sid,) = stacks.configs[state]
    a, q, parent, data = stacks.stacks[sid]
    pops = frames.frame(a, q, 0, data).pops
    assert len(pops) >= 8 and parent >= 0
    pa, pq, _, pdata = stacks.stacks[parent]
    together = frames.frame(pa, pq, pops, pdata)
    one_by_one = [frames.frame(pa, pq, m, pdata) for m in pops]
    assert sorted(together.ids.tolist()) == sorted(set().union(*(f.ids.tolist() for f in one_by_one)))
    assert set(together.pops) == set().union(*(f.pops for f in one_by_one))
    assert guide.allowed_token_ids(state).tolist() == _simulated_mask(guide, state)


def test_a_stepped_chain_stops_where_slice_characters_lead_apart() -> None:
    """After one letter every letter leads on alike, after two they do not (``a`` and ``b`` go
    different ways): the chain cannot tell how many letters survive, so no slice is used (an
    early stop would have left out valid tokens of two letters)."""
    from structgen.automata.expr import ExprPool
    from structgen.automata.lazy import LazyAutomaton
    from structgen.automata.regex import regex_to_expr
    from structgen.guides.network_view import AutomatonView
    from structgen.guides.token_walks import stepped_chain
    from structgen.vocab.slices import SLICES

    k = SLICES.index("[a-z]")
    pool = ExprPool()
    view = AutomatonView(LazyAutomaton(pool, regex_to_expr("[a-z](?:a|b[a-z]*)", pool)))
    assert stepped_chain(view, 0, k, 10) == []
    loop = AutomatonView(LazyAutomaton(pool, regex_to_expr("[a-z][a-z]*0", pool)))
    chain = stepped_chain(loop, 0, k, 10)
    assert len(chain) == 3 and chain[1] == chain[2]  # (one letter, then a loop on letters)
