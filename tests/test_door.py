"""The door (structgen.compile): one compile for every format, one cache (vocabulary-independent
automata, then one cache of guides per vocabulary), one set of checks after compile, options as
one object that names an unknown one, and the public compile_* functions as thin wrappers."""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

import pytest

import structgen
from structgen import compiler
from structgen.errors import ConstraintError, SchemaError, UnsatisfiableConstraint
from structgen.formats import (Choice, Extract, Grammar, JsonSchema, Literal, Regex, SchemaOptions, Sequence, Tag, Text,
                               Triggered, option_names)
from structgen.guides.dfa_guide import DfaGuide
from structgen.guides.pushdown import PushdownGuide

LETTERS = [bytes([c]) for c in b'abcdefghijklmnopqrstuvwxyz0123456789{}[]":, <>/_-']


def vocab() -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes([*LETTERS, None], eos_token_ids=[len(LETTERS)])


SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


@pytest.fixture(autouse=True)
def fresh_cache() -> Any:
    structgen.clear_cache()
    yield
    compiler.set_cache_limits()


def count_front_end(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each format the front ends compile (a cache miss of the automata)."""
    seen: list[str] = []
    real = compiler._front_end

    def spy(fmt: Any) -> Any:
        seen.append(type(fmt).__name__)
        return real(fmt)

    monkeypatch.setattr(compiler, "_front_end", spy)
    return seen


def test_the_wrappers_are_the_door() -> None:
    v = vocab()
    assert structgen.compile_regex("ab|c", v) is structgen.compile(Regex("ab|c"), v)
    assert structgen.compile_json_schema(SCHEMA, v, whitespace="") is structgen.compile(
        JsonSchema(SCHEMA, SchemaOptions(whitespace="")), v)
    assert structgen.compile_extract("abc def", v, min_length=1) is structgen.compile(Extract("abc def", 1), v)
    fmt = Tag("<", Text(), ">")
    assert structgen.compile_composed(fmt, v) is structgen.compile(fmt, v)


def test_one_cache_of_guides_per_vocabulary(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = count_front_end(monkeypatch)
    a, b = vocab(), vocab()
    ga, gb = structgen.compile(Regex("[a-c]+"), a), structgen.compile(Regex("[a-c]+"), b)
    assert ga is not gb and ga.vocabulary is a and gb.vocabulary is b
    assert seen == ["Regex"]  # the automata are shared: one front-end compile for both vocabularies
    assert compiler.is_cached(Regex("[a-c]+"), a) and not compiler.is_cached(Regex("[a-d]+"), a)


def test_a_schema_compiles_once_alone_or_as_a_region(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = count_front_end(monkeypatch)
    v = vocab()
    alone = structgen.compile(JsonSchema(SCHEMA), v)
    assert isinstance(alone, DfaGuide)
    assert structgen.compile(Sequence(JsonSchema(SCHEMA)), v) is not alone  # (another format: its own guide)
    structgen.compile(Sequence(Literal("<"), JsonSchema(SCHEMA), Literal(">")), v)
    assert seen.count("JsonSchema") == 1  # the schema's automata were compiled once, and shared


def test_a_composed_format_that_calls_nothing_is_a_flat_guide() -> None:
    v = vocab()
    assert isinstance(structgen.compile(Sequence(Literal("ab"), Regex("[0-9]+")), v), DfaGuide)
    assert isinstance(structgen.compile(Tag("<", Text(), ">"), v), PushdownGuide)  # (the text is a call)


def test_concurrent_compiles_of_one_format_share_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []
    real = compiler._front_end

    def slow(fmt: Any) -> Any:
        calls.append(1)
        started.set()
        release.wait(10)
        return real(fmt)

    monkeypatch.setattr(compiler, "_front_end", slow)
    v = vocab()
    got: list[Any] = []
    threads = [threading.Thread(target=lambda: got.append(structgen.compile(Regex("x+y"), v))) for _ in range(3)]
    for t in threads:
        t.start()
    started.wait(10)
    time.sleep(0.05)
    release.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(got) == 3 and got[0] is got[1] is got[2]


def test_a_failed_compile_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = count_front_end(monkeypatch)
    bad = JsonSchema({"type": "array", "minItems": 2, "maxItems": 1})
    for _ in range(2):
        with pytest.raises(UnsatisfiableConstraint, match="minItems 2 > maxItems 1"):
            structgen.compile(bad, vocab())
    assert seen == ["JsonSchema", "JsonSchema"]


def test_a_vocabulary_and_its_guides_go_once_no_one_holds_them() -> None:
    """The guides' cache of a vocabulary lives on the vocabulary: keyed by it in a module's weak
    dictionary, its guides (which hold their vocabulary) kept it, and them, for good. It is not
    pickled with the vocabulary."""
    import gc
    import pickle
    import weakref

    v = vocab()
    g = structgen.compile(Regex("[a-c]+"), v)
    assert compiler.is_cached(Regex("[a-c]+"), v)
    gone = weakref.ref(v)
    del v, g
    gc.collect()
    assert gone() is None
    v = vocab()
    g = structgen.compile(Regex("[a-c]+"), v)
    assert pickle.loads(pickle.dumps(v))._guide_cache is None and pickle.loads(pickle.dumps(g)).vocabulary.size == v.size


def test_the_caches_are_bounded() -> None:
    compiler.set_cache_limits(entries=2)
    v = vocab()
    first = structgen.compile(Regex("a"), v)
    structgen.compile(Regex("b"), v)
    structgen.compile(Regex("c"), v)
    assert not compiler.is_cached(Regex("a"), v) and structgen.compile(Regex("a"), v) is not first
    with pytest.raises(ValueError, match="cache limits must be positive"):
        compiler.set_cache_limits(entries=0)


def test_checks_after_compile_are_one_for_every_kind_of_guide() -> None:
    v = structgen.Vocabulary.from_bytes([b"a", b"<", b">", None], eos_token_ids=[3])
    with pytest.raises(UnsatisfiableConstraint, match="no string matches regex"):
        structgen.compile(Regex("a(?=b)"), v)
    with pytest.raises(UnsatisfiableConstraint, match="needs bytes that no token"):
        structgen.compile(Regex("z"), v)
    with pytest.raises(UnsatisfiableConstraint, match="can be spelt with the tokens"):
        structgen.compile(Sequence(Tag("<", Text(), ">"), Regex("z")), v)  # a pushdown guide: the same check


def test_errors_in_a_named_region_say_so() -> None:
    with pytest.raises(SchemaError) as info:
        structgen.compile(Sequence(Literal("x"), JsonSchema({"type": "nope"}, name="tool 'add'")), vocab())
    assert info.value.region == "tool 'add'" and info.value.path == "/type"
    assert str(info.value).startswith("tool 'add': invalid JSON Schema at /type")
    with pytest.raises(SchemaError) as alone:
        structgen.compile(JsonSchema({"type": "nope"}), vocab())
    assert alone.value.region is None


def test_warnings_are_given_on_every_call_and_name_the_caller() -> None:
    schema = {"type": "string", "format": "no-such-format"}
    for _ in range(2):  # the second call is a cache hit
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            structgen.compile(JsonSchema(schema), vocab())
        assert [type(w.message).__name__ for w in caught] == ["AnnotationWarning"]
        assert caught[0].filename == __file__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        structgen.compile(Sequence(Literal("x"), JsonSchema(schema)), vocab())  # a region's warnings too
    assert len(caught) == 1 and caught[0].filename == __file__


def test_unknown_keywords_error_is_not_skipped_by_a_cached_annotate() -> None:
    schema = {"type": "string", "propertes": {}}
    with pytest.warns(structgen.UnknownKeywordWarning):
        structgen.compile(JsonSchema(schema), vocab())
    with pytest.raises(structgen.SchemaNotSupported, match="propertes"):
        structgen.compile(JsonSchema(schema, unknown_keywords="error"), vocab())


def test_schemas_that_differ_only_in_their_properties_order_write_their_own_order() -> None:
    """The engine writes an object's keys in its schema's order (each key prompts its value:
    a reasoning field put before the answer is written first), so two schemas that differ only
    in that order are two guides, whichever compiles first, and two such objects inside one
    schema are two terms (the memo's key is the sub-schema's text)."""
    def props(*names: str) -> dict[str, Any]:
        return {"type": "object", "properties": {n: {"type": "integer"} for n in names}, "required": sorted(names),
                "additionalProperties": False}

    def first_key(schema: dict[str, Any], prefix: bytes = b'{"') -> bytes:
        guide = structgen.compile(JsonSchema(schema, whitespace=""), vocab())
        return guide.forced_bytes(guide.advance(guide.initial_state, [LETTERS.index(bytes([c])) for c in prefix]))

    for order in ((("a", "b"), ("b", "a")), (("b", "a"), ("a", "b"))):
        compiler.clear_cache()
        for names in order:
            assert first_key(props(*names)) == names[0].encode() + b'":'
    both = {"type": "object", "properties": {"x": props("a", "b"), "y": props("b", "a")}, "required": ["x", "y"],
            "additionalProperties": False}
    assert first_key(both, b'{"x":{"') == b'a":' and first_key(both, b'{"x":{"a":1,"b":2},"y":{"') == b'b":'


def test_options_are_one_object_and_an_unknown_one_is_named() -> None:
    assert JsonSchema(SCHEMA, whitespace="").options == SchemaOptions(whitespace="")
    assert JsonSchema(SCHEMA, SchemaOptions(key_order="any"), whitespace="").options == SchemaOptions(
        whitespace="", key_order="any")
    with pytest.raises(TypeError, match="whitspace"):
        JsonSchema(SCHEMA, whitspace="")
    with pytest.raises(TypeError, match="whitspace"):
        structgen.compile_json_schema(SCHEMA, vocab(), whitspace="")
    with pytest.raises(ConstraintError, match=r"unknown option 'whitspace' for a JSON Schema \(known: dialect, "):
        JsonSchema.from_options(SCHEMA, {"whitspace": ""})
    with pytest.raises(ConstraintError, match="unknown option 'pattern' for a regex"):
        Regex.from_options("a", {"pattern": "b"})
    with pytest.raises(ConstraintError, match="option max_length of an extract constraint must be of type int or null"):
        Extract.from_options("doc", None, {"max_length": "3"})
    assert set(option_names("json_schema")) == set(SchemaOptions.__dataclass_fields__)
    assert JsonSchema.from_options(SCHEMA, {"unknown_keywords": "error", "max_states": 10}).options.max_states == 10


def test_formats_are_checked_when_made() -> None:
    with pytest.raises(ValueError, match="max_states must be a positive int"):
        Regex("a", 0)
    with pytest.raises(TypeError, match="a regex pattern is a str"):
        Regex(b"a")  # type: ignore[arg-type]
    with pytest.raises(ConstraintError, match="Choice\\(\\) needs at least one part"):
        Choice()
    with pytest.raises(ConstraintError, match="each tag's begin must start with exactly one trigger"):
        Triggered(("<a",), (Tag("<b>", Text(), "</b>"),))
    with pytest.raises(TypeError, match="compile needs a format"):
        structgen.compile("a+", vocab())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="compile needs a structgen.Vocabulary"):
        structgen.compile(Regex("a"), ["a"])  # type: ignore[arg-type]


def test_warm_computes_the_first_masks() -> None:
    v = vocab()
    small = structgen.compile(Regex("ab|cd"), v, warm=True)
    assert isinstance(small, DfaGuide) and len(small._masks) == small.num_states  # every state's mask
    big = structgen.compile(JsonSchema(SCHEMA), v, warm=True)
    assert big.initial_state in big._masks


def test_a_grammar_is_one_more_format_through_the_door(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = count_front_end(monkeypatch)
    v = vocab()
    text = 'root ::= expr\nexpr ::= expr "-" term | term\nterm ::= [0-9] | "[" expr "]"'
    guide = structgen.compile_grammar(text, v)
    assert guide is structgen.compile(Grammar(text), v) and guide.description.startswith("grammar ")
    assert guide.accepts_bytes(b"[1-2]-3") and not guide.accepts_bytes(b"1-") and not guide.accepts_bytes(b"[1")
    # a region of a composed format: the grammar's automata compiled once, its root inlined
    composed = structgen.compile(Sequence(Literal("<"), Grammar(text), Literal(">")), v)
    assert composed.accepts_bytes(b"<1-[2]>") and not composed.accepts_bytes(b"<>")
    assert seen.count("Grammar") == 1
    # a grammar that derives the empty string, inlined where a call could not be
    empty_ok = structgen.compile(Sequence(Literal("<"), Grammar('start: "a"*'), Literal(">")), v)
    assert empty_ok.accepts_bytes(b"<>") and empty_ok.accepts_bytes(b"<aa>")


def test_a_grammars_json_goes_through_the_door(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = count_front_end(monkeypatch)
    text = 'start: "x:" value\nvalue: %json {"type": "string", "format": "no-such-format"}'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        guide = structgen.compile(Grammar(text), vocab())
    assert guide.accepts_bytes(b'x:"a"') and not guide.accepts_bytes(b"x:1")
    assert seen == ["Grammar", "JsonSchema"]  # (the %json schema through the door's cache)
    assert [type(w.message).__name__ for w in caught] == ["AnnotationWarning"] and caught[0].filename == __file__
    with pytest.raises(ConstraintError, match="grammar syntax must be one of"):
        Grammar("start: 'a'", syntax="peg")
