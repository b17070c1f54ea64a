"""JSON Schema → regex: completeness on generated instances, soundness on generated strings,
the JSON Schema Test Suite, and every error the compiler raises."""

from __future__ import annotations

import copy
import functools
import json
import re
import warnings
import sys
from typing import Any

import interegular
import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from structgen.errors import (
    CompileBudgetExceeded,
    RegexNotSupported,
    RegexSyntaxError,
    SchemaError,
    SchemaNotSupported,
    UnsatisfiableConstraint,
)
from structgen.json_schema import CONSTRAINT_KEYWORDS, DEFAULT_WHITESPACE, load_schema, schema_to_dfa, schema_to_regex
from ..support.paths import SUITES


def _patch_hypothesis_jsonschema() -> None:
    """hypothesis-jsonschema 0.23 draws object keys with ``many.more()``, an internal Hypothesis API
    that newer Hypothesis replaced by ``with many(...) as elements: for _ in elements``."""
    from hypothesis.internal.conjecture import utils as cu

    if hasattr(cu.many, "more"):
        return

    def more(self: Any) -> bool:
        if not hasattr(self, "_compat_iter"):
            self.__enter__()
            self._compat_iter = iter(self)
        try:
            next(self._compat_iter)
            return True
        except StopIteration:
            self.__exit__(None, None, None)
            return False

    cu.many.more = more


_patch_hypothesis_jsonschema()

SUITE = SUITES / "draft2020-12"
HYPOTHESIS = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much, HealthCheck.large_base_example],
)

# Schemas whose hypothesis-jsonschema instances all lie in our language (serialised in schema order).
COMPLETE: dict[str, Any] = {
    "flat_object": {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 10}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
                       "score": {"type": "number"}, "active": {"type": "boolean"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    },
    "all_optional": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "null"}, "c": {"type": "string", "maxLength": 2}, "d": {"type": "boolean"}},
        "additionalProperties": False,
    },
    "nested": {
        "type": "object",
        "properties": {
            "user": {"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 3}},
                     "required": ["id"], "additionalProperties": False},
            "points": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                                                  "required": ["x", "y"], "additionalProperties": False}, "maxItems": 3},
        },
        "required": ["user"],
        "additionalProperties": False,
    },
    "array_bounds": {"type": "array", "items": {"type": "integer", "minimum": -5, "maximum": 5}, "minItems": 2, "maxItems": 4},
    "enum_mixed": {"enum": ["red", "green", 1, None, [1, 2], {"a": "b"}, "é\"\\"]},
    "const_object": {"const": {"x": [1, {"y": "z"}], "w": None}},
    "integer_ranges": {
        "type": "object",
        "properties": {"neg": {"type": "integer", "maximum": -10}, "pos": {"type": "integer", "exclusiveMinimum": 100},
                       "mid": {"type": "integer", "minimum": -1000, "exclusiveMaximum": 1000}, "big": {"type": "integer", "minimum": 10**12},
                       "frac": {"type": "integer", "minimum": -2.5, "maximum": 7.5}},
        "required": ["neg", "pos", "mid", "big", "frac"],
        "additionalProperties": False,
    },
    "date_formats": {
        "type": "object",
        "properties": {"d": {"type": "string", "format": "date"}, "t": {"type": "string", "format": "time"},
                       "dt": {"type": "string", "format": "date-time"}},
        "required": ["d", "t", "dt"],
        "additionalProperties": False,
    },
    "ip": {"anyOf": [{"type": "string", "format": "ipv4"}, {"type": "string", "format": "ipv6"}]},
    "uuid": {"type": "string", "format": "uuid"},
    "pattern_quotes": {"type": "string", "pattern": '^a"b\\\\c[0-9]*$'},
    "pattern_unanchored": {"type": "string", "pattern": "x[yz]"},
    "pattern_words": {"type": "string", "pattern": "^[A-Z][a-z]{1,8}( [A-Z][a-z]{1,8})?$"},
    "unicode_lengths": {"type": "string", "minLength": 2, "maxLength": 5},
    "unicode_enum": {"enum": ["é", "日本", "😀", "tab\there", "line\nbreak"]},
    "nullable": {"type": ["string", "null"], "maxLength": 3},
    "anyof_null": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
    "oneof_discriminated": {
        "oneOf": [
            {"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer", "minimum": 1, "maximum": 9}},
             "required": ["kind", "lives"], "additionalProperties": False},
            {"type": "object", "properties": {"kind": {"const": "dog"}, "good": {"type": "boolean"}},
             "required": ["kind"], "additionalProperties": False},
        ]
    },
    "refs": {
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                            "required": ["x", "y"], "additionalProperties": False}},
        "type": "object",
        "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
        "required": ["from", "to"],
        "additionalProperties": False,
    },
    "dict": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    "bool_null": {"type": ["boolean", "null"]},
    "number": {"type": "number"},
    "allof_ref_siblings": {
        "$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}, "extra": {"type": "boolean"}},
                           "required": ["id"], "additionalProperties": False}},
        "allOf": [{"$ref": "#/$defs/base"}],
        "properties": {"extra": {"const": True}},
        "required": ["extra"],
    },
    "array_of_enums": {"type": "array", "items": {"enum": ["a", "b", 3]}, "maxItems": 3},
    "foreign_keywords": {"type": ["string", "integer"], "minLength": 2, "maximum": 5, "maxItems": 0},
}

# Soundness only (hypothesis-jsonschema cannot generate them, or generates what we leave out).
SOUND_ONLY: dict[str, Any] = {
    "tree": {
        "$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
                                                           "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
                           "required": ["value"], "additionalProperties": False}},
        "$ref": "#/$defs/node",
    },
    "linked_list": {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
                    "required": ["v", "next"]},
    "anything": {},
    "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}], "items": False, "minItems": 2},
    "tuple_then_items": {"type": "array", "prefixItems": [{"const": "head"}], "items": {"type": "null"}, "maxItems": 3},
    "typeless_properties": {"properties": {"a": {"type": "string"}}, "required": ["a"], "maxLength": 2},
    "duration": {"type": "string", "format": "duration"},
    "pattern_with_length": {"type": "string", "pattern": "ab", "minLength": 3, "maxLength": 5},
    "escapes_in_keys": {"type": "object", "properties": {'q"uote': {"const": "\\"}, "new\nline": {"type": "integer"}}, "required": ['q"uote']},
    "enum_filtered": {"type": "string", "enum": ["a", "bb", "ccc", 4], "minLength": 2, "not": {"const": "ccc"}},
    "free_values": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string", "pattern": "^[a-c]+$"}}},
}

SCHEMAS = {**COMPLETE, **SOUND_ONLY}
CUSTOM_FORMATS = {"uuid": st.uuids().map(str)}


