"""Schema keywords compiled through automaton algebra (not, if/then/else, overlapping oneOf, allOf
by intersection, contains counts, number bounds and multipleOf, the object automaton), checked
against ``jsonschema``: every string the automaton accepts parses and is valid (random walks on
the automaton, and random instances), and targeted pitfalls."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import structgen
from structgen.errors import CompileBudgetExceeded, SchemaNotSupported, UnsatisfiableConstraint
from structgen.automata.dfa import ByteDFA
from structgen.json_schema import schema_to_dfa
from structgen.json_schema.keywords import implied_by

ANY = dict(key_order="any", extra_properties=True)


def walk(dfa: ByteDFA, rng: random.Random, max_len: int = 60) -> bytes:
    """A random accepted string: random bytes while far from the budget, then the shortest way out."""
    out = bytearray()
    state = 0
    dist = dfa.distances
    while True:
        moves = [(b, int(dfa.transitions[state, dfa.byte_classes[b]])) for b in range(256)]
        moves = [(b, t) for b, t in moves if t >= 0]
        if dfa.finals[state] and (not moves or rng.random() < 0.25 or len(out) >= max_len):
            return bytes(out)
        if len(out) >= max_len:
            moves = [m for m in moves if dist[m[1]] < dist[state]] or moves
        b, state = rng.choice(moves)
        out.append(b)


def assert_sound(schema: object, dfa: ByteDFA, seed: int, n: int = 40) -> None:
    rng = random.Random(seed)
    validator = jsonschema.Draft202012Validator(schema)
    for _ in range(n):
        text = walk(dfa, rng)
        value = json.loads(text.decode("utf-8"))
        try:
            ok = validator.is_valid(value)
        except OverflowError:  # (jsonschema's multipleOf on a number like 1e400, which loads as inf)
            continue
        assert ok, (schema, text)


def accepts(dfa: ByteDFA, value: object) -> bool:
    texts = {json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=False, separators=(",", ":"))}
    return any(dfa.accepts(t.encode()) for t in texts)


# -- random small schemas --------------------------------------------------------------------

SCALARS = st.sampled_from([0, 1, 2, -1, 1.5, 2.0, "a", "b", "", True, False, None])
LEAVES = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(["integer", "number", "string", "boolean", "null", "object", "array"])),
    st.builds(lambda v: {"const": v}, SCALARS),
    st.builds(lambda vs: {"enum": vs}, st.lists(SCALARS, min_size=1, max_size=3)),
    st.builds(lambda k, v: {k: v}, st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
              st.sampled_from([0, 1, -1, 1.5, 2, -0.5])),
    st.builds(lambda m: {"multipleOf": m}, st.sampled_from([2, 3, 0.5, 1.5])),
    st.builds(lambda n: {"maxLength": n}, st.integers(0, 2)),
    st.builds(lambda n: {"minItems": n}, st.integers(0, 2)),
    st.builds(lambda r: {"required": r}, st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2, unique=True)),
)


def _combinators(children: st.SearchStrategy, object_values: bool = True) -> list[st.SearchStrategy]:
    """Schemas over ``children``; ``object_values=False`` leaves out schemas on object values
    (``properties`` / ``additionalProperties``)."""
    out = [
        st.builds(lambda x: {"not": x}, children),
        st.builds(lambda xs: {"allOf": xs}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda xs: {"oneOf": xs}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, children, children, children),
        st.builds(lambda x: {"items": x}, children),
        st.builds(lambda x, n: {"contains": x, "maxContains": n}, children, st.integers(0, 2)),
    ]
    if object_values:
        out += [
            st.builds(lambda k, x: {"properties": {k: x}}, st.sampled_from(["a", "b"]), children),
            st.builds(lambda x: {"additionalProperties": x, "properties": {"a": {"type": "integer"}}}, children),
        ]
    return out


def combine(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(*_combinators(children))


SCHEMAS = st.recursive(LEAVES, combine, max_leaves=4)
INSTANCES = st.recursive(
    SCALARS,
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c"]), c, max_size=3)),
    max_leaves=6,
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(SCHEMAS, st.lists(INSTANCES, min_size=5, max_size=10), st.integers(0, 10**6))
def test_accepted_strings_are_valid(schema: dict, instances: list, seed: int) -> None:
    try:
        dfa = schema_to_dfa(schema, max_recursion_depth=1, **ANY)
    except (SchemaNotSupported, UnsatisfiableConstraint):
        return
    except Exception as e:  # budget: fine to refuse
        if type(e).__name__ == "CompileBudgetExceeded":
            return
        raise
    validator = jsonschema.Draft202012Validator(schema)
    for value in instances:
        if accepts(dfa, value):
            assert validator.is_valid(value), (schema, value)
    assert_sound(schema, dfa, seed, n=15)




def _has_whole_float(value: object) -> bool:
    if isinstance(value, float):
        return value == int(value)
    if isinstance(value, list):
        return any(_has_whole_float(v) for v in value)
    if isinstance(value, dict):
        return any(_has_whole_float(v) for v in value.values())
    return False


def _subtractable(children: st.SearchStrategy) -> st.SearchStrategy:
    """Schemas whose over-approximation is exact (see structgen.json_schema.universe): no schema on
    object *values* (``properties`` / ``additionalProperties``), which a positive side with a
    duplicate key could satisfy after all; ``required`` (a key's presence) is exact."""
    return st.one_of(*_combinators(children, object_values=False))


EXACT_SCHEMAS = st.recursive(
    st.recursive(LEAVES, _subtractable, max_leaves=3),
    lambda c: st.one_of(
        st.builds(lambda xs: {"allOf": xs}, st.lists(c, min_size=1, max_size=2)),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(c, min_size=1, max_size=2)),
        st.builds(lambda k, x: {"properties": {k: x}}, st.sampled_from(["a", "b"]), c),
        st.builds(lambda x: {"additionalProperties": x, "properties": {"a": {"type": "integer"}}}, c),
        st.builds(lambda x: {"items": x}, c),
    ),
    max_leaves=4,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(EXACT_SCHEMAS, st.lists(INSTANCES.filter(lambda v: not _has_whole_float(v)), min_size=5, max_size=10))
# issue 19: maxContains 0 below the default minContains 1 makes "contains" fail on every array, so
# "not" accepts every array (the over-approximation of "contains" counted one item at least)
@example({"not": {"contains": {"type": "integer"}, "maxContains": 0}}, [[2, [0]], [2], [], [[0]], 5])
# found by the same test while taking the compiler apart: 0 is valid under both inner branches, so
# the inner oneOf rejects it and "not" must accept it (its over-approximation now leaves out what
# two branches accept)
@example({"anyOf": [{"type": "string"}, {"oneOf": [{"contains": {"multipleOf": 3}, "maxContains": 0},
                                                   {"oneOf": [{"maxLength": 0}, {"enum": [0]}]}]}]}, [0, 1, "", [3], None])
@pytest.mark.slow
def test_accept_iff_valid_within_the_canonical_form(schema: dict, instances: list) -> None:
    """Complete, not only sound: a canonical instance (json.dumps spelling, keys in any order,
    no exponent, no whole float) is accepted exactly when jsonschema calls it valid. Object
    value schemas stay out of subtractions: there the language is an under-approximation
    (``{"not": {"additionalProperties": {"type": "integer"}}}`` does not write ``{"b": []}``,
    as a canonical positive side may repeat a key and end valid for the negated schema)."""
    validator = jsonschema.Draft202012Validator(schema)
    try:
        dfa = schema_to_dfa(schema, max_recursion_depth=3, **ANY)
    except UnsatisfiableConstraint:
        assert not any(validator.is_valid(v) for v in instances), schema
        return
    except SchemaNotSupported:
        return
    except Exception as e:
        if type(e).__name__ == "CompileBudgetExceeded":
            return
        raise
    for value in instances:
        assert accepts(dfa, value) == validator.is_valid(value), (schema, value)


# -- contains counts and oneOf under not -----------------------------------------------------

CONTAINS_COUNTS = [
    {"not": {"contains": {"type": "integer"}, "maxContains": 0}},  # bounds crossed: no array valid
    {"not": {"contains": {"type": "integer"}, "minContains": 3, "maxContains": 2}},
    {"not": {"contains": {"type": "integer"}, "maxContains": 1}},  # arrays with two integers or more
    {"not": {"contains": {"type": "integer"}, "minContains": 2}},  # arrays with at most one integer
    {"not": {"contains": {"type": "integer"}, "minContains": 0, "maxContains": 1}},
    {"type": "array", "not": {"contains": {"const": 1}, "minContains": 2, "maxContains": 3}},
    {"not": {"oneOf": [{"maxLength": 0}, {"enum": [0]}]}},  # 0 is under both branches: oneOf fails on it
    {"not": {"oneOf": [{"type": "array"}, {"maxItems": 1}, {"contains": {"const": 1}}]}},
]
UNDER_NOT = [0, "", None, [], [2], [2, [0]], [[0]], ["a"], [1, 2], [1, 2, 3], [1, 1, 1, 1], ["a", 1, "b"], [[1], [2]], 5, "a", {}]


@pytest.mark.slow
@pytest.mark.parametrize("schema", CONTAINS_COUNTS)
def test_not_of_a_contains_count_or_a_one_of_accepts_exactly_the_valid_instances(schema: dict) -> None:
    """The over-approximation of ``contains`` counts at least ``minContains`` items in its own
    over-approximation and at most ``maxContains`` in its language, and covers no array when
    ``maxContains`` is below ``minContains``; that of ``oneOf`` leaves out what two branches
    accept: ``not`` of them is exact here."""
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for value in UNDER_NOT:
        assert accepts(dfa, value) == validator.is_valid(value), (schema, value)
    assert_sound(schema, dfa, 0)


# -- exactness on fragments ------------------------------------------------------------------

EXACT = [
    {"not": {"type": "integer"}},
    {"not": {"const": 1}},
    {"if": {"minimum": 0}, "then": {"multipleOf": 2}, "else": {"maximum": -10}},
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
    {"type": "number", "exclusiveMinimum": 1.1, "maximum": 3},
    {"type": "integer", "multipleOf": 3},
    {"type": "array", "contains": {"const": 1}, "minContains": 1, "maxContains": 2},
]
SAMPLES = [0, 1, 2, 3, 4, 6, -1, -12, 1.5, 2.5, 1.1, 1.2, 9, "a", None, True, [], [1], [1, 1], [1, 1, 1], [2, 1], {}]


@pytest.mark.slow
@pytest.mark.parametrize("schema", EXACT)
def test_exact_fragments_agree_with_jsonschema(schema: dict) -> None:
    """Sound, and complete within the canonical form (no exponent, json.dumps spelling)."""
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for value in SAMPLES:
        assert accepts(dfa, value) == validator.is_valid(value), (schema, value)
    assert_sound(schema, dfa, 0)


# -- pitfalls --------------------------------------------------------------------------------


def test_not_const_one_rejects_every_spelling_of_one() -> None:
    dfa = schema_to_dfa({"not": {"const": 1}})
    for text in (b"1", b"1.0", b"1.00", b"1e0", b"10e-1", b"1E0"):
        assert not dfa.accepts(text), text
    assert dfa.accepts(b"2") and dfa.accepts(b"1.5") and dfa.accepts(b'"1"')


def test_numbers_with_an_exponent_stay_where_no_subtracted_schema_allows_a_number() -> None:
    """Kubernetes' ``Quantity``: a small float, as ``json.dumps`` writes it, is a valid number
    (no string branch holds it); where a subtracted schema allows numbers, none is kept."""
    quantity = {"oneOf": [{"type": ["string", "null"]}, {"type": ["number", "null"]}]}
    dfa = schema_to_dfa(quantity)
    assert all(dfa.accepts(t) for t in (b"4.143832727207198e-120", b"1E+5", b"-2e3", b"3", b'"1e5"'))
    assert not dfa.accepts(b"null")
    for schema in ({"not": {"const": 100}}, {"type": "number", "not": {"minimum": 5}}, {"oneOf": [{"type": "number"}, {"minimum": 0}]}):
        dfa = schema_to_dfa(schema)
        assert not any(dfa.accepts(t) for t in (b"1e2", b"1E-3", b"-5e0")), schema


def test_bounds_at_zero_hold_numbers_with_an_exponent_by_their_sign() -> None:
    """``minimum: 0`` holds ``1e-05`` (``json.dumps(0.00001)``); a strict bound at 0 holds no
    number that a float rounds to 0; bounds beyond 0, or on both sides, hold none."""
    cases = {
        (("minimum", 0),): ([b"1e-05", b"1e+16", b"0e5", b"1e-400", b"2.5E3"], [b"-1e-05"]),
        (("exclusiveMinimum", 0),): ([b"1e-05", b"1e-323", b"0.000000000000001e-308", b"1e999"], [b"0e5", b"0.0e1", b"1e-400", b"1e-324", b"0.000000000000001e-309", b"-1e-05"]),
        (("maximum", 0),): ([b"-1e-05", b"-2.5E3"], [b"1e-05"]),
        (("exclusiveMaximum", 0), ("minimum", -5)): ([], [b"-1e-05", b"-1e0"]),
        (("minimum", 1),): ([], [b"1e-05", b"5e-1"]),
    }
    for bounds, (valid, invalid) in cases.items():
        dfa = schema_to_dfa({"type": "number", **dict(bounds)})
        assert all(dfa.accepts(t) for t in valid) and not any(dfa.accepts(t) for t in invalid), bounds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e2, -1e-3, 5e300, 1e16]), min_size=4, max_size=8))
