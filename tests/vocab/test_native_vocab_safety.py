"""No input crashes the process: the native token tries, trie walks, slices, clamps, distances and
the DFA guide's core (issue 39, slice 2), the frame walks, the frame solver and the packed token bits (slice 3) driven by random tokens, ids, nodes, states, bytes and
counts (hypothesis as the fuzzer, as in ``tests/automata/test_native_safety.py``; ``tools/fuzz_engine.py``
runs both for longer and ``tools/sanitize.sh`` under AddressSanitizer and UndefinedBehaviorSanitizer).
Every failure is a named exception."""

from __future__ import annotations

from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structgen import _engine
from structgen.automata.expr import ExprPool
from structgen.automata.lazy import LazyAutomaton
from structgen.errors import CompileBudgetExceeded, VocabularyError

#: what the native API may raise (anything else, or a crash, is a bug; KeyError: FrameSolver asks for an automaton)
EXPECTED = (IndexError, KeyError, ValueError, TypeError, OverflowError, CompileBudgetExceeded, VocabularyError)

ints = st.one_of(st.integers(-3, 40), st.integers(-(1 << 70), 1 << 70),
                 st.sampled_from([255, 256, (1 << 31) - 1, 1 << 31, 1 << 62, (1 << 63) - 1]))
TOKENS = st.lists(st.one_of(st.none(), st.binary(max_size=5), st.sampled_from([b"a", b"ab", b'"', b"\\", b"\xc3\xa9", b"\xff"])),
                  min_size=1, max_size=24)
OPS = ["restrict", "child", "node_of", "bytes_between", "walk_trie", "walk_tokens", "walk_many", "slice_characters",
       "slice", "long_tokens", "packed", "bools", "next_state", "forced", "guide_walk", "slice_mask", "distances",
       "clamp", "uniform_successor", "counted_body", "clamped", "clamped_head", "char_successor", "counted_run",
       "slice_chain", "walk_frame", "walk_frame_cut", "frame", "expand", "set_token_bits", "or_token_bits", "prefetch",
       "collect", "stacks", "unique", "unique_stacks", "guard_stacks"]


def _ask_data_stacks(solver: Any, shares: list[Callable[[], object]], opening: bytes, data: bytes, words: Any,
                     a: int, b: int, c: int) -> None:
    """Share frame data (``shares``, any of them may be refused), then step, stack and collect with
    any states, bytes, data and word widths: each call succeeds or raises a named error, and the
    stacks read back whole."""
    asks: list[Callable[[], object]] = [
        *shares, lambda: solver.next_state(0, opening + data), lambda: solver.next_state(0, data),
        lambda: solver.stack(a % 3, b % 4, solver.num_stacks - 1, c),
        lambda: solver.step([abs(b) % solver.num_stacks, 0], c % 257),
        lambda: solver.collect_data(list(range(solver.num_stacks))[-3:], words),
        lambda: solver.collect_data([a % (solver.num_stacks + 1)], words),
        lambda: solver.state_mask(0)]
    for ask in asks:
        try:
            ask()
        except EXPECTED:
            pass
    entries, depths, records = solver.stacks_from(0)
    assert len(entries) == len(depths) == len(records) == solver.num_stacks and solver.data_counts[0] >= 0


def _term(pool: ExprPool, which: int) -> int:
    """A few shapes the slices and clamps look for: a string body under a length, a counted digit run,
    a literal, an alternation."""
    body = pool.seq(pool.literal(b'"'), pool.seq(pool.repeat(pool.byte_range(97, 122), 2, 40), pool.literal(b'"')))
    shapes = [body, pool.repeat(pool.byte_range(48, 57), 0, 1000), pool.literal(b"ab"),
              pool.alt([pool.literal(b"a"), pool.star(pool.byte_range(0, 255))])]
    return shapes[which % len(shapes)]