# `{}` values nest max_recursion_depth deep; generating from the depth-3 regex is slow, and
# soundness does not depend on the depth.
SHALLOW = {"anything", "typeless_properties"}


@functools.lru_cache(maxsize=None)
def regex_of(name: str) -> re.Pattern[str]:
    return re.compile(schema_to_regex(SCHEMAS[name], max_recursion_depth=1 if name in SHALLOW else 3))


@functools.lru_cache(maxsize=None)
def instances_of(name: str) -> st.SearchStrategy[Any]:
    return from_schema(copy.deepcopy(COMPLETE[name]), custom_formats=CUSTOM_FORMATS)  # (it edits schemas in place)


def property_order(schema: Any, order: dict[str, int] | None = None) -> dict[str, int]:
    order = {} if order is None else order
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties":
                for name in value:
                    order.setdefault(name, len(order))
            if key in ("enum", "const"):
                value_keys(value, order)
            else:
                property_order(value, order)
    elif isinstance(schema, list):
        for item in schema:
            property_order(item, order)
    return order


def value_keys(value: Any, order: dict[str, int]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            order.setdefault(k, len(order))
            value_keys(v, order)
    elif isinstance(value, list):
        for v in value:
            value_keys(v, order)


def reorder(value: Any, order: dict[str, int]) -> Any:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: order.get(k, len(order)))
        return {k: reorder(value[k], order) for k in keys}
    if isinstance(value, list):
        return [reorder(v, order) for v in value]
    return value


def validator_for(schema: Any) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_regex_is_interegular_syntax(name: str) -> None:
    regex = schema_to_regex(SCHEMAS[name])
    assert not re.search(r"(?<!\\)(?:\\\\)*\\[dwsDWSbBAZ]", regex), "no shorthand classes or anchors"
    interegular.parse_pattern(regex)


@pytest.mark.parametrize("name", sorted(COMPLETE))
@HYPOTHESIS
@given(data=st.data())
def test_generated_instances_match(name: str, data: st.DataObject) -> None:
    instance = reorder(data.draw(instances_of(name)), property_order(COMPLETE[name]))
    validator_for(COMPLETE[name]).validate(instance)
    rx = regex_of(name)
    for text in (json.dumps(instance, ensure_ascii=False), json.dumps(instance, ensure_ascii=False, separators=(",", ":"))):
        assert rx.fullmatch(text), (name, text)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@HYPOTHESIS
@given(data=st.data())
def test_every_matched_string_is_valid(name: str, data: st.DataObject) -> None:
    text = data.draw(st.from_regex(regex_of(name).pattern, fullmatch=True))
    instance = json.loads(text)
    errors = list(validator_for(SCHEMAS[name]).iter_errors(instance))
    assert not errors, (name, text, errors[0].message)


@HYPOTHESIS
@given(st.from_regex(schema_to_regex({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}},
                                      whitespace=r"[ \t\n]{0,3}"), fullmatch=True))
def test_custom_whitespace_is_sound(text: str) -> None:
    instance = json.loads(text)
    assert isinstance(instance, dict) and set(instance) <= {"a"}


def test_whitespace_placement() -> None:
    rx = re.compile(schema_to_regex({"type": "object", "properties": {"a": {"type": "array"}}, "required": ["a"]}))
    assert rx.fullmatch('{"a":[]}') and rx.fullmatch('{ "a" : [ 1 , {} ] }') and rx.fullmatch('{"a": [1, 2]}')
    assert not rx.fullmatch(' {"a":[]}') and not rx.fullmatch('{"a":[]} ') and not rx.fullmatch('{  "a":[]}')
    compact = re.compile(schema_to_regex({"type": "array", "items": {"type": "integer"}}, whitespace=""))
    assert compact.fullmatch("[1,2]") and not compact.fullmatch("[1, 2]")


def test_const_allows_whitespace_and_equal_numbers() -> None:
    rx = re.compile(schema_to_regex({"const": {"a": [1, 2.5], "b": {}}}))
    assert rx.fullmatch('{"a":[1,2.5],"b":{}}') and rx.fullmatch('{ "a": [1.0, 2.5], "b": { } }')
    # (other key orders are equal values too, but only the const's own order is emitted: a gap)
    assert not rx.fullmatch('{"a":[1,2.5],"b":[]}')


def test_optional_properties_commas() -> None:
    schema = {"type": "object", "properties": {k: {"const": i} for i, k in enumerate("abcd")}, "required": ["c"],
              "additionalProperties": False}
    rx = re.compile(schema_to_regex(schema, whitespace=""))
    import itertools

    for n in range(5):
        for keys in itertools.combinations("abcd", n):
            text = "{" + ",".join(f'"{k}":{"abcd".index(k)}' for k in keys) + "}"
            assert (rx.fullmatch(text) is not None) == ("c" in keys), text
    for bad in ['{,"c":2}', '{"c":2,}', '{"a":0,,"c":2}', '{"c":2"d":3}', '{"c":2,"c":2}', '{"d":3,"c":2}']:
        assert not rx.fullmatch(bad), bad


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_long_runs_of_optional_properties(data: st.DataObject) -> None:
    # (a run longer than WIDE_RUN mixes both forms of an optional entry: every subset in order,
    # whichever entry comes first, and nothing else)
    from structgen.json_schema.objects import WIDE_RUN

    n = 2 * WIDE_RUN + 7
    names = [f"k{i}" for i in range(n)]
    required = [names[WIDE_RUN + 3]]
    schema = {"type": "object", "properties": {k: {"const": i} for i, k in enumerate(names)}, "required": required,
              "additionalProperties": False}
    dfa = schema_to_dfa(schema, whitespace="")
    keys = sorted(data.draw(st.sets(st.sampled_from(names), max_size=n)), key=names.index)
    text = "{" + ",".join(f'"{k}":{names.index(k)}' for k in keys) + "}"
    assert dfa.accepts(text.encode()) == (required[0] in keys), text
    if len(keys) >= 2:
        swapped = keys[:]
        i = data.draw(st.integers(0, len(keys) - 2))
        swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
        bad = "{" + ",".join(f'"{k}":{names.index(k)}' for k in swapped) + "}"
        assert not dfa.accepts(bad.encode()), bad
    if keys:
        assert not dfa.accepts(("{," + text[1:]).encode()) and not dfa.accepts((text[:-1] + ",}").encode())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_long_runs_of_optional_properties_beside_extra_members(data: st.DataObject) -> None:
    """A long run of optional entries beside extra members (compose-spec's 73 service keys and
    its ``^x-`` members): past each optional entry the choices are that entry's and the next
    state's, shared down the run (``object_automaton``'s rest); every subset in order with extra
    members anywhere, and nothing else."""
    n = 40
    names = [f"k{i}" for i in range(n)]
    required = [names[30]]
    schema = {"type": "object", "properties": {k: {"const": i} for i, k in enumerate(names)}, "required": required,
              "patternProperties": {"^x": {"const": 9}}, "additionalProperties": False}
    dfa = schema_to_dfa(schema, whitespace="", extra_properties=True)
    keys = sorted(data.draw(st.sets(st.sampled_from(names), max_size=n)), key=names.index)
    for j in range(data.draw(st.integers(0, 3))):
        keys.insert(data.draw(st.integers(0, len(keys))), f"x{j}")
    members = [f'"{k}":{9 if k.startswith("x") else names.index(k)}' for k in keys]
    text = "{" + ",".join(members) + "}"
    assert dfa.accepts(text.encode()) == (required[0] in keys), text
    declared = [i for i, k in enumerate(keys) if not k.startswith("x")]
    if len(declared) >= 2:  # (two declared entries out of order)
        i, j = declared[0], declared[1]
        swapped = members[:]
        swapped[i], swapped[j] = swapped[j], swapped[i]
        assert not dfa.accepts(("{" + ",".join(swapped) + "}").encode())
    if keys:
        assert not dfa.accepts(("{," + text[1:]).encode()) and not dfa.accepts((text[:-1] + ",}").encode())


