"""``uniqueItems`` over items with infinitely many values (:mod:`structgen.guides.unique_items`):
every text the guide accepts is valid for ``jsonschema``, every valid text is accepted, and no token
the mask allows leads to a dead end (checked exhaustively on small alphabets, and by random walks
on real tokenizers)."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.expr import ExprPool
from structgen.automata.lazy import LazyAutomaton
from structgen.errors import SchemaNotSupported
from structgen.guides.pushdown import PushdownGuide
from structgen.guides.unique_items import value_key, value_texts


def _vocab(tokens: list[bytes]) -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes([*tokens, None], eos_token_ids=[len(tokens)])


def _valid(schema: dict, text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def _accepted(guide: structgen.Guide, max_tokens: int) -> set[str]:
    """Every text of at most ``max_tokens`` tokens the guide accepts, checking on the way that
    every allowed token leads to a state that can still go on or end."""
    vocab = guide.vocabulary
    out: set[str] = set()
    frontier = {guide.initial_state: [b""]}
    for _ in range(max_tokens + 1):
        nxt: dict[int, list[bytes]] = {}
        for state, texts in frontier.items():
            if guide.is_final(state):
                out.update(t.decode() for t in texts)
            for tok in guide.allowed_token_ids(state).tolist():
                if tok in vocab.eos_token_ids:
                    continue
                after = guide.next_state(state, tok)
                assert after >= 0, "the mask allowed a token that next_state refuses"
                assert guide.is_final(after) or len(guide.allowed_token_ids(after)), (
                    f"dead end after {texts[0] + vocab.tokens[tok]!r}")
                nxt.setdefault(after, []).extend(t + vocab.tokens[tok] for t in texts)
        frontier = nxt
    return out


def _without_unique(schema: dict, vocab: structgen.Vocabulary, max_tokens: int) -> set[str]:
    """The texts of the schema without ``uniqueItems`` (exact on its own) that are valid with it."""
    plain = structgen.compile_json_schema({**schema, "uniqueItems": False}, vocab, whitespace="")
    return {t for t in _accepted(plain, max_tokens) if _valid(schema, t)}


SMALL = [
    {"type": "array", "items": {"type": "string", "pattern": "^[ab]?$"}, "uniqueItems": True},
    {"type": "array", "items": {"type": "string", "pattern": "^[ab]*$"}, "uniqueItems": True, "maxItems": 3},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}, "uniqueItems": True, "minItems": 2},
    {"type": "array", "items": {"anyOf": [{"type": "string", "pattern": "^a*$"}, {"type": "integer", "maximum": 1, "minimum": 0}]},
     "uniqueItems": True},
    {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string", "pattern": "^b?$"}}},
     "uniqueItems": True},
    {"type": "array", "prefixItems": [{"type": "string", "pattern": "^a?$"}, {"type": "integer", "minimum": 0}],
     "items": {"type": "string", "pattern": "^[ab]?$"}, "uniqueItems": True},
]


@pytest.mark.parametrize("schema", SMALL, ids=lambda s: json.dumps(s.get("prefixItems", s["items"]))[:40])
def test_every_valid_text_and_only_those_byte_by_byte(schema: dict) -> None:
    alphabet = [b"[", b"]", b",", b'"', b"a", b"b", b"0", b"1", b"{", b"}", b":"]
    vocab = _vocab(alphabet)
    guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    assert isinstance(guide, PushdownGuide)
    n = 14 if "object" in json.dumps(schema) else 11
    got = _accepted(guide, n)
    assert got == _without_unique(schema, vocab, n)
    assert any(t.count(",") >= 1 for t in got)


def test_tokens_that_close_an_item_and_open_the_next_one() -> None:
    """Tokens that span item ends (``"a","`` ...) go through the frame masks' returns."""
    schema = {"type": "array", "items": {"type": "string", "pattern": "^[ab]?$"}, "uniqueItems": True}
    tokens = [b"[", b"]", b",", b'"', b"a", b"b", b'"a"', b'","', b'a","', b'"]', b'a"]', b'["a', b'","a"]', b'"a","a"']
    guide = structgen.compile_json_schema(schema, _vocab(tokens), whitespace="")
    got = _accepted(guide, 9)
    assert got <= _without_unique(schema, _vocab(tokens), 9)
    assert {'["a","b",""]', '["b","a"]', '[""]', "[]"} <= got
    s = guide.advance(guide.initial_state, [11])  # ["a
    assert not guide.token_mask(s)[12] and guide.token_mask(s)[9] and guide.token_mask(s)[7]  # not ","a"]
    s = guide.advance(guide.initial_state, [0])  # [
    assert not guide.token_mask(s)[13] and guide.token_mask(s)[6]  # not "a","a"


def test_objects_are_equal_whatever_their_key_order() -> None:
    schema = {"type": "array", "uniqueItems": True,
              "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}}}
    vocab = _vocab([bytes([b]) for b in range(32, 127)])
    guide = structgen.compile_json_schema(schema, vocab, whitespace=r"[ ]?", key_order="any")
    first = '[{"k":"x","v":1},'
    s = guide.advance(guide.initial_state, [b - 32 for b in first.encode()])
    for repeat in ('{"v":1,"k":"x"}', '{"v":1.0,"k":"x"}', '{ "k":"\\u0078","v":1}'):
        assert guide.advance(s, [b - 32 for b in (repeat + "]").encode()]) == -1, repeat
    assert guide.is_final(guide.advance(s, [b - 32 for b in '{"v":2,"k":"x"}]'.encode()]))


def test_a_number_item_at_its_bound_has_no_other_spelling() -> None:
    """``1`` and ``1.0`` are one value: once 0 and 1 are written, no third item exists, so the
    array must close (the mask never offers the comma)."""
    schema = {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1, "multipleOf": 1}, "uniqueItems": True}
    vocab = _vocab([bytes([b]) for b in b"[],.01e"])
    guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    s = guide.advance(guide.initial_state, [0, 4, 2, 5])  # [0,1
    assert s >= 0
    allowed = {vocab.tokens[t] for t in guide.allowed_token_ids(s).tolist() if vocab.tokens[t] is not None}
    assert b"," not in allowed and b"]" in allowed


def test_value_texts_are_every_spelling_of_a_value() -> None:
    pool = ExprPool()
    cases: list[tuple[str, list[str], list[str]]] = [
        ('"a/é"', ['"a/é"', '"\\u0061\\/\\u00E9"', '"a\\u002fé"'], ['"a/e"', '"a/é "']),
        ("10", ["10", "1e1", "10.0", "0.1E2", "1.0e+1", "100e-1"], ["11", "-10", "1", "100", "0.1"]),
        ("-0.5", ["-0.5", "-5e-1", "-0.50"], ["0.5", "-0.55", "-5", "-0.05"]),
        ("1.25e-7", ["1.25e-7", "0.000000125"], ["0.00000125", "125"]),
        ("0", ["0", "-0", "0.0", "0e7"], ["1", "0.1"]),
        ('{"a": 1, "b": [true, null]}', ['{"a":1,"b":[true,null]}', '{ "b" : [ true , null ] , "a" : 1.0 }'],
         ['{"a":1}', '{"a":1,"b":[true,null],"c":1}', '{"a":true,"b":[true,null]}']),
        ('"😀"', ['"😀"', '"\\ud83d\\uDE00"'], ['"\\ud83d"']),
        ("1e999", ["1e999", "1" + "0" * 400 + ".0", "2.5E+400"], ["1000", "-1e999"]),
    ]
    for value, yes, no in cases:
        auto = LazyAutomaton(pool, value_texts(pool, value.encode()))
        for text in yes:
            assert auto.accepts(text.encode()), (value, text)
            assert value_key(text.encode()) == value_key(value.encode()) is not None
        for text in no:
            assert not auto.accepts(text.encode()), (value, text)
    assert value_key(b"true") != value_key(b"1") and value_key(b"1") == value_key(b"1.0")
    assert value_key(b"1e5", exponents=False) is None and value_key(b'"1e5"', exponents=False) is not None
    with pytest.raises(ValueError, match="not one JSON value"):
        value_texts(pool, b"[1,")


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1.0, 2.0**60, 2.0**70, 1e300, 1e-300, 5e-324, 0.1, 100.0, 10**20, 2**60, -(2**70)])
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=12)


