"""The structgen_* request keys (structgen.integrations.constraints): parsing into formats, every
refusal and its message, and the admission check over a byte vocabulary (through the door, whose
cache is tested in tests/test_door.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import structgen
from structgen.errors import CompileBudgetExceeded, ConstraintError, PayloadTooLarge, SchemaError
from structgen.formats import Extract, Grammar, JsonSchema, Regex, SchemaOptions
from structgen.integrations.constraints import byte_vocabulary, check_request, parse_request, warm_up

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_no_keys_means_no_constraint() -> None:
    assert parse_request(None) is None
    assert parse_request({}) is None
    assert parse_request({"other_plugin_key": "x", 3: "y"}) is None


def test_each_kind() -> None:
    c = parse_request({"structgen_json_schema": json.dumps(SCHEMA)})
    assert c is not None and isinstance(c.format, JsonSchema) and c.budget_aware
    assert c.format.schema == SCHEMA and c.format.extract_from is None and c.format.options == SchemaOptions()
    c = parse_request({"structgen_regex": r"\d+", "structgen_options": '{"max_states": 500}'})
    assert c is not None and c.format == Regex(r"\d+", 500)
    c = parse_request({"structgen_grammar": "date"})
    assert c is not None and isinstance(c.format, Regex) and c.source == "grammar 'date'" and c.describe() == "grammar 'date'"
    c = parse_request({"structgen_grammar": "city"})
    assert c is not None and isinstance(c.format, JsonSchema) and c.format.schema["type"] == "object"
    c = parse_request({"structgen_extract": "Ada Lovelace wrote the first program."})
    assert c is not None and c.format == Extract("Ada Lovelace wrote the first program.")
    c = parse_request({"structgen_extract": ["doc one", "doc two"], "structgen_regex": "[a-z]+"})
    assert c is not None and c.format == Extract(("doc one", "doc two"), pattern="[a-z]+")
    c = parse_request({"structgen_extract": "Paris", "structgen_json_schema": json.dumps(SCHEMA),
                       "structgen_options": '{"whitespace": "", "key_order": "any", "budget_aware": false}'})
    assert c is not None and isinstance(c.format, JsonSchema) and c.format.extract_from == ("Paris",)
    assert not c.budget_aware and c.format.options == SchemaOptions(whitespace="", key_order="any")
    c = parse_request({"structgen_json_schema": "{}", "structgen_options": '{"unknown_keywords": "error"}'})
    assert c is not None and isinstance(c.format, JsonSchema) and c.format.options.unknown_keywords == "error"


@pytest.mark.parametrize(("args", "message"), [
    ({"structgen_jsonschema": "{}"}, "unknown key 'structgen_jsonschema' (structgen reads structgen_json_schema, "),
    ({"structgen_regex": 5}, "structgen_regex must be a string, not int"),
    ({"structgen_regex": "a", "structgen_json_schema": "{}"}, "give at most one of structgen_json_schema, structgen_regex (got both)"),
    ({"structgen_regex": "a", "structgen_json_schema": "{}", "structgen_grammar": "date"}, "(got all three)"),
    ({"structgen_options": "{}"}, "structgen_options alone constrains nothing"),
    ({"structgen_grammar": "no-such"}, "no grammar named 'no-such' (known: "),
    ({"structgen_extract": []}, "structgen_extract must be a string or a non-empty list of strings"),
    ({"structgen_extract": ["a", 3]}, "structgen_extract must be a string or a non-empty list of strings"),
    ({"structgen_regex": "a", "structgen_options": "{"}, "structgen_options is not valid JSON"),
    ({"structgen_regex": "a", "structgen_options": "[1]"}, "structgen_options must be a JSON object, not list"),
    ({"structgen_regex": "a", "structgen_options": '{"whitespace": " "}'},
     "structgen_options: unknown option 'whitespace' for a regex (known: max_states)"),
    ({"structgen_regex": "a", "structgen_options": '{"max_states": "9"}'}, "max_states of a regex must be of type int, not '9'"),
    ({"structgen_regex": "a", "structgen_options": '{"max_states": true}'}, "max_states of a regex must be of type int, not True"),
    ({"structgen_json_schema": "{}", "structgen_options": '{"whitspace": ""}'},
     "unknown option 'whitspace' for a JSON Schema (known: dialect, extra_properties, formats, key_order, "),
    ({"structgen_json_schema": "{}", "structgen_options": '{"key_order": "random"}'}, "key_order must be 'schema' or 'any'"),
    ({"structgen_extract": "x", "structgen_options": '{"min_length": -1}'}, "min_length must be a non-negative int"),
    ({"structgen_regex": "a", "structgen_options": '{"budget_aware": 1}'}, "budget_aware must be true or false, not 1"),
])
def test_refusals_name_the_problem(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConstraintError) as info:
        parse_request(args)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)  # what engines turn into HTTP 400


def test_size_limit() -> None:
    with pytest.raises(PayloadTooLarge, match="the structgen constraint is 2001 bytes, over the limit of 2000"):
        parse_request({"structgen_extract": "x" * 2000, "structgen_regex": "x"}, max_bytes=2000)
    assert parse_request({"structgen_extract": "x" * 1999, "structgen_regex": "x"}, max_bytes=2000) is not None


def test_check_request_compiles_over_bytes() -> None:
    assert check_request({"structgen_json_schema": json.dumps(SCHEMA)}) is not None
    with pytest.raises(SchemaError, match="/type"):
        check_request({"structgen_json_schema": '{"type": "nope"}'})
    with pytest.raises(structgen.RegexSyntaxError):
        check_request({"structgen_regex": "(a"})
    with pytest.raises(structgen.UnsatisfiableConstraint):
        check_request({"structgen_json_schema": '{"type": "array", "minItems": 3, "maxItems": 1}'})
    with pytest.raises(CompileBudgetExceeded):
        # (max_states bounds what is still built eagerly: here the look-ahead's automaton)
        check_request({"structgen_regex": "(a|b)*a(a|b){12}(?!c)", "structgen_options": '{"max_states": 10}'})
    with pytest.raises(ConstraintError, match="structgen_options: key_order must be 'schema' or 'any', got 'random'"):
        check_request({"structgen_json_schema": "{}", "structgen_options": '{"key_order": "random"}'})
    assert byte_vocabulary() is byte_vocabulary() and byte_vocabulary().size == 257


def test_check_request_reports_each_new_compile() -> None:
    seen: list[tuple[str, float]] = []
    args = {"structgen_regex": "[0-9]{3}-x-reports"}
    for _ in range(2):
        assert check_request(args, on_checked=lambda c, s: seen.append((c.describe(), s))) is not None
    assert len(seen) == 1 and seen[0][0] == "regex '[0-9]{3}-x-reports'" and seen[0][1] >= 0  # the repeat: a lookup


def test_compile_follows_the_kind(smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    c = parse_request({"structgen_extract": "The capital is Paris.", "structgen_regex": "[A-Z][a-z]+",
                       "structgen_options": '{"min_length": 1}'})
    assert c is not None
    guide = c.compile(vocab)
    assert guide.accepts_bytes(b"Paris") and guide.accepts_bytes(b"The") and not guide.accepts_bytes(b"London")
    c = parse_request({"structgen_json_schema": json.dumps(SCHEMA), "structgen_extract": "Paris or Rome"})
    assert c is not None
    guide = c.compile(vocab)
    assert guide.accepts_bytes(b'{"city": "Rome"}') and not guide.accepts_bytes(b'{"city": "Oslo"}')
    assert warm_up(vocab) > 0


def test_a_warm_up_thread_and_a_first_request_import_the_front_end_at_once() -> None:
    """An engine's API process warms the compiler up in a background thread while its first
    request is checked: both import the JSON Schema front end for the first time at once, which
    deadlocked in its circular imports (``_DeadlockError``: a 500 for the request, and a failed
    warm-up) in 4 of 5 fresh processes. Each run is a fresh interpreter."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import threading
        import structgen
        from structgen.compiler import warm_up, compile_json_schema
        from structgen.integrations.constraints import byte_vocabulary
        errors = []
        def warm():
            try:
                warm_up(byte_vocabulary())
            except BaseException as e:
                errors.append(repr(e))
        thread = threading.Thread(target=warm)
        thread.start()
        try:
            compile_json_schema('{"type": "object", "properties": {"a": {"type": 5}}}', byte_vocabulary())
        except structgen.SchemaError:
            pass
        except BaseException as e:
            errors.append(repr(e))
        thread.join()
        print(errors)
    """)
    for _ in range(4):
        out = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "[]", out.stdout


def test_structgen_grammar_takes_a_name_or_a_grammar() -> None:
    c = parse_request({"structgen_grammar": "arithmetic"})
    assert c is not None and isinstance(c.format, Grammar) and c.format.syntax == "gbnf" and c.source == "grammar 'arithmetic'"
    c = parse_request({"structgen_grammar": 'start: "a"+', "structgen_options": '{"max_terms": 5000}'})
    assert c is not None and c.format == Grammar('start: "a"+', max_terms=5000)
    checked = check_request({"structgen_grammar": 'root ::= [0-9]+ "!"'})
    assert checked is not None and checked.compile(byte_vocabulary()).accepts_bytes(b"42!")
    with pytest.raises(ConstraintError, match="structgen_extract goes with structgen_json_schema or structgen_regex"):
        parse_request({"structgen_grammar": 'start: "a"', "structgen_extract": "doc"})
    with pytest.raises(structgen.GrammarSyntaxError, match="line 1"):
        check_request({"structgen_grammar": "start: ("})