def test_extra_members_only_under_a_count() -> None:
    # (no declared key: one repetition with a counter, not a level per member)
    for lo in (0, 1):
        schema = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False,
                  "maxProperties": 3, "minProperties": lo}
        dfa = schema_to_dfa(schema, whitespace="")
        for n in range(5):
            instance = {f"x{i}": i for i in range(n)}
            assert dfa.accepts(json.dumps(instance, separators=(",", ":")).encode()) == jsonschema.Draft202012Validator(schema).is_valid(instance), (lo, n)
        assert not dfa.accepts(b'{"y":1}') and not dfa.accepts(b'{"x":"a"}') and not dfa.accepts(b'{,"x":1}')
        assert not dfa.accepts(b'{"x":1,}') and not dfa.accepts(b'{"x":1"x":2}')


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 4), data=st.data(), extras=st.booleans(), key_order=st.sampled_from(["schema", "any"]),
    min_p=st.one_of(st.none(), st.integers(0, 5)), max_p=st.one_of(st.none(), st.integers(0, 5)),
)
def test_an_object_under_counts_holds_the_valid_objects(
    n: int, data: st.DataObject, extras: bool, key_order: str, min_p: int | None, max_p: int | None
) -> None:
    """An object whose declared members are counted (``minProperties``, ``maxProperties``) or
    that has extra members beside them: its automaton holds exactly the valid objects written in
    the order it allows (the schema's, or any) with the declared members at most once, where
    extra members count towards ``minProperties`` as one at most (two could repeat a key)."""
    import itertools

    names = "abcd"[:n]
    required = sorted(data.draw(st.sets(st.sampled_from(names))))
    schema: dict[str, Any] = {"type": "object", "properties": {k: {"const": i} for i, k in enumerate(names)},
                              "required": required, "additionalProperties": False}
    if extras:
        schema["patternProperties"] = {"^x": {"const": 9}}
    for key, bound in (("minProperties", min_p), ("maxProperties", max_p)):
        if bound is not None:
            schema[key] = bound
    valid = jsonschema.Draft202012Validator(schema).is_valid
    try:
        dfa = schema_to_dfa(schema, whitespace="", key_order=key_order, extra_properties=True)
    except UnsatisfiableConstraint:
        dfa = None
    for size in range(n + 1):
        for declared in itertools.combinations(names, size):
            orders = itertools.permutations(declared) if key_order == "any" else [declared]
            for order in orders:
                for e in range(3 if extras else 1):
                    for at in itertools.combinations_with_replacement(range(size + 1), e):
                        keys = list(order)
                        for j, pos in enumerate(at):  # (extras x0, x1 inserted at these places)
                            keys.insert(pos + j, f"x{j}")
                        instance = {k: 9 if k.startswith("x") else names.index(k) for k in keys}
                        text = json.dumps(instance, separators=(",", ":"))
                        expected = valid(instance) and size + min(e, 1) >= (min_p or 0)
                        assert (dfa is not None and dfa.accepts(text.encode())) == expected, (schema, key_order, text)


def test_tuples() -> None:
    rx = re.compile(schema_to_regex(SOUND_ONLY["tuple"]))
    assert rx.fullmatch('["a", 1]') and rx.fullmatch('["a", 1, true]')
    assert not rx.fullmatch('["a"]') and not rx.fullmatch('["a", 1, true, null]') and not rx.fullmatch('[1, "a"]')
    rx = re.compile(schema_to_regex(SOUND_ONLY["tuple_then_items"]))
    assert rx.fullmatch("[]") and rx.fullmatch('["head"]') and rx.fullmatch('["head", null, null]')
    assert not rx.fullmatch('["head", null, null, null]') and not rx.fullmatch("[null]")


def test_required_names_outside_properties() -> None:
    rx = re.compile(schema_to_regex({"type": "object", "required": ["k"], "additionalProperties": {"type": "boolean"}}))
    assert rx.fullmatch('{"k":true}') and not rx.fullmatch("{}") and not rx.fullmatch('{"k":1}')
    with pytest.raises(UnsatisfiableConstraint):
        schema_to_regex({"type": "object", "required": ["k"], "additionalProperties": False})


def test_free_keys_object() -> None:
    rx = re.compile(schema_to_regex({"type": "object", "additionalProperties": {"type": "integer"}}))
    assert rx.fullmatch('{"x": 1, "\\u00e9\\n": 2}') and rx.fullmatch("{}") and not rx.fullmatch('{"x": "1"}')


def test_recursion_is_unrolled_then_dropped_where_optional() -> None:
    schema = SOUND_ONLY["tree"]
    deep = {"value": 1, "children": [{"value": 2, "children": [{"value": 3, "children": [{"value": 4}]}]}]}
    assert re.fullmatch(schema_to_regex(schema, max_recursion_depth=3), json.dumps(deep))
    assert not re.fullmatch(schema_to_regex(schema, max_recursion_depth=1), json.dumps(deep))
    assert re.fullmatch(schema_to_regex(schema, max_recursion_depth=0), '{"value": 1, "children": []}')
    with pytest.raises(CompileBudgetExceeded) as info:
        schema_to_regex({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}, "required": ["next"]}},
                         "$ref": "#/$defs/n"})
    assert "max_recursion_depth" in str(info.value) and info.value.path == "/$defs/n" and info.value.limit == 3


