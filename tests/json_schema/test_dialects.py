"""Older drafts rewritten into 2020-12 (structgen.json_schema.dialects), checked against jsonschema's own
validator of each draft: every instance the automaton accepts is valid under the draft."""

from __future__ import annotations

import json
from typing import Any

import pytest

from structgen.errors import SchemaError, SchemaNotSupported
from structgen.json_schema.dialects import dialect_of, metaschema_validator, to_2020_12
from structgen.json_schema import load_schema, schema_to_dfa

D4 = "http://json-schema.org/draft-04/schema#"
D6 = "http://json-schema.org/draft-06/schema#"
D7 = "http://json-schema.org/draft-07/schema#"
D2019 = "https://json-schema.org/draft/2019-09/schema"
D2020 = "https://json-schema.org/draft/2020-12/schema"


def accepts(schema: Any, instance: Any, **kw: Any) -> bool:
    dfa = schema_to_dfa(schema, key_order="any", extra_properties=True, **kw)
    return any(dfa.accepts(t.encode()) for t in (json.dumps(instance), json.dumps(instance, separators=(",", ":"))))


def check(schema: Any, instances: list, dialect: str | None = None) -> None:
    """The automaton accepts an instance exactly when the draft's validator does (on these)."""
    validator = metaschema_validator(dialect_of(schema, dialect))(schema)
    for x in instances:
        assert accepts(schema, x, dialect=dialect) == validator.is_valid(x), (schema, x)


@pytest.mark.parametrize(
    ("given", "name"),
    [(None, "2020-12"), ("draft7", "draft-07"), ("7", "draft-07"), ("draft-04", "draft-04"), (D6, "draft-06"),
     ("https://json-schema.org/draft/2019-09/schema", "2019-09"), ("http://json-schema.org/draft-07/schema", "draft-07")],
)
def test_dialect_names(given: Any, name: str) -> None:
    assert dialect_of({}, given) == name


def test_dialect_comes_from_schema_unless_overridden() -> None:
    assert dialect_of({"$schema": D4}) == "draft-04"
    assert dialect_of({"$schema": D4}, "2020-12") == "2020-12"
    # another metaschema (CloudFormation's provider schema): read as 2020-12, like jsonschema does
    assert dialect_of({"$schema": "https://schema.cloudformation.us-east-1.amazonaws.com/provider.definition.schema.v1.json"}) == "2020-12"
    with pytest.raises(ValueError, match="unknown dialect"):
        dialect_of({}, "draft-99")


@pytest.mark.slow
def test_draft4_exclusive_bounds_and_id() -> None:
    schema = {"$schema": D4, "type": "integer", "minimum": 1, "exclusiveMinimum": True, "maximum": 5, "exclusiveMaximum": False}
    assert to_2020_12(schema) == {"$schema": D4, "type": "integer", "exclusiveMinimum": 1, "maximum": 5}
    check(schema, [0, 1, 2, 5, 6])
    schema = {"$schema": D4, "id": "http://x.test/root", "properties": {"id": {"$ref": "item"}},
              "definitions": {"item": {"id": "item", "type": "string"}}}
    out = to_2020_12(schema)
    assert out["$id"] == "http://x.test/root" and "id" in out["properties"] and out["$defs"]["item"]["$id"] == "item"
    check(schema, [{"id": "a"}, {"id": 1}, {}])


def test_draft4_ignores_later_keywords() -> None:
    schema = {"$schema": D4, "const": 3, "contains": {"type": "string"}, "propertyNames": {"maxLength": 1}}
    assert to_2020_12(schema) == {"$schema": D4}
    check(schema, [1, [1], {"long": 1}])
    # the same keywords under draft-06 are enforced
    check({**schema, "$schema": D6}, [3, 1])


def test_draft4_metaschema_is_the_draft4_one() -> None:
    load_schema({"$schema": D4, "minimum": 1, "exclusiveMinimum": True})
    with pytest.raises(SchemaError):  # a number is not a draft-04 exclusiveMinimum
        load_schema({"$schema": D4, "exclusiveMinimum": 1})
    with pytest.raises(SchemaError):  # and a boolean is not a 2020-12 one
        load_schema({"minimum": 1, "exclusiveMinimum": True})
    load_schema({"minimum": 1, "exclusiveMinimum": True}, dialect="draft-04")


def test_draft6_has_no_if() -> None:
    schema = {"$schema": D6, "if": {"type": "string"}, "then": {"minLength": 3}}
    check(schema, ["a", "abcd", 1])
    assert accepts(schema, "a")
    assert not accepts({**schema, "$schema": D7}, "a")


