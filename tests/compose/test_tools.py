"""Tool calls (formats for each ``tool_choice``, parsing whole and streamed, chat messages with
tools) and reasoning (the per-row budget cursor, splitting whole and streamed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structgen
from structgen import compile_composed
from structgen.compose import Reasoning, Tool, ToolCall, parse_tool_calls, tool_calls_format
from structgen.compose.reasoning import ReasoningSplitter, split_reasoning
from structgen.guides.text_budget import TextBudget
from structgen.compose.tools import ToolCallStream, tool_messages, tools_prompt
from structgen.errors import ConstraintError, SchemaError

ADD = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"],
       "additionalProperties": False}
ECHO = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 8}}, "required": ["text"],
        "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "add", "description": "a + b", "parameters": ADD}},
         {"type": "function", "function": {"name": "echo", "parameters": ECHO}}]


def call(name: str, args: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'


@pytest.fixture(scope="module")
def vocab() -> structgen.Vocabulary:
    # bytes and a few multi-byte pieces, so that tokens cross the boundaries
    pieces = [bytes([b]) for b in range(32, 127)] + [b"\n", b"<tool_call>", b"</tool_call>", b'"}', b"}\n", b".<"]
    return structgen.Vocabulary.from_bytes(pieces + [b""], eos_token_ids=[len(pieces)])


ONE_ADD = call("add", '{"a": 1, "b": 2}')
ONE_ECHO = call("echo", '{"text": "hi"}')


@pytest.mark.parametrize(
    ("choice", "parallel", "accepted", "refused"),
    [
        ("auto", True, ["Hello.", f"Sure.{ONE_ADD}", f"{ONE_ADD} and {ONE_ECHO}", ""],
         [f"x {call('add', '{}')}", "a <tool_call> b", f"x {call('nope', '{}')}"]),
        ("auto", False, [f"ok {ONE_ADD} done"], [f"{ONE_ADD}{ONE_ECHO}"]),
        ("required", True, [ONE_ADD, f"{ONE_ADD}\n{ONE_ECHO}"], ["Hello.", f"x{ONE_ADD}", ""]),
        ("required", False, [ONE_ECHO], [f"{ONE_ADD}\n{ONE_ECHO}"]),
        ({"type": "function", "function": {"name": "echo"}}, True, [ONE_ECHO, f"{ONE_ECHO}\n{ONE_ECHO}"], [ONE_ADD]),
        ("add", False, [ONE_ADD], [ONE_ECHO, "text"]),
        ("none", True, ["Hello.", "<tool_ call"], [ONE_ADD, "<tool_call>"]),
    ],
)
def test_each_tool_choice_allows_exactly_its_outputs(vocab: Any, choice: Any, parallel: bool, accepted: list[str],
                                                     refused: list[str]) -> None:
    guide = compile_composed(tool_calls_format(TOOLS, choice, parallel=parallel), vocab)
    for text in accepted:
        assert guide.accepts_bytes(text.encode()), text
    for text in refused:
        assert not guide.accepts_bytes(text.encode()), text


def test_a_started_call_is_forced_through_its_fixed_text(vocab: Any) -> None:
    guide = compile_composed(tool_calls_format(TOOLS, "auto"), vocab)
    s = guide.advance(guide.initial_state, [vocab.tokens.index(b"<tool_call>")])
    assert guide.forced_text(s) == '\n{"name": "'
    s = guide.advance(s, [vocab.tokens.index(bytes([b])) for b in b'\n{"name": "a'])
    assert guide.forced_text(s) == 'dd", "arguments": {'


def test_tool_errors_name_the_problem(vocab: Any) -> None:
    with pytest.raises(ConstraintError, match="not among the tools"):
        tool_calls_format(TOOLS, "divide")
    with pytest.raises(ConstraintError, match="share a name"):
        tool_calls_format(TOOLS + TOOLS[:1], "auto")
    with pytest.raises(ConstraintError, match="needs at least one tool"):
        tool_calls_format([], "required")
    with pytest.raises(ConstraintError, match="without quotes"):
        Tool('a"b')
    bad = [{"type": "function", "function": {"name": "bad", "parameters": {"properties": {"x": {"minLength": -1}}}}}]
    with pytest.raises(SchemaError, match=r"^tool 'bad': invalid JSON Schema at /properties/x/minLength") as e:
        compile_composed(tool_calls_format(bad, "required"), vocab)
    assert e.value.path == "/properties/x/minLength"


def test_tools_from_pydantic_classes() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Lookup(pydantic.BaseModel):
        """Find a user by id."""

        user_id: int

    tool = Tool.of(Lookup)
    assert (tool.name, tool.description) == ("Lookup", "Find a user by id.")
    assert tool.schema()["required"] == ["user_id"] and tool.openai()["function"]["name"] == "Lookup"


def test_parse_reads_calls_and_text() -> None:
    text, calls = parse_tool_calls(f"Let me add.\n{ONE_ADD}\n{ONE_ECHO}", TOOLS)
    assert text == "Let me add."
    assert [(c.name, c.parsed) for c in calls] == [("add", {"a": 1, "b": 2}), ("echo", {"text": "hi"})]
    assert calls[0].openai()["type"] == "function" and calls[0].id.startswith("call_") and calls[0].id != calls[1].id
    tricky = call("echo", '{"text": "}\\n</tool_call>"}')  # (the end string inside the arguments' JSON)
    assert parse_tool_calls(tricky, TOOLS)[1][0].parsed == {"text": "}\n</tool_call>"}
    with pytest.raises(ConstraintError, match="does not open a complete call"):
        parse_tool_calls("<tool_call> broken", TOOLS)


@given(cuts=st.lists(st.integers(1, 200), max_size=40), which=st.integers(0, 2))
@settings(max_examples=200, deadline=None)
def test_the_stream_reads_what_parse_reads_however_the_text_is_cut(cuts: list[int], which: int) -> None:
    texts = [f"  Let me add.\n{ONE_ADD}\n{ONE_ECHO}", call("echo", '{"text": "}\\n</tool_call>"}') + " after ",
             "only <tool text, no call"]
    text = texts[which]
    points = sorted({c for c in cuts if c < len(text)})
    pieces = [text[i:j] for i, j in zip([0, *points], [*points, len(text)])]
    stream = ToolCallStream(TOOLS)
    events = [e for p in pieces for e in stream.feed(p)] + stream.feed("", final=True)
    want_text, want_calls = parse_tool_calls(text, TOOLS)
    assert "".join(e[1] for e in events if e[0] == "text") == want_text
    assert [e[2].name for e in events if e[0] == "call"] == [c.name for c in want_calls]
    args: dict[int, str] = {}
    for e in events:
        if e[0] == "arguments":
            args[e[1]] = args.get(e[1], "") + e[2]
    assert [args.get(i, "") for i in range(len(want_calls))] == [c.arguments for c in want_calls]


def test_messages_with_tools_for_a_template_that_does_not_render_them() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "1 + 2?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "3"},
        {"role": "tool", "tool_call_id": "call_2", "content": "4"},
    ]
    out = tool_messages(messages, TOOLS, native=False)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"].startswith("Be brief.\n\nYou can call functions.") and '"name": "add"' in out[0]["content"]
    assert out[2]["content"] == ONE_ADD
    assert out[3]["content"] == "<tool_response>\n3\n</tool_response>\n<tool_response>\n4\n</tool_response>"
    native = tool_messages(messages, TOOLS, native=True)
    assert native[2]["tool_calls"][0]["function"]["arguments"] == {"a": 1, "b": 2}
    assert native[3] == {"role": "tool", "content": "3", "tool_call_id": "call_1"}
    assert "<tool_call>" in tools_prompt(TOOLS) and tool_messages([{"role": "user", "content": "x"}], TOOLS,
                                                                    native=False)[0]["role"] == "system"


# -- reasoning ---------------------------------------------------------------------------------------


def test_the_budget_cursor_counts_tokens_inside_the_thinking_only() -> None:
    cursor = TextBudget(b"<think>", b"</think>", 2).cursor()
    for piece in (b"pre", b"<thi", b"nk>a"):  # the start string across tokens
        cursor.feed(piece)
        assert not cursor.closing
    cursor.feed(b"b")
    assert not cursor.closing and cursor.count == 1
    cursor.feed(b"</th")  # the second token: spent, and half the end string written already
    assert cursor.remaining == b"ink>"
    copy = cursor.copy()
    cursor.feed(b"ink>\n")
    assert not cursor.closing and cursor.phase == cursor.DONE
    assert copy.remaining == b"ink>"  # (copies are independent)
    assert TextBudget(b"", b"</t>", 0).cursor().remaining == b"</t>"  # no start string: open at once


def test_reasoning_refuses_an_end_string_that_overlaps_itself_when_bounded() -> None:
    with pytest.raises(ConstraintError, match="overlaps itself"):
        Reasoning(end="abab", max_tokens=3)
    assert Reasoning(end="abab").budget() is None
    with pytest.raises(ConstraintError, match="non-empty end"):
        Reasoning(end="")


@given(cuts=st.lists(st.integers(1, 60), max_size=20), which=st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_the_reasoning_splitter_reads_what_split_reads(cuts: list[int], which: int) -> None:
    r = Reasoning()
    text = ["<think>plan: </thin no</think>\n {\"a\": 1}", "<think>a</think>", "no thinking", "<thi"][which]
    points = sorted({c for c in cuts if c < len(text)})
    pieces = [text[i:j] for i, j in zip([0, *points], [*points, len(text)])]
    splitter = ReasoningSplitter(r)
    out = [splitter.feed(p) for p in pieces] + [splitter.feed("", final=True)]
    thinking, answer = split_reasoning(text, r)
    assert "".join(t for t, _ in out) == (thinking or "")
    assert "".join(a for _, a in out) == answer


def test_tool_call_values_are_plain_data() -> None:
    c = ToolCall("add", json.dumps({"a": 1}), id="call_x")
    assert c.openai() == {"id": "call_x", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