def test_any_value_depth() -> None:
    rx = re.compile(schema_to_regex({}, max_recursion_depth=2))
    assert rx.fullmatch('[[1], {"a": null}]') and rx.fullmatch('"x"') and not rx.fullmatch("[[[1]]]")
    assert schema_to_regex(True) == schema_to_regex({"title": "annotations only", "x-extra": 1, "default": 3})


def test_pydantic_and_json_string_inputs() -> None:
    pydantic = pytest.importorskip("pydantic")
    from typing import Literal, Optional, Union

    class Cat(pydantic.BaseModel):
        kind: Literal["cat"]
        lives: int = pydantic.Field(ge=1, le=9)

    class Dog(pydantic.BaseModel):
        kind: Literal["dog"]
        name: Optional[str] = None

    class Owner(pydantic.BaseModel):
        name: str = pydantic.Field(max_length=20)
        pet: Union[Cat, Dog] = pydantic.Field(discriminator="kind")
        tags: list[str] = []

    rx = re.compile(schema_to_regex(Owner))
    value = Owner(name="Ann", pet=Dog(kind="dog"), tags=["x"])
    assert rx.fullmatch(value.model_dump_json())
    assert Owner.model_validate_json('{"name": "B", "pet": {"kind": "cat", "lives": 9}}')
    assert rx.fullmatch('{"name": "B", "pet": {"kind": "cat", "lives": 9}}')
    assert not rx.fullmatch('{"name": "B", "pet": {"kind": "cat", "lives": 10}}')
    assert schema_to_regex(json.dumps(Owner.model_json_schema())) == rx.pattern
    assert "pydantic" in sys.modules  # (the helper itself never imports it: duck-typed)


# --- the JSON Schema Test Suite -------------------------------------------------------------------

# The required suite's ratchet is tests/json_schema/test_conformance.py (one run of each suite);
# here, the optional cases.


def run_suite(pattern: str, depth: int = 2, **options: Any) -> tuple[dict[str, int], list[tuple[str, str, str, str]]]:
    """Every case compiled at max_recursion_depth=depth (2 keeps Python's re.compile of the
    ``{}`` sub-regexes quick; the default 3 gives the same counts, only slower)."""
    counts = {"cases": 0, "unsupported": 0, "compiled": 0, "tests": 0, "passing": 0, "invalid_accepted": 0, "valid_rejected": 0}
    invalid_accepted = []
    for path in sorted(SUITE.glob(pattern)):
        for case in json.loads(path.read_text()):
            counts["cases"] += 1
            try:
                rx = re.compile(schema_to_regex(case["schema"], max_recursion_depth=depth, **options))
            except (SchemaNotSupported, UnsatisfiableConstraint, CompileBudgetExceeded):
                counts["unsupported"] += 1
                continue
            counts["compiled"] += 1
            for test in case["tests"]:
                counts["tests"] += 1
                matched = rx.fullmatch(json.dumps(test["data"], separators=(",", ":"), ensure_ascii=False)) is not None
                if matched and not test["valid"]:
                    counts["invalid_accepted"] += 1
                    invalid_accepted.append((path.name, case["description"], test["description"], json.dumps(test["data"])))
                elif not matched and test["valid"]:
                    counts["valid_rejected"] += 1
                else:
                    counts["passing"] += 1
    return counts, invalid_accepted


