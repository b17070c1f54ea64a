"""Look-arounds, ``\\b``/``\\B`` and anchors inside patterns: exact, against the ``regex`` module
(which implements look-behinds of any width), through the token engine on a real vocabulary, and
in JSON Schema ``pattern`` / ``patternProperties`` / ``propertyNames`` against ``jsonschema``."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.dfa import ByteDFA
from structgen.automata.regex import regex_to_dfa
from structgen.json_schema import schema_to_dfa

_ALPHABET = "ab-_ \n"


def _fullmatch(pattern: str, s: str) -> bool:
    return regex.fullmatch(pattern, s, flags=regex.ASCII) is not None


def _looks(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(["(?=", "(?!", "(?<=", "(?<!"]), inner).map(lambda t: f"{t[0]}{t[1]})")


_atoms = st.sampled_from(["a", "b", "-", " ", "[ab]", "[^a]", ".", r"\w", r"\W", r"\s", r"\b", r"\B", "^", "$"])


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(inner, min_size=2, max_size=3).map("".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{0,2}", "{2}"])).map(lambda t: f"(?:{t[0]}){t[1]}"),
        _looks(inner),
    )


patterns = st.recursive(_atoms, _extend, max_leaves=8)


def _compiled(pattern: str) -> ByteDFA:
    """The automaton, or a skipped example where the refusal is the documented one."""
    try:
        return regex_to_dfa(pattern, max_states=5_000)
    except structgen.RegexNotSupported as e:
        assert "inside a look-" in str(e), e  # a look-behind in a look-ahead's body, or the reverse
        assume(False)
    except structgen.CompileBudgetExceeded:
        assume(False)
    raise AssertionError  # unreachable


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(pattern=patterns, strings=st.lists(st.text(alphabet=_ALPHABET, max_size=6), min_size=8, max_size=8))
def test_fullmatch_agrees_with_the_regex_module(pattern: str, strings: list[str]) -> None:
    dfa = _compiled(pattern)
    for s in strings:
        assert dfa.accepts(s.encode()) == _fullmatch(pattern, s), (pattern, s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(pattern=patterns)
def test_every_short_string_agrees(pattern: str) -> None:
    """All strings of up to 4 characters over a small alphabet (catches what random strings miss)."""
    dfa = _compiled(pattern)
    frontier = [""]
    for _ in range(5):
        for s in frontier:
            assert dfa.accepts(s.encode()) == _fullmatch(pattern, s), (pattern, s)
        frontier = [s + c for s in frontier for c in "ab -"]


EXAMPLES = {
    r"^(?!aws:)[a-zA-Z+-=._:/]+$": (["awsx", "Aws:key", "aws", "a/b.c=d", "2"], ["aws:x", "aws:", "", "a b", "é"]),
    r"^(?!\s*$).+": (["a", " a", "x ", "\ta\t"], ["", " ", "\t \t", "  "]),
    r"^(?=.*[A-Z])(?=.*\d).{8,}$": (["Passw0rd", "12345678A", "aaaaaaA1"], ["password", "Passw0r", "PASSWORD", "pass w0rd"]),
    r"^(?!.*--)[a-z0-9-]+$": (["a-b", "abc", "-a-", "a-b-c"], ["a--b", "--", "", "A"]),
    r"[a-z.]*(?<![.])$": (["", "a", "a.b", ".a"], ["a.", ".", "a..", "A"]),
    r".*\bword\b.*": (["word", "a word here", "(word)", "word."], ["words", "sword", "a_word", "w0rd"]),
    r"(?:(?<=a)b|a|c)*": (["", "ab", "abab", "aab", "ca"], ["b", "cb", "abb"]),
    r"\w+(?=\.)\.\w+": (["a.b", "ab.cd"], ["a.", ".b", "a..b"]),
}


@pytest.mark.parametrize("pattern", EXAMPLES)
def test_examples(pattern: str) -> None:
    dfa = regex_to_dfa(pattern)
    accepted, rejected = EXAMPLES[pattern]
    for s in accepted:
        assert _fullmatch(pattern, s) and dfa.accepts(s.encode()), s
    for s in rejected:
        assert not _fullmatch(pattern, s) and not dfa.accepts(s.encode()), s


@pytest.mark.parametrize(
    ("pattern", "what"),
    [
        (r"(?=.*\bword)", "look-behind (or \\b, ^, $) inside a look-ahead"),
        (r"(?<=a(?=b))b", "look-ahead (or \\b, ^, $) inside a look-behind"),
        (r"(?=a^)", "inside a look-ahead"),
        (r"(a)(?=\1)", "back-reference"),
        (r"(?m)a^b", "multiline"),
    ],
)
def test_refused_constructs_are_named(pattern: str, what: str) -> None:
    with pytest.raises(structgen.RegexNotSupported) as e:
        regex_to_dfa(pattern)
    assert what in str(e.value)


def test_budget_applies_to_look_arounds() -> None:
    with pytest.raises(structgen.CompileBudgetExceeded):
        regex_to_dfa(r"[ab]*(?<=a[ab]{8})", max_states=100)  # (512 states)


def _walk(guide: structgen.Guide, tokenizer: Any, text: str) -> bool:
    """Whether ``text``, as the tokenizer spells it, is accepted token by token (masks checked)."""
    state = guide.initial_state
    for tid in tokenizer.encode(text, add_special_tokens=False):
        if not guide.token_mask(state)[tid]:
            assert guide.next_state(state, tid) == -1
            return False
        state = guide.next_state(state, tid)
        assert state >= 0
    return guide.is_final(state)


@pytest.mark.parametrize("pattern", list(EXAMPLES)[:6])
def test_token_engine_on_llama3(llama3_tokenizer: Any, llama3_vocabulary: structgen.Vocabulary, pattern: str) -> None:
    guide = structgen.compile_regex(pattern, llama3_vocabulary)
    accepted, rejected = EXAMPLES[pattern]
    for s in accepted:
        assert _walk(guide, llama3_tokenizer, s), s
    for s in rejected:
        assert not _walk(guide, llama3_tokenizer, s), s


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="aws:-Ab1 .", max_size=12))
def test_token_engine_agrees_with_the_regex_module(llama3_tokenizer: Any, llama3_vocabulary: structgen.Vocabulary, text: str) -> None:
    for pattern in (r"^(?!aws:)[a-zA-Z+-=._:/]+$", r"^(?=.*[A-Z])(?=.*\d).{8,}$", r".*\b1\b.*"):
        guide = structgen.compile_regex(pattern, llama3_vocabulary)  # (cached)
        assert _walk(guide, llama3_tokenizer, text) == _fullmatch(pattern, text), (pattern, text)


# ---------------------------------------------------------------------------------------------
# JSON Schema (ECMA-262 patterns are searches; jsonschema runs them with Python's re, whose
# look-behinds must have a fixed width)

_JSON_PATTERNS = [
    "^(?!aws:)[a-zA-Z+-=._:/]+$",
    r"^(?!\s*$).+",
    "^(?!.*--)[a-z0-9-]+$",
    "(?<![.])$",
    "(?<=a)b",
    "(?<!-)-(?!-)",
    r"\bab\b",
    r"a\Bb",
    "(?:^|:)b(?=:|$)",
    "(?=^[ab]+$).{1,3}$",
    "(?!^[ab]+$)([a-z_-]+)",
    "^(?!(^(a|w)s:))[a-z:]+$",
]
_INSTANCES = st.text(alphabet="aws:-b._ \n\t\"\\é", max_size=8)


def _valid(schema: dict, instance: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


def _accepted(dfa: ByteDFA, instance: Any) -> bool:
    return dfa.accepts(json.dumps(instance, ensure_ascii=False, separators=(",", ":")).encode())


@pytest.mark.slow
@pytest.mark.parametrize("pattern", _JSON_PATTERNS)
@settings(max_examples=120, deadline=None)
@given(strings=st.lists(_INSTANCES, min_size=5, max_size=5))
def test_json_pattern_agrees_with_jsonschema(pattern: str, strings: list[str]) -> None:
    schema = {"type": "string", "pattern": pattern}
    dfa = schema_to_dfa(schema, whitespace="")  # (the translation and its automaton are cached)
    # ECMA-262 over this alphabet: "$" only at the end (Python's also before a final newline),
    # \w and \b over ASCII (Python's over Unicode: "é" is a word character)
    ecma = regex.compile(pattern.replace("$", r"\Z"), flags=regex.ASCII)
    for s in strings:
        in_ecma = ecma.search(s) is not None
        # an accepted string is valid under both engines; \b and \B read ECMA's \w
        expected = in_ecma if "\\b" in pattern.lower() else in_ecma and _valid(schema, s)
        assert _accepted(dfa, s) == expected, (pattern, s)


def test_cloudformation_tag_keys_in_pattern_properties_and_property_names() -> None:
    tag_key = "^(?!aws:)[a-zA-Z+-=._:/]+$"
    schemas = [
        {"type": "object", "patternProperties": {tag_key: {"type": "string"}}, "additionalProperties": False},
        {"type": "object", "propertyNames": {"pattern": tag_key, "maxLength": 8}, "maxProperties": 2},
    ]
    instances = [{}, {"env": "prod"}, {"aws:env": "prod"}, {"Aws:x": "y"}, {"a b": "c"}, {"env": 1}, {"k/1=2": "v", "x": "y"}]
    for schema in schemas:
        dfa = schema_to_dfa(schema, whitespace="", key_order="any", extra_properties=True)
        for instance in instances:
            assert _accepted(dfa, instance) == _valid(schema, instance), (schema, instance)


def test_json_pattern_refusals_name_the_construct() -> None:
    with pytest.raises(structgen.SchemaNotSupported, match="look-behind inside a look-ahead"):
        schema_to_dfa({"type": "string", "pattern": "(?=a(?<=a))"})
    with pytest.raises(structgen.SchemaNotSupported, match="back-reference|escape"):
        schema_to_dfa({"type": "string", "pattern": r"(a)\1"})