def _spelled(value: Any, how: Any) -> str:
    """A JSON text of ``value``: escapes, whitespace, key order, repeated keys and number
    spellings drawn by ``how`` (a hypothesis ``data``)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return how.draw(st.sampled_from([str(value), f"{value}.0", f"{value}e0", f"{value}.00E+0"]))
    if isinstance(value, float):
        return how.draw(st.sampled_from([repr(value), f"{value:.17g}", f"{value:e}", f"{value:.3e}"])).replace("inf", "1e999")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=how.draw(st.booleans()))
    ws = how.draw(st.sampled_from(["", " ", "\n\t"]))
    if isinstance(value, list):
        return "[" + ws + ("," + ws).join(_spelled(x, how) for x in value) + "]"
    members = list(value.items())
    members = how.draw(st.permutations(members)) if members else members
    if members and how.draw(st.booleans()):  # (a repeated key: the last one counts)
        members = [(members[0][0], None), *members]
    return "{" + ws + ",".join(f"{json.dumps(k)}{ws}:{ws}{_spelled(x, how)}" for k, x in members) + "}"


@settings(max_examples=300, deadline=None)
@given(_json_values, _json_values, st.data())
def test_value_keys_and_spellings_are_the_python_ones(a: Any, b: Any, how: Any) -> None:
    """The native keys (``cpp/engine/json_values.h``) are equal exactly where the Python keys (the
    reference, ``tests/guides/reference/unique_values.py``) of the values Python's ``json`` reads
    are; each value's spellings are the reference's term, and its plain text is among them."""
    from tests.guides.reference import unique_values as ref

    ta, tb = _spelled(a, how), _spelled(b, how)
    va, vb = json.loads(ta), json.loads(tb)
    ka, kb = value_key(ta.encode()), value_key(tb.encode())
    assert ka is not None and kb is not None
    assert (ka == kb) == (ref.value_key(va) == ref.value_key(vb)), (ta, tb)
    plain = json.dumps(va).replace("Infinity", "1e999").encode()  # (no repeated key: each is one spelling)
    assert value_key(ta.encode()) == value_key(plain)
    pool = ExprPool()
    expected = ref.value_texts(pool, va)
    assert value_texts(pool, ta.encode()) == expected
    assert LazyAutomaton(pool, expected).accepts(plain)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}",:.-+eE0123456789 tfnrulsa\\u\x01é', max_size=12))
def test_a_text_is_one_json_value_where_python_reads_one(text: str) -> None:
    """``value_key`` answers ``None`` exactly where Python's ``json.loads`` refuses the text
    (strict strings, nothing after the value; ``NaN`` and ``Infinity``, which no item spells, are
    refused natively too)."""
    try:
        json.loads(text)
        python = True
    except ValueError:
        python = False
    if text.strip() in ("NaN", "Infinity", "-Infinity"):
        python = False
    assert (value_key(text.encode()) is not None) == python, text
    assert value_key(b"\xff") is None and value_key(b'"\xed\xa0\x80"') is None  # (not UTF-8; a surrogate spelled in UTF-8)


def test_under_not_the_array_is_taken_whole() -> None:
    """``not`` subtracts an over-approximation (string arrays, unique or not): sound, never an
    array of unique strings."""
    vocab = _vocab([bytes([b]) for b in range(32, 127)])
    guide = structgen.compile_json_schema({"not": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}, vocab)
    assert not guide.accepts_bytes(b'["a","b"]') and guide.accepts_bytes(b'[1]')


def test_under_not_a_one_of_with_a_unique_array_subtracts_less() -> None:
    """The over-approximation of a ``oneOf`` takes away the instances of two branches where it
    can intersect them; a unique array's branch it cannot, so less is taken away (a superset
    of the ``oneOf``, so under ``not`` a subset: sound)."""
    vocab = _vocab([bytes([b]) for b in range(32, 127)])
    schema = {"not": {"oneOf": [{"type": "array", "items": {"type": "string"}, "uniqueItems": True}, {"type": "array", "maxItems": 1}]}}
    guide = structgen.compile_json_schema(schema, vocab)
    for text in (b"1", b"[1,2]", b'["a","b"]', b"[]"):
        if guide.accepts_bytes(text):
            assert _valid(schema, text.decode()), text
    assert guide.accepts_bytes(b"[1,2]") and not guide.accepts_bytes(b'["a","b"]')


@pytest.mark.parametrize("schema, where", [
    ({"type": "array", "items": {"type": "string"}, "uniqueItems": True, "contains": {"const": "a"}}, "automata algebra"),
    ({"oneOf": [{"type": "array", "items": {"type": "string"}, "uniqueItems": True}, {"maxItems": 1}]}, "automata algebra"),
    ({"type": "array", "items": {"type": "string"}, "uniqueItems": True, "extract_from": "a text"}, "extract_from"),
])
def test_what_stays_refused_names_the_keyword(schema: dict, where: str) -> None:
    vocab = _vocab([bytes([b]) for b in range(32, 127)])
    options = {"extract_from": schema.pop("extract_from")} if "extract_from" in schema else {}
    with pytest.raises(SchemaNotSupported, match="uniqueItems") as e:
        structgen.compile_json_schema(schema, vocab, **options)
    assert where in str(e.value) and e.value.keyword == "uniqueItems"


ITEMS = st.sampled_from([
    {"type": "string", "maxLength": 2},
    {"type": "string", "pattern": "^[ab]+$"},
    {"type": "integer", "minimum": -2, "maximum": 12},
    {"type": "number"},
    {"type": "object", "properties": {"k": {"type": "string", "maxLength": 1}, "v": {"type": "boolean"}}, "required": ["k"]},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 2}, "maxItems": 2},
    {"anyOf": [{"type": "string", "maxLength": 1}, {"type": "null"}, {"type": "integer", "minimum": 0, "maximum": 2}]},
    True,
])


def _short_token_walk(guide: structgen.Guide, rng: random.Random, steps: int) -> bytes | None:
    """A random walk that prefers tokens of at most 2 bytes (items close early and repeat often),
    asserting that no step meets a dead end: its text if it ended in a final state, else None."""
    vocab = guide.vocabulary
    short = [i for i, t in enumerate(vocab.tokens) if t is not None and len(t) <= 2]
    s, text = guide.initial_state, b""
    for _ in range(steps):
        if guide.is_final(s):
            return text
        mask = guide.token_mask(s)
        assert mask.any(), f"dead end after {text!r}"
        t = rng.choice([i for i in short if mask[i]] or mask.nonzero()[0].tolist())
        s = guide.next_state(s, t)
        assert s >= 0
        text += vocab.tokens[t]
    return text if guide.is_final(s) else None


def _finished_valid(guide: structgen.Guide, schema: dict, walks: int, steps: int) -> int:
    """How many of ``walks`` short-token walks (seeds 0, 1, ...) finished; each one valid."""
    finished = 0
    for seed in range(walks):
        text = _short_token_walk(guide, random.Random(seed), steps)
        if text is not None:
            finished += 1
            assert _valid(schema, text.decode()), text
    return finished


@settings(max_examples=25, deadline=None)
@given(items=ITEMS, lo=st.integers(0, 3), extra=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_random_walks_on_a_real_tokenizer_are_valid(smollm2_vocabulary: Any, items: Any, lo: int, extra: int, seed: int) -> None:
    """Random walks that favour closing items quickly (so that items repeat often) always end in
    valid arrays, and never meet a dead end."""
    schema = {"type": "array", "items": items, "uniqueItems": True, "minItems": lo, "maxItems": lo + extra}
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, whitespace=r"[ ]?")
    text = _short_token_walk(guide, random.Random(seed), 120)
    if text is not None:
        assert _valid(schema, text.decode()), text


class _Counted:
    """A guide's native unique data, counting the danger walks that found tokens to drop."""

    def __init__(self, data: Any) -> None:
        self.data, self.dropped = data, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.data, name)

    def dead_tokens(self, *args: Any) -> Any:
        got = self.data.dead_tokens(*args)
        self.dropped += bool(got.size)
        return got