@pytest.mark.slow
def test_definitions_and_refs_through_them() -> None:
    for dialect in (D4, D7, None):
        schema = {"type": "object", "definitions": {"pos": {"type": "integer", "minimum": 0}},
                  "properties": {"a": {"$ref": "#/definitions/pos"}, "definitions": {"type": "string"}}}
        if dialect:
            schema["$schema"] = dialect
        out = to_2020_12(schema)
        assert out["properties"]["a"]["$ref"] == "#/$defs/pos" and "definitions" in out["properties"]
        check(schema, [{"a": 1}, {"a": -1}, {"definitions": "x"}, {"definitions": 1}])


def test_refs_into_a_value_no_draft_reads_as_schemas() -> None:
    """SchemaStore's travis.json: ``$ref: "#/definitions/notify/webhooks"`` lands under a keyword
    no draft has (``notify`` is a bag of schemas), and the schema there is rewritten like any other
    (its own ``$ref`` through ``definitions``, its draft 4 bounds); values elsewhere are left as they are."""
    schema = {"$schema": D4, "definitions": {
        "secret": {"type": "object", "properties": {"secure": {"type": "string"}}, "additionalProperties": False},
        "notify": {"webhooks": {"type": "object", "additionalProperties": False, "properties": {
            "urls": {"$ref": "#/definitions/secret"}, "n": {"type": "number", "maximum": 3, "exclusiveMaximum": True}}},
            "other": {"definitions": {"x": 1}, "exclusiveMaximum": True}}},
        "type": "object", "properties": {"hook": {"$ref": "#/definitions/notify/webhooks"}},
        "default": {"definitions": {"$ref": "#/definitions/notify/other"}}}
    out = to_2020_12(schema)
    hook = out["$defs"]["notify"]["webhooks"]
    assert hook["properties"]["urls"]["$ref"] == "#/$defs/secret"
    assert hook["properties"]["n"] == {"type": "number", "exclusiveMaximum": 3}
    assert out["$defs"]["notify"]["other"] == schema["definitions"]["notify"]["other"]  # (no $ref lands there)
    assert out["default"] == schema["default"]
    check(schema, [{"hook": {"urls": {"secure": "s"}, "n": 2}}, {"hook": {"urls": {"secure": 1}}},
                   {"hook": {"urls": {"x": "s"}}}, {"hook": {"n": 3}}, {"hook": {"n": 2.5}}, {"hook": {"y": 1}}])