def test_numbers_with_an_exponent_are_accepted_only_when_valid(schema: dict, numbers: list) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    try:
        dfa = schema_to_dfa(schema, max_recursion_depth=3, **ANY)
    except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
        return
    for x in numbers:
        for value in (x, [x], {"a": x}):
            text = json.dumps(value)
            if dfa.accepts(text.encode()):
                try:
                    assert validator.is_valid(value), (schema, text)
                except OverflowError:  # (jsonschema's multipleOf on a huge float)
                    pass


def test_not_integer_rejects_whole_floats() -> None:
    dfa = schema_to_dfa({"not": {"type": "integer"}})
    assert not dfa.accepts(b"1.0") and not dfa.accepts(b"1") and not dfa.accepts(b"1.00000000000000001")
    assert dfa.accepts(b"1.5") and dfa.accepts(b"null")


@pytest.mark.slow
def test_not_properties_rejects_objects_the_inner_schema_accepts() -> None:
    dfa = schema_to_dfa({"not": {"properties": {"foo": {"type": "string"}}}}, **ANY)
    assert not accepts(dfa, {"foo": "x", "bar": 1})
    assert not accepts(dfa, {"bar": 1})
    assert not accepts(dfa, {})
    assert not dfa.accepts(b'{"foo": 1, "foo": "x"}')  # json.loads keeps the last duplicate
    assert not dfa.accepts(b'{"\\u0066oo": 1}') or True  # (non-canonical keys are never emitted)
    assert accepts(dfa, {"foo": 1})
    assert accepts(dfa, {"bar": 1, "foo": 2})


