"""No value a user can hand the JSON Schema front end crashes the process through its native
helpers: the schema texts (:func:`structgen._engine.json_texts`), the walk of sub-schemas
(:func:`structgen._engine.walk_schemas`) and the metaschema check
(:class:`structgen._engine.MetaschemaCheck`), driven by random Python values of every kind
(subclasses, tuples, non-string keys, cycles, deep nesting; ``tools/fuzz_engine.py`` runs it for
longer, ``tools/sanitize.sh`` under ASan and UBSan). Each answers or raises an exception."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from structgen._engine import MetaschemaCheck, json_texts, json_value_key, json_value_texts, walk_schemas
from structgen.automata.expr import ExprPool
from structgen.errors import CompileBudgetExceeded
from structgen.json_schema.loading import _metaschema_formats
from structgen.json_schema.metaschemas import fast_metaschema_check
from structgen.json_schema.ops import _LISTS, _MAPS, _PLACE


class _Dict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:  # (items() that disagree with the storage)
        return list(reversed(list(super().items())))


class _List(list):  # type: ignore[type-arg]
    pass


class _Str(str):
    pass


_KEYS = st.sampled_from(["type", "properties", "items", "anyOf", "allOf", "not", "$defs", "enum", "required", "minimum",
                         "pattern", "format", "additionalProperties", "propertyNames", "const", "x"])
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4), st.sampled_from(["string", "^a+$", "a[", "uri"]),
    st.builds(_Str, st.text(max_size=3)), st.tuples(st.integers()), st.just(object()), st.just(1j),
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keyed = st.dictionaries(st.one_of(_KEYS, st.integers(), st.builds(_Str, _KEYS)), inner, max_size=4)
    return st.one_of(
        keyed, keyed.map(_Dict), keyed.map(OrderedDict), st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(_List),
    )


_VALUES = st.recursive(_LEAVES, _containers, max_leaves=20)
EXPECTED = (TypeError, ValueError, RecursionError, OverflowError)
_CHECKS = [fast_metaschema_check(cls, _metaschema_formats(cls)) for cls in (Draft202012Validator, Draft7Validator)]


def _cyclic() -> list[Any]:
    d: dict[str, Any] = {"items": {}, "anyOf": []}
    d["items"]["not"] = d
    d["anyOf"].append(d)
    deep: Any = {}
    for _ in range(5000):
        deep = {"not": deep}
    return [d, deep]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_VALUES)
def test_random_values_are_answered_or_refused(value: Any) -> None:
    texts = json_texts(value)
    if texts is not None:
        texts.text_of(value)
    found = walk_schemas(value, (), _PLACE, _MAPS, _LISTS)
    assert all(isinstance(sub, dict) for sub, _ in found)
    for check in _CHECKS:
        try:
            assert check(value) in (True, False)
        except EXPECTED:
            pass


@pytest.mark.parametrize("value", _cyclic(), ids=["cycle", "deep"])
def test_cycles_and_deep_nesting_are_answered_or_refused(value: Any) -> None:
    assert json_texts(value) is None
    for check in _CHECKS:
        assert check(value) is False  # (past the native depth: jsonschema decides)
    if value.get("items") is not None:  # (a cycle: its walk would not end; walk a copy cut short)
        return
    assert len(walk_schemas(value, (), _PLACE, _MAPS, _LISTS)) == 5001


@pytest.mark.parametrize("nodes", [
    [], [[("ref", 5)]], [[("nope",)]], [[("type", [(9, len)])]], [[("type", ["string"])]], [[("properties", [1])]],
    [[("additionalProperties", {"a"}, 0)]], [[("enum", ["a"])]], [[("predicate", 3)]], [[()]], [[("anyOf", [0, 7])]],
    [[("properties", {"a": 4})]],
])
def test_a_malformed_table_is_refused(nodes: list[Any]) -> None:
    with pytest.raises((TypeError, ValueError, IndexError)):
        MetaschemaCheck(nodes, (0, len), (1, len), (5, len), (2, len))


_JSONISH = st.one_of(
    st.binary(max_size=24),
    st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b":", b",", b"\\u", b"d83d", b"\\", b"1", b"-", b"0", b".", b"e+",
                              b"9" * 40, b"e999", b"e-999", b"true", b"null", b" ", b"\xc3\xa9", b"\xed\xa0\x80", b"\xff"]),
             max_size=24).map(b"".join),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSONISH)
def test_random_bytes_are_read_as_json_values_or_refused(text: bytes) -> None:
    """The native reader of JSON values (uniqueItems' equality and spellings) answers any bytes:
    a key, or ``None``; a value's spellings are a term, or ``ValueError`` (not one JSON value)."""
    key = json_value_key(text)
    assert key is None or isinstance(key, bytes)
    pool = ExprPool()
    try:
        term = json_value_texts(pool, text)
    except CompileBudgetExceeded:  # (a value too deep to spell near the stack's end: a named limit)
        assert text.startswith(b"[" * 100)
    except ValueError:
        assert key is None
    else:
        assert key is not None and 0 <= term < len(pool)
