"""JSON Schema guides at token level: instances are accepted, and whatever a guide lets through
(random walks over a real vocabulary, many seeds) parses and validates."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import structgen

from ..support.json_order import in_schema_order

SCHEMAS: dict[str, dict[str, Any]] = {
    "city": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 30},
            "country": {"type": "string", "maxLength": 30},
            "population": {"type": "integer", "minimum": 0},
            "districts": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 4},
        },
        "required": ["name", "country", "population", "districts"],
        "additionalProperties": False,
    },
    "ner": {
        "type": "object",
        "properties": {k: {"type": "array", "items": {"type": "string", "maxLength": 15}, "maxItems": 3} for k in ("person", "organization", "location", "miscellaneous")},
        "required": ["person", "organization", "location", "miscellaneous"],
        "additionalProperties": False,
    },
    "function_call": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "minLength": 1, "maxLength": 25},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "hourly": {"type": "boolean"},
            "note": {"type": ["string", "null"], "maxLength": 10},
        },
        "required": ["location", "unit"],
        "additionalProperties": False,
    },
    "formats": {
        "type": "object",
        "properties": {
            "ip": {"type": "string", "format": "ipv4"},
            "day": {"type": "string", "format": "date"},
            "code": {"type": "string", "pattern": '^[A-Z]{2}"[0-9]\\\\$'},
        },
        "required": ["ip", "day", "code"],
        "additionalProperties": False,
    },
    "tuple": {"type": "array", "prefixItems": [{"type": "integer", "minimum": -5, "maximum": 5}, {"const": "x"}], "minItems": 2, "maxItems": 2},
    "scalars": {"anyOf": [{"type": "number"}, {"type": "boolean"}, {"type": "null"}, {"type": "string", "maxLength": 5}]},
}


def _accepts(guide: structgen.Guide, tokenizer: Any, text: str) -> bool:
    state = guide.advance(guide.initial_state, tokenizer.encode(text, add_special_tokens=False))
    return state >= 0 and guide.is_final(state)


# hypothesis-jsonschema reads drafts 4-7: no prefixItems, so "tuple" is left to the walks below.
@pytest.mark.parametrize("name", sorted(set(SCHEMAS) - {"tuple"}))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_instances_are_accepted(name: str, data: st.DataObject, mistral_tokenizer: Any, mistral_vocabulary: Any) -> None:
    """Mistral's byte fallback spells every byte, so any unicode instance can be tokenized."""
    schema = SCHEMAS[name]
    guide = structgen.compile_json_schema(schema, mistral_vocabulary)
    instance = in_schema_order(data.draw(from_schema(schema)), schema)
    # hypothesis-jsonschema does not honour every format: keep what a format checker accepts.
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    assume(jsonschema.Draft202012Validator(schema, format_checker=checker).is_valid(instance))
    for separators in ((", ", ": "), (",", ":")):
        text = json.dumps(instance, ensure_ascii=False, separators=separators)
        assert _accepts(guide, mistral_tokenizer, text), text


def random_walk(guide: structgen.Guide, rng: random.Random, max_tokens: int = 400) -> bytes | None:
    """Sample uniformly among allowed tokens (EOS with probability 1/2 where allowed)."""
    vocab = guide.vocabulary
    eos = sorted(vocab.eos_token_ids)
    state, out = guide.initial_state, []
    for _ in range(max_tokens):
        allowed = guide.allowed_token_ids(state)
        assert allowed.size, "a state with no way on"
        if guide.is_final(state) and (rng.random() < 0.5 or allowed.size == len(eos)):
            return vocab.decode(out)
        choices = [int(t) for t in allowed if t not in vocab.eos_token_ids]
        # Prefer short tokens half the time so that walks finish.
        if rng.random() < 0.5:
            short = [t for t in choices if len(vocab.tokens[t] or b"") <= 2]
            choices = short or choices
        token = rng.choice(choices)
        out.append(token)
        state = guide.next_state(state, token)
        assert state >= 0
    return None


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCHEMAS))
@pytest.mark.parametrize("vocab_name", ["smollm2", "mistral"])
def test_random_walks_validate(name: str, vocab_name: str, request: pytest.FixtureRequest) -> None:
    vocab = request.getfixturevalue(f"{vocab_name}_vocabulary")
    guide = structgen.compile_json_schema(SCHEMAS[name], vocab)
    finished = 0
    for seed in range(40):
        out = random_walk(guide, random.Random(seed))
        if out is None:
            continue
        finished += 1
        value = json.loads(out.decode("utf-8"))
        jsonschema.validate(value, SCHEMAS[name], cls=jsonschema.Draft202012Validator)
    assert finished >= 10


def test_pydantic_class_and_json_string(smollm2_vocabulary: Any) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Person(pydantic.BaseModel):
        name: str
        age: int

    g1 = structgen.compile_json_schema(Person, smollm2_vocabulary)
    g2 = structgen.compile_json_schema(json.dumps(Person.model_json_schema()), smollm2_vocabulary)
    assert g1 is g2  # (the same compiled guide: the cache keys on the loaded schema)
    assert g1.accepts_bytes(b'{"name": "Ann", "age": 3}')
    assert not g1.accepts_bytes(b'{"name": "Ann"}')