@pytest.mark.slow
def test_not_required_in_any_key_order() -> None:
    dfa = schema_to_dfa({"type": "object", "not": {"required": ["a", "b"]}}, **ANY)
    assert not accepts(dfa, {"b": 1, "a": 2})
    assert not accepts(dfa, {"a": 1, "c": 0, "b": 2})
    assert accepts(dfa, {"a": 1, "c": 2})


@pytest.mark.slow
def test_allof_that_does_not_merge_is_an_intersection() -> None:
    dfa = schema_to_dfa({"allOf": [{"multipleOf": 2}, {"multipleOf": 3}], "type": "integer"})
    assert dfa.accepts(b"12") and not dfa.accepts(b"4") and not dfa.accepts(b"9")


@pytest.mark.slow
def test_if_then_else_and_oneof_overlapping() -> None:
    dfa = schema_to_dfa({"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"type": "string"}})
    assert dfa.accepts(b"7") and not dfa.accepts(b"3") and dfa.accepts(b'"x"') and not dfa.accepts(b"1.5") and not dfa.accepts(b"3.0")
    dfa = schema_to_dfa({"oneOf": [{"type": "integer"}, {"minimum": 2}]})
    assert dfa.accepts(b"1") and dfa.accepts(b"2.5") and not dfa.accepts(b"3") and not dfa.accepts(b"3.0")


@pytest.mark.slow
def test_object_automaton_options() -> None:
    schema = {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}
    strict = schema_to_dfa(schema)
    free = schema_to_dfa(schema, **ANY)
    assert accepts(strict, {"a": 1, "b": "x"}) and not accepts(strict, {"b": "x", "a": 1})
    assert accepts(free, {"b": "x", "a": 1}) and accepts(free, {"c": [1], "a": 1})
    assert not accepts(free, {"a": 1, "a": "x"} | {"b": 2})
    assert not free.accepts(b'{"a": 1, "a": 2}')  # a declared key is never repeated
    with pytest.raises(ValueError, match="key_order"):
        schema_to_dfa(schema, key_order="sorted")


@pytest.mark.slow
def test_pattern_properties_property_names_and_counts() -> None:
    schema = {"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "string"},
              "propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 2}
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for value in ({"x1": 1}, {"ab": "s", "x": 2}, {}, {"x1": "s"}, {"abcd": "s"}, {"a": "1", "b": "2", "c": "3"}):
        assert accepts(dfa, value) == validator.is_valid(value), value
    assert_sound(schema, dfa, 1)


@pytest.mark.slow
def test_dependencies() -> None:
    schema = {"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"properties": {"d": {"type": "integer"}}}}}
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for value in ({"a": 1}, {"a": 1, "b": 2}, {"c": 1, "d": "x"}, {"c": 1, "d": 2}, {"d": "x"}, 3):
        assert accepts(dfa, value) == validator.is_valid(value), value
    assert_sound(schema, dfa, 2)


def test_refusals() -> None:
    with pytest.raises(SchemaNotSupported, match="multipleOf"):
        schema_to_dfa({"multipleOf": 0.1})
    with pytest.raises(UnsatisfiableConstraint):
        schema_to_dfa({"type": "array", "contains": {"type": "string"}, "minContains": 3, "maxContains": 2})


@pytest.mark.slow
def test_unevaluated_properties_with_branches() -> None:
    schema = {
        "type": "object", "properties": {"foo": {"type": "string"}}, "unevaluatedProperties": False,
        "anyOf": [{"properties": {"bar": {"const": "bar"}}, "required": ["bar"]},
                  {"properties": {"baz": {"const": "baz"}}, "required": ["baz"]}],
    }
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for value in ({"foo": "f", "bar": "bar"}, {"foo": "f", "bar": "bar", "baz": "baz"}, {"bar": "bar", "quux": 1}, {"foo": "f"}):
        assert accepts(dfa, value) == validator.is_valid(value), value
    schema = {"if": {"properties": {"foo": {"const": "then"}}, "required": ["foo"]}, "then": {"required": ["bar"]},
              "else": {"properties": {"baz": {}}}, "unevaluatedProperties": False}
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for value in ({"foo": "then", "bar": 1}, {"baz": 1}, {"foo": "else", "baz": 1}, {"foo": "then"}):
        assert accepts(dfa, value) == validator.is_valid(value), value
    assert_sound(schema, dfa, 3)


LENGTHS = [
    ({"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "minLength": 2, "maxLength": 5},
     ["ab", "a-b", "a--bc", "abcde", "abcdef", "a", "a-", "-ab", "A1"]),
    ({"type": "string", "pattern": "^(ab|c)+$", "maxLength": 3}, ["ab", "c", "abc", "cab", "ccc", "abab", "cccc", ""]),
    ({"type": "string", "format": "date-time", "maxLength": 20},
     ["2026-11-23T10:00:00Z", "2026-11-23T10:00:00.5Z", "2026-11-23T10:00:00+01:00"]),
    ({"type": "string", "format": "uri", "minLength": 10}, ["http://a.b", "http://ab.cd", "a:b"]),
]


@pytest.mark.parametrize(("schema", "values"), LENGTHS)
def test_pattern_and_format_with_lengths_are_intersections(schema: dict, values: list) -> None:
    """A length the pattern's repetitions cannot absorb: the automata are intersected, exactly."""
    dfa = schema_to_dfa(schema)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for value in values:
        assert accepts(dfa, value) == validator.is_valid(value), (schema, value)
    assert_sound(schema, dfa, 1, n=20)


UNIQUE = [
    {"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True},
    {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 2},
    {"type": "array", "prefixItems": [{"const": 1}], "items": {"enum": [1, 2, "a", {"k": 1}]}, "uniqueItems": True},
    {"type": "array", "items": {"enum": [1, True, None, [1]]}, "uniqueItems": True, "maxItems": 3},
]
UNIQUE_SAMPLES = [[], [1], [1, 2], [1, 1], [2, 1, 3], [1, 2, 1], [True, False], [True, True], [False], [1, "a"],
                  [1, 2, "a"], [1, "a", "a"], [1, 2, 3, 1], [1, True], [1, True, None], [None, None], [[1], [1]],
                  [1, {"k": 1}, {"k": 1}], [1, {"k": 1}, 2], [[1], 1, True]]


@pytest.mark.parametrize("schema", UNIQUE)
def test_unique_items_over_finite_item_values(schema: dict) -> None:
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for value in UNIQUE_SAMPLES:
        assert accepts(dfa, value) == validator.is_valid(value), (schema, value)
    assert_sound(schema, dfa, 2, n=20)


def test_unique_items_over_free_items_is_refused() -> None:
    with pytest.raises(SchemaNotSupported) as info:
        schema_to_dfa({"type": "array", "items": {"type": "integer", "maximum": 3}, "uniqueItems": True})
    assert info.value.keyword == "uniqueItems" and info.value.path == "/uniqueItems"


# -- oneOf branches that follow from the rest of the schema ------------------------------------------

_TYPES = st.sampled_from(["integer", "number", "string", "object", "null"])
_SMALL_SCHEMAS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(_TYPES, st.lists(_TYPES, min_size=1, max_size=3, unique=True)),
        "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True),
    },
)


@settings(max_examples=300, deadline=None)
@given(_SMALL_SCHEMAS, _SMALL_SCHEMAS, st.lists(INSTANCES, min_size=5, max_size=10))
def test_implied_branches_hold_for_every_instance_of_the_rest(rest: dict, branch: dict, instances: list) -> None:
    # (implied_by is what lets a oneOf be called unsatisfiable: it must never claim too much)
    if implied_by(rest, branch):
        for v in [*instances, {"a": 1, "b": 2, "c": 3}, {"a": 1}, 1, 1.5, "s", None, {}]:
            if jsonschema.Draft202012Validator(rest).is_valid(v):
                assert jsonschema.Draft202012Validator(branch).is_valid(v), (rest, branch, v)


def test_a_sub_schema_reached_many_ways_compiles_once() -> None:
    """Definitions that each use the next two have 2**depth chains of $refs to the end; the
    algebra inlines every one, but a sub-schema's term depends on its text and on the $ref
    targets it may enter again, not on its path or the chain that led to it: each definition
    compiles once."""
    from structgen.json_schema import dispatch

    depth = 12
    node = {"type": "object", "properties": {"a": {"$ref": "#/$defs/d{}"}, "b": {"$ref": "#/$defs/e{}"}}}
    defs = {f"{x}{i}": json.loads(json.dumps(node).replace("{}", str(i + 1))) | {"title": x} for i in range(depth) for x in "de"}
    defs[f"d{depth}"] = defs[f"e{depth}"] = {"type": "string", "maxLength": 3}  # (d12 is reached by 2**11 chains of $refs)
    defs["d0"]["required"] = ["a"]
    schema = {"$defs": defs, "oneOf": [{"$ref": "#/$defs/d0"}, {"$ref": "#/$defs/e0", "required": ["b"]}]}  # (overlapping: the algebra)
    counted = []
    original = dispatch.Universe.over_typed

    def counting(self, s, path, refs):  # type: ignore[no-untyped-def]
        counted.append(path)
        return original(self, s, path, refs)

    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(32, 127)] + [None], eos_token_ids=[95])
    dispatch.Universe.over_typed = counting  # type: ignore[method-assign]
    try:
        guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    finally:
        dispatch.Universe.over_typed = original  # type: ignore[method-assign]
    assert len(counted) < 20 * depth, len(counted)

    def reads(text: bytes) -> int:
        return guide.advance(guide.initial_state, [vocab.tokens.index(bytes([b])) for b in text])

    assert guide.is_final(reads(b'{"a":{"b":{}}}')) and guide.is_final(reads(b'{"b":{}}'))
    assert not guide.is_final(reads(b'{"a":{},"b":{}}'))  # (both branches)
    assert reads(b'{"a":"') < 0


@pytest.mark.slow
def test_an_over_approximation_is_intersected_once_and_not_searched_part_by_part() -> None:
    """An object's over-approximation is one intersection of its parts (a part per property),
    left for the subtraction that uses it to search: searching it after each part cost a
    liveness search per property (3.9 -> 1.0 s of liveness searches over the real-world sample)."""
    from structgen.automata.expr import KINDS, ExprPool

    names = [f"p{i}" for i in range(8)]
    negated = {"properties": {n: {"type": "integer"} for n in names}, "required": names[:3]}
    schema = {"type": "object", "not": negated}
    widest = []
    original = ExprPool.liveness

    def counting(self, e, limit=20_000):  # type: ignore[no-untyped-def]
        node = self.node(e)
        widest.append(len(node[1]) if node[0] == KINDS["and"] else 1)
        return original(self, e, limit)

    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(32, 127)] + [None], eos_token_ids=[95])
    ExprPool.liveness = counting  # type: ignore[method-assign]
    try:
        guide = structgen.compile_json_schema(schema, vocab, whitespace="", **ANY)
    finally:
        ExprPool.liveness = original  # type: ignore[method-assign]
    assert widest and max(widest) <= 4, sorted(widest)[-5:]  # (before: a search after each part, up to 10 parts)
    validator = jsonschema.Draft202012Validator(schema)
    for value in ({"p0": 1, "p1": 2, "p2": 3}, {"p0": 1, "p1": 2}, {"p0": 1, "p1": 2, "p2": "x"}, {}, {"p0": 1, "p1": 2, "p2": 3, "q": 1}):
        text = json.dumps(value, separators=(",", ":")).encode()
        state = guide.advance(guide.initial_state, [vocab.tokens.index(bytes([b])) for b in text])
        assert (state >= 0 and guide.is_final(state)) == validator.is_valid(value), value


