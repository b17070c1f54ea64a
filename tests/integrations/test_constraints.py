"""The structgen_* request keys (structgen.integrations.constraints): parsing, every refusal and
its message, the admission check over a byte vocabulary, and the shared compile cache."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

import structgen
from structgen.errors import CompileBudgetExceeded, ConstraintError, PayloadTooLarge, SchemaError
from structgen.integrations.constraints import (
    ConstraintCache, RequestConstraint, byte_vocabulary, check_request, parse_request, warm_up,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_no_keys_means_no_constraint() -> None:
    assert parse_request(None) is None
    assert parse_request({}) is None
    assert parse_request({"other_plugin_key": "x", 3: "y"}) is None


def test_each_kind() -> None:
    c = parse_request({"structgen_json_schema": json.dumps(SCHEMA)})
    assert c is not None and (c.kind, c.text, c.documents, c.budget_aware) == ("json_schema", json.dumps(SCHEMA), None, True)
    c = parse_request({"structgen_regex": r"\d+", "structgen_options": '{"max_states": 500}'})
    assert c is not None and (c.kind, c.options) == ("regex", (("max_states", "500"),))
    c = parse_request({"structgen_grammar": "date"})
    assert c is not None and c.kind == "regex" and c.source == "grammar 'date'" and c.describe() == "grammar 'date'"
    c = parse_request({"structgen_grammar": "city"})
    assert c is not None and c.kind == "json_schema" and json.loads(c.text)["type"] == "object"
    c = parse_request({"structgen_extract": "Ada Lovelace wrote the first program."})
    assert c is not None and (c.kind, c.text, c.documents) == ("extract", "", ("Ada Lovelace wrote the first program.",))
    c = parse_request({"structgen_extract": ["doc one", "doc two"], "structgen_regex": "[a-z]+"})
    assert c is not None and (c.kind, c.text, c.documents) == ("extract", "[a-z]+", ("doc one", "doc two"))
    c = parse_request({"structgen_extract": "Paris", "structgen_json_schema": json.dumps(SCHEMA),
                       "structgen_options": '{"whitespace": "", "key_order": "any", "budget_aware": false}'})
    assert c is not None and c.kind == "json_schema" and c.documents == ("Paris",) and not c.budget_aware
    assert c.options == (("key_order", '"any"'), ("whitespace", '""'))
    assert "over 1 document(s)" in c.describe()


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
     "unknown option 'whitespace' for a regex constraint (known: budget_aware, max_states)"),
    ({"structgen_regex": "a", "structgen_options": '{"max_states": "9"}'}, "max_states must be a int, not '9'"),
    ({"structgen_regex": "a", "structgen_options": '{"max_states": true}'}, "max_states must be a int, not True"),
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


def test_distances_are_measured_once(smollm2_vocabulary: Any) -> None:
    cache = ConstraintCache(lambda: smollm2_vocabulary)
    compiled = cache.get(parse_request({"structgen_json_schema": json.dumps(SCHEMA)})).result()
    assert compiled.min_length is None and compiled.distance_seconds is None
    need = compiled.measure_distances()
    assert need == compiled.matcher.guide.min_length() > 0 and compiled.distance_seconds is not None
    seconds = compiled.distance_seconds
    assert compiled.measure_distances() == need and compiled.distance_seconds == seconds


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


def test_cache_compiles_each_constraint_once(smollm2_vocabulary: Any) -> None:
    calls: list[str] = []
    cache = ConstraintCache(lambda: smollm2_vocabulary, size=2, on_compiled=lambda done: calls.append(done.description))
    a = RequestConstraint("regex", "[a-c]{3}")
    b = RequestConstraint("regex", "[d-f]{3}")
    pool = ThreadPoolExecutor(max_workers=1)
    started = threading.Event()
    release = threading.Event()

    def slow_submit(job: Any) -> Future[Any]:
        def run() -> None:
            started.set()
            release.wait(10)
            job()
        return pool.submit(run)

    first = cache.get(a, slow_submit)
    started.wait(10)
    second = cache.get(a, slow_submit)  # while the first compile runs: the same future
    assert second is first and not first.done()
    release.set()
    compiled = first.result(10)
    assert compiled.matcher.guide.accepts_bytes(b"abc") and compiled.seconds > 0
    assert cache.get(a) is first and calls == ["regex '[a-c]{3}'"]
    cache.get(b)
    cache.get(RequestConstraint("regex", "[g-i]{3}"))
    assert len(cache) == 2 and cache.get(a) is not first  # bounded: the least recently used went
    pool.shutdown()


def test_failed_compiles_are_not_kept(smollm2_vocabulary: Any) -> None:
    cache = ConstraintCache(lambda: smollm2_vocabulary)
    bad = RequestConstraint("json_schema", '{"type": "array", "minItems": 2, "maxItems": 1}')
    f1 = cache.get(bad)
    with pytest.raises(structgen.UnsatisfiableConstraint):
        f1.result()
    assert len(cache) == 0
    f2 = cache.get(bad)
    assert f2 is not f1 and isinstance(f2.exception(), structgen.UnsatisfiableConstraint)


def test_vocabulary_is_asked_for_in_the_compile(smollm2_vocabulary: Any) -> None:
    """A vocabulary still being built does not block ``get``: it is waited for in the compile."""
    ready = threading.Event()

    def vocabulary() -> Any:
        ready.wait(10)
        return smollm2_vocabulary

    cache = ConstraintCache(vocabulary)
    pool = ThreadPoolExecutor(max_workers=1)
    start = time.perf_counter()
    future = cache.get(RequestConstraint("regex", "x+"), pool.submit)
    assert time.perf_counter() - start < 1 and not future.done()
    ready.set()
    assert future.result(10).matcher.guide.accepts_bytes(b"xx")
    pool.shutdown()


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