@pytest.mark.parametrize(
    "schema, error, words",
    [
        ("{not json", structgen.SchemaError, ["JSON"]),
        ({"type": "strin"}, structgen.SchemaError, ["/type"]),
        ({"type": "array", "minItems": 3, "maxItems": 2}, structgen.UnsatisfiableConstraint, ["minItems"]),
        ({"properties": {"a": {"type": "number", "multipleOf": 0.1}}}, structgen.SchemaNotSupported, ["'multipleOf'", "/properties/a"]),
    ],
)
def test_bad_schemas_name_the_problem(schema: Any, error: type, words: list[str], smollm2_vocabulary: Any) -> None:
    with pytest.raises(error) as e:
        structgen.compile_json_schema(schema, smollm2_vocabulary)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_whitespace_option(smollm2_vocabulary: Any) -> None:
    compact = structgen.compile_json_schema({"type": "array", "items": {"type": "integer"}}, smollm2_vocabulary, whitespace="")
    assert compact.accepts_bytes(b"[1,2]") and not compact.accepts_bytes(b"[1, 2]")
    loose = structgen.compile_json_schema({"type": "array", "items": {"type": "integer"}}, smollm2_vocabulary, whitespace=r"[ \n]{0,4}")
    assert loose.accepts_bytes(b"[\n  1,\n  2\n]")


def test_surrogate_pair_escapes_are_one_character(smollm2_vocabulary: Any) -> None:
    """json.dumps writes an emoji as a surrogate pair; that is one character, a lone half is none."""
    guide = structgen.compile_json_schema({"type": "string", "maxLength": 1}, smollm2_vocabulary)
    assert guide.accepts_bytes(json.dumps("😀").encode())  # "\ud83d\ude00"
    assert guide.accepts_bytes(json.dumps("😀", ensure_ascii=False).encode())
    assert not guide.accepts_bytes(json.dumps("😀😀").encode())  # two characters
    assert not guide.accepts_bytes(b'"\\ud83d"') and not guide.accepts_bytes(b'"\\ude00\\ud83d"')


def test_compiles_pause_the_garbage_collector_and_restore_it(smollm2_vocabulary: structgen.Vocabulary) -> None:
    import gc

    from structgen import compiler

    assert gc.isenabled()
    with compiler._collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(structgen.SchemaNotSupported):  # a failed compile restores it too
        structgen.compile_json_schema({"type": "string", "format": "uri-template"}, smollm2_vocabulary, unknown_formats="error")
    assert gc.isenabled()
    gc.disable()
    try:
        structgen.compile_json_schema({"type": "integer", "maximum": 7}, smollm2_vocabulary)
        assert not gc.isenabled()  # (left as the caller had it)
    finally:
        gc.enable()


def test_loading_a_schema_pauses_the_collector_too(smollm2_vocabulary: structgen.Vocabulary) -> None:
    # (loading, the metaschema check and the rewrite allocate as a compile does; the warnings they
    # give still name the caller's line)
    import gc
    import warnings

    paused = []
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        shown = warnings.showwarning
        warnings.showwarning = lambda *a, **k: (paused.append(not gc.isenabled()), shown(*a, **k))  # type: ignore[assignment]
        structgen.compile_json_schema({"type": "string", "format": "no-such-format", "maxLength": 3}, smollm2_vocabulary)
    assert paused == [True] and gc.isenabled()
    assert [w.filename for w in record] == [__file__]


def test_a_term_nested_hundreds_deep_masks_without_recursion(smollm2_vocabulary: structgen.Vocabulary, smollm2_tokenizer: Any) -> None:
    # (CloudFormation's AWS::SageMaker::TrialComponent: up to 300 extra keys under a pattern, so the
    # object's term nests 300 levels; clamping a state's counters walked it recursively and a mask
    # raised RecursionError after compile)
    schema = {"type": "object", "properties": {"Parameters": {
        "type": "object", "maxProperties": 300, "additionalProperties": False,
        "patternProperties": {".{1,320}": {"type": "object", "additionalProperties": False,
                                           "properties": {"NumberValue": {"type": "number"}, "StringValue": {"type": "string"}}}}}}}
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary)
    instance = {"Parameters": {f"p{i}": {"NumberValue": i} for i in range(3)}}
    text = json.dumps(instance)
    state = guide.initial_state
    for t in smollm2_tokenizer.encode(text, add_special_tokens=False):
        assert guide.token_mask(state)[t], text
        state = guide.next_state(state, t)
    assert guide.is_final(state)


@pytest.mark.parametrize(("schema", "where"), [
    ('{"type": "number", "maximum": Infinity}', "/maximum"),
    ('{"properties": {"a": {"multipleOf": Infinity}}}', "/properties/a/multipleOf"),
    ({"enum": [1, float("nan")]}, "/enum/1"),
])
def test_numbers_json_cannot_write_are_a_schema_error(schema: Any, where: str, smollm2_vocabulary: Any) -> None:
    """Python's json.loads reads NaN and Infinity; a schema holding one is not JSON (they crashed
    with a TypeError or an OverflowError in the compile)."""
    with pytest.raises(structgen.SchemaError, match="is not a JSON number") as info:
        structgen.compile_json_schema(schema, smollm2_vocabulary)
    assert info.value.path == where
