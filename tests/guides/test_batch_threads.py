"""The batch fill on native threads (``fill_next_token_bitmasks(..., threads=T)``): the rows whose
guides have a native core (frame data the stacks carry included) are filled by :func:`structgen._engine.fill_rows` (cold masks made on
native threads, rows of one expression pool on one thread, the GIL held), the others after
:func:`structgen._engine.prefetch` did their cold work; the bitmasks are the Python engine's
(``pushdown.NATIVE`` off: Python stacks and frames, filled row by row), bit for bit, at every step
of a batch of real schemas, grammars and regexes on Llama-3."""

from __future__ import annotations

import json
import multiprocessing
from typing import Any

import numpy as np
import pytest

import structgen
from structgen import _engine
from structgen.guides import matcher as matcher_module
from structgen.guides import pushdown
from structgen.guides.cursor import Cursor, default_threads, fill_next_token_bitmasks
from structgen.guides.matcher import Matcher
from structgen.guides.pushdown import PushdownGuide

from ..support.json_order import in_schema_order
from ..support.paths import ROOT


#: Rows with frame data: unique items, and objects in any key order (the corpus's first schemas).
_UNIQUE = ({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                                             "n": {"type": "integer"}}, "required": ["tags"]},
           {"tags": ["b", "a", "ab", "c"], "n": 3})
_ANY_ORDER = 8


