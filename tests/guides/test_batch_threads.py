"""The batch fill on native threads (``fill_next_token_bitmasks(..., threads=T)``): the rows' cold
work is done first by :func:`structgen._engine.prefetch` on native threads, rows of one expression
pool on one thread, the GIL held; the bitmasks are the one-thread fill's, bit for bit, at every
step of a batch of real schemas, grammars and regexes on Llama-3 (the oracle: the serial fill,
which the differential tests of the frames and masks check against ``next_state``)."""

from __future__ import annotations

import json
import multiprocessing
from typing import Any

import numpy as np
import pytest

import structgen
from structgen import _engine
from structgen.guides import cursor as cursor_module
from structgen.guides.cursor import Cursor, default_threads, fill_next_token_bitmasks
from structgen.guides.matcher import Matcher
from structgen.guides.pushdown import PushdownGuide

from ..support.json_order import in_schema_order
from ..support.paths import ROOT


def _rows(vocab: structgen.Vocabulary, tok: Any) -> list[tuple[structgen.Guide, list[int]]]:
    """(guide, tokens of a valid output) for the corpus's schemas (each twice: two rows on one
    guide share its pool), grammars and regexes, compiled afresh (no warm caches)."""
    structgen.compiler.clear_cache()
    rows = []
    for path in sorted((ROOT / "benchmarks" / "corpus").glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case.get("valid"):
            guide = structgen.compile_json_schema(case["schema"], vocab)
            ids = tok.encode(json.dumps(in_schema_order(case["valid"][0], case["schema"])), add_special_tokens=False)
            rows += [(guide, ids), (guide, ids[: len(ids) // 2])]
    for name, compile_ in [("json.gbnf", None), ("sql-select.lark", None), ("email.regex", "regex"), ("url.regex", "regex")]:
        text = (ROOT / "grammars" / name).read_text(encoding="utf-8")
        sample = json.loads((ROOT / "grammars" / (name.rsplit(".", 1)[0] + ".valid.jsonl")).read_text().splitlines()[0])
        guide = (structgen.compile_regex(text.strip(), vocab) if compile_ else
                 structgen.compile_grammar(text, vocab, syntax=name.rsplit(".", 1)[1]))
        rows.append((guide, tok.encode(sample if isinstance(sample, str) else json.dumps(sample), add_special_tokens=False)))
    return rows


def _run(vocab: structgen.Vocabulary, tok: Any, threads: int) -> list[np.ndarray]:
    """The bitmask of every lock-step of the rows, each row leaving once its tokens are spent."""
    rows = _rows(vocab, tok)
    cursors = [Cursor(Matcher.of(guide, vocab.size)) for guide, _ in rows]
    bitmask = Matcher.allocate_token_bitmask(len(rows), vocab.size)
    steps, live, k = [], [i for i in range(len(rows)) if rows[i][1]], 0
    while live:
        fill_next_token_bitmasks([cursors[i] for i in live], bitmask, threads=threads)
        steps.append(bitmask[: len(live)].copy())
        for i in live:
            assert cursors[i].accept(rows[i][1][k]), (i, k)
        k += 1
        live = [i for i in live if k < len(rows[i][1])]
    return steps


def test_the_threaded_fill_is_the_one_thread_fill(llama3_vocabulary: structgen.Vocabulary, llama3_tokenizer: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    work: list[tuple[int, int, int, int, int]] = []

    def counted(frames: list[Any], masks: list[Any], threads: int, states: list[Any]) -> list[tuple[bool, int]]:
        got = _engine.prefetch(frames, masks, threads, states)
        work.append((len(frames), len(masks), len(states), sum(made for made, _ in got), threads))
        return got

    monkeypatch.setattr(cursor_module, "prefetch", counted)
    one = _run(llama3_vocabulary, llama3_tokenizer, 1)
    assert not work  # (one thread: no prefetch)
    two = _run(llama3_vocabulary, llama3_tokenizer, 2)
    assert len(one) == len(two)
    for k, (a, b) in enumerate(zip(one, two)):
        assert np.array_equal(a, b), f"step {k}: rows {np.flatnonzero((a != b).any(axis=1)).tolist()} differ"
    # the threads had work: DFA masks and whole pushdown states, most of them made whole, at more
    # than one step
    print("prefetch work (frames, DFA masks, states, states made):", [sum(w[i] for w in work) for i in range(4)])
    assert sum(w[1] for w in work) > 10 and len(work) > 5
    # (a state asked again after its guide made the automaton it stopped at counts twice)
    firsts = [w for w in work if w[0] or w[1]]
    states, made = sum(w[2] for w in work), sum(w[3] for w in work)
    assert states > 100 and made > 0.9 * sum(w[2] for w in firsts), (states, made)
    assert len(firsts) < len(work)  # (some states were asked again)
    assert all(w[4] == 2 for w in work)


def test_threads_are_checked_and_default_to_the_cores() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", None], eos_token_ids=[2])
    rows = [Cursor(Matcher.of(structgen.compile_regex("ab", vocab))), Cursor(Matcher.of(structgen.compile_regex("b+", vocab)))]
    bitmask = np.zeros((2, 1), dtype=np.int32)
    with pytest.raises(ValueError, match="threads must be at least 1, not 0"):
        fill_next_token_bitmasks(rows, bitmask, threads=0)
    fill_next_token_bitmasks(rows, bitmask)
    assert bitmask[:, 0].tolist() == [0b01, 0b10]
    assert default_threads() >= 1
    with pytest.raises(ValueError, match="threads must be at least 1"):
        _engine.prefetch([], [], 0)
    with pytest.raises(ValueError, match=r"a mask is \(DFA guide core, state\)"):
        _engine.prefetch([], [(rows[0].matcher.guide._core,)], 2)
    with pytest.raises(IndexError):
        _engine.prefetch([], [(rows[0].matcher.guide._core, 99)], 2)
    with pytest.raises(TypeError):
        _engine.prefetch([], [("not a guide", 0)], 2)


def test_a_state_task_is_checked_and_says_whether_it_was_made(llama3_vocabulary: structgen.Vocabulary) -> None:
    """A whole state's task writes its words and answers True; one whose solver lacks an automaton
    (or whose stack does not exist) answers False and leaves the serial fill to make the mask."""
    guide = structgen.compile_grammar((ROOT / "grammars" / "json.gbnf").read_text(encoding="utf-8"), llama3_vocabulary,
                                      syntax="gbnf")
    assert isinstance(guide, PushdownGuide)
    work = guide._prefetch(guide.initial_state)
    (solver, stacks, words, keep, need), = work.states
    assert _engine.prefetch([], [], 2, [(solver, stacks, words, keep), (solver, (10**6,), words.copy(), keep)]) == [
        (True, -1), (False, -1)]
    assert not guide.is_final(guide.initial_state)  # (so its packed mask has no EOS added)
    assert np.array_equal(words, Matcher.of(guide).packed_mask(guide.initial_state))
    with pytest.raises(ValueError, match="words are 3 int32"):
        _engine.prefetch([], [], 2, [(solver, stacks, np.zeros(3, dtype=np.int32))])
    with pytest.raises(ValueError, match=r"a state is \(solver, stacks, words"):
        _engine.prefetch([], [], 2, [(solver, stacks)])


def test_a_state_that_stops_for_an_automaton_is_asked_again_once_it_is_made(llama3_vocabulary: structgen.Vocabulary) -> None:
    """A fresh guide's solver has only the automata made so far: the first state's task stops at a
    callee (it answers which), ``need`` makes it, and the same words, asked again, end up the mask."""
    from structgen.cfg import grammar_network

    guide = PushdownGuide(grammar_network((ROOT / "grammars" / "json.gbnf").read_text(encoding="utf-8")), llama3_vocabulary)
    task = guide._prefetch(guide.initial_state).states[0]
    answers = []
    for _ in range(len(guide.network) + 1):
        (made, missing), = _engine.prefetch([], [], 2, [task])
        answers.append((made, missing))
        if made:
            break
        assert missing >= 0 and task[4](missing)
    assert answers[0] == (False, answers[0][1]) and answers[0][1] >= 0 and answers[-1] == (True, -1), answers
    assert task[4](len(guide.network)) is False  # (no such automaton)
    assert np.array_equal(task[2], Matcher.of(guide).packed_mask(guide.initial_state))


def test_a_failing_need_drops_the_state_not_the_batch(llama3_vocabulary: structgen.Vocabulary,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Where making the automaton a state stopped at fails, that state is left to the serial fill
    (which makes its mask, or fails its row alone); the batch goes on."""
    from structgen.cfg import grammar_network

    text = (ROOT / "grammars" / "json.gbnf").read_text(encoding="utf-8")
    guides = [PushdownGuide(grammar_network(text), llama3_vocabulary) for _ in range(2)]
    asked: list[int] = []

    def broken(solver: Any, k: int) -> bool:
        asked.append(k)
        raise RuntimeError("cannot make it")

    monkeypatch.setattr(PushdownGuide, "_hand_automaton", lambda self, solver, k: broken(solver, k))
    rows = [Cursor(Matcher.of(g)) for g in guides]
    bitmask = Matcher.allocate_token_bitmask(2, llama3_vocabulary.size)
    fill_next_token_bitmasks(rows, bitmask, threads=2)
    assert asked  # (the states stopped at a callee, and making it failed)
    want = Matcher.of(PushdownGuide(grammar_network(text), llama3_vocabulary)).packed_mask(0)
    assert np.array_equal(bitmask[0], want) and np.array_equal(bitmask[1], want)
    assert all(r.error is None for r in rows)


def test_a_guide_that_fails_in_the_prefetch_fails_only_its_row() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b"c", None], eos_token_ids=[3])
    good = structgen.compile_regex("ab", vocab)

    class Broken(type(good)):  # type: ignore[misc]
        __slots__ = ()

        def _prefetch(self, state: int) -> Any:
            raise RuntimeError("broken guide")

        def _packed(self, state: int) -> np.ndarray | None:
            raise RuntimeError("broken guide")

    rows = [Cursor(Matcher.of(good)), Cursor(Matcher(Broken(good.automaton, vocab))), Cursor(Matcher.of(good))]
    bitmask = np.zeros((3, 1), dtype=np.int32)
    fill_next_token_bitmasks(rows, bitmask, threads=2)
    assert bitmask[:, 0].tolist() == [0b0001, 0b1000, 0b0001]
    assert rows[0].error is None and isinstance(rows[1].error, RuntimeError) and rows[2].error is None


def _child(conn: Any) -> None:  # (after a fork: the parent's helper threads are not here)
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", None], eos_token_ids=[2])
    rows = [Cursor(Matcher.of(structgen.compile_regex(p, vocab))) for p in ("a+b", "b+a", "(ab)+", "(ba)+")]
    bitmask = np.zeros((4, 1), dtype=np.int32)
    fill_next_token_bitmasks(rows, bitmask, threads=2)
    conn.send(bitmask[:, 0].tolist())


def test_a_forked_process_makes_its_own_threads() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", None], eos_token_ids=[2])
    rows = [Cursor(Matcher.of(structgen.compile_regex(p, vocab))) for p in ("b+", "a+")]
    fill_next_token_bitmasks(rows, np.zeros((2, 1), dtype=np.int32), threads=2)  # (the parent's threads made)
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_child, args=(there,))
    child.start()
    child.join(60)
    assert child.exitcode == 0, "the forked child hung or failed"
    assert here.recv() == [0b01, 0b10, 0b01, 0b10]
