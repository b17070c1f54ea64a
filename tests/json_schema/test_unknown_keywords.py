"""Unknown keywords: JSON Schema reads them as annotations, so a misspelt keyword constrains
nothing. One edit from a keyword that constrains, it warns (UnknownKeywordWarning, with the JSON
pointer and "did you mean"); ``unknown_keywords="error"`` refuses every unknown keyword."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import structgen
from structgen import AnnotationWarning, SchemaNotSupported, UnknownKeywordWarning

_BYTES = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b""], eos_token_ids=[256])
MISSPELT = {"type": "object", "propertes": {"a": {"type": "object", "properties": {"b": {"tpye": "string"}}}}}


def _warnings(schema: Any, **options: Any) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        structgen.compile_json_schema(schema, _BYTES, **options)
    return [w for w in record if issubclass(w.category, AnnotationWarning)]


def test_a_misspelt_keyword_warns_with_the_pointer_and_a_suggestion() -> None:
    with pytest.warns(UnknownKeywordWarning, match=r"unknown keyword 'propertes' at /propertes: did you mean 'properties'\?"):
        structgen.compile_json_schema(MISSPELT, _BYTES)
    record = _warnings({"type": "object", "properties": {"b": {"tpye": "string", "minLenght": 2}}})
    found = [(w.message.keyword, w.message.path, w.message.suggestion) for w in record]  # type: ignore[union-attr]
    assert found == [("tpye", "/properties/b/tpye", "type"), ("minLenght", "/properties/b/minLenght", "minLength")]
    assert issubclass(UnknownKeywordWarning, AnnotationWarning) and issubclass(UnknownKeywordWarning, UserWarning)
    assert "unknown_keywords=\"error\"" in str(record[0].message)
    assert record[0].filename == __file__  # (attributed to the caller of compile_json_schema)


@pytest.mark.parametrize(
    "keyword, value, near",
    [
        ("requried", ["a"], "required"), ("Required", ["a"], "required"), ("itmes", {}, "items"),
        ("additionalproperties", False, "additionalProperties"), ("maximun", 3, "maximum"), ("enums", [1], "enum"),
        ("x-extrat", True, "x-extract"), ("patern", "^a", "pattern"), ("$reff", "#/$defs/a", "$ref"),
        ("allof", [{}], "allOf"), ("tpye", ["string", "null"], "type"), ("cnst", None, "const"),
        # not misspellings: a value of another kind, or too far from any keyword
        ("note", "a comment", None), ("id", "abc", None), ("maximun", True, None), ("items2x", {}, None),
        ("x-vendor", 1, None), ("properties_list", {}, None),
    ],
)
def test_what_counts_as_a_misspelling(keyword: str, value: Any, near: Any) -> None:
    from structgen.json_schema.unknown_keywords import near_keyword

    assert near_keyword(keyword, value) == near


def test_known_keywords_and_annotations_never_warn() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/s", "$comment": "c",
        "title": "t", "description": "d", "default": {}, "examples": [{}], "deprecated": False, "readOnly": False,
        "type": "object", "properties": {"a": {"type": "string", "contentMediaType": "text/plain", "example": "x"}},
        "discriminator": {"propertyName": "a"}, "x-vendor": 1, "nullable": True, "$defs": {"b": {"type": "integer"}},
    }
    assert _warnings(schema) == []


def test_unknown_keywords_error_refuses_every_unknown_keyword() -> None:
    with pytest.raises(SchemaNotSupported, match=r"'propertes' at /propertes .*did you mean 'properties'") as info:
        structgen.compile_json_schema(MISSPELT, _BYTES, unknown_keywords="error")
    assert (info.value.keyword, info.value.path) == ("propertes", "/propertes")
    with pytest.raises(SchemaNotSupported, match=r"'nullable' at /properties/a/nullable is not supported: it is not a JSON Schema keyword, "):
        structgen.compile_json_schema({"properties": {"a": {"nullable": True}}}, _BYTES, unknown_keywords="error")
    # known keywords and annotations pass
    structgen.compile_json_schema({"type": "string", "title": "t", "examples": ["a"]}, _BYTES, unknown_keywords="error")
    with pytest.raises(ValueError, match="unknown_keywords must be 'annotate' or 'error', got 'warn'"):
        structgen.compile_json_schema(MISSPELT, _BYTES, unknown_keywords="warn")


def test_the_misspelt_schema_still_compiles_as_the_specification_reads_it() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        guide = structgen.compile_json_schema(MISSPELT, _BYTES)
    # "propertes" constrains nothing: any object is valid, as in the report
    state = guide.advance(guide.initial_state, list(b'{"a": {"b": {"c": 1}}}'))
    assert guide.is_final(state)