@pytest.mark.slow
def test_json_schema_test_suite_optional() -> None:
    """The optional cases (ECMA-262 regex semantics, format assertion, bignums): still zero invalid
    accepted. Their formats are assertions, so a format we do not know is refused here (by
    default it is an annotation, as the required suite reads it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counts, invalid_accepted = run_suite("optional/**/*.json", unknown_formats="error")
    print("\nJSON Schema Test Suite draft2020-12 optional:", counts)
    assert not invalid_accepted, invalid_accepted


# --- errors ---------------------------------------------------------------------------------------


def test_schema_error_bad_json() -> None:
    with pytest.raises(SchemaError) as info:
        schema_to_regex('{"type": "string",}')
    assert "not valid JSON" in str(info.value) and "line 1" in str(info.value)


def test_schema_error_invalid_schema_names_pointer() -> None:
    with pytest.raises(SchemaError) as info:
        load_schema({"properties": {"a": {"type": "strin"}}})
    assert info.value.path == "/properties/a/type"
    assert "invalid JSON Schema at /properties/a/type" in str(info.value)
    with pytest.raises(SchemaError, match="expected a dict"):
        load_schema(42)  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="does not resolve"):
        schema_to_regex({"$ref": "#/$defs/missing"})


def test_load_schema_passthrough() -> None:
    assert load_schema(True) is True
    schema = {"type": "integer"}
    assert load_schema(schema) is schema
    assert load_schema('{"type": "integer"}') == schema


REFUSED = [
    ({"type": "array", "items": {"$ref": "#/$defs/x"}, "uniqueItems": True, "$defs": {"x": {"type": "integer"}}}, "uniqueItems", "/uniqueItems"),
    ({"type": "number", "multipleOf": 0.1}, "multipleOf", "/multipleOf"),
    ({"type": "object", "dependentSchemas": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": False}, "unevaluatedProperties", "/unevaluatedProperties"),
    ({"type": "array", "contains": {"type": "integer"}, "unevaluatedItems": False}, "unevaluatedItems", "/unevaluatedItems"),
    ({"$defs": {"a": {"$dynamicAnchor": "a"}}, "items": {"$dynamicRef": "#a"}}, "$dynamicRef", "/items/$dynamicRef"),
    ({"properties": {"a": {"$ref": "https://example.com/schema.json"}}}, "$ref", "/properties/a/$ref"),
    ({"type": "string", "format": "hostname", "pattern": "^\u00fc"}, "pattern", "/pattern"),
    ({"type": "string", "pattern": "(a)\\1"}, "pattern", "/pattern"),
    ({"type": "string", "format": "hostname", "minLength": 300}, "minLength", "/minLength"),
    ({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": True, "$defs": {"i": {"$id": "i", "$recursiveAnchor": True, "items": {"$recursiveRef": "#"}}}, "items": {"$ref": "i"}}, "$recursiveRef", "/$defs/i/items/$recursiveRef"),
    # \b has no reading "under either engine" here, so the first branch's over-approximation is every string
    ({"type": "string", "oneOf": [{"pattern": "\\bx"}, {"pattern": "x"}]}, "oneOf", "/oneOf"),
]


@pytest.mark.parametrize(("schema", "keyword", "path"), REFUSED, ids=[r[1] for r in REFUSED])
def test_unsupported_keywords_are_refused(schema: Any, keyword: str, path: str) -> None:
    with pytest.raises(SchemaNotSupported) as info:
        schema_to_dfa(schema)
    assert info.value.keyword == keyword
    assert info.value.path == path
    assert f"JSON Schema keyword {keyword!r} at {path or '/'} is not supported" in str(info.value)


def test_oneof_of_patterns_read_by_either_engine() -> None:
    # \d is \w's subset under ECMA-262 and under Python (Unicode digits): exactly one branch holds for
    # strings with a word character and no digit of either reading
    dfa = schema_to_dfa({"type": "string", "oneOf": [{"pattern": "\\d"}, {"pattern": "\\w"}]})
    assert dfa.accepts(b'"a"') and dfa.accepts(b'"_ b"')
    for bad in ['"1"', '"a1"', '"a\u0663"', '"a\\u0663"', '" "']:
        assert not dfa.accepts(bad.encode()), bad


def test_not_pattern_with_anchors_inside_alternation_is_exact() -> None:
    # a SchemaStore config schema: no empty item in a comma-separated list; "$" is read as Python
    # reads it too (also before a final newline), so "a,\n" is not allowed either
    dfa = schema_to_dfa({"type": "string", "not": {"pattern": ",,|^,|,$"}})
    for ok in ['"a,b"', '""', '"a"', '"a,b,c"']:
        assert dfa.accepts(ok.encode()), ok
    for bad in ['"a,,b"', '",a"', '"a,"', '"a,\\n"', '","']:
        assert not dfa.accepts(bad.encode()), bad


def test_refused_keywords_are_decided_exactly_under_enum() -> None:
    rx = re.compile(schema_to_regex({"enum": [1, 2, 3, 4, "a"], "not": {"const": 2}, "multipleOf": 2}))
    assert rx.fullmatch("4") and rx.fullmatch('"a"') and not rx.fullmatch("2") and not rx.fullmatch("1")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (False, "the schema is false"),
        ({"type": "array", "minItems": 3, "maxItems": 2}, "minItems 3 > maxItems 2"),
        ({"type": "integer", "minimum": 5, "maximum": 3}, "minimum > maximum"),
        ({"type": "integer", "exclusiveMinimum": 2, "exclusiveMaximum": 3}, "minimum > maximum"),
        ({"type": "string", "minLength": 4, "maxLength": 1}, "minLength 4 > maxLength 1"),
        ({"enum": ["a", "b"], "type": "integer"}, "no enum/const value"),
        ({"type": "array", "prefixItems": [False], "minItems": 1}, "the schema is false"),
        ({"anyOf": [False, {"not": {}}]}, "no anyOf branch"),
        ({"type": "string", "pattern": "^abc$", "minLength": 4}, "no string of 4..None characters"),
        ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "the schema is false"),
        # additionalProperties only sees its own schema's properties: "id" is forbidden here
        ({"allOf": [{"properties": {"id": {}}, "required": ["id"]}], "properties": {"x": {}}, "additionalProperties": False,
          "type": "object"}, "the schema is false"),
        # every key required, then oneOf of required subsets (function-calling schemas): both branches always hold
        ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a", "b"],
          "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, "oneOf branches 0 and 1 hold for every instance"),
        ({"type": "integer", "oneOf": [{"type": "number"}, {"required": ["x"]}]}, "oneOf branches 0 and 1 hold for every instance"),
    ],
)
def test_unsatisfiable(schema: Any, message: str) -> None:
    with pytest.raises(UnsatisfiableConstraint) as info:
        schema_to_regex(schema)
    assert message in str(info.value)
    assert str(info.value).startswith("unsatisfiable constraint")


def test_false_branches_are_dropped() -> None:
    rx = re.compile(schema_to_regex({"anyOf": [False, {"type": "null"}], "type": ["null", "string"], "maxLength": 0}))
    assert rx.fullmatch("null") and not rx.fullmatch('""')
    rx = re.compile(schema_to_regex({"type": "object", "properties": {"gone": False, "kept": {"type": "null"}}}))
    assert rx.fullmatch('{"kept":null}') and not rx.fullmatch('{"gone":null}')


def test_regex_size_budget() -> None:
    with pytest.raises(CompileBudgetExceeded) as info:
        schema_to_regex({"enum": [f"value number {i:07d}" for i in range(60_000)]})
    assert "regex size" in str(info.value) and info.value.limit == 1_000_000


def test_whitespace_must_be_json_whitespace() -> None:
    assert DEFAULT_WHITESPACE == r"[ ]?"
    with pytest.raises(RegexNotSupported, match="JSON whitespace"):
        schema_to_regex({"type": "array"}, whitespace=r"\s*")
    with pytest.raises(RegexSyntaxError):
        schema_to_regex({"type": "array"}, whitespace="[ ")
    with pytest.raises(ValueError, match="max_recursion_depth"):
        schema_to_regex({}, max_recursion_depth=-1)


def test_constraint_keywords_cover_jsonschema() -> None:
    """Any keyword jsonschema enforces must be one we handle or refuse, never one we would ignore."""
    assert set(jsonschema.Draft202012Validator.VALIDATORS) <= CONSTRAINT_KEYWORDS


# --- random schemas -------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.5, -1.0, 2.0]) | st.text("ab\"\\é\n", max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner, max_size=2),
    max_leaves=4,
)
SMALL = st.integers(0, 4)
LEAF_SCHEMAS = st.one_of(
    st.sampled_from([{}, True, False, {"$ref": "#/$defs/d"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]),
    st.builds(lambda t: {"type": t}, st.lists(st.sampled_from(["string", "integer", "null", "array", "object"]), min_size=1, max_size=3, unique=True)),
    st.fixed_dictionaries({"type": st.just("integer")}, optional={"minimum": st.integers(-20, 20), "maximum": st.integers(-20, 20),
                                                                   "exclusiveMinimum": st.sampled_from([-1.5, 0, 3]), "exclusiveMaximum": st.integers(-5, 30)}),
    st.fixed_dictionaries({}, optional={"type": st.just("string"), "minLength": SMALL, "maxLength": SMALL,
                                        "pattern": st.sampled_from(["^a+$", "b", "^[0-9]{1,2}$", '"', "^x|y$", "é.", r"\s", "^$"])}),
    st.fixed_dictionaries({"type": st.just("string"), "format": st.sampled_from(["date", "uuid", "ipv4", "duration", "time"])}),
    st.lists(JSON_VALUES, min_size=1, max_size=4).map(lambda v: {"enum": v}),
    JSON_VALUES.map(lambda v: {"const": v}),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.fixed_dictionaries(
        {},
        optional={
            "type": st.just("object"),
            "properties": st.dictionaries(st.sampled_from(["a", "b", 'q"']), children, max_size=3),
            "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
            "additionalProperties": children,
            "maxProperties": SMALL,
        },
    )
    arrays = st.fixed_dictionaries(
        {},
        optional={"type": st.just("array"), "items": children, "prefixItems": st.lists(children, min_size=1, max_size=2),
                  "minItems": SMALL, "maxItems": SMALL, "uniqueItems": st.booleans()},
    )
    combinators = st.builds(lambda k, subs: {k: subs}, st.sampled_from(["anyOf", "oneOf", "allOf"]), st.lists(children, min_size=1, max_size=3))
    mixed = st.tuples(children, children).map(lambda p: {**p[0], **p[1]} if all(isinstance(x, dict) for x in p) else p[0])
    return objects | arrays | combinators | mixed


RANDOM_SCHEMAS = st.tuples(st.recursive(LEAF_SCHEMAS, _extend, max_leaves=6), st.recursive(LEAF_SCHEMAS, _extend, max_leaves=4)).map(
    lambda p: {"$defs": {"d": p[1]}, "allOf": [p[0]]}
)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=RANDOM_SCHEMAS, data=st.data())
def test_random_schemas_are_sound(schema: Any, data: st.DataObject) -> None:
    try:
        regex = schema_to_regex(schema, max_recursion_depth=1)
    except (SchemaError, SchemaNotSupported, UnsatisfiableConstraint, CompileBudgetExceeded):
        return
    interegular.parse_pattern(regex)
    if len(regex) > 30_000:  # generating from huge regexes is slow; their parts are covered by smaller ones
        return
    validator = validator_for(schema)
    for _ in range(3):
        text = data.draw(st.from_regex(regex, fullmatch=True))
        try:
            errors = list(validator.iter_errors(json.loads(text)))
        except RecursionError:  # e.g. {"$defs": {"d": {"anyOf": [{"$ref": "#/$defs/d"}, ...]}}}: jsonschema loops
            return
        assert not errors, (text, errors[0].message, list(errors[0].absolute_schema_path))


def test_oneof_with_one_implied_branch_keeps_the_others_exact() -> None:
    # (branch 0 always holds, so a valid instance is one where branch 1 does not: no "b")
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"],
              "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}
    dfa = schema_to_dfa(schema)
    assert dfa.accepts(b'{"a": "x"}') and not dfa.accepts(b'{"a": "x", "b": "y"}')


@pytest.mark.parametrize("text", ["", "a", "ab", "a" * 39, "a" * 40, "a" * 41, "aB", "a" * 20 + "1", "ñ" * 40, "ñ" * 41])
def test_pattern_with_a_length_too_long_for_one_automaton_is_a_lazy_term(text: str) -> None:
    # (a base64 pattern with maxLength 21847 in cfn's ImageRecipe: the length automaton is over the
    # state budget, so the length is the term CHAR{lo,hi}, built as generation reaches it; forced
    # here with a small max_states, and compared with the eager automaton)
    import structgen

    tokens = [bytes([b]) for b in range(256)] + [b""]
    vocab = structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1])
    schema = {"type": "string", "pattern": "^[a-zñ]*$", "minLength": 2, "maxLength": 40}
    lazy = structgen.compile_json_schema(schema, vocab, max_states=60)
    eager = structgen.compile_json_schema(schema, vocab)
    want = jsonschema.Draft202012Validator(schema).is_valid(text)
    for spelled in (json.dumps(text, ensure_ascii=False), json.dumps(text)):
        assert eager.accepts_bytes(spelled.encode()) == lazy.accepts_bytes(spelled.encode())
    assert lazy.accepts_bytes(json.dumps(text, ensure_ascii=False).encode()) == want


FOLDED = {"type": "string", "pattern": "^[a-z:]*$|group:Name|group:Type$", "maxLength": 40}


@pytest.mark.parametrize("text", ["", "a" * 40, "a" * 41, "group:Name", "x" * 30 + "group:Name", "x" * 31 + "group:Name",
                                  "!" * 30 + "group:Type", "!" * 31 + "group:Type", "group:Typex", "ñ" * 10 + "group:Name"])
def test_a_length_that_would_multiply_a_patterns_regex_is_intersected(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unanchored pattern under a maxLength folds into one alternative per position (51,856
    characters for cfn's SSM::MaintenanceWindowTarget): past FOLDED_LIMIT the length is the lazy
    intersection instead, exact all the same."""
    import structgen
    from structgen.json_schema import strings
    from structgen.json_schema.ecma_pattern import pattern_regex

    monkeypatch.setattr(strings, "FOLDED_LIMIT", 2000)
    assert len(pattern_regex(FOLDED["pattern"], 0, 40)) > 2000 > len(pattern_regex(FOLDED["pattern"]))
    lengths = []
    monkeypatch.setattr(strings.Strings, "with_length", lambda self, *a, _w=strings.Strings.with_length: lengths.append(a[1:3]) or _w(self, *a))
    tokens = [bytes([b]) for b in range(256)] + [b""]
    vocab = structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1])
    structgen.clear_cache()  # (compiled by an earlier case)
    guide = structgen.compile_json_schema(FOLDED, vocab)
    assert lengths == [(0, 40)]
    want = jsonschema.Draft202012Validator(FOLDED).is_valid(text)
    for spelled in (json.dumps(text, ensure_ascii=False), json.dumps(text)):
        assert guide.accepts_bytes(spelled.encode()) == want, spelled


