"""Composed guides against a reference matcher: free text, triggers and regions, exact at the
boundaries (byte level, then token by token on SmolLM2, Llama-3 and the SentencePiece tokenizer).

The reference is written from the definitions, by backtracking over every way to cut a string:
a :class:`Triggered` output is text without any trigger, then (at the first trigger occurrence)
a tag: its begin, a match of its region (Python's ``re.fullmatch``), its end; and so on; a
:class:`Tag` around :class:`Text` ends at the first occurrence of its end string.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import structgen
from structgen import compile_composed
from structgen.compose import Regex, Sequence, Tag, Text, Triggered
from structgen.errors import ConstraintError

ALPHABET = "ab<>/"


def _tag_splits(rest: str, tags: list[tuple[str, str, str]]) -> list[str]:
    """The remainders after one whole tag at the start of ``rest``."""
    out = []
    for begin, pattern, end in tags:
        if not rest.startswith(begin):
            continue
        body = rest[len(begin):]
        for j in range(len(body) + 1):
            if body.startswith(end, j) and re.fullmatch(pattern, body[:j]):
                out.append(body[j + len(end):])
    return out


def reference_triggered(s: str, triggers: list[str], tags: list[tuple[str, str, str]], lo: int, hi: int | None) -> bool:
    """Whether ``s`` is text, ``lo..hi`` tags each at the first trigger occurrence, text."""

    @lru_cache(maxsize=None)
    def ok(rest: str, count: int) -> bool:
        firsts = [i for i in (rest.find(t) for t in triggers) if i >= 0]
        if not firsts:
            return lo <= count
        if hi is not None and count >= hi:
            return False
        at = min(firsts)  # (the first occurrence starts the tag: the text before it holds none)
        return any(ok(r, count + 1) for r in _tag_splits(rest[at:], tags))

    return ok(s, 0)


def reference_thinking(s: str, begin: str, end: str, after: str) -> bool:
    """``begin``, text up to the first ``end``, then a full match of ``after``."""
    if not s.startswith(begin):
        return False
    at = s.find(end, len(begin))
    return at >= 0 and re.fullmatch(after, s[at + len(end):]) is not None


def _vocab() -> structgen.Vocabulary:
    # every short string over the alphabet is a token: tokens span every boundary
    pieces = sorted("".join(p) for n in (1, 2, 3) for p in itertools.product(ALPHABET, repeat=n))
    return structgen.Vocabulary.from_bytes([p.encode() for p in pieces] + [b""], eos_token_ids=[len(pieces)])


VOCAB = _vocab()
TEXT = st.text(ALPHABET, max_size=14)


def _accepts_tokenwise(guide: structgen.Guide, token_ids: list[int]) -> bool:
    s = guide.initial_state
    for t in token_ids:
        if not guide.token_mask(s)[t]:
            return False
        s = guide.next_state(s, t)
        if s < 0:
            return False
    return guide.is_final(s)


@given(trigger=st.sampled_from(["<a", "ab", "<", "a<a", "aa"]), text=TEXT,
       lo=st.integers(0, 1), hi=st.sampled_from([None, 1, 2]))
@example(trigger="aa", text="aaab>", lo=0, hi=None)  # a text ending in half a trigger, before the tag
@example(trigger="<", text="<b>a<b>", lo=1, hi=2)
@settings(max_examples=150, deadline=None)
def test_triggered_text_and_tags_match_the_reference(trigger: str, text: str, lo: int, hi: int | None) -> None:
    tags = [(trigger + "b", "[ab]{0,2}", ">"), (trigger + "/", "a*", "/>")]
    fmt = Triggered((trigger,), tuple(Tag(b, Regex(p), e) for b, p, e in tags), lo, hi)
    guide = compile_composed(fmt, VOCAB)
    want = reference_triggered(text, [trigger], tags, lo, hi)
    assert guide.accepts_bytes(text.encode()) == want, (trigger, text)
    # token by token, greedy longest tokens (which cross every boundary they can)
    ids, i = [], 0
    while i < len(text):
        n = min(3, len(text) - i)
        ids.append(VOCAB.tokens.index(text[i:i + n].encode()))
        i += n
    assert _accepts_tokenwise(guide, ids) == want, (trigger, text, ids)


@given(text=TEXT, end=st.sampled_from(["/>", "</", "ab", ">>"]), after=st.sampled_from(["a*", "[ab]>?", ""]))
@settings(max_examples=150, deadline=None)
def test_text_up_to_its_end_string_matches_the_reference(text: str, end: str, after: str) -> None:
    guide = compile_composed(Sequence(Tag("<", Text(), end), Regex(after)), VOCAB)
    assert guide.accepts_bytes(text.encode()) == reference_thinking(text, "<", end, after), (text, end, after)


@given(text=st.text(ALPHABET, max_size=10))
@settings(max_examples=100, deadline=None)
def test_text_without_strings_is_the_complement(text: str) -> None:
    guide = compile_composed(Text(exclude=("ab", "<>")), VOCAB)
    assert guide.accepts_bytes(text.encode()) == ("ab" not in text and "<>" not in text)


def test_a_token_may_carry_the_end_of_the_text_and_the_start_of_the_tag() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"x", b"x<t", b"<t", b">", b"1", b"1>", b""], eos_token_ids=[6])
    guide = compile_composed(Triggered(("<t",), (Tag("<t>", Regex("[0-9]"), ">"),)), vocab)
    s = guide.next_state(guide.initial_state, 1)  # "x<t": text and the trigger in one token
    assert s >= 0 and not guide.is_final(s)
    assert guide.allowed_token_ids(s).tolist() == [3]  # only ">" may follow the trigger
    s = guide.advance(s, [3, 5])  # ">" "1>"
    assert guide.is_final(s)


def test_bad_formats_are_refused_with_the_reason() -> None:
    with pytest.raises(ConstraintError, match="starts with 0 of the triggers"):
        Triggered(("<a",), (Tag("<b", Regex("x"), ">"),))
    with pytest.raises(ConstraintError, match="occurs inside trigger"):
        Triggered(("<", "x<"), (Tag("<a", Regex("x"), ">"),))
    with pytest.raises(ConstraintError, match="non-empty end string"):
        Tag("<", Text(), "")
    with pytest.raises(ConstraintError, match="not a range"):
        Triggered(("<",), (Tag("<", Regex("x"), ">"),), 2, 1)
    with pytest.raises(ConstraintError, match="formats"):
        Sequence("text")  # type: ignore[arg-type]
    with pytest.raises(structgen.UnsatisfiableConstraint):
        compile_composed(Sequence(Tag("<", Text(), ">"), Regex("z")), VOCAB)  # no token spells "z"


# -- tool calls on real tokenizers ---------------------------------------------------------------


def _corpus_tools() -> list[tuple[str, dict[str, Any], list[Any], list[Any]]]:
    import json

    from ..support.paths import CORPUS

    out = []
    for path in sorted(CORPUS.glob("fn_*.json"))[2:5]:
        data = json.loads(path.read_text())
        out.append((path.stem[3:], data["schema"], data["valid"], data["invalid"]))
    return out


TOOLS = _corpus_tools()
TOKENIZERS = ["smollm2", "llama3", "mistral"]


def _call(name: str, value: Any, compact: bool) -> str:
    import json

    args = json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else (", ", ": "))
    return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'


@pytest.mark.parametrize("tokenizer_name", TOKENIZERS)
def test_tool_calls_are_exact_token_by_token_on_real_tokenizers(tokenizer_name: str, request: pytest.FixtureRequest) -> None:
    from structgen.compose import tool_calls_format

    tokenizer = request.getfixturevalue(f"{tokenizer_name}_tokenizer")
    vocab = request.getfixturevalue(f"{tokenizer_name}_vocabulary")
    tools = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s, _, _ in TOOLS]
    guide = compile_composed(tool_calls_format(tools, "auto"), vocab)

    def ok(text: str) -> bool:
        ids = tokenizer.encode(text, add_special_tokens=False)
        return guide.accepts_bytes(text.encode()) and _accepts_tokenwise(guide, ids)

    for k, (name, _, valid, invalid) in enumerate(TOOLS):
        for j, value in enumerate(valid):
            call = _call(name, value, compact=bool(j % 2))
            assert ok(f"Let me look.{call}"), (name, value)  # a token may span "." and "<"
            assert ok(f"{call} Done: <tool <call> {call}"), (name, value)
        for value in invalid:
            assert not guide.accepts_bytes(f"x {_call(name, value, compact=False)}".encode()), (name, value)
        other = TOOLS[(k + 1) % len(TOOLS)][0]
        assert not ok(f"no {_call(other + 'x', valid[0], compact=False)}")  # no such tool
    assert ok("Just text, <tool_ and tool_call> are fine.")
    assert not ok("text with a <tool_call> that is not a call")
