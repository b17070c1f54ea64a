"""A schema's JSON text written once, natively, with each of its objects' texts as a slice of it
(:func:`structgen._engine.json_texts`, read by :mod:`structgen.json_schema.ops`): the oracle is
Python's own encoder, :func:`structgen.json_schema.ops.schema_text`."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen._engine import json_texts
from structgen.json_schema.ops import composed_text, known_text, root_text, schema_text, schema_texts, texts_known

#: Any character a Python str holds: lone surrogates, controls, astral ones, JSON's escapes.
_CHARS = st.characters(min_codepoint=0, max_codepoint=0x10FFFF)
_TEXT = st.text(_CHARS, max_size=12) | st.sampled_from(['"', "\\", "\b\f\n\r\t", "\x00\x1f\x7f", "é😀", "\ud800"])
_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**80), max_value=10**80)
    | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1e-05, 1e16, 1e300]) | _TEXT
)
_JSON = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=30,
)


def _dicts(v: Any) -> Iterator[dict[str, Any]]:
    if isinstance(v, dict):
        yield v
        for x in v.values():
            yield from _dicts(x)
    elif isinstance(v, list):
        for x in v:
            yield from _dicts(x)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_the_native_texts_are_pythons_encoder_s_texts(value: Any) -> None:
    texts = json_texts(value)
    assert texts is not None  # (JSON values: all written natively)
    assert texts.text == schema_text(value)
    for d in _dicts(value):
        assert texts.text_of(d) == schema_text(d)
    assert texts.text_of({"not": "inside"}) is None


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_TEXT, _JSON, max_size=5), st.sets(_TEXT))
def test_a_composed_text_is_the_text_of_the_dict_composed(schema: dict[str, Any], left_out: set[str]) -> None:
    root = {"root": schema}
    items = [(k, v) for k, v in schema.items() if k not in left_out]
    with texts_known(root, *schema_texts(root)):
        assert composed_text(items) == schema_text(dict(items))


class _Str(str):
    pass


class _Int(int):
    pass


def _deep(levels: int) -> dict[str, Any]:
    v: dict[str, Any] = {}
    for _ in range(levels):
        v = {"not": v}
    return v


def _cycle() -> dict[str, Any]:
    d: dict[str, Any] = {"a": 1}
    d["self"] = [d]
    return d


@pytest.mark.parametrize("value", [
    {"enum": (1, 2)}, OrderedDict(a=1), {"a": _Str("x")}, {_Str("k"): 1}, {"a": _Int(3)}, {1: "a"}, {"a": object()},
    {"a": 10**5000}, _deep(450), _cycle(),
], ids=["tuple", "dict subclass", "str subclass", "str subclass key", "int subclass", "int key", "object", "long int",
        "deep", "cycle"])
def test_values_json_writes_otherwise_are_left_to_python(value: Any) -> None:
    assert json_texts(value) is None
    try:
        expected: Any = schema_text(value)
    except (ValueError, RecursionError) as e:  # (the long int, the cycle: Python's encoder refuses them)
        expected = type(e)
    try:
        got: Any = schema_texts(value)
    except (ValueError, RecursionError) as e:
        got = type(e)
    assert got == expected or got == (expected, None)


def test_the_texts_hold_their_objects_so_an_id_is_not_reused() -> None:
    root: dict[str, Any] = {"a": {"type": "string"}, "b": {"type": "integer"}}
    texts = json_texts(root)
    assert texts is not None and len(texts) == 3
    gone = id(root["a"])
    del root["a"]
    fresh = [{"type": "number"} for _ in range(256)]  # (a freed dict's memory would be given to one of these)
    assert all(id(d) != gone for d in fresh)
    assert all(texts.text_of(d) is None for d in fresh)


def test_known_texts_are_the_compiled_schema_s_own_and_only_during_its_compile() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "é\n"}}, "required": ["a"]}
    inner = schema["properties"]["a"]
    text, texts = schema_texts(schema)
    with texts_known(schema, text, texts):
        assert known_text(schema) is text
        assert known_text(inner) == schema_text(inner) and known_text(inner) in text
        assert known_text({"type": "string", "pattern": "é\n"}) == schema_text(inner)  # (an equal dict outside: written)
        other = {"items": {"type": "null"}}
        assert root_text(other) == schema_text(other)  # (a new root: its texts are read for the rest of the compile)
        assert known_text(other["items"]) == '{"type": "null"}'
        assert known_text(inner) == schema_text(inner)
    inner["maxLength"] = 3  # (after the compile: its texts are not read again)
    assert known_text(inner) == schema_text(inner) != texts.text_of(inner)  # type: ignore[union-attr]
    assert root_text(schema) == schema_text(schema)


def test_a_schema_changed_between_compiles_is_read_as_it_is_now() -> None:
    from structgen import SchemaError, Vocabulary, compile_json_schema
    from structgen.json_schema import schema_to_regex

    vocab = Vocabulary.from_bytes([bytes([b]) for b in range(32, 127)] + [b""], eos_token_ids=[95])
    shared: dict[str, Any] = {"type": "string", "enum": ["a"]}
    compile_json_schema({"$defs": {"d": shared}, "$ref": "#/$defs/d"}, vocab)
    shared["minLength"] = -1  # (its text from that compile was a valid piece: read again, its check would be skipped)
    with pytest.raises(SchemaError, match="minLength"):
        schema_to_regex({"$defs": {"d": shared}, "$ref": "#/$defs/d"})
    del shared["minLength"]
    shared["enum"] = ["b"]
    assert '"b"' in schema_to_regex({"$defs": {"d": shared}, "$ref": "#/$defs/d"})


def test_non_finite_numbers_are_written_as_pythons_encoder_writes_them() -> None:
    value = {"a": [math.nan, math.inf, -math.inf, -0.0]}
    texts = json_texts(value)
    assert texts is not None and texts.text == schema_text(value) == '{"a": [NaN, Infinity, -Infinity, -0.0]}'