def test_a_long_string_shares_masks_far_from_its_length_bound() -> None:
    """A pattern with a maxLength is intersected with "char{0,hi}"; far from the bound the length
    cannot kill a token, so positions share one clamped state (one mask); near it, tokens too long
    for what is left are refused, exactly as the byte steps refuse them."""
    import structgen

    tokens = [bytes([b]) for b in range(32, 127)] + [b"a" * 12, b"ab" * 20, b'a"']
    vocab = structgen.Vocabulary.from_bytes([*tokens, None], eos_token_ids=[len(tokens)])
    guide = structgen.compile_json_schema({"type": "string", "pattern": "^[ab]+:[ab]+$", "maxLength": 200}, vocab)
    auto = guide.automaton
    n = guide._index.longest_token
    at = {k: guide.advance(guide.initial_state, [tokens.index(b'"')] + [tokens.index(b"a")] * k) for k in (5, 9, 120, 160, 197)}
    assert auto.clamped(at[5], n) == auto.clamped(at[9], n) != at[5]
    assert auto.clamped(at[160], n) == at[160]  # (near the bound: whole)
    for k, s in at.items():
        allowed = guide.allowed_token_ids(s).tolist()
        assert allowed and all(guide.next_state(s, t) >= 0 for t in allowed), k
        assert (len(tokens) - 2 in allowed) == (k + 40 + 2 <= 200)  # "abab..." then ":b" must still fit