_KEYS = ["a", "ab", "b", "xa", "xb"]
_VALUES = st.sampled_from([{"type": "integer"}, {"minimum": 3}, {"type": "string"}, False, True])
_OBJECT_PARTS = st.fixed_dictionaries({}, optional={
    "properties": st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=3),
    "patternProperties": st.dictionaries(st.sampled_from(["^x", "b$", "^a"]), _VALUES, max_size=2),
    "additionalProperties": st.sampled_from([False, True, {"type": "integer"}]),
})


@settings(max_examples=300, deadline=None)
@given(a=_OBJECT_PARTS, b=_OBJECT_PARTS)
def test_objects_with_pattern_properties_merge_exactly_or_clash(a: dict, b: dict) -> None:
    """``allOf`` of object schemas with ``patternProperties`` merges into one schema that keeps
    its meaning (compose-spec: ``x-`` extension patterns beside another schema's properties), or
    clashes (then the automata are intersected). These keywords judge each key on its own, so
    objects of one key tell the schemas apart."""
    from structgen.json_schema.ops import MergeClash, merge

    try:
        merged = merge(a, b, "")
    except MergeClash:
        return
    both, one = jsonschema.Draft202012Validator({"allOf": [a, b]}), jsonschema.Draft202012Validator(merged)
    for instance in [{k: v} for k in [*_KEYS, "c"] for v in (1, 5, "s")]:
        assert one.is_valid(instance) == both.is_valid(instance), (merged, instance)