@settings(max_examples=20, deadline=None)
@given(items=ITEMS, seed=st.integers(0, 2**16))
def test_native_danger_walks_give_the_python_masks(smollm2_vocabulary: Any, items: Any, seed: int) -> None:
    """An item that calls nothing and may still spell a written value has the tokens after which
    only written values finish it dropped by a native walk (``UniqueData.dead_tokens``), and the
    masks of such arrays' states are made natively (``FrameSolver.collect_data``): along random
    walks that repeat items often, every mask equals the one the Python frames and walks make (a
    guide of its own, ``item_frames.NATIVE_DANGER`` and ``native_stacks.NATIVE_DATA`` off while it masks)."""
    from structgen.guides import item_frames, native_stacks

    schema = {"type": "array", "items": items, "uniqueItems": True}
    native = structgen.compile_json_schema(schema, smollm2_vocabulary, whitespace="")
    python = structgen.compile_json_schema(schema, smollm2_vocabulary, whitespace="")
    assert isinstance(native, PushdownGuide) and native._view.unique is not None
    counted = native._view.unique.data = _Counted(native._view.unique.data)
    vocab, rng = native.vocabulary, random.Random(seed)
    short = [i for i, t in enumerate(vocab.tokens) if t is not None and len(t) <= 2]
    s = t_py = native.initial_state
    for _ in range(60):
        mask = native.token_mask(s)
        item_frames.NATIVE_DANGER = native_stacks.NATIVE_DATA = False  # (the Python frames, their danger walks too)
        try:
            expected = python.token_mask(t_py)
        finally:
            item_frames.NATIVE_DANGER = native_stacks.NATIVE_DATA = True
        assert np.array_equal(mask, expected), (s, np.flatnonzero(mask != expected)[:5])
        if native.is_final(s) and rng.random() < 0.1 or not mask.any():
            break
        t = rng.choice([i for i in short if mask[i]] or mask.nonzero()[0].tolist())
        s, t_py = native.next_state(s, t), python.next_state(t_py, t)