@pytest.mark.slow
def test_dependencies_both_forms() -> None:
    for dialect in (D4, None):
        schema = {"type": "object", "properties": {k: {"const": 1} for k in "abcd"}, "additionalProperties": False,
                  "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}
        if dialect:
            schema["$schema"] = dialect
        out = to_2020_12(schema)
        assert out["dependentRequired"] == {"a": ["b"]} and out["dependentSchemas"] == {"c": {"required": ["d"]}}
        instances = [{}, {"a": 1}, {"a": 1, "b": 1}, {"c": 1}, {"c": 1, "d": 1}]
        check(schema, instances, None if dialect else "draft-07")
        assert accepts(schema, {"a": 1, "b": 1}) and not accepts(schema, {"a": 1})


@pytest.mark.slow
def test_array_items_and_additional_items() -> None:
    schema = {"$schema": D7, "items": [{"type": "integer"}, {"type": "string"}], "additionalItems": False}
    assert to_2020_12(schema) == {"$schema": D7, "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}
    check(schema, [[], [1], [1, "a"], [1, "a", 2], ["a"]])
    schema = {"$schema": D7, "items": {"type": "integer"}, "additionalItems": False}  # (ignored)
    check(schema, [[1, 2, 3], ["a"]])
    ref = {"$schema": D7, "definitions": {"t": {"items": [{"type": "integer"}], "additionalItems": {"type": "null"}}},
           "properties": {"a": {"$ref": "#/definitions/t/items/0"}, "b": {"$ref": "#/definitions/t/additionalItems"}}}
    assert to_2020_12(ref)["properties"] == {"a": {"$ref": "#/$defs/t/prefixItems/0"}, "b": {"$ref": "#/$defs/t/items"}}
    check(ref, [{"a": 1, "b": None}, {"a": "x"}, {"b": 1}])
    schema = {"$schema": D2019, "items": [{"const": 1}], "additionalItems": {"const": 2}}
    check(schema, [[1], [1, 2, 2], [1, 3], [2]])


@pytest.mark.slow
def test_ref_siblings_ignored_up_to_draft7() -> None:
    schema = {"$schema": D7, "definitions": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/definitions/n", "maximum": 2}}}
    check(schema, [{"a": 5}, {"a": "x"}])
    assert accepts(schema, {"a": 5})
    assert not accepts({**schema, "$schema": D2019}, {"a": 5})
    # $ref prevents a sibling $id from changing the base URI (the draft7 suite case)
    schema = {"$schema": D7, "$id": "http://localhost:1234/sibling_id/base/",
              "definitions": {"foo": {"$id": "http://localhost:1234/sibling_id/foo.json", "type": "string"},
                              "base_foo": {"$id": "foo.json", "type": "number"}},
              "allOf": [{"$id": "http://localhost:1234/sibling_id/", "$ref": "foo.json"}]}
    check(schema, ["a", 1])
    assert accepts(schema, 1) and not accepts(schema, "a")


def test_fragment_ids_become_anchors() -> None:
    schema = {"$schema": D7, "allOf": [{"$ref": "#foo"}], "definitions": {"A": {"$id": "#foo", "type": "integer"}}}
    assert to_2020_12(schema)["$defs"]["A"] == {"$anchor": "foo", "type": "integer"}
    check(schema, [1, "a"])
    d4 = {"$schema": D4, "allOf": [{"$ref": "#foo"}], "definitions": {"A": {"id": "#foo", "type": "integer"}}}
    check(d4, [1, "a"])


def test_recursive_ref_only_where_it_is_a_plain_ref() -> None:
    tree = {"$schema": D2019, "$recursiveAnchor": True, "type": ["integer", "array"], "items": {"$recursiveRef": "#"}}
    assert to_2020_12(tree)["items"] == {"$ref": "#"}
    check(tree, [1, [1, [2]], ["a"], [[["a"]]]])
    dynamic = {"$schema": D2019, "$recursiveAnchor": True, "properties": {"a": {"$ref": "inner"}},
               "$defs": {"inner": {"$id": "inner", "$recursiveAnchor": True, "items": {"$recursiveRef": "#"}}}}
    with pytest.raises(SchemaNotSupported) as info:
        schema_to_dfa(dynamic)
    assert info.value.keyword == "$recursiveRef"


@pytest.mark.slow
def test_dialect_option_overrides_schema() -> None:
    schema = {"$schema": D2020, "properties": {"a": {"$ref": "#/$defs/n", "maximum": 2}}, "$defs": {"n": {"type": "integer"}}}
    assert not accepts(schema, {"a": 5})
    assert accepts(schema, {"a": 5}, dialect="draft-07")


def test_input_is_not_modified() -> None:
    schema = {"$schema": D4, "minimum": 1, "exclusiveMinimum": True, "definitions": {"a": {"items": [{}]}}}
    before = json.dumps(schema)
    to_2020_12(schema)
    assert json.dumps(schema) == before


def test_cache_key_has_the_dialect() -> None:
    from structgen.compiler import compile_json_schema
    from structgen.vocab.vocabulary import Vocabulary

    vocab = Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/n", "maximum": 2}}, "$defs": {"n": {"type": "integer"}},
              "required": ["a"], "additionalProperties": False}
    strict = compile_json_schema(schema, vocab, whitespace="")
    loose = compile_json_schema(schema, vocab, whitespace="", dialect="draft-07")
    ids = list(b'{"a":5}')
    s1, s2 = strict.advance(strict.initial_state, ids), loose.advance(loose.initial_state, ids)
    assert not (s1 >= 0 and strict.is_final(s1))
    assert s2 >= 0 and loose.is_final(s2)




def test_a_ref_target_inside_a_list_under_an_unknown_keyword_is_rewritten() -> None:
    """draft-04's boolean exclusiveMinimum at a $ref target reached through a list index (a list
    index was compared as the number 0 with the pointer's "0": the target kept its draft-04 form
    and was read as ``exclusiveMinimum: 1``, refusing valid values)."""
    import structgen

    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
    schema = {"$schema": "http://json-schema.org/draft-04/schema#",
              "allOf": [{"x-defs": {"a": {"minimum": 0, "exclusiveMinimum": True}}}],
              "type": "object", "properties": {"p": {"$ref": "#/allOf/0/x-defs/a"}}, "required": ["p"]}
    guide = structgen.compile_json_schema(schema, vocab, whitespace="")
    assert guide.accepts_bytes(b'{"p":1}') and guide.accepts_bytes(b'{"p":0.5}')
    assert not guide.accepts_bytes(b'{"p":0}')


def test_a_2020_12_schema_with_nothing_to_rewrite_is_its_own_rewrite() -> None:
    """``to_2020_12`` hands back a 2020-12 schema as it is when its text holds no keyword the
    rewrite acts on: the rewrite itself (run here) gives an equal schema for every such suite and
    corpus schema, and each schema the check sends through the rewrite does hold one."""
    from structgen.json_schema import dialects

    from ..support.paths import CORPUS, SUITES

    schemas: list[Any] = [json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json"))]
    suite = sorted((SUITES / "draft2020-12").rglob("*.json"))  # (none where the suite is not beside the checkout)
    for path in suite:
        schemas += [case["schema"] for case in json.loads(path.read_text())]
    schemas += [{"$schema": D2020, "properties": {"a": {"$schema": D7, "items": [{}]}}},
                {"definitions": {"a": {"type": "integer"}}, "$ref": "#/definitions/a"}, {"dependencies": {"a": ["b"]}},
                {"$recursiveAnchor": True}, {"$defs": {"definitions": {"type": "string"}}}, {"enum": ["$recursiveRef"]}]
    kept = 0
    for schema in schemas:
        if not isinstance(schema, dict) or dialect_of(schema) != "2020-12":
            continue
        rewritten = dialects._Rewriter(schema, "2020-12").rewrite(schema, "2020-12", "", schema, ())
        if dialects._already_2020_12(schema):
            kept += 1
            assert to_2020_12(schema) is schema and rewritten == schema, schema
        else:
            text = json.dumps(schema)
            assert any(key in text for key in dialects._REWRITTEN_IN_2020_12) or text.count('"$schema"') > 1, schema
    assert kept > (200 if suite else 40)


def test_the_rewrite_shortcuts_change_nothing() -> None:
    """The rewrite's shortcuts (no first pass where the root is the one resource, read off its
    text; a leaf with nothing to rewrite shared, not copied) give the rewrite of every node walked:
    the same schema and resources for every schema of the older drafts' suites, the corpus and
    cases made to trip them (an ``$id`` or ``$schema`` inside, keywords a draft lacks on leaves)."""
    from structgen.json_schema import dialects
    from structgen.json_schema.ops import schema_texts, texts_known

    from ..support.paths import CORPUS, SUITES

    schemas: list[Any] = [json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json"))]
    for draft in ("draft4", "draft6", "draft7", "draft2019-09"):
        for path in sorted((SUITES / draft).rglob("*.json")):  # (none where the suite is not beside the checkout)
            schemas += [{"$schema": {"draft4": D4, "draft6": D6, "draft7": D7}.get(draft, D2019), **case["schema"]}
                        for case in json.loads(path.read_text()) if isinstance(case["schema"], dict)]
    schemas += [
        {"$schema": D7, "properties": {"a": {"prefixItems": [{}], "type": "array"}, "b": {"dependentRequired": {"x": ["y"]}}}},
        {"$schema": D7, "$id": "http://x.test/root", "properties": {"id": {"type": "string"}}, "$ref": "#/definitions/a",
         "definitions": {"a": {"$id": "#frag", "minimum": 1}}},
        {"$schema": D6, "properties": {"a": {"$id": "http://x.test/a", "definitions": {"b": {}}, "$ref": "#/definitions/b"}}},
        {"$schema": D7, "properties": {"a": {"$schema": D4, "id": "http://x.test/a", "minimum": 1, "exclusiveMinimum": True}}},
        {"$schema": D2019, "$recursiveAnchor": True, "properties": {"a": {"$recursiveRef": "#", "unevaluatedItems": False}}},
        {"$schema": D7, "properties": {"a": {"if": {"type": "string"}, "then": {"minLength": 1}, "else": {"items": [{}]}}}},
    ]
    checked = 0
    for schema in schemas:
        name = dialect_of(schema)
        with texts_known(schema, *schema_texts(schema)):
            fast = dialects._Rewriter(schema, name)
            full = dialects._Rewriter(schema, name, shortcuts=False)
            assert ({k: (id(n), d) for k, (n, d) in fast.resources.items()} == {k: (id(n), d) for k, (n, d) in full.resources.items()}
                    and fast.recursive_anchors == full.recursive_anchors), schema
            assert fast.rewrite(schema, name, "", schema, ()) == full.rewrite(schema, name, "", schema, ()), schema
        checked += 1
    assert checked > 40