def test_pattern_properties_merge_beside_unevaluated_properties() -> None:
    """The ``unevaluatedProperties: false`` of an ``allOf`` of schemas with ``x-`` patterns (compose-spec's service)."""
    schema = {"allOf": [{"type": "object", "properties": {"image": {"type": "string"}}, "patternProperties": {"^x-": {}}},
                        {"type": "object", "properties": {"deploy": {"type": "integer"}}, "patternProperties": {"^x-": {}}}],
              "unevaluatedProperties": False}
    dfa = schema_to_dfa(schema, **ANY)
    for text, valid in [('{"image":"a","deploy":1}', True), ('{"x-y":[1],"deploy":2}', True), ('{"other":1}', False),
                        ('{"image":1}', False), ('{"deploy":"a"}', False)]:
        assert dfa.accepts(text.encode()) == valid == jsonschema.Draft202012Validator(schema).is_valid(json.loads(text)), text


_CLOSED = st.builds(
    lambda names, required, extra: {"type": "object", "additionalProperties": False,
                                    "properties": {k: extra for k in names}, "required": sorted(set(required) & set(names))},
    st.sets(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=2),
    st.sets(st.sampled_from(["a", "b", "c", "d"]), max_size=1),
    st.sampled_from([{"type": "integer"}, True]),
)


@settings(max_examples=60, deadline=None)
@given(branches=st.lists(_CLOSED, min_size=2, max_size=3))
def test_one_of_closed_objects_that_share_only_the_empty_object(branches: list) -> None:
    """``oneOf`` of objects with ``additionalProperties: false`` (bitbucket-pipelines' step /
    parallel / stage items): where their allowed keys have nothing in common they may share only
    ``{}``, which they are made to refuse when two of them accept it; the rest stays a union."""
    schema = {"oneOf": branches}
    try:
        dfa = schema_to_dfa(schema, **ANY)
    except (SchemaNotSupported, UnsatisfiableConstraint):
        return
    validator = jsonschema.Draft202012Validator(schema)
    for instance in [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}, {"c": "x"}, {"d": 2, "c": 1}, {"a": 1, "d": 1}, 1, []]:
        text = json.dumps(instance, separators=(",", ":"))
        assert dfa.accepts(text.encode()) == validator.is_valid(instance), (branches, text)


_OUTCOME = st.sampled_from([{"required": ["x"]}, {"properties": {"x": {"type": "integer"}}}, {"maxProperties": 2}, True, False,
                            {"properties": {"y": False}}])
_CONDITIONAL = st.builds(
    lambda c, then, other, required: {"if": {"properties": {"t": {"const": c}}, **({"required": ["t"]} if required else {})},
                                      "then": then, **({} if other is None else {"else": other})},
    st.sampled_from(["a", "b", 1]), _OUTCOME, st.one_of(st.none(), _OUTCOME), st.booleans(),
)


@settings(max_examples=80, deadline=None)
@given(chain=st.lists(_CONDITIONAL, min_size=2, max_size=3), rest=st.sampled_from([{}, {"type": "object"}, {"required": ["t"]}]),
       own=st.booleans())
def test_if_chains_on_one_property_are_a_union_of_disjoint_branches(chain: list, rest: dict, own: bool) -> None:
    """``if`` / ``then`` / ``else`` chains that test one property against constants (github-issue-forms'
    form items) are rewritten as disjoint branches: accepted exactly where ``jsonschema`` says valid."""
    from structgen.json_schema.discriminators import if_chain_union

    required = {"required" in c["if"] for c in chain}
    schema = {**rest, **(chain[0] if own else {}), **({"allOf": chain[1:] if own else chain} if len(chain) > int(own) else {})}
    if len(required) > 1:
        assert if_chain_union(schema) is None
        return
    assert if_chain_union(schema) is not None
    _agrees_with_jsonschema(schema, [{}, {"t": "a"}, {"t": "b", "x": 1}, {"t": 1, "x": "s"}, {"t": "c", "x": 2},
                                     {"x": 1, "y": 2, "t": "a"}, {"x": 1}, {"t": "a", "x": 1, "y": 1}, 3, "a", [], None])