def test_sub_schemas_nested_past_pythons_recursion_limit_are_a_budget_error() -> None:
    """renovate's schema: 300 definitions that each merge the root (``$ref: "#"`` beside
    ``type``) and so reach the next one. Compiling them one inside another goes past Python's
    recursion limit: a budget error that says so, never a ``RecursionError``."""
    from structgen.errors import CompileBudgetExceeded
    from structgen.json_schema.api import schema_to_network

    n = 300
    schema = {"type": "object", "not": {"required": ["zz"]}, "properties": {f"p{i}": {"$ref": f"#/$defs/d{i}"} for i in range(n)},
              "$defs": {f"d{i}": {"$ref": "#", "type": "object"} for i in range(n)}}
    with pytest.raises(CompileBudgetExceeded, match="recursion limit"):
        schema_to_network(schema)


def test_a_sub_schema_leads_back_only_to_targets_that_reach_themselves() -> None:
    """``RefResolver.leads_to`` (the recursion depth a compile is memoised under) answers without a
    search for a target that does not reach itself, and as the search does for the others (the
    ``$ref`` targets inside each place: those a walk of it finds)."""
    from structgen.json_schema.ops import pointer, schema_text, walk
    from structgen.json_schema.refs import RefResolver

    doc = {
        "type": "object",
        "properties": {"root": {"$ref": "#"}, "t": {"$ref": "#/$defs/tree"}, "a": {"$ref": "#/$defs/a"}, "leaf": {"$ref": "#/$defs/leaf"}},
        "$defs": {
            "tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
                                                      "tag": {"$ref": "#/$defs/leaf"}}},
            "a": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "null"}]},
            "b": {"properties": {"next": {"$ref": "#/$defs/a"}, "leaf": {"$ref": "#/$defs/leaf"}}},
            "leaf": {"type": "string", "items": {"$ref": "#/$defs/leaf2"}},
            "leaf2": {"type": "integer"},
        },
    }
    refs = RefResolver(doc)
    targets = ["", "/$defs/tree", "/$defs/a", "/$defs/b", "/$defs/leaf", "/$defs/leaf2"]
    recursive = {t for t in targets if t in refs._closure(t)}
    assert recursive == {"", "/$defs/tree", "/$defs/a", "/$defs/b"}
    for target in targets:
        node = refs._node(tuple(int(x) if x.isdigit() else x for x in target.split("/")[1:]))
        for sub, tokens in walk(node):
            path = target + pointer(tokens)
            text = schema_text(sub)
            inside = {refs.resolve(x["$ref"], path + pointer(t))[1] for x, t in walk(sub) if isinstance(x.get("$ref"), str)}
            assert refs._direct_targets(sub, path, text) == inside, (target, path)
            searched = any(d == target or target in refs._closure(d) for d in inside)
            assert refs.leads_to(sub, path, text, target) == searched, (target, path)
    kids, leaf = doc["$defs"]["tree"]["properties"]["kids"], doc["$defs"]["leaf"]
    assert refs.leads_to(kids, "/$defs/tree/properties/kids", schema_text(kids), "/$defs/tree")
    assert not refs.leads_to(leaf, "/$defs/leaf", schema_text(leaf), "/$defs/leaf")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 11), max_size=4), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_ref_closures_are_the_targets_each_target_reaches(edges: list[list[int]], rnd: Any) -> None:
    """``RefResolver._closure`` (one strongly-connected-components search for every target it
    meets) equals a plain search from each target, whatever order the targets are asked in."""
    from structgen.json_schema.refs import RefResolver

    n = len(edges)
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{j % n}"} for j in out] + [{"type": "null"}]} for i, out in enumerate(edges)}
    refs = RefResolver({"$defs": defs})
    order = list(range(n))
    rnd.shuffle(order)
    for i in order:
        seen: set[int] = set()
        todo = [i]
        while todo:
            for j in edges[todo.pop()]:
                if j % n not in seen:
                    seen.add(j % n)
                    todo.append(j % n)
        assert refs._closure(f"/$defs/d{i}") == {f"/$defs/d{j}" for j in seen}, (edges, i)


def _walk_by_recursion(schema: Any, tokens: tuple = ()) -> Any:
    """The walk's definition, by recursion: a schema, then each keyword's subschemas in the
    order of the keyword tuples."""
    from structgen.json_schema.ops import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUED

    if not isinstance(schema, dict):
        return
    yield schema, tokens
    for key in SCHEMA_VALUED:
        if key in schema:
            yield from _walk_by_recursion(schema[key], tokens + (key,))
    for key in SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                yield from _walk_by_recursion(sub, tokens + (key, name))
    for key in SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                yield from _walk_by_recursion(sub, tokens + (key, i))


_HOLDING_KEYS = ["items", "not", "contains", "additionalProperties", "properties", "$defs", "patternProperties",
                 "allOf", "anyOf", "prefixItems", "oneOf", "enum", "const", "type", "x"]
