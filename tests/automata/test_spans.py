"""Extract-only spans: outputs are verbatim substrings of the documents (structgen.automata.spans)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.dfa import ByteDFA
from structgen.vocab.index import token_trie
from structgen.vocab.trie import walk_tokens
from structgen.json_schema import schema_to_dfa
from structgen.guides.dfa_guide import DfaGuide
from structgen.automata.spans import extract_dfa, json_span_dfa, span_dfa
from ..support.paths import EXAMPLES

ALPHABET = ["a", "b", " ", '"', "\\", "\n", "\t", "\x01", "\x1f", "/", "é", "😀", "\x7f", "\u2028"]
documents = st.lists(st.sampled_from(ALPHABET), max_size=24).map("".join)
S = {"type": "string"}


def sample(dfa: ByteDFA, rng: random.Random, steps: int = 80) -> bytes:
    """A random accepted string: random bytes for a while, then the shortest way to a final state."""
    out = bytearray()
    s = 0
    table = dfa.transitions[:, dfa.byte_classes]  # [state, byte]
    dist = dfa.distances
    for i in range(10_000):
        ways = np.flatnonzero(table[s] >= 0)
        if dfa.finals[s] and (i >= steps or not ways.size or rng.random() < 0.1):
            return bytes(out)
        if i >= steps:  # head for a final state
            ways = ways[dist[table[s, ways]] < dist[s]]
        b = int(rng.choice(ways.tolist()))
        out.append(b)
        s = int(table[s, b])
    raise AssertionError("no final state reached")


def spans_of(doc: str, rng: random.Random, k: int = 6) -> list[str]:
    out = [""]
    for _ in range(k):
        i = rng.randrange(len(doc) + 1)
        out.append(doc[i : rng.randrange(i, len(doc) + 1)])
    return out


def string_values(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [s for x in v.values() for s in string_values(x)]
    if isinstance(v, list):
        return [s for x in v for s in string_values(x)]
    return []


def is_span(text: str, docs: list[str]) -> bool:
    return any(text in d for d in docs)


# -- the automata ------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(documents, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_plain_spans_are_exactly_the_substrings(docs: list[str], rng: random.Random) -> None:
    dfa = span_dfa(docs)
    for d in docs:
        for span in spans_of(d, rng):
            assert dfa.accepts(span.encode())
    for _ in range(8):
        out = sample(dfa, rng).decode("utf-8")  # (valid UTF-8 by construction)
        assert is_span(out, docs), out
    probe = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 5)))
    assert dfa.accepts(probe.encode()) == is_span(probe, docs)


@settings(max_examples=60, deadline=None)
@given(documents, st.randoms(use_true_random=False))
def test_json_bodies_are_escaped_substrings(doc: str, rng: random.Random) -> None:
    dfa = json_span_dfa([doc])
    for span in spans_of(doc, rng):
        assert dfa.accepts(json.dumps(span, ensure_ascii=False)[1:-1].encode())
        assert dfa.accepts(json.dumps(span, ensure_ascii=False)[1:-1].replace("/", "\\/").encode())
    for _ in range(8):
        body = sample(dfa, rng)
        assert json.loads(b'"' + body + b'"') in doc


SCHEMAS = [
    S,
    {"type": "string", "minLength": 1},
    {"type": "string", "minLength": 2, "maxLength": 3},
    {"type": "string", "pattern": "^a"},
    {"type": "array", "items": S, "maxItems": 3},
    {"type": "object", "properties": {"q": S, "n": {"type": "integer"}}, "required": ["q"]},
    {"type": "object", "properties": {"q": {"type": "string", "x-extract": True}, "free": S}, "required": ["q", "free"]},
    {"anyOf": [{"type": "string", "x-extract": True}, {"type": "string", "maxLength": 1}]},
    {"type": "object"},
]


def _marked(schema: Any) -> bool:
    return "x-extract" in json.dumps(schema)


def _checked_values(schema: dict, value: Any) -> list[str]:
    """The string values of ``value`` that the schema makes spans."""
    if not _marked(schema):
        return string_values(value)
    if schema.get("type") == "object":
        return [value["q"]]
    return []  # (anyOf: either branch; checked against the branches below)


@pytest.mark.slow
@pytest.mark.parametrize("k", range(len(SCHEMAS)))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents, rng=st.randoms(use_true_random=False))
def test_schema_outputs_are_spans(k: int, doc: str, rng: random.Random) -> None:
    import jsonschema

    schema = SCHEMAS[k]
    try:
        dfa = schema_to_dfa(schema, extract_from=[doc])
    except structgen.UnsatisfiableConstraint:
        assert len(doc) < 2 or k == 3  # (no span of 2 characters, or none starting with "a")
        return
    for _ in range(6):
        value = json.loads(sample(dfa, rng))
        jsonschema.validate(value, schema)
        for s in _checked_values(schema, value):
            assert s in doc, (s, doc)
        if k == 7:
            assert value in doc or len(value) <= 1
    for span in spans_of(doc, rng):  # every span fits where the schema allows it
        value = {0: span, 1: span, 2: span[:3], 3: span, 4: [span, span], 5: {"q": span}, 6: {"q": span, "free": "zz"},
                 7: span, 8: {"k": span}}[k]
        try:
            jsonschema.validate(value, schema)
        except jsonschema.ValidationError:
            continue
        for text in (json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=False, separators=(",", ":"))):
            assert dfa.accepts(text.encode()), text


def test_non_spans_are_rejected_and_keys_are_free() -> None:
    doc = 'He said "hi"\\ then\nleft. Café 😀'
    dfa = schema_to_dfa({"type": "object", "additionalProperties": S}, extract_from=doc)
    assert dfa.accepts('{"any key": "said \\"hi\\"\\\\ then\\nleft"}'.encode())
    assert dfa.accepts('{"k": "Café 😀"}'.encode())
    for bad in ('{"k": "hello"}', '{"k": "Cafe"}', '{"k": "said \\"hi\\"\\\\ then\\u000aleft"}'):
        assert not dfa.accepts(bad.encode()), bad


@pytest.mark.slow
def test_marked_mode_enum_and_any_value() -> None:
    doc = "red green"
    dfa = schema_to_dfa({"enum": ["red", "blue", 1]}, extract_from=doc)
    assert dfa.accepts(b'"red"') and dfa.accepts(b"1") and not dfa.accepts(b'"blue"')
    dfa = schema_to_dfa({"properties": {"c": {"enum": ["red", "blue"]}, "s": {"x-extract": True}}}, extract_from=doc)
    assert dfa.accepts(b'{"c": "blue", "s": "een"}') and not dfa.accepts(b'{"s": "blue"}')
    dfa = schema_to_dfa({"type": "array"}, extract_from=doc)  # any value inside: strings are spans
    assert dfa.accepts(b'["red", {"x": ["gre"]}]') and not dfa.accepts(b'["blue"]')
    with pytest.raises(structgen.UnsatisfiableConstraint, match="enum"):
        schema_to_dfa({"const": "blue"}, extract_from=doc)


def test_anyof_after_the_same_quote_falls_back_exactly() -> None:
    doc = "abc xyz"
    schema = {"anyOf": [{"type": "string", "x-extract": True}, {"type": "string", "pattern": "^q+$"}]}
    dfa = schema_to_dfa(schema, extract_from=doc)
    for s, ok in (("bc x", True), ("qqq", True), ("", True), ("cb", False), ("qa", False)):
        assert dfa.accepts(json.dumps(s).encode()) == ok, s


# -- compile_extract vs brute force ------------------------------------------------------------------


def _brute(docs: list[str], lo: int, hi: int | None, pattern: str | None, probe: list[str]) -> None:
    dfa = extract_dfa(docs, min_length=lo, max_length=hi, pattern=pattern)
    for s in probe:
        want = is_span(s, docs) and len(s) >= lo and (hi is None or len(s) <= hi)
        want = want and (pattern is None or re.fullmatch(pattern, s, re.ASCII) is not None)  # (\\w is ASCII here)
        assert dfa.accepts(s.encode("utf-8")) == want, (s, lo, hi, pattern)


@pytest.mark.parametrize(
    ("lo", "hi", "pattern"),
    [(0, None, None), (1, None, None), (2, None, None), (0, 2, None), (1, 3, None), (0, None, r"[a-z]+"), (2, 4, r"\w+ ?")],
)
def test_compile_extract_vs_brute_force(lo: int, hi: int | None, pattern: str | None) -> None:
    docs = ["ab ba😀 b", "éa"]
    alphabet = sorted(set("".join(docs)))
    probe = [""] + [a for a in alphabet]
    probe += [a + b for a in alphabet for b in alphabet]
    probe += [a + b + c for a in alphabet for b in alphabet for c in alphabet]
    probe += [d[i:j] for d in docs for i in range(len(d) + 1) for j in range(i, len(d) + 1)]
    _brute(docs, lo, hi, pattern, probe)


def test_token_level_acceptance(smollm2_vocabulary: Any, smollm2_tokenizer: Any) -> None:
    doc = 'Revenue rose 17% to $1.2M in Q3 ("unaudited"), said the CFO.\nCafé 😀 next.'
    guide = structgen.compile_extract(doc, smollm2_vocabulary, min_length=1)
    assert not guide.is_final(guide.initial_state)
    for span in ("Revenue rose 17%", 'said the CFO.\nCafé 😀', "😀 next.", doc):
        s = guide.advance(guide.initial_state, smollm2_tokenizer.encode(span, add_special_tokens=False))
        assert s >= 0 and guide.is_final(s), span
    assert guide.advance(guide.initial_state, smollm2_tokenizer.encode("Revenue fell", add_special_tokens=False)) < 0
    schema = {"type": "object", "properties": {"quote": {"type": "string", "x-extract": True}}, "required": ["quote"]}
    jguide = structgen.compile_json_schema(schema, smollm2_vocabulary, extract_from=[doc, "other text"])
    for text in ('{"quote": "(\\"unaudited\\"), said"}', '{"quote":"other"}', '{"quote": "CFO.\\nCafé"}'):
        s = jguide.advance(0, smollm2_tokenizer.encode(text, add_special_tokens=False))
        assert s >= 0 and jguide.is_final(s), text
    assert jguide.advance(0, smollm2_tokenizer.encode('{"quote": "CFO said"}', add_special_tokens=False)) < 0
    # Every allowed token along a random walk keeps the output a span.
    rng = random.Random(0)
    s, out = guide.initial_state, b""
    eos = set(smollm2_vocabulary.eos_token_ids)
    for _ in range(30):
        ids = [i for i in guide.allowed_token_ids(s).tolist() if i not in eos]
        if not ids:
            break
        t = rng.choice(ids)
        s, out = guide.next_state(s, t), out + smollm2_vocabulary.tokens[t]
    assert guide.is_final(s) or guide.automaton.walk(0, out) == s
    text = out.decode("utf-8", "ignore")
    assert text in doc


def _compare_walks(guide: Any, trie: Any, vocab: Any, states: int = 40) -> int:
    """The compiled trie walk (:func:`walk_tokens`) against each token walked on its own through
    the automaton, from the first ``states`` states ``precompute`` builds; returns how many."""
    guide.precompute()
    auto = guide.automaton
    checked = 0
    for state in range(min(states, guide.num_states)):
        found = walk_tokens(auto, trie, state)
        expected = {}
        for i in trie.token_ids.tolist():
            t = auto.walk(state, vocab.tokens[i])
            if t >= 0:
                expected[i] = t
        assert dict(zip(found[0].tolist(), found[1].tolist())) == expected
        assert len(set(found[0].tolist())) == found[0].size  # (each token once)
        checked += 1
    return checked


def test_the_trie_walk_reads_what_each_token_reads(smollm2_vocabulary: Any) -> None:
    trie = token_trie(smollm2_vocabulary)
    for guide in (
        structgen.compile_extract("the cat sat on the mat 😀 \"x\"", smollm2_vocabulary),
        structgen.compile_regex(r"[a-c]{2,5}(-\d+)?", smollm2_vocabulary),
        structgen.compile_json_schema({"type": "object", "properties": {"a": S}}, smollm2_vocabulary),
    ):
        assert _compare_walks(guide, trie, smollm2_vocabulary, 12) > 0


def test_the_trie_walk_of_wide_states_reads_what_each_token_reads(smollm2_vocabulary: Any) -> None:
    """Wide states too (a string's characters: more edges than a trie node has children, and
    the reverse)."""
    trie = token_trie(smollm2_vocabulary)
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}, "b": {"enum": ["x\n", "é"]}}}
    guide = DfaGuide(schema_to_dfa(schema), smollm2_vocabulary)
    assert _compare_walks(guide, trie, smollm2_vocabulary, 30) == min(30, guide.num_states)


def test_lists_of_documents_and_cache_keys(smollm2_vocabulary: Any) -> None:
    a = structgen.compile_extract(["alpha beta", "gamma"], smollm2_vocabulary)
    assert a.accepts_bytes(b"ha be") and a.accepts_bytes(b"gam") and not a.accepts_bytes(b"betagamma")
    assert structgen.compile_extract(["alpha beta", "gamma"], smollm2_vocabulary) is a
    assert structgen.compile_extract(["alpha beta"], smollm2_vocabulary) is not a
    j1 = structgen.compile_json_schema(S, smollm2_vocabulary, extract_from="one")
    j2 = structgen.compile_json_schema(S, smollm2_vocabulary, extract_from="two")
    assert j1 is not j2 and j1.accepts_bytes(b'"on"') and not j2.accepts_bytes(b'"on"')


def test_errors(smollm2_vocabulary: Any) -> None:
    v = smollm2_vocabulary
    with pytest.raises(structgen.ConstraintError, match="empty list"):
        structgen.compile_extract([], v)
    with pytest.raises(TypeError, match=r"document\[1\] must be a str, not int"):
        structgen.compile_extract(["a", 3], v)
    with pytest.raises(TypeError, match="extract_from must be a str or a list of str, not bytes"):
        structgen.compile_json_schema(S, v, extract_from=b"abc")
    with pytest.raises(structgen.ConstraintError, match="lone surrogate"):
        structgen.compile_extract("a\ud800b", v)
    with pytest.raises(structgen.UnsatisfiableConstraint, match="no span of the document has 5.. characters"):
        structgen.compile_extract("abc", v, min_length=5)
    with pytest.raises(structgen.UnsatisfiableConstraint, match="matching"):
        structgen.compile_extract("abc", v, pattern=r"\d+")
    with pytest.raises(ValueError, match="max_length"):
        structgen.compile_extract("abc", v, min_length=3, max_length=2)
    with pytest.raises(structgen.SchemaNotSupported, match="x-extract") as e:
        structgen.compile_json_schema({"properties": {"a": {"type": "string", "x-extract": True}}}, v)
    assert e.value.keyword == "x-extract" and e.value.path == "/properties/a/x-extract"
    with pytest.raises(structgen.UnsatisfiableConstraint, match="minLength, maxLength") as u:
        structgen.compile_json_schema({"type": "object", "properties": {"a": {"type": "string", "minLength": 4, "maxLength": 5}}, "required": ["a"]},
                                      v, extract_from="abc")
    assert u.value.path == "/properties/a"
    with pytest.raises(structgen.UnsatisfiableConstraint, match="non-empty"):
        structgen.compile_json_schema({"type": "string", "minLength": 1}, v, extract_from="")
    with pytest.raises(structgen.CompileBudgetExceeded, match="span automaton"):
        structgen.compile_extract("abcdefghij" * 10, v, max_states=50)


@pytest.mark.model
@pytest.mark.timeout(300)
def test_rag_extract_example_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    """``python examples/rag_extract.py``: every printed answer is a span of its retrieved document."""
    import runpy

    ns = runpy.run_path(str(EXAMPLES / "rag_extract.py"), run_name="rag_extract")
    ns["main"]()
    out = capsys.readouterr().out
    answers = re.findall(r"document: (\w+)\n   (\{.*\})", out)
    assert len(answers) == len(ns["QUESTIONS"])
    for name, text in answers:
        assert json.loads(text)["answer"] in ns["DOCUMENTS"][name]