def _agrees_with_jsonschema(schema: dict, instances: list) -> None:
    """The schema's automaton (none where it is unsatisfiable) accepts exactly the ``instances``
    that ``jsonschema`` calls valid."""
    try:
        dfa = schema_to_dfa(schema, **ANY)
    except UnsatisfiableConstraint:
        dfa = None
    validator = jsonschema.Draft202012Validator(schema)
    for instance in instances:
        text = json.dumps(instance, separators=(",", ":"))
        assert (dfa is not None and dfa.accepts(text.encode())) == validator.is_valid(instance), (schema, text)


@pytest.mark.parametrize("branches", [
    # gitlab-ci's allow_failure: a required property of disjoint types
    [{"type": "boolean"}, {"type": "object", "required": ["c"], "properties": {"c": {"type": "integer"}}},
     {"type": "object", "required": ["c"], "properties": {"c": {"type": "array", "items": {"type": "integer"}}}}],
    # gitlab-ci's job_template: a required constant the other branch's not excludes
    [{"properties": {"w": {"enum": ["d"]}}, "required": ["w", "s"]}, {"properties": {"w": {"not": {"enum": ["d"]}}}}],
    # bitbucket-pipelines' image: a required key the other branch forbids ({"not": {}}, false)
    [{"type": "object", "properties": {"a": {"not": {}}, "b": False}},
     {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}],
    [{"type": "object", "properties": {"b": False}}, {"type": "object", "required": ["b"]}],
    # a required key the other branch's closed object does not allow
    [{"type": "object", "required": ["a"]}, {"type": "object", "properties": {"b": True}, "additionalProperties": False}],
    # snapcraft: a oneOf whose branches all require a key with constants (lifted), beside another constant
    [{"type": "object", "required": ["w"], "properties": {"w": {"const": "c"}}},
     {"oneOf": [{"type": "object", "required": ["w", "s"], "properties": {"w": {"const": "d"}, "s": {"const": 1}}},
                {"type": "object", "required": ["w", "s"], "properties": {"w": {"const": "d"}, "s": {"const": 2}}}]}],
    # snapcraft's baseless projects: a oneOf of closed objects (their keys lifted) beside a required key
    [{"type": "object", "required": ["w"]},
     {"oneOf": [{"type": "object", "required": ["s"], "properties": {"s": {"const": 1}}, "additionalProperties": False},
                {"type": "object", "required": ["s"], "properties": {"s": {"const": 2}, "c": True}, "additionalProperties": False}]}],
])
def test_one_of_branches_proved_disjoint_by_their_required_properties(branches: list) -> None:
    from structgen.json_schema.shapes import check_disjoint

    rest = {} if branches[0].get("type") else {"type": "object"}
    check_disjoint(rest, branches, "", resolve=None)  # (a plain union: no subtraction)
    schema = {**rest, "oneOf": branches}
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for instance in [True, {}, {"c": 1}, {"c": [1]}, {"c": "x"}, {"w": "d", "s": 1}, {"w": "d"}, {"w": "e"}, {"w": "e", "s": 1},
                     {"a": 1}, {"b": 1}, {"a": 1, "b": 1}, 3, {"w": "c"}, {"w": "d", "s": 2}, {"w": "d", "s": 3}, {"s": 1},
                     {"s": 2, "c": 0}, {"w": 1, "s": 1}]:
        text = json.dumps(instance, separators=(",", ":"))
        assert dfa.accepts(text.encode()) == validator.is_valid(instance), text


@pytest.mark.parametrize("schema", [
    # github-workflows' step: one of uses / run / wait
    {"type": "object", "properties": {"uses": {"type": "string"}, "run": {"type": "string"}, "wait": True, "id": True},
     "oneOf": [{"type": "object", "properties": {"uses": True}, "required": ["uses"]}, {"required": ["run"]},
               {"properties": {"wait": True}, "required": ["wait"]}]},
    # dependabot's directories / directory: the branch names the key's own schema
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
     "oneOf": [{"properties": {"a": {"$ref": "#/properties/a"}}, "required": ["a"]}, {"required": ["b"]}]},
    # no type on the parent: a non-object meets every branch, so none is valid
    {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
])
def test_one_of_one_required_key_each(schema: dict) -> None:
    """``oneOf`` branches that each require a different key: exactly one of the keys present."""
    from structgen.json_schema.discriminators import one_of_keys
    from structgen.json_schema.refs import RefResolver

    rest = {k: v for k, v in schema.items() if k != "oneOf"}
    assert one_of_keys(rest, schema["oneOf"], RefResolver(schema).resolve) is not None
    dfa = schema_to_dfa(schema, **ANY)
    validator = jsonschema.Draft202012Validator(schema)
    for instance in [{}, {"uses": "x"}, {"uses": "x", "run": "y"}, {"run": "y", "id": 1}, {"wait": 1, "run": "x"}, {"wait": [1]},
                     {"uses": 1}, {"a": 1}, {"a": "s"}, {"b": "s"}, {"a": 1, "b": "s"}, {"b": 1}, {"c": 1}, 3, "a", []]:
        text = json.dumps(instance, separators=(",", ":"))
        assert dfa.accepts(text.encode()) == validator.is_valid(instance), text


def test_one_of_required_keys_with_their_own_constraint_are_subtracted() -> None:
    """A branch that asks more of its key than the rest does (``a`` at least 5) is not a
    question of presence: ``{"a": 1, "b": 1}`` matches only the second branch."""
    from structgen.json_schema.discriminators import one_of_keys

    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": True},
              "oneOf": [{"properties": {"a": {"minimum": 5}}, "required": ["a"]}, {"required": ["b"]}]}
    assert one_of_keys({k: v for k, v in schema.items() if k != "oneOf"}, schema["oneOf"], None) is None
    dfa = schema_to_dfa(schema, **ANY)
    for instance in [{"a": 1, "b": 1}, {"a": 7, "b": 1}, {"a": 1}, {"a": 7}]:
        text = json.dumps(instance, separators=(",", ":"))
        assert dfa.accepts(text.encode()) == jsonschema.Draft202012Validator(schema).is_valid(instance), text