def test_the_native_danger_walk_drops_the_tokens_that_finish_a_written_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property above is not vacuous: after ``["ab","a`` the tokens ``b"`` and ``b",`` would
    finish ``ab`` again and are dropped by the native walk; ``bb"`` is not."""
    tokens = [b"[", b"]", b",", b'"', b"a", b"b", b'b"', b'b",', b'bb"']
    vocab = _vocab(tokens)
    guide = structgen.compile_json_schema({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, vocab, whitespace="")
    assert isinstance(guide, PushdownGuide) and guide._view.unique is not None
    s = guide.advance(guide.initial_state, [0, 3, 4, 6, 2, 3, 4])  # ["ab","a
    allowed = {tokens[t] for t in guide.allowed_token_ids(s).tolist() if t < len(tokens)}  # (the native masks)
    assert allowed == set(tokens) - {b'b"', b'b",'}  # (inside a string: "[", "]" and "," too)
    from structgen.guides import native_stacks
    monkeypatch.setattr(native_stacks, "NATIVE_DATA", False)  # (the Python frames, their danger walk native)
    structgen.compiler.clear_cache()  # (a guide of its own: no mask made before)
    guide = structgen.compile_json_schema({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, vocab, whitespace="")
    assert isinstance(guide, PushdownGuide) and guide._view.unique is not None
    counted = guide._view.unique.data = _Counted(guide._view.unique.data)
    s = guide.advance(guide.initial_state, [0, 3, 4, 6, 2, 3, 4])
    allowed = {tokens[t] for t in guide.allowed_token_ids(s).tolist() if t < len(tokens)}
    assert allowed == set(tokens) - {b'b"', b'b",'} and counted.dropped


def _without_unique_anywhere(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_unique_anywhere(v) for k, v in schema.items() if k != "uniqueItems"}
    if isinstance(schema, list):
        return [_without_unique_anywhere(x) for x in schema]
    return schema


_INNER = {"type": "array", "items": {"type": "string", "pattern": "^[ab]*$"}, "uniqueItems": True}
NESTED = [
    {"type": "array", "items": _INNER, "uniqueItems": True},
    {"type": "array", "items": {"type": "object", "properties": {"t": _INNER}, "required": ["t"], "additionalProperties": False},
     "uniqueItems": True},
    {"type": "array", "items": {"type": "object", "properties": {"t": _INNER, "u": {"type": "string", "pattern": "^a?$"}},
                                "required": ["t"], "additionalProperties": False}, "uniqueItems": True},
    {"type": "array", "items": {"anyOf": [_INNER, {"type": "string", "pattern": "^a?$"}]}, "uniqueItems": True, "maxItems": 3},
]


@pytest.mark.parametrize("schema", NESTED, ids=lambda s: json.dumps(s["items"])[:50])
def test_unique_arrays_nested_in_unique_items_every_valid_text_and_only_those(schema: dict) -> None:
    """``uniqueItems`` inside the items of a ``uniqueItems`` array (CloudFormation's tag lists
    inside unique rule lists): both hold, and no token leads to a dead end (exhaustive up to 13
    tokens, two items' worth)."""
    vocab = _vocab([b"[", b"]", b",", b'"', b"a", b"b", b"u", b"t", b":", b"}", b'{"t":', b'{"u":', b'"t":', b'"]}', b'"a"'])
    guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    plain = structgen.compile_json_schema(_without_unique_anywhere(schema), vocab, whitespace="")
    got = _accepted(guide, 13)
    assert got == {t for t in _accepted(plain, 13) if _valid(schema, t)}
    assert any(t.count("[") >= 3 for t in got)


@pytest.mark.parametrize("key_order", ["schema", "any"])
def test_a_token_that_spells_a_whole_nested_item_after_whitespace_is_masked_as_its_value(key_order: str) -> None:
    """A token that reads whitespace in the outer array and then a whole item whose bytes its
    nested array reads (`` []`` after ``[[],``) is masked by the item's value: every token every
    mask offers is taken (breadth first, 5 tokens deep), and `` []`` is offered only where ``[]`` was not written."""
    inner = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    schema = {"type": "object", "properties": {"x": {"type": "array", "items": inner, "uniqueItems": True}}, "required": ["x"]}
    tokens = [b'{"x":', b"[", b"]", b",", b" ", b" []", b' ["a"]', b'"a"', b", []", b"}"]
    vocab = _vocab(tokens)
    guide = structgen.compile_json_schema(schema, vocab, key_order=key_order)
    level, offered = [guide.advance(guide.initial_state, [0, 1])], 0
    for _ in range(5):
        nxt = []
        for s in level:
            try:
                mask = guide.token_mask(s)
            except structgen.errors.VocabularyError:  # (a small vocabulary: some states have no token)
                continue
            for t in np.flatnonzero(mask).tolist():
                if t < len(tokens):
                    n = guide.next_state(s, t)
                    assert n >= 0, (s, tokens[t])
                    nxt.append(n)
                    offered += tokens[t] == b" []"
        level = list(dict.fromkeys(nxt))
    assert offered
    s = guide.advance(guide.initial_state, [0, 1, 1, 2, 3])  # {"x":[[],
    assert not guide.token_mask(s)[tokens.index(b" []")] and guide.token_mask(s)[tokens.index(b' ["a"]')]


@pytest.mark.parametrize("items", [{"type": "string"}, {"anyOf": [{"type": "string"}, {"type": "number"}]},
                                   {"type": "string", "enum": ["a", "b", "ab"]}])
@pytest.mark.parametrize("returns_from", [1, 8])
def test_string_items_returning_at_many_nodes_are_masked_as_their_values(monkeypatch: pytest.MonkeyPatch, items: dict,
                                                                         returns_from: int) -> None:
    """Where a string item may return at many trie nodes, the array's tokens from those where it
    enters no new item are made once (``FrameMasks._new_values_return``): every token of every
    mask steps and every other token does not (breadth first, 6 tokens deep: repeats, numbers
    and items opened inside a token among them), the nesting too."""
    from structgen.guides import frame_masks
    monkeypatch.setattr(frame_masks, "RETURNS_FROM", returns_from)
    shared = []
    made = frame_masks.FrameMasks._new_values_return
    monkeypatch.setattr(frame_masks.FrameMasks, "_new_values_return", lambda self, *a: shared.append(made(self, *a)) or shared[-1])
    split_by_one_walk = frame_masks.FrameMasks._pops_split
    splits = []

    def checked_split(self: Any, a: int, q: int, pops: tuple[int, ...]) -> Any:
        # (one walk from every pop sorts them as a walk from each does; its items needed take in theirs)
        got = split_by_one_walk(self, a, q, pops)
        if got is not None:
            free, rest, needed = got
            each = {m: self._needing_of(a, q, m) for m in pops}
            assert free == [m for m in pops if each[m] is not None] and rest == [m for m in pops if each[m] is None]
            assert all(self.view.items_needed(a, e) <= needed for m in free for e in each[m])  # type: ignore[union-attr]
            splits.append(got)
        return got

    monkeypatch.setattr(frame_masks.FrameMasks, "_pops_split", checked_split)
    from structgen.guides import native_stacks
    tokens = [b"[", b"]", b",", b'"', b"a", b"b", b'a"', b'b"', b'ab"', b'"]', b'",', b'a",', b'a"]', b'","', b'", "', b'b","a',
              b" ", b"1", b"1]", b"1,", b'[["', b'"],', b'"]]']
    for schema, native in itertools.product(({"type": "array", "items": items, "uniqueItems": True},
                                             {"type": "array", "items": {"type": "array", "items": items, "uniqueItems": True}}), (False, True)):
        monkeypatch.setattr(native_stacks, "NATIVE_DATA", native)  # (the Python frames, then the native ones: FrameSolver.collect_data)
        structgen.compiler.clear_cache()
        vocab = _vocab(tokens)
        guide = structgen.compile_json_schema(schema, vocab)
        level = [guide.initial_state]
        for _ in range(6):
            nxt = []
            for s in level:
                try:
                    mask = guide.token_mask(s)
                except structgen.errors.VocabularyError:
                    continue
                for t in range(len(tokens)):
                    n = guide.next_state(s, t)
                    assert (n >= 0) == bool(mask[t]), (schema, s, tokens[t])
                    if n >= 0:
                        nxt.append(n)
            level = list(dict.fromkeys(nxt))[:300]
    assert returns_from > 1 or "enum" in items or any(x is not None for x in shared)  # (a finite set: no spare values)
    assert returns_from > 1 or "enum" in items or any(rest for _, rest, _ in splits)  # (pops that open the next item in the token too)


@pytest.mark.parametrize("items", [{"type": "string"}, {"type": "string", "pattern": "^[a-z ]+$"},
                                   {"anyOf": [{"type": "string"}, {"type": "integer"}]}])
def test_string_items_returning_at_many_nodes_natively_on_a_real_tokenizer(smollm2_vocabulary: Any, items: dict) -> None:
    """Natively (``FrameSolver.collect_data``), a string item out of danger that returns at
    hundreds of SmolLM2's trie nodes has the array's frames from them shared as those of no item
    written where every next item has endless values (a free string), and collected node by node
    elsewhere: the same masks as the Python frames', along a text that writes, repeats and nests."""
    from structgen.guides import native_stacks

    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": items, "uniqueItems": True}}}
    text = b'{"tags": ["alpha beta", "gamma", "alpha", "alpha beta gamma", "delta"]}'
    ids = _greedy(smollm2_vocabulary, text)
    guides = []
    for native in (True, False):
        native_stacks.NATIVE_DATA = native
        try:
            structgen.compiler.clear_cache()
            guide = structgen.compile_json_schema(schema, smollm2_vocabulary)
            assert isinstance(guide, PushdownGuide) and guide._native is not None
            states, s = [], guide.initial_state
            for t in ids:
                states.append(guide.token_mask(s))
                s = guide.next_state(s, t)
                assert s >= 0
            guides.append((guide, states))
        finally:
            native_stacks.NATIVE_DATA = True
    (native_guide, got), (_, expected) = guides
    for k, (a, b) in enumerate(zip(got, expected)):
        assert np.array_equal(a, b), (k, smollm2_vocabulary.tokens[ids[k]], np.flatnonzero(a != b)[:5])
    solver = native_guide._frames.solver
    assert solver is not None and solver.data_counts[0] > 0
    assert solver.data_counts[1] > 0 or items != {"type": "string"}  # (free strings: endless values)
    assert solver.data_counts[1] == 0 or "anyOf" not in items  # (an integer item next: each node's set decides)


def _greedy(vocab: structgen.Vocabulary, data: bytes) -> list[int]:
    """The longest-first tokens of ``data``."""
    by_bytes = {t: i for i, t in enumerate(vocab.tokens) if t}
    out, i = [], 0
    while i < len(data):
        for j in range(min(len(data), i + 16), i, -1):
            if data[i:j] in by_bytes:
                out.append(by_bytes[data[i:j]])
                i = j
                break
        else:
            raise AssertionError(data[i:])
    return out


def test_an_item_is_its_whole_value_nested_arrays_included() -> None:
    """An outer item's text takes in the bytes its nested unique array reads: a repeated item is
    refused where it closes, a nested repeat where the nested item closes, and the mask never
    offers a token after which only a repeat could close the item."""
    inner = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    schema = {"type": "array", "items": {"type": "object", "properties": {"tags": inner}, "required": ["tags"],
                                         "additionalProperties": False}, "uniqueItems": True}
    vocab = _vocab([bytes([b]) for b in range(32, 127)])
    guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    assert guide.accepts_bytes(b'[{"tags":["a","b"]},{"tags":["b","a"]},{"tags":[]}]')
    assert not guide.accepts_bytes(b'[{"tags":["a","b"]},{"tags":["a","b"]}]')
    assert not guide.accepts_bytes(b'[{"tags":["a","a"]}]')
    assert guide.advance(guide.initial_state, [b - 32 for b in b'[{"tags":["a"]},{"tags":["a"]']) == -1  # (only "}" could follow)
    s = guide.advance(guide.initial_state, [b - 32 for b in b'[{"tags":["a"]},{"tags":["a"'])
    assert guide.token_mask(s)[ord(",") - 32] and not guide.token_mask(s)[ord("]") - 32]


def test_unique_arrays_in_unique_items_on_a_real_tokenizer(smollm2_vocabulary: Any) -> None:
    """Random walks of short tokens (repeats are frequent) over two levels of unique arrays end
    in valid documents and never meet a dead end."""
    schema = {"type": "array", "uniqueItems": True, "maxItems": 4, "items": {
        "type": "object", "required": ["k", "tags"], "additionalProperties": False,
        "properties": {"k": {"type": "string", "maxLength": 1},
                       "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}, "uniqueItems": True, "maxItems": 3}}}}
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary, whitespace=r"[ ]?")
    assert _finished_valid(guide, schema, 12, 150) >= 6


def test_composed_formats_keep_each_arrays_own_items() -> None:
    from structgen.compose import JsonSchema, Literal, Sequence
    from structgen import compile_composed

    vocab = _vocab([bytes([b]) for b in range(32, 127)])
    tags = JsonSchema({"type": "array", "items": {"type": "string", "maxLength": 2}, "uniqueItems": True})
    guide = compile_composed(Sequence(Literal("x="), tags, Literal(";"), tags), vocab)
    assert guide.accepts_bytes(b'x=["a","b"];["a"]') and guide.accepts_bytes(b"x=[];[]")
    assert not guide.accepts_bytes(b'x=["a","a"];[]') and not guide.accepts_bytes(b'x=[];["b","b"]')


def test_smollm2_writes_unique_tags(smollm2: Any) -> None:
    """The real model, asked for repeated tags, writes distinct ones (greedy decoding)."""
    model, tokenizer = smollm2
    schema = {"type": "object", "required": ["tags"], "additionalProperties": False,
              "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "uniqueItems": True,
                                      "minItems": 4, "maxItems": 4}}}
    value = structgen.generate_json(model, tokenizer, 'Write the JSON {"tags": ["red", "red", "red", "red"]}:\n', schema,
                                    max_new_tokens=60)
    jsonschema.validate(value, schema)
    assert len(set(value["tags"])) == 4


def test_random_walks_on_sentencepiece(mistral_vocabulary: Any) -> None:
    """The other token convention (``▁``, byte fallback): walks that favour short tokens end in
    valid arrays of distinct items."""
    schema = {"type": "array", "items": {"type": "string", "maxLength": 2}, "uniqueItems": True, "minItems": 3, "maxItems": 6}
    guide = structgen.compile_json_schema(schema, mistral_vocabulary, whitespace="")
    assert _finished_valid(guide, schema, 6, 60) >= 3


def test_budgets_finish_in_time_with_distinct_items() -> None:
    """With a token budget, every masked walk ends valid within it: distances count an item that
    may still spell a written value without those values (``"b`` after ``"b"`` needs more)."""
    tokens = [bytes([b]) for b in b'[]",ab'] + [b'","', b'"]', b"ab", b'["']
    vocab = _vocab(tokens)
    schema = {"type": "array", "items": {"type": "string", "pattern": "^[ab]{1,3}$"}, "uniqueItems": True, "minItems": 3}
    guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    for seed in range(60):
        rng = random.Random(seed)
        budget = rng.randint(16, 30)
        s, text, n = guide.initial_state, b"", 0
        while True:
            ids = guide.token_mask(s, budget=budget - n).nonzero()[0].tolist()
            assert ids, (text, budget, n)
            t = rng.choice(ids)
            if t == len(tokens):
                break
            s, text, n = guide.next_state(s, t), text + tokens[t], n + 1
        assert n <= budget and _valid(schema, text.decode()), text


@pytest.mark.parametrize("item", [
    {"type": "object", "properties": {"Key": {"type": "string"}, "Value": {"type": "string", "maxLength": 50}}, "required": ["Key", "Value"], "additionalProperties": False},
    {"type": "number"},
    {"type": "array", "items": {"type": "string"}, "minItems": 1},
])
def test_short_distinct_items_are_found_without_a_search(item: dict) -> None:
    """A set that misses one of a few short items (witnesses, searched once per item automaton) is
    not full: found for objects whose keys hold an ``e`` too (only a number's exponent is skipped).
    The search goes only as far as a set needs: one value outside it."""
    from structgen.guides.unique_items import WITNESSES

    guide = structgen.compile_json_schema({"type": "array", "uniqueItems": True, "items": item}, _vocab([bytes([b]) for b in range(32, 127)]))
    view = guide._view
    unique = view.unique
    for a in view.recording:
        assert unique._witness_outside(a, 0, view.auto)
        found = unique._witnesses[a].found
        assert len(found) == 1  # (no item written: the first value found is outside)
        written = 0
        while True:  # (the set of every value found so far)
            for text in found.values():
                w = unique.after_item(written, text)
                written = w if w >= 0 else written
            if not unique._witness_outside(a, written, view.auto):
                break
        assert len(found) == WITNESSES


def test_a_long_item_spelled_again_is_masked_without_recursion() -> None:
    """The spellings of a 1,500-character item are a long concatenation: while a second item
    spells it again, masks are computed (no ``RecursionError``, as there was at ``47ecd3d``) and
    closing it is not offered."""
    vocab = _vocab([bytes([b]) for b in range(32, 127)])
    guide = structgen.compile_json_schema({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, vocab, whitespace="")
    n = 1500
    s = guide.advance(guide.initial_state, [b - 32 for b in b'["' + b"x" * n + b'","' + b"x" * n])
    mask = guide.token_mask(s)
    assert not mask[ord('"') - 32] and mask[ord("x") - 32]
    assert guide.accepts_bytes(b'["' + b"x" * n + b'","' + b"x" * (n + 1) + b'"]')


@pytest.mark.parametrize("item", [
    {"type": "string", "pattern": "^[ab]$", "not": {"const": "a"}},
    {"oneOf": [{"type": "string", "pattern": "^[bc]$"}, {"type": "string", "pattern": "^[cd]$"}]},
])
def test_items_whose_automaton_holds_algebra_run_out_exactly(item: dict) -> None:
    """Items under ``not`` or an overlapping ``oneOf`` (an item automaton with an intersection or a
    complement: its witness search is ordered by lower bounds, not searched lengths): once every
    value is written, no separator is allowed, and random walks stay valid."""
    schema = {"type": "array", "uniqueItems": True, "items": item}
    tokens = [bytes([b]) for b in b'[]," abcd']
    guide = structgen.compile_json_schema(schema, _vocab(tokens), whitespace="")
    values = ["b"] if "not" in item else ["b", "d"]
    s = guide.initial_state
    for b in json.dumps(values, separators=(",", ":")).encode()[:-1]:
        s = guide.next_state(s, tokens.index(bytes([b])))
    allowed = {tokens[t] for t in guide.token_mask(s).nonzero()[0].tolist() if t < len(tokens)}
    assert allowed == {b"]"}, allowed
    for seed in range(20):
        rng = random.Random(seed)
        s, text = guide.initial_state, b""
        while True:
            ids = guide.token_mask(s).nonzero()[0].tolist()
            assert ids, text
            t = rng.choice(ids)
            if t == len(tokens):
                break
            s, text = guide.next_state(s, t), text + tokens[t]
        assert _valid(schema, text.decode()), text
