"""The flat metaschemas (``structgen.json_schema.metaschemas``) and the compiled ones
(``structgen.json_schema.metaschema_check``) check exactly what ``jsonschema``'s own metaschemas
check: on random schema-like documents, on every schema of the official test suite, and on the
real-world corpus; and a schema the fast paths refuse still gets ``jsonschema``'s error, naming
its pointer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft4Validator, Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator

from structgen import SchemaError, SchemaNotSupported
from structgen.json_schema.loading import _metaschema_formats, load_schema
from structgen.json_schema.metaschemas import fast_metaschema_check, flat_metaschema_validator

from ..support.paths import CORPUS, SUITES

DIALECTS = [Draft202012Validator, Draft201909Validator]


def _pair(cls: Any) -> tuple[Any, Any]:
    formats = _metaschema_formats(cls)
    return flat_metaschema_validator(cls, formats), cls(cls.META_SCHEMA, format_checker=formats)


def _keywords(cls: Any) -> list[str]:
    flat, _ = _pair(cls)
    return sorted(flat.schema["properties"])


_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, 1.0, -1.5]),
    st.sampled_from(["string", "object", "integer", "nope", "#", "#/$defs/a", "a[", "^a+$", "urn:x", "email"]),
)


def _schemas(keywords: list[str]) -> st.SearchStrategy[Any]:
    """Schema-like documents: the metaschema's keywords (and an unknown one) with values that are
    often right (sub-schemas, lists and maps of them, the right kind of leaf) and often not."""
    names = st.sampled_from([*keywords, "x-unknown"])

    def grow(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        value = st.one_of(
            _LEAVES, inner, st.lists(inner, max_size=3), st.lists(_LEAVES, max_size=3),
            st.dictionaries(st.sampled_from(["a", "b", "^c"]), inner, max_size=2),
        )
        return st.dictionaries(names, value, max_size=4)

    return st.recursive(st.one_of(st.booleans(), st.dictionaries(names, _LEAVES, max_size=3)), grow, max_leaves=12)


@pytest.mark.parametrize("cls", DIALECTS, ids=lambda c: c.__name__)
def test_the_flat_form_exists_where_the_metaschema_is_vocabularies(cls: Any) -> None:
    flat, _ = _pair(cls)
    assert flat is not None
    assert "minLength" in flat.schema["properties"] and "properties" in flat.schema["properties"]
    assert flat_metaschema_validator(Draft7Validator) is None  # (one plain document already)


@pytest.mark.parametrize("cls", DIALECTS, ids=lambda c: c.__name__)
def test_random_schema_like_documents_get_the_same_verdict(cls: Any) -> None:
    flat, full = _pair(cls)
    seen = {True: 0, False: 0}

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_schemas(_keywords(cls)))
    def check(doc: Any) -> None:
        verdict = full.is_valid(doc)
        seen[verdict] += 1
        assert flat.is_valid(doc) == verdict, json.dumps(doc)

    check()
    assert seen[True] > 20 and seen[False] > 20  # (both verdicts were exercised)


def _suite_schemas(folder: str) -> list[Any]:
    out = []
    for path in sorted((SUITES / folder).rglob("*.json")):
        out.extend(case["schema"] for case in json.loads(path.read_text()))
    return out


@pytest.mark.skipif(not SUITES.exists(), reason="the official test suite is not beside the checkout")
def test_every_schema_of_the_test_suite_gets_the_same_verdict() -> None:
    flat, full = _pair(Draft202012Validator)
    schemas = _suite_schemas("draft2020-12")
    assert len(schemas) > 300
    # (a few of the suite's schemas are invalid against the metaschema on purpose)
    assert [flat.is_valid(s) for s in schemas] == [full.is_valid(s) for s in schemas]


def test_the_corpus_gets_the_same_verdict() -> None:
    flat, full = _pair(Draft202012Validator)
    for path in sorted(CORPUS.glob("*.json")):
        schema = json.loads(path.read_text())["schema"]
        assert flat.is_valid(schema) == full.is_valid(schema) is True, path.name


def test_a_schema_the_flat_form_refuses_gets_jsonschemas_error() -> None:
    with pytest.raises(SchemaError, match="-1 is less than the minimum of 0") as e:
        load_schema({"properties": {"name": {"type": "string", "minLength": -1}}, "title": "t"})
    assert "/properties/name/minLength" in str(e.value)
    with pytest.raises(SchemaNotSupported, match="pattern"):
        load_schema({"properties": {"name": {"type": "string", "pattern": "a["}}})
    with pytest.raises(SchemaError, match="is not valid under any of the given schemas|is not of type"):
        load_schema({"$schema": "https://json-schema.org/draft/2019-09/schema", "items": [{"type": 3}]})


COMPILED = [Draft202012Validator, Draft201909Validator, Draft7Validator, Draft6Validator]


def _compiled(cls: Any) -> tuple[Any, Any]:
    formats = _metaschema_formats(cls)
    return fast_metaschema_check(cls, formats), cls(cls.META_SCHEMA, format_checker=formats)


def test_a_metaschema_is_compiled_where_it_uses_known_keywords_only() -> None:
    assert all(fast_metaschema_check(cls, _metaschema_formats(cls)) is not None for cls in COMPILED)
    assert fast_metaschema_check(Draft4Validator, _metaschema_formats(Draft4Validator)) is None  # (boolean exclusiveMinimum)


@pytest.mark.parametrize("cls", COMPILED, ids=lambda c: c.__name__)
def test_the_compiled_check_gives_random_schema_like_documents_the_same_verdict(cls: Any) -> None:
    fast, full = _compiled(cls)
    keywords = sorted(cls.META_SCHEMA.get("properties", {})) if cls in (Draft7Validator, Draft6Validator) else _keywords(cls)
    seen = {True: 0, False: 0}

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_schemas(keywords))
    def check(doc: Any) -> None:
        verdict = full.is_valid(doc)
        seen[verdict] += 1
        assert fast(doc) == verdict, json.dumps(doc)

    check()
    assert seen[True] > 20 and seen[False] > 20


@pytest.mark.skipif(not SUITES.exists(), reason="the official test suite is not beside the checkout")
@pytest.mark.parametrize(("cls", "folder"), [(Draft202012Validator, "draft2020-12"), (Draft7Validator, "draft7")])
def test_the_compiled_check_gives_every_schema_of_the_test_suite_the_same_verdict(cls: Any, folder: str) -> None:
    fast, full = _compiled(cls)
    schemas = _suite_schemas(folder)
    assert len(schemas) > 200
    assert [fast(s) for s in schemas] == [full.is_valid(s) for s in schemas]


@pytest.mark.parametrize("cls", [Draft202012Validator, Draft7Validator], ids=lambda c: c.__name__)
def test_the_compiled_check_gives_the_corpus_the_same_verdict(cls: Any) -> None:
    fast, full = _compiled(cls)
    for path in sorted(CORPUS.glob("*.json")):
        schema = json.loads(path.read_text())["schema"]
        assert fast(schema) == full.is_valid(schema), path.name


def test_a_schema_the_compiled_check_refuses_gets_jsonschemas_error() -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    with pytest.raises(SchemaError, match="-1 is less than the minimum of 0") as e:
        load_schema({"$schema": draft7, "properties": {"name": {"type": "string", "minLength": -1}}})
    assert "/properties/name/minLength" in str(e.value)
    with pytest.raises(SchemaError, match="has non-unique elements"):
        load_schema({"$schema": draft7, "required": ["a", "a"]})
    with pytest.raises(SchemaError, match="is not valid under any of the given schemas"):
        load_schema({"$schema": draft7, "type": "text"})
    with pytest.raises(SchemaNotSupported, match="pattern"):
        load_schema({"$schema": draft7, "properties": {"name": {"type": "string", "pattern": "a["}}})
    assert load_schema({"$schema": draft7, "enum": [1, True], "required": ["a"], "minimum": 2.5}) is not None


@pytest.mark.parametrize("cls", [Draft4Validator, Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator],
                         ids=lambda c: c.__name__)
def test_the_compiled_type_tests_are_jsonschemas(cls: Any) -> None:
    from structgen._engine import MetaschemaCheck
    from structgen.json_schema.metaschema_check import _as_function, _type_tests

    checker = cls.TYPE_CHECKER
    kind = _type_tests(checker)
    values = [None, True, False, 0, 1, -7, 2**70, 1.0, 2.5, float("inf"), float("nan"), -0.0, "", "1", [], [1], {}, {"a": 1},
              (1,), 1j, _Int(3), _Float(2.0), _Str("s"), _List([1]), _Dict(a=1)]
    for name in ["object", "array", "string", "boolean", "null", "integer", "number"]:
        test = kind(name)
        native = MetaschemaCheck([[("type", [test])]], kind("object"), kind("array"), kind("number"), kind("string"))
        expected = [checker.is_type(v, name) for v in values]
        assert [native(v) for v in values] == expected, name
        assert [_as_function(test)(v) for v in values] == expected, name
    assert isinstance(kind("integer"), tuple) is (cls is not Draft4Validator)  # (drafts 6+: native)
    with pytest.raises(Exception, match="nope"):  # (an unknown type raises, as jsonschema's is_type does)
        MetaschemaCheck([[("type", [kind("nope")])]], kind("object"), kind("array"), kind("number"), kind("string"))(1)


class _Int(int):
    pass


class _Float(float):
    pass


class _Str(str):
    pass


class _List(list):  # type: ignore[type-arg]
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


def test_a_value_that_is_not_plain_json_is_left_to_jsonschema() -> None:
    fast, full = _compiled(Draft202012Validator)
    for doc in ({"properties": _Dict(a={})}, _Dict(type="string"), {"allOf": _List([{}])}, {"required": _List(["a"])}):
        assert full.is_valid(doc)
        assert fast(doc) is False  # (a subclass's items() may differ from its storage: jsonschema reads it)
    assert load_schema({"properties": _Dict(a={"type": "string"})}) is not None


def test_nesting_past_the_native_depth_is_left_to_jsonschema() -> None:
    fast, full = _compiled(Draft7Validator)
    doc: Any = {}
    for _ in range(100):
        doc = {"not": doc}
    assert fast(doc) is True and full.is_valid(doc)
    for _ in range(1000):
        doc = {"not": doc}
    assert fast(doc) is False  # (past 1,000 levels of checks)


@pytest.mark.parametrize("where", ["properties", "items", "allOf"])
def test_a_schema_that_contains_itself_is_a_schema_error_naming_the_place(where: str) -> None:
    """A schema dict that contains itself (a cycle of Python objects: no JSON text writes it)
    is a ``SchemaError`` at the place of the cycle, not a ``RecursionError`` from the metaschema
    check; one that nests too deep for it is a ``SchemaError`` too."""
    import structgen

    loop: dict[str, Any] = {"type": "object"}
    loop[where] = {"a": loop} if where == "properties" else [loop] if where == "allOf" else loop
    with pytest.raises(SchemaError, match="contains itself") as raised:
        load_schema(loop)
    assert raised.value.path == {"properties": "/properties/a", "items": "/items", "allOf": "/allOf/0"}[where]
    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(32, 127)] + [b""], eos_token_ids=[95])
    with pytest.raises(SchemaError, match="contains itself"):
        structgen.compile_json_schema(loop, vocab)
    deep: dict[str, Any] = {"type": "array"}
    for _ in range(5000):
        deep = {"type": "array", "items": deep}
    with pytest.raises(SchemaError, match="nests too deep"):
        load_schema(deep)