_schemas = st.recursive(
    st.one_of(st.booleans(), st.integers(), st.just({}), st.just([])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(_HOLDING_KEYS),
                        st.one_of(inner, st.dictionaries(st.sampled_from(["a", "b", "0"]), inner, max_size=3)), max_size=5),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(_schemas)
@example({"oneOf": [{}], "not": {"x": 1}})
@example({"properties": {"b": {}, "a": {"anyOf": [True, {}]}}, "items": {}, "prefixItems": [{}, 3, {}]})
def test_the_walk_meets_every_subschema_in_the_order_of_its_definition(schema: Any) -> None:
    """``ops.walk`` (a stack) yields the very objects, paths and order of the recursive definition,
    whatever a keyword holds (a dict, a list, a scalar) and in whatever order the keys stand."""
    from structgen.json_schema.ops import walk

    assert [(id(s), t) for s, t in walk(schema, ("at",))] == [(id(s), t) for s, t in _walk_by_recursion(schema, ("at",))]


def test_a_schema_with_one_base_uri_resolves_as_the_search_per_place_does() -> None:
    """Where no schema but the root holds an ``$id`` (read off the root's text), every place has
    the root's base URI without a search; each draft 2020-12 suite schema, a few with ``$id``
    inside and some whose text holds ``"$id"`` only as a value, resolve every ``$ref`` and give
    every place the same base as the search per place, and each subschema the same ``$ref``
    targets inside. A schema whose text names no ``$ref`` or anchor has the resources and anchors
    the scan finds."""
    from structgen.errors import SchemaError, SchemaNotSupported
    from structgen.json_schema.dialects import to_2020_12
    from structgen.json_schema.ops import pointer, schema_text, walk
    from structgen.json_schema.refs import RefResolver

    schemas: list[Any] = [
        {"$id": "https://x.test/root.json", "$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}},
        {"$id": "https://x.test/root.json#", "properties": {"$id": {"enum": ["$id"]}, "r": {"$ref": "#/properties/%24id"}}},
        {"$defs": {"a": {"$id": "https://x.test/a.json", "$defs": {"b": {"type": "null"}}, "$ref": "#/$defs/b"}},
         "properties": {"a": {"$ref": "https://x.test/a.json"}, "b": {"$ref": "https://x.test/a.json#/$defs/b"}}},
        {"$id": "https://x.test/", "items": {"$id": "sub/", "$ref": "x.json"}, "$defs": {"x": {"$id": "sub/x.json"}},
         "description": 'a "$id" in a text'},
        {"required": ["$id"], "properties": {"$id": {"type": "string"}}},
        {"properties": {"a": {"$ref": "#/$defs/b"}, "c": {"items": {"$ref": "#/properties/a"}}}, "$defs": {"b": {"type": "integer"}}},
        {"$id": "https://x.test/plain.json", "properties": {"a": {"type": "string"}}},
        {"properties": {"a": {"const": "$ref"}, "b": {"enum": [{"$anchor": "x"}]}}},
        {"$defs": {"a": {"$anchor": "here", "type": "null"}}},
        {"properties": {"b": {"$dynamicAnchor": "d"}}},
    ]
    suite = sorted((SUITES / "draft2020-12").glob("*.json"))  # (none where the suite is not beside the checkout)
    for path in suite:
        schemas += [case["schema"] for case in json.loads(path.read_text())]
    fast = 0
    for schema in schemas:
        schema = to_2020_12(schema, "2020-12")
        try:
            one = RefResolver(schema)
        except (SchemaError, SchemaNotSupported):
            continue
        fast += one._one_base is not None
        if isinstance(schema, dict):  # (a text naming no $ref or anchor is not scanned: the scan finds what it assumes)
            scanned = RefResolver(schema)
            scanned.resources, scanned.anchors = {}, {}
            scanned._scan(schema)
            assert (one.resources, one.anchors) == (scanned.resources, scanned.anchors), schema
        each = RefResolver(schema)
        each._one_base = None
        for sub, tokens in walk(schema):
            path = pointer(tokens)
            assert one.base_at(path) == each.base_at(path), (schema, path)
            if isinstance(sub.get("$ref"), str):
                assert one._target(sub["$ref"], tokens) == each._target(sub["$ref"], tokens), (schema, path)
            text = schema_text(sub)  # (the $ref targets inside: made bottom-up once where there is one base)
            assert one._direct_targets(sub, path, text) == each._direct_targets(sub, path, text), (schema, path)
    assert fast > (100 if suite else 1)  # (most suite schemas have no $id inside; two of those above)


def _array_items_by_recursion(t: Any, elems: list, tail: Any, lo: int, cap: Any) -> Any:
    """``arrays.array_items``'s definition, by recursion over the positions."""
    from structgen.automata.expr import EPSILON

    def after(j: int) -> Any:
        if cap is not None and j >= cap:
            return EPSILON
        if j >= len(elems):
            if tail is None:
                return EPSILON
            need, most = max(0, lo - j), None if cap is None else cap - j
            if j == 0:
                return t.cat(tail, t.rep(t.cat(t.sep, tail), max(need - 1, 0), None if most is None else most - 1))
            return t.rep(t.cat(t.sep, tail), need, most)
        piece = t.cat(elems[j], after(j + 1)) if j == 0 else t.cat(t.sep, elems[j], after(j + 1))
        return piece if j < lo or j == 0 else t.opt(piece)

    return after(0)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 4), st.booleans(), st.integers(0, 5), st.one_of(st.none(), st.integers(0, 6)))
def test_an_array_term_is_its_recursive_definition(positions: int, tail: bool, lo: int, cap: Any) -> None:
    """``array_items`` (a loop from the last position back) makes the very term of its recursive
    definition (terms are hash-consed: equal ids are equal terms), for every count of positions,
    tail or none, and bounds."""
    from structgen.automata.expr import ExprPool
    from structgen.json_schema.arrays import array_items
    from structgen.json_schema.terms import JsonTerms

    t = JsonTerms(ExprPool(), "[ ]?")
    elems = [t.lit(f"e{i}") for i in range(positions)]
    tail_term = t.lit("x") if tail else None
    if cap is not None and not tail:
        cap = min(cap, positions)
    lo = min(lo, positions if not tail else lo, lo if cap is None else cap)  # (as the callers bound it)
    assert array_items(t, elems, tail_term, lo, cap) == _array_items_by_recursion(t, elems, tail_term, lo, cap)


def test_a_compile_leaves_no_frames_to_the_cyclic_collector() -> None:
    """What a compile drops is freed as it goes, not left in cycles for the collector (whose pass
    over them lands on a later step: 10 ms after circle-ci's compile, before): the errors of
    branches and memos are kept without their frames, an object's builders that call each other
    are let go, and an array's positions are a loop. Only the compiler's own few objects remain."""
    import gc

    from structgen.json_schema import schema_to_network

    schema = {
        "type": "object",
        "properties": {
            "a": {"oneOf": [{"type": "string", "minLength": 2}, {"type": "string", "maxLength": 4},
                            {"type": "integer", "minimum": 5, "maximum": 1}, {"type": ["integer", "boolean"], "minimum": 3}]},
            "b": {"type": ["string", "integer"], "minimum": 5, "pattern": "^x"},
            "c": {"anyOf": [{"type": "object", "properties": {"k": {"enum": [1, 2]}}, "required": ["k"]},
                            {"type": "null", "minLength": 3}]},
            "d": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "boolean"},
                  "minItems": 1, "maxItems": 4},
            "e": {"$ref": "#/$defs/tree"},
            "f": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "string"}}, "maxProperties": 1},
        },
        "required": ["a"],
        "$defs": {"tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
    }
    schema_to_network(schema)  # (what a first compile loads and keeps)
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    try:
        schema_to_network(schema)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        kinds = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_on:
            gc.enable()
    assert "frame" not in kinds and "traceback" not in kinds
    assert kinds.count("function") <= 5 and len(kinds) < 200, sorted(set(kinds))  # (before: 11 functions, 396 objects)


def test_a_schema_changed_in_place_compiles_as_it_is_now() -> None:
    """The text a compile's key is made of is kept for the compile's later readers (the
    metaschema check, the resolver), never for a later compile: a schema dict changed in place
    and compiled again is compiled as it is now."""
    import structgen

    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
    schema: dict[str, Any] = {"type": "string", "maxLength": 1}
    first = structgen.compile_json_schema(schema, vocab)
    schema["type"], schema["properties"] = "object", {"a": {"$ref": "#/$defs/n"}}
    schema["$defs"] = {"n": {"type": "integer"}}
    schema["required"] = ["a"]
    second = structgen.compile_json_schema(schema, vocab)
    assert first is not second
    assert second.accepts_bytes(b'{"a": 1}') and not second.accepts_bytes(b'"x"') and first.accepts_bytes(b'"x"')