_SINGLE_TESTS = [
    {"properties": {"t": {"const": "a"}}}, {"properties": {"t": {"const": "a"}}, "required": ["t"]},
    {"required": ["t"]}, {"required": ["t"], "properties": {"t": {}}}, {"not": {"required": ["t"]}},
    {"not": {"properties": {"t": True}, "required": ["t"]}},
    {"properties": {"t": {"enum": ["a", 1]}}}, {"required": ["t"], "properties": {"t": {"enum": ["a", 1.0]}}},
    {"not": {"required": ["t"], "properties": {"t": {"enum": ["b"]}}}}, {"properties": {"t": False}},
    {"anyOf": [{"not": {"required": ["t"]}}, {"required": ["t"], "properties": {"t": {"const": "a"}}}]},
    {"anyOf": [{"properties": {"t": {"const": "a"}}, "required": ["t"]}, {"properties": {"t": {"const": "b"}}}]},
    {"allOf": [{"required": ["t"]}, {"properties": {"t": {"not": {"const": 1}}}}]},
    {"allOf": [{"required": ["t"]}, {"not": {"properties": {"t": {"enum": [1, "b"]}}}}]},
    {"anyOf": [{"required": ["t"], "properties": {"t": {"const": "a"}}}, {"not": {"required": ["t"], "properties": {"t": {"enum": ["a", "b"]}}}}]},
    {"anyOf": [{"not": {"required": ["t"], "properties": {"t": {"enum": ["a", "b"]}}}}, {"not": {"properties": {"t": {"enum": ["b", 1]}}}}]},
]
_OUTCOMES = [None, {"required": ["x"]}, False, {"properties": {"y": False}}]


@pytest.mark.parametrize("test", _SINGLE_TESTS, ids=lambda t: json.dumps(t))
def test_an_if_on_a_key_or_its_constant_is_two_disjoint_branches(test: dict) -> None:
    """An ``if`` that asks whether a key is there, or tests it against a constant (dependabot),
    compiles as two disjoint branches: accepted exactly where ``jsonschema`` says valid, for every
    ``then`` / ``else`` pair of a small set and three siblings."""
    from structgen.json_schema.discriminators import presence_branches

    for rest in ({}, {"type": "object", "properties": {"x": {"type": "integer"}}}, {"type": ["object", "string"], "required": ["t"]}):
        for then in _OUTCOMES:
            for other in _OUTCOMES:
                schema = {**rest, "if": test, **({} if then is None else {"then": then}), **({} if other is None else {"else": other})}
                if test == {"allOf": [{"required": ["t"]}, {"properties": {"t": {"not": {"const": 1}}}}]}:
                    assert presence_branches(schema) is None  # (a key's schema that is not a set of constants)
                    continue
                assert presence_branches(schema) is not None
                _agrees_with_jsonschema(schema, [{}, {"t": "a"}, {"t": "b", "x": 1}, {"t": 1, "x": "s"}, {"x": 1},
                                                 {"x": 1, "y": 2, "t": "a"}, {"t": "a", "x": 1, "y": 1}, {"t": 1.0},
                                                 {"t": True}, {"t": None, "y": 0}, 3, "a", [], None])


def test_an_else_if_ladder_on_one_key_splits_level_by_level() -> None:
    """circle-ci's job types: ``if`` type is release, else if lock or unlock, else if approval or
    no-op, else if absent or build, else nothing; each ``then`` asks for other keys. Each level
    splits in two disjoint schemas (the else side one schema, not one per piece: linear in the
    levels), and the automaton accepts exactly what ``jsonschema`` calls valid."""
    from structgen.json_schema.discriminators import presence_branches

    def test(values: list) -> dict:
        return {"required": ["type"], "properties": {"type": {"enum": values}}}

    ladder = {"if": test(["release"]), "then": {"required": ["plan"]}, "else": {
        "if": test(["lock", "unlock"]), "then": {"required": ["key"], "properties": {"key": {"type": "string"}}}, "else": {
            "if": test(["approval", "no-op"]), "then": {"additionalProperties": False, "properties": {"type": True}}, "else": {
                "if": {"anyOf": [{"not": {"required": ["type"]}}, {"required": ["type"], "properties": {"type": {"const": "build"}}}]},
                "then": {"required": ["steps"]}, "else": False}}}}
    schema = {"type": "object", "properties": {"type": {"enum": ["build", "release", "lock", "unlock", "approval", "no-op"]}}, **ladder}
    branches = presence_branches(schema)
    assert branches is not None and len(branches) == 2
    instances = [{}, {"steps": 1}, {"type": "build"}, {"type": "build", "steps": []}, {"type": "release"},
                 {"type": "release", "plan": "p"}, {"type": "lock", "key": "k"}, {"type": "unlock", "key": 1},
                 {"type": "unlock"}, {"type": "approval"}, {"type": "no-op", "steps": 1}, {"type": "other", "steps": 1},
                 {"plan": "p"}, {"type": "approval", "key": "k"}, {"type": "lock", "key": "k", "plan": 1}, "a", 3]
    _agrees_with_jsonschema(schema, instances)
    _agrees_with_jsonschema({k: v for k, v in schema.items() if k != "type"}, instances)


_FORBIDDEN = [
    {"required": ["t"]}, {"anyOf": [{"required": ["t"]}, {"required": ["y"], "description": "global only"}]},
    {"anyOf": [{"required": ["t"]}]},
]
_SIBLINGS = [{}, {"type": "object"}, {"type": ["object", "string"]}, {"properties": {"t": {"type": "string"}, "x": {"type": "integer"}}},
             {"additionalProperties": {"type": "string"}}, {"patternProperties": {"^t": {"type": "integer"}}}, {"type": "integer"}]


@pytest.mark.parametrize("negated", _FORBIDDEN, ids=lambda t: json.dumps(t))
def test_a_not_of_keys_is_those_keys_absent(negated: dict) -> None:
    """``not`` of ``required`` keys (one, or any one of several: renovate's global-only options)
    compiles as an object without them, no subtraction: accepted exactly where ``jsonschema``
    says valid, beside siblings that declare, pattern-match or type the keys."""
    from structgen.json_schema.discriminators import forbidden_keys

    assert forbidden_keys(negated) is not None
    for rest in _SIBLINGS:
        _agrees_with_jsonschema({**rest, "not": negated}, [{}, {"t": "a"}, {"t": 1}, {"x": 1}, {"x": "s"}, {"y": "s"},
                                                             {"x": 1, "t": "a"}, {"z": "s"}, 3, "a", [], None])
    assert forbidden_keys({"required": ["t", "y"]}) is None and forbidden_keys({"anyOf": [{"required": ["t"]}, {"type": "string"}]}) is None