def _rows(vocab: structgen.Vocabulary, tok: Any) -> list[tuple[structgen.Guide, list[int]]]:
    """(guide, tokens of a valid output) for the corpus's schemas (each twice: two rows on one
    guide share its pool; the first ones once more with any key order), a schema with unique
    items, grammars and regexes, compiled afresh (no warm caches)."""
    structgen.compiler.clear_cache()
    rows = []
    for i, path in enumerate(sorted((ROOT / "benchmarks" / "corpus").glob("*.json"))):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case.get("valid"):
            guide = structgen.compile_json_schema(case["schema"], vocab)
            ids = tok.encode(json.dumps(in_schema_order(case["valid"][0], case["schema"])), add_special_tokens=False)
            rows += [(guide, ids), (guide, ids[: len(ids) // 2])]
            if i < _ANY_ORDER:
                rows.append((structgen.compile_json_schema(case["schema"], vocab, key_order="any", extra_properties=True), ids))
    rows.append((structgen.compile_json_schema(_UNIQUE[0], vocab), tok.encode(json.dumps(_UNIQUE[1]), add_special_tokens=False)))
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


def test_the_threaded_fill_is_the_python_fill(llama3_vocabulary: structgen.Vocabulary, llama3_tokenizer: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int, int, int]] = []
    with_data = []  # (the rows filled natively whose stacks carry frame data)

    def counted(rows: list[Any], bitmask: np.ndarray, threads: int) -> list[tuple[int, int]]:
        left = _engine.fill_rows(rows, bitmask, threads)
        calls.append((len(rows), len(left), sum(missing >= 0 for _, missing in left), threads))
        with_data.extend(r for r in rows if isinstance(r[0], _engine.FrameSolver) and r[0].has_frame_data)
        return left

    monkeypatch.setattr(matcher_module, "fill_rows", counted)
    monkeypatch.setattr(pushdown, "NATIVE", False)
    python = _run(llama3_vocabulary, llama3_tokenizer, 1)
    python_rows = sum(c[0] for c in calls)  # (the DFA guides' rows: their core is the engine's only one)
    monkeypatch.setattr(pushdown, "NATIVE", True)
    calls.clear()
    native = _run(llama3_vocabulary, llama3_tokenizer, 2)
    assert len(python) == len(native)
    for k, (a, b) in enumerate(zip(python, native)):
        assert np.array_equal(a, b), f"step {k}: rows {np.flatnonzero((a != b).any(axis=1)).tolist()} differ"
    # the pushdown rows were filled natively too, most of them whole, some after their guide made an
    # automaton they stopped at
    rows, left, stopped = (sum(c[i] for c in calls) for i in range(3))
    print("native rows, left, stopped:", rows, left, stopped, "(python engine:", python_rows, "rows)")
    assert rows > 2 * python_rows and left - stopped < 0.1 * rows and stopped > 0, (rows, left, stopped)
    assert len(with_data) > 100  # (objects in any key order and unique items on the threads too)
    assert all(c[3] == 2 for c in calls)


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


def test_fill_rows_is_checked(llama3_vocabulary: structgen.Vocabulary) -> None:
    guide = structgen.compile_grammar((ROOT / "grammars" / "json.gbnf").read_text(encoding="utf-8"), llama3_vocabulary,
                                      syntax="gbnf")
    core = guide._native_row(guide.initial_state).core
    bitmask = Matcher.allocate_token_bitmask(2, llama3_vocabulary.size)
    with pytest.raises(ValueError, match="threads must be at least 1"):
        _engine.fill_rows([], bitmask, 0)
    with pytest.raises(ValueError, match=r"a row is \(guide core, state, bitmask row\)"):
        _engine.fill_rows([(core, 0)], bitmask, 2)
    with pytest.raises(IndexError, match="no row 2 in a bitmask of 2"):
        _engine.fill_rows([(core, 0, 2)], bitmask, 2)
    with pytest.raises(ValueError, match="a bitmask of 3 words"):
        _engine.fill_rows([(core, 0, 0)], np.zeros((1, 3), dtype=np.int32), 2)
    with pytest.raises(TypeError):
        _engine.fill_rows([("not a core", 0, 0)], bitmask, 2)
    with pytest.raises(TypeError):
        _engine.fill_rows([(core, 0, 0)], bitmask.astype(np.int64), 2)
    # (a state that does not exist is left to the caller; the words past the vocabulary's are zeroed)
    wide = np.full((2, bitmask.shape[1] + 2), -1, dtype=np.int32)
    assert _engine.fill_rows([(core, 10**6, 0), (core, 0, 1)], wide, 2) == [(0, -1)]
    assert np.array_equal(wide[1, :-2], Matcher.of(guide).packed_mask(0)) and wide[1, -2:].tolist() == [0, 0]
    assert (wide[0] == -1).all()


def test_fill_rows_writes_sparse_and_dense_masks_over_any_row(llama3_vocabulary: structgen.Vocabulary,
                                                               llama3_tokenizer: Any) -> None:
    """A state's mask is kept as its ids where few, else packed: either way the row written (over
    whatever the row held, the words past the vocabulary's zeroed) is the Python engine's mask."""
    from structgen.cfg import grammar_network

    text = (ROOT / "grammars" / "json.gbnf").read_text(encoding="utf-8")
    native = PushdownGuide(grammar_network(text), llama3_vocabulary)
    python = _python_guide(lambda: PushdownGuide(grammar_network(text), llama3_vocabulary))
    row = native._native_row(native.initial_state)
    words = Matcher.of(python).words
    bitmask = np.full((1, words + 3), -1, dtype=np.int32)
    sizes = []
    sn = sp = native.initial_state
    for t in llama3_tokenizer.encode('{"a": "text, with a comma", "b": [1, 2.5, {"c": null}]}', add_special_tokens=False):
        for rows in ([(row.core, sn, 0)], [(row.core, sn, 0)]):  # (made, then found in the cache)
            bitmask[0] = -1
            while (left := _engine.fill_rows(rows, bitmask, 2)):
                assert row.need(left[0][1])
            want = Matcher.of(python).packed_mask(sp)
            assert np.array_equal(bitmask[0, :words], want) and bitmask[0, words:].tolist() == [0, 0, 0]
        sizes.append(_engine.count_token_bits(bitmask[0]))
        sn, sp = native.next_state(sn, t), python.next_state(sp, t)
    assert min(sizes) * 8 <= words < max(sizes) // 4  # (both kinds were kept)


def test_a_row_that_stops_for_an_automaton_is_asked_again_once_it_is_made(llama3_vocabulary: structgen.Vocabulary) -> None:
    """A fresh guide's solver has only the automata made so far: its first row stops at a callee
    (fill_rows answers which), ``need`` makes it, and the row, asked again, gets the mask."""
    from structgen.cfg import grammar_network

    text = (ROOT / "grammars" / "json.gbnf").read_text(encoding="utf-8")
    guide = PushdownGuide(grammar_network(text), llama3_vocabulary)
    core, need, _ = guide._native_row(guide.initial_state)
    bitmask = Matcher.allocate_token_bitmask(1, llama3_vocabulary.size)
    answers = []
    for _ in range(len(guide.network) + 1):
        left = _engine.fill_rows([(core, guide.initial_state, 0)], bitmask, 2)
        answers.append(left)
        if not left:
            break
        (_, missing), = left
        assert missing >= 0 and need(missing)
    assert answers[0][0][1] >= 0 and answers[-1] == [], answers
    assert need(len(guide.network)) is False  # (no such automaton)
    python = _python_guide(lambda: PushdownGuide(grammar_network(text), llama3_vocabulary))
    assert np.array_equal(bitmask[0], Matcher.of(python).packed_mask(python.initial_state))


def _python_guide(make: Any) -> PushdownGuide:
    pushdown.NATIVE = False
    try:
        guide: PushdownGuide = make()
    finally:
        pushdown.NATIVE = True
    assert guide._frames.solver is None
    return guide


def test_a_failing_need_drops_the_state_not_the_batch(llama3_vocabulary: structgen.Vocabulary,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Where making the automaton a row stopped at fails, that row is left to the serial fill
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
    assert asked  # (the rows stopped at a callee, and making it failed)
    want = Matcher.of(_python_guide(lambda: PushdownGuide(grammar_network(text), llama3_vocabulary))).packed_mask(0)
    assert np.array_equal(bitmask[0], want) and np.array_equal(bitmask[1], want)
    assert all(r.error is None for r in rows)


def test_a_guide_that_fails_in_the_prefetch_fails_only_its_row() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b"c", None], eos_token_ids=[3])
    good = structgen.compile_regex("ab", vocab)

    class Broken(type(good)):  # type: ignore[misc]
        __slots__ = ()

        def _prefetch(self, state: int) -> Any:
            raise RuntimeError("broken guide")

        def _native_row(self, state: int) -> Any:
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


def test_rows_with_frame_data_have_their_root_frames_made_on_the_threads(smollm2_vocabulary: structgen.Vocabulary,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows whose network carries frame data its stacks cannot carry (a unique array inside a unique
    item; strings under a length bound) are filled by their guide, after the root frames their tops
    need without frame data were made on the threads (``PushdownGuide._prefetch``): the same
    bitmasks as the Python engine's."""
    from structgen.guides import cursor as cursor_module

    strings = {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "maxLength": 30}
    inner = {"type": "array", "items": strings, "uniqueItems": True, "maxItems": 3}
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": inner, "uniqueItems": True},
                                               "name": strings}, "required": ["tags", "name"]}
    text = json.dumps({"tags": [["alpha-beta", "gamma"], ["delta-epsilon-zeta"]], "name": "some-name-here"})
    ids = _greedy_ids(smollm2_vocabulary, text.encode())
    frames_made: list[int] = []

    def counted(frames: list[Any], masks: list[Any], threads: int) -> None:
        frames_made.append(len(frames))
        _engine.prefetch(frames, masks, threads)

    monkeypatch.setattr(cursor_module, "prefetch", counted)
    bitmasks = []
    for native in (False, True):
        monkeypatch.setattr(pushdown, "NATIVE", native)
        structgen.compiler.clear_cache()
        guide = structgen.compile_json_schema(schema, smollm2_vocabulary)
        assert isinstance(guide, PushdownGuide) and guide._native is None  # (the stacks are the guide's)
        assert (guide._frames.solver is not None) == native and guide._state_solver is None  # (the masks are the guide's)
        cursors = [Cursor(Matcher.of(guide, smollm2_vocabulary.size)) for _ in range(2)]  # (a batch: one row is filled at once)
        bitmask = Matcher.allocate_token_bitmask(2, smollm2_vocabulary.size)
        steps = []
        for k, t in enumerate(ids):
            fill_next_token_bitmasks(cursors if k % 2 else cursors[::-1], bitmask, threads=2)
            steps.append(bitmask.copy())
            assert all(c.accept(t) for c in cursors)
        bitmasks.append(steps)
    for k, (a, b) in enumerate(zip(*bitmasks)):
        assert np.array_equal(a, b), f"step {k}"
    print("frames made on the threads, per batch:", frames_made)
    assert sum(frames_made) >= 3, frames_made


def _greedy_ids(vocab: structgen.Vocabulary, data: bytes) -> list[int]:
    """The longest-first tokens of ``data`` (a valid spelling, not the tokenizer's)."""
    ids = {t: i for i, t in enumerate(vocab.tokens) if t}
    longest = max(len(t) for t in ids)
    out, i = [], 0
    while i < len(data):
        n = max(k for k in range(1, longest + 1) if data[i:i + k] in ids)
        out.append(ids[data[i:i + n]])
        i += n
    return out