def _run(op: str, tokens: list[Any], a: int, b: int, c: int, data: bytes) -> None:
    pool = ExprPool()
    auto = LazyAutomaton(pool, _term(pool, c))
    ids = [i for i, t in enumerate(tokens) if t]
    trie = _engine.TokenTrie.build(tokens, ids)
    index = _engine.TokenIndex(tokens + [None], [len(tokens)])
    _engine.walk_tokens(auto, trie, 0, 0)  # (a few states built, so small state numbers exist)
    auto.walk(0, data)
    if op == "restrict":
        trie.restrict([a, b])
    elif op == "child":
        trie.child(a, b)
    elif op == "node_of":
        trie.node_of(data)
    elif op == "bytes_between":
        trie.bytes_between(a, b)
    elif op == "walk_trie":
        _engine.walk_trie(auto, trie, a, b, c % 2 == 0)
    elif op == "walk_tokens":
        _engine.walk_tokens(auto, trie, a, b, c % 2 == 0)
    elif op == "walk_frame":
        _engine.walk_frame(auto, trie, a, b, c % 2 == 0)
    elif op == "walk_frame_cut":  # (a cut trie's branch points as nodes of the trie, or of one it was not cut from)
        cut = trie.restrict(ids[: max(a, 0) % 4])
        _engine.walk_frame(auto, cut, 0, b, c % 2 == 0, trie if c % 3 else cut)
    elif op == "walk_many":
        _engine.walk_trie(auto, trie, [a, b, c], 0)
    elif op == "slice_characters":
        _engine.slice_characters(a, data)
    elif op == "slice":
        index.slice(a)
    elif op == "long_tokens":
        index.long_tokens(a)
    elif op == "distances":
        d = _engine.SpelledDistances(auto, trie)
        d.bytes_to_end(a)
        d.tokens_to_end(b)
    elif op == "clamp":
        pool.clamp(auto.root, a)
    elif op == "uniform_successor":
        pool.uniform_successor(auto.root, a)
    elif op == "counted_body":
        pool.counted_body(auto.root, a)
    elif op == "clamped":
        auto.clamped(a, b)
    elif op == "clamped_head":
        auto.clamped_head(a, b, c % 2 == 0)
    elif op == "char_successor":
        auto.char_successor(a, b)
    elif op == "counted_run":
        auto.counted_run(a, b, c)
    elif op == "slice_chain":
        auto.slice_chain(a, b, c % 2000)
    elif op in ("frame", "expand"):  # (automata by index, None where the root reaches none; any vocabulary size)
        solver = _engine.FrameSolver([auto, None, auto], index, 1 + abs(b) % 5)
        if c % 3 == 0:  # (an automaton with frame data: the frames that enter it are refused, its own unless plain)
            solver.mark_frame_data(a % 4, own_plain=b % 2 == 0)
        if op == "frame":
            solver.frame(a, b, c)
            assert all(n >= 0 for n in solver.walk_counts)  # (the walks kept: none past a cache of one entry)
        else:
            solver.expand(a, [b, c], [c, a], [a % 4, b], [b, 0])
    elif op == "prefetch":  # (solvers and DFA cores of two pools on 1-3 native threads, then asked again serially)
        pool2 = ExprPool()
        auto2 = LazyAutomaton(pool2, _term(pool2, c + 1))
        solver = _engine.FrameSolver([auto, None, auto], index, 1 + abs(b) % 5)
        solver2 = _engine.FrameSolver([auto2], index, 4)
        cores = [_engine.DfaGuideCore(x, index, 1 << 16, "fuzz", "vocab") for x in (auto, auto2)]
        _engine.prefetch([(solver, a, b, c), (solver2, 0, a, b), (solver, 2, 0, 0)],
                         [(cores[0], 0), (cores[1], 0), (cores[abs(a) % 2], b)], 1 + abs(c) % 3)
        solver.frame(a, b, c)
    elif op == "collect":  # (stacks on any parents and automata; words of any width; then on threads)
        import numpy as np
        solver = _engine.FrameSolver([auto, None, auto], index, 1 + abs(b) % 5)
        for k, q, parent in ((a % 4 - 1, b, -1), (0, 0, a % 3 - 1), (2, c, 1)):
            solver.stack(k, q, parent)
        words = np.zeros(max(0, (len(tokens) + 31) // 32 + c % 2), dtype=np.int32)
        solver.collect([a % 5 - 1, b % 4, solver.num_stacks - 1], words)
        _engine.prefetch([], [], 1 + abs(c) % 3, [(solver, [0, b % 4], words), (solver, [a], np.zeros_like(words))])
    elif op == "stacks":  # (automata that call one another, or pass a guard; any depth, states, stacks, bytes, masks and rows)
        import numpy as np
        calls = pool.seq(pool.literal(b"["), pool.seq(pool.star(pool.symbol(a % 3)), pool.literal(b"]")))
        pick = [calls, pool.alt([pool.symbol(b % 3), pool.literal(b"x")]), pool.seq(pool.symbol(0x3C0 + c % 3), pool.literal(b"k"))]
        autos = [LazyAutomaton(pool, pick[(i + c) % 3]) if i != a % 5 else None for i in range(3)]
        solver = _engine.FrameSolver(autos, index, 4, 1 + a % 6)
        asks = [lambda: solver.mark_frame_data(b % 4) if c % 5 == 0 else None, lambda: solver.frame(a % 3, 0, b % 3),lambda: solver.next_state(0, data), lambda: solver.next_state(a % 3, data),
                lambda: solver.stack(b % 3, c % 4, solver.num_stacks - 1 - abs(a) % 2),
                lambda: solver.step([abs(b) % solver.num_stacks, 0], c % 257),
                lambda: solver.config([0, b % 4, solver.num_stacks - 1]),
                lambda: solver.stacks_from(abs(c) % (solver.num_stacks + 2)), lambda: solver.configs_from(b % 3),
                lambda: solver.state_mask(a % (solver.num_configs + 1)),
                lambda: solver.keep_mask(b % (solver.num_configs + 1), np.full(abs(c) % 3 + (len(tokens) + 31) // 32 - 1, a, np.int32)),
                lambda: _engine.fill_rows([(solver, a % (solver.num_configs + 1), 0), (solver, 0, b % 3),
                                           (_engine.DfaGuideCore(auto, index, 1 << 16, "fuzz", "vocab"), c % 4, 1)],
                                          np.full((2, (len(tokens) + 31) // 32 + abs(a) % 2), -1, np.int32), 1 + abs(c) % 3)]
        for ask in asks:
            try:
                ask()
            except EXPECTED:
                pass
        entries, depths, _ = solver.stacks_from(0)
        assert len(entries) == len(depths) == solver.num_stacks and len(solver.configs_from(0)) == solver.num_configs
    elif op == "unique_stacks":  # (stacks that carry unique items' data: any kinds, data, states, bytes, words)
        import numpy as np
        item = pool.concat([pool.literal(b'"'), pool.star(pool.byte_range(97, 99)), pool.literal(b'"')])
        array = pool.concat([pool.literal(b"["), pool.optional(pool.seq(pool.symbol(1), pool.star(pool.seq(pool.literal(b","), pool.symbol(1))))),
                             pool.literal(b"]")])
        autos = [LazyAutomaton(pool, array), LazyAutomaton(pool, item) if a % 7 else None]
        solver = _engine.FrameSolver(autos, index, 1 + abs(b) % 6, 1 + abs(c) % 8)
        solver.mark_frame_data(0)
        solver.mark_frame_data(1, own_plain=True)
        unique = _engine.UniqueData(pool)
        kinds = [[1, 2], [1, 2, 0], [2, 1], [1, 3], [0, 2]][abs(c) % 5]
        words = np.zeros(max(0, (len(tokens) + 31) // 32 + (b % 3 == 0)), dtype=np.int32)
        _ask_data_stacks(solver, [lambda: solver.share_data(kinds, (), unique),
                                  lambda: solver.share_data([1, 2], (), _engine.UniqueData(ExprPool())),
                                  lambda: solver.share_data([1, 2])], b'["a","', data, words, a, b, c % 5)
    elif op == "guard_stacks":  # (stacks that carry the keys written: any kinds, required keys, data, states, bytes, words)
        import numpy as np
        g = _engine.GUARD_FIRST
        member = pool.alt([pool.concat([pool.literal(b'"a"'), pool.symbol(g), pool.literal(b":"), pool.symbol(1)]),
                           pool.concat([pool.literal(b'"ab"'), pool.symbol(g + 1), pool.literal(b":"), pool.symbol(1)]),
                           pool.concat([pool.literal(b'"'), pool.star(pool.byte_range(97, 99)), pool.literal(b'":1')])])
        obj = pool.concat([pool.literal(b"{"), pool.optional(pool.seq(member, pool.star(pool.seq(pool.literal(b","), member)))),
                           pool.symbol(g + 63), pool.literal(b"}")])
        autos = [LazyAutomaton(pool, obj), LazyAutomaton(pool, pool.alt([pool.literal(b"1"), pool.symbol(0)])) if a % 7 else None]
        solver = _engine.FrameSolver(autos, index, 1 + abs(b) % 6, 1 + abs(c) % 8)
        solver.mark_frame_data(0)
        kinds = [[3, 0], [3], [3, 3], [0, 3], [3, 0, 0], [4, 0]][abs(c) % 6]
        required = [[0, 0], [1], [3, 0], [1 << 63, 0], [], [0, 1], [1 << 64]][abs(a) % 7]
        words = np.zeros(max(0, (len(tokens) + 31) // 32 + (b % 3 == 0)), dtype=np.int32)
        _ask_data_stacks(solver, [lambda: solver.share_data(kinds, required), lambda: solver.share_data([3, 0], [1])],
                         b'{"a":1,"', data, words, a, b, c)
    elif op in ("set_token_bits", "or_token_bits"):  # (ids past the words, negative, huge; widths that differ)
        import numpy as np
        words = np.zeros((len(tokens) + 31) // 32, dtype=np.int32)
        if op == "set_token_bits":
            _engine.set_token_bits(words, np.array([a % (1 << 62), b % (1 << 62) - (1 << 61)], dtype=np.int64))
        else:
            _engine.or_token_bits(words, np.full(max(c % 4, 0), -1, dtype=np.int32))
        assert _engine.count_token_bits(words) >= 0
    elif op == "unique":  # (the frame data of unique arrays: any ids, bytes, terms, automata of another pool)
        unique = _engine.UniqueData(pool)
        written = max(unique.after_item(0, data), 0)
        written = max(unique.after_item(written, data + b"1" if c % 2 else b'"' + data + b'"'), 0)
        item = unique.item_start(written)
        for x in data:
            item = unique.read(item, x)
        assert unique.text(item) == data and unique.written(item) == written
        unique.taken(written)
        other = ExprPool()
        calls = [lambda: unique.read(a, b), lambda: unique.item_key(b % 4, c), lambda: unique.mask_key(c),
                 lambda: unique.in_danger(a), lambda: unique.taken(b), lambda: unique.has_key(a, data),
                 lambda: unique.alive(a, c), lambda: unique.after_item(b, data),
                 lambda: unique.dead_tokens(auto, trie, a % 4, b, unique.left(item)),
                 lambda: unique.dead_tokens(LazyAutomaton(other, _term(other, c)), trie, 0, 0, unique.left(item))]
        for call in calls:
            try:
                call()
            except EXPECTED:
                pass
        assert unique.memory_bytes > 0 and unique.num_items > 0 and unique.num_sets > 0
    else:
        core = _engine.DfaGuideCore(auto, index, 1 << 16, "fuzz", "vocab")
        if op == "packed":
            core.packed(a)
        elif op == "bools":
            core.bools(a)
        elif op == "next_state":
            core.next_state(a, b)
        elif op == "forced":
            core.forced_bytes(a)
        elif op == "guide_walk":
            core.walk_tokens(a)
        elif op == "slice_mask":
            core.slice_mask(a)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(TOKENS, st.lists(st.tuples(st.sampled_from(OPS), ints, ints, ints, st.binary(max_size=6)), min_size=1, max_size=12))
def test_random_calls_raise_named_errors_or_succeed(tokens: list[Any], steps: list[tuple[str, int, int, int, bytes]]) -> None:
    for op, a, b, c, data in steps:
        try:
            _run(op, tokens, a, b, c, data)
        except EXPECTED:
            pass