def test_definitions_that_alias_the_root_recurse_as_calls() -> None:
    """Draft 7 drops a ``$ref``'s siblings, so a definition ``{"$ref": "#", ...}`` is the root
    itself; a root whose properties reach 150 such definitions (renovate: one per package manager)
    is recursion through calls, not 150 roots compiled one inside another (Python's recursion
    limit, then a budget error); the root's ``not`` of global keys holds at every depth."""
    names = [f"m{i}" for i in range(150)]
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "definitions": {n: {"$ref": "#", "type": "object", "allOf": [{"properties": {"ignored": True}}]} for n in names},
        "properties": {"g": {"type": "boolean"}, "x": {"type": "integer"}, **{n: {"$ref": f"#/definitions/{n}"} for n in names}},
        "additionalProperties": False, "not": {"anyOf": [{"required": ["g"]}]},
    }
    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b""], eos_token_ids=[256])
    guide = structgen.compile_json_schema(schema, vocab)
    validator = jsonschema.Draft7Validator(schema)
    for instance in [{}, {"x": 1}, {"g": True}, {"m3": {"x": 2}}, {"m3": {"g": False}}, {"m3": {"m149": {"m0": {"x": 1}}}},
                     {"m3": {"m149": {"m0": {"g": True}}}}, {"m3": {"ignored": 1}}]:
        text = json.dumps(instance, separators=(",", ":")).encode()
        assert guide.accepts_bytes(text) == validator.is_valid(instance), instance


_NAMES = st.sampled_from([
    {"not": {"pattern": "^(when|unless)$"}}, {"not": {"pattern": "^when$"}}, {"not": {"enum": ["when", "unless"]}},
    {"pattern": "^[a-z][a-z\\d/_-]*$", "not": {"pattern": "^(when|unless)$"}}, {"enum": ["run", "x"]}, {"maxLength": 3},
    {"not": {"type": "string", "const": "when"}}, {"pattern": "^w"},
])


@settings(max_examples=40, deadline=None)
@given(names=_NAMES, closed=st.sets(st.sampled_from(["when", "unless", "run"]), min_size=1, max_size=2),
       nonempty=st.sampled_from([{"minProperties": 1}, {"required": ["when"]}, {}]), extra=st.booleans())
def test_one_of_objects_whose_keys_the_others_property_names_refuse(names: dict, closed: set, nonempty: dict, extra: bool) -> None:
    """circle-ci's step and logic: ``oneOf`` of an object whose ``propertyNames`` refuse keys and a
    closed object with a member (``minProperties``) whose every allowed key is refused. They are
    disjoint (a plain union, accepted exactly where ``jsonschema`` says valid); where a key is not
    refused, or the closed object may be ``{}``, the branches are subtracted (nothing invalid
    accepted)."""
    from structgen.json_schema.shapes import overlapping_pairs

    first = {"type": "object", "propertyNames": names, **({"additionalProperties": {"type": "integer"}} if extra else {})}
    second = {"type": "object", "additionalProperties": False, "properties": {k: True for k in sorted(closed)}, **nonempty}
    validator = jsonschema.Draft202012Validator({})
    refused = all(not validator.evolve(schema=names).is_valid(k) for k in closed)
    proved = not overlapping_pairs({}, [first, second], resolve=None)
    assert proved <= refused  # (proved disjoint only where every allowed key is refused)
    if ("not" in names or "enum" in names) and nonempty and nonempty.get("required", ["when"])[0] in closed:
        assert proved == refused  # (what the check reads: patterns, enums, constants under not)
    schema = {"oneOf": [first, second]}
    dfa = schema_to_dfa(schema, **ANY)
    for instance in [{}, {"when": 1}, {"unless": "a"}, {"run": 2}, {"when": 1, "unless": 2}, {"when": 1, "run": 1},
                     {"x": 1}, {"wx": 2}, {"abc": "s"}, {"w": 1}, 3, "when"]:
        text = json.dumps(instance, separators=(",", ":"))
        valid = validator.evolve(schema=schema).is_valid(instance)
        assert dfa.accepts(text.encode()) <= valid, (schema, text)
        assert not proved or dfa.accepts(text.encode()) == valid, (schema, text)


def test_one_of_subtracts_only_the_branches_that_may_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    """``oneOf`` whose branches overlap in part: a branch proved disjoint from the others (a
    string beside objects) is neither over-approximated nor subtracted from, and the objects are
    still exact."""
    from structgen.json_schema.universe import Universe

    seen: list[str] = []
    over = Universe.over

    def counted(self: Universe, s: object, path: str, refs: tuple) -> object:
        seen.append(path)
        return over(self, s, path, refs)

    monkeypatch.setattr(Universe, "over", counted)
    schema = {"oneOf": [{"type": "string", "maxLength": 2}, {"type": "object", "required": ["a"]},
                        {"type": "object", "properties": {"a": {"type": "integer"}}}]}
    _agrees_with_jsonschema(schema, ["ab", "abc", {}, {"a": 1}, {"a": "s"}, {"b": 1}, {"a": 1, "b": 2}, 3, None])
    assert "/oneOf/0" not in seen and {"/oneOf/1", "/oneOf/2"} <= set(seen)


@pytest.mark.parametrize("no_effect", [
    {"if": {"type": "string"}}, {"then": {"minimum": 1}}, {"else": {"minimum": 1}}, {"minContains": 2}, {"maxContains": 2},
    {"additionalProperties": True}, {"items": {}}, {"propertyNames": True}, {"unevaluatedItems": {"title": "t"}},
    {"unevaluatedProperties": True}, {"uniqueItems": False}, {"not": False}, {"x-extract": False}, {"minLength": 0},
    {"minItems": 0}, {"minProperties": 0}, {"properties": {}}, {"patternProperties": {}}, {"dependentRequired": {}},
    {"dependentSchemas": {}}, {"required": []},
])
def test_clean_drops_each_keyword_that_has_no_effect(no_effect: dict) -> None:
    """Each keyword that constrains nothing where it stands goes, beside a leaf's own keywords
    and alone; the leaf's keywords stay."""
    from structgen.json_schema.ops import clean

    assert clean({"type": "string", "maxLength": 3, "title": "t", **no_effect}) == {"type": "string", "maxLength": 3}
    assert clean(no_effect) == {}
    assert clean({"format": "date", "description": "d"}) == {"format": "date"}
