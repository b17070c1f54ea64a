"""``UnsatisfiableConstraint`` only when nothing is valid: whenever a compile raises it, a bounded
search over small instances (an enumeration of tiny values, objects and arrays, and
hypothesis-jsonschema) finds no valid one. Where our languages (under-approximations) come out
empty but the schema may not be, the compiler retries with every key order and extra keys, and
then refuses with ``SchemaNotSupported``, never "unsatisfiable"."""

from __future__ import annotations

import itertools
import json
import warnings
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from structgen.errors import CompileBudgetExceeded, SchemaNotSupported, UnsatisfiableConstraint
from structgen.json_schema import schema_to_dfa

from .test_schema_algebra import SCHEMAS

SCALARS = [None, True, False, 0, 1, 2, -1, 1.5, "", "a", "b", "ab"]
KEYS = ["a", "b", "c", "da", "db", "ca"]


def tiny_instances() -> list:
    out: list = list(SCALARS)
    out += [[x] for x in SCALARS] + [[x, y] for x in SCALARS[:6] for y in SCALARS[:6]] + [[]]
    out += [{}] + [{k: v} for k in KEYS for v in SCALARS[:6]]
    out += [{k1: 1, k2: v} for k1, k2 in itertools.permutations(KEYS, 2) for v in (1, "a", None)]
    return out


TINY = tiny_instances()


def any_valid(schema: Any) -> Any:
    validator = jsonschema.Draft202012Validator(schema)
    for x in TINY:
        if validator.is_valid(x):
            return x
    return None


def compile_or_error(schema: Any) -> Exception | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            schema_to_dfa(schema)
    except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded) as e:
        return e
    return None


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(SCHEMAS)
def test_unsatisfiable_only_when_no_small_instance_is_valid(schema: Any) -> None:
    error = compile_or_error(schema)
    if isinstance(error, UnsatisfiableConstraint):
        assert any_valid(schema) is None, (schema, any_valid(schema), error)


ISSUE_ALLOF = {"allOf": [*({"not": {"propertyNames": {"not": {"pattern": x}}}} for x in "abcd"),
                         {"propertyNames": {"pattern": "^..$"}}, {"maxProperties": 2},
                         {"patternProperties": {"(b|c){2,2}": False}},
                         {"anyOf": [{"required": ["da"]}, {"required": ["db"]}]}]}


@pytest.mark.slow
def test_the_issue_allof_compiles_and_accepts_its_instance() -> None:
    assert jsonschema.Draft202012Validator(ISSUE_ALLOF).is_valid({"db": 1, "ca": 1})
    dfa = schema_to_dfa(ISSUE_ALLOF)
    assert dfa.accepts(b'{"db": 1, "ca": 1}') or dfa.accepts(b'{"ca": 1, "db": 1}')
    assert not dfa.accepts(b'{"db": 1}')


@pytest.mark.parametrize(
    "schema",
    [
        # a not whose positive side has only declared keys by default
        {"type": "object", "required": ["a"], "not": {"additionalProperties": False, "properties": {"a": {}}}},
        # an allOf of two required sets under additionalProperties (each alone writes only its keys)
        {"allOf": [{"required": ["a"]}, {"required": ["b"]}, {"maxProperties": 2}, {"propertyNames": {"maxLength": 1}}]},
        # overlapping oneOf branches, objects with a key each: retried with extra keys
        {"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "type": "object"},
    ],
)
@pytest.mark.slow
def test_object_cases_compile_after_widening(schema: Any) -> None:
    error = compile_or_error(schema)
    assert error is None, error
    validator = jsonschema.Draft202012Validator(schema)
    dfa = schema_to_dfa(schema)
    import json

    for x in TINY:
        if dfa.accepts(json.dumps(x).encode()):
            assert validator.is_valid(x), x


@pytest.mark.parametrize(
    "schema",
    [
        {"allOf": [{"type": "string"}, {"type": "integer"}]},
        {"type": "object", "allOf": [{"required": ["a"]}, {"properties": {"a": False}}]},
        {"type": "array", "minItems": 2, "maxItems": 1},
        {"not": {}},
    ],
)
def test_truly_unsatisfiable_schemas_say_so(schema: Any) -> None:
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable
    from hypothesis_jsonschema import from_schema

    with pytest.raises(UnsatisfiableConstraint):
        schema_to_dfa(schema)
    assert any_valid(schema) is None
    try:
        found = find(from_schema(schema), lambda x: True, settings=settings(max_examples=50, database=None))
    except (NoSuchExample, Unsatisfiable, jsonschema.exceptions.SchemaError):
        return
    except Exception:  # hypothesis-jsonschema proves some schemas empty by raising its own errors
        return
    assert not jsonschema.Draft202012Validator(schema).is_valid(found), found


def test_oneof_of_plain_patterns_is_exact() -> None:
    """The over-approximation of a string under a plain pattern (literals, classes, groups) is the
    pattern's language, so overlapping oneOf branches of patterns compile."""
    import re

    schema = {"type": "string", "oneOf": [{"pattern": "a"}, {"pattern": "^b+"}, {"pattern": "[cd]{2}"}]}
    dfa = schema_to_dfa(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for text in ["a", "b", "ab", "ba", "cd", "acd", "bcd", "x", "", "bb", "dc\n", "a\nb"]:
        assert dfa.accepts(json.dumps(text).encode()) == validator.is_valid(text), text
    assert re  # (re.search is what jsonschema runs)
