"""Enumerations (``enum`` / ``const``): the values a schema keeps are those ``jsonschema`` calls
valid under the rest of it, however the check is made (a type test where the rest names only
``string`` / ``boolean`` / ``null``, ``jsonschema`` otherwise), each spelled as ``json.dumps`` writes
it with ``ensure_ascii=False``."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.errors import UnsatisfiableConstraint
from structgen.json_schema import schema_to_dfa
from structgen.json_schema.ops import encoded
from structgen.json_schema.values import spelling

_TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from(['"', "\\", "\x7f", "\x00", "\n", "\u2028", "é", "~"]), max_size=6)
_SCALARS = st.one_of(_TEXT, st.booleans(), st.none(), st.integers(-3, 3), st.sampled_from([1.0, 2.5, -0.0]))
_VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=2), st.dictionaries(st.sampled_from(["a", "b"]), _SCALARS, max_size=2))
_TYPES = st.sampled_from(["string", "boolean", "null", "integer", "number", "array", "object"])
_REST = st.one_of(
    st.just({}),
    _TYPES.map(lambda t: {"type": t}),
    st.lists(_TYPES, min_size=1, max_size=3, unique=True).map(lambda ts: {"type": ts}),
    st.just({"type": "string", "minLength": 2}),
    st.just({"type": "string", "description": "an annotation only"}),
)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_an_enumerated_string_is_spelled_as_its_json_text(text: str) -> None:
    assert spelling(text, json.dumps(text)) == f'"{encoded(text)}"'


@settings(max_examples=120, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=12), _REST)
def test_an_enumeration_keeps_exactly_the_values_jsonschema_calls_valid(values: list, rest: dict) -> None:
    schema = {**rest, "enum": values}
    valid = [jsonschema.Draft202012Validator(schema).is_valid(v) for v in values]  # (not `in`: 0 == False in Python)
    try:
        dfa = schema_to_dfa(schema)
    except UnsatisfiableConstraint:
        assert not any(valid)
        return
    for v, ok in zip(values, valid):
        text = json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        assert dfa.accepts(text) == ok, (schema, v)


def test_a_large_string_enumeration_under_a_type_is_kept_whole() -> None:
    values = [f"zone/{i}" for i in range(600)] + ["é", "\x7f", 'q"uote']
    dfa = schema_to_dfa({"type": "string", "enum": values})
    assert all(dfa.accepts(json.dumps(v, ensure_ascii=False).encode()) for v in values)
    assert not dfa.accepts(b'"zone/600"') and not dfa.accepts(b"1")


@pytest.mark.parametrize("rest", [{"type": "integer"}, {"type": ["string", "integer"]}])
def test_types_a_dialect_decides_are_left_to_jsonschema(rest: dict) -> None:
    dfa = schema_to_dfa({**rest, "enum": [1.0, "x", True]})
    assert dfa.accepts(b"1.0") and dfa.accepts(b"1") and not dfa.accepts(b"true")
    assert dfa.accepts(b'"x"') == ("string" in rest["type"])
