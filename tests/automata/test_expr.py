"""Expressions and their derivatives (structgen.automata.expr), the lazy automaton over them, and the
lazy algebra (intersection, complement) against the eager product automata of automata.algebra."""

from __future__ import annotations

import random

import regex
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from structgen.automata.algebra import difference, intersect
from structgen.automata.expr import EPSILON, KINDS, NOTHING, ExprPool
from structgen.automata.expr_rewrite import clamp, concat_all, factored, readable_bytes
from structgen.automata.lazy import LazyAutomaton
from structgen.automata.liveness import INF
from structgen.automata.regex import regex_to_dfa, regex_to_expr

from ..support.strategies import patterns

_TEXTS = st.text(alphabet="abc01 -é", max_size=8)


def _accepts(pool: ExprPool, e: int, data: bytes) -> bool:
    for b in data:
        e = pool.derive(e, b)
    return pool.nullable(e)


@settings(max_examples=150, deadline=None)
@given(pattern=patterns, texts=st.lists(_TEXTS, min_size=1, max_size=8))
def test_derivatives_agree_with_the_regex_module(pattern: str, texts: list[str]) -> None:
    pool = ExprPool()
    e = regex_to_expr(pattern, pool)
    dfa = regex_to_dfa(pattern)
    for text in texts:
        data = text.encode()
        assert _accepts(pool, e, data) == dfa.accepts(data), (pattern, text)
        ref = regex.fullmatch(pattern, text, flags=regex.ASCII | regex.V0, timeout=0.5)
        assert _accepts(pool, e, data) == (ref is not None), (pattern, text)


@settings(max_examples=100, deadline=None)
@given(a=patterns, b=patterns, texts=st.lists(_TEXTS, min_size=1, max_size=8))
def test_lazy_algebra_agrees_with_product_automata(a: str, b: str, texts: list[str]) -> None:
    pool = ExprPool()
    ea, eb = regex_to_expr(a, pool), regex_to_expr(b, pool)
    both, minus = pool.both((ea, eb)), pool.minus(ea, eb)
    da, db = regex_to_dfa(a), regex_to_dfa(b)
    inter, diff = intersect(da, db), difference(da, db)
    assert pool.is_live(both) == (not inter.is_empty)
    assert pool.is_live(minus) == (not diff.is_empty)
    for text in texts:
        data = text.encode()
        assert _accepts(pool, both, data) == inter.accepts(data), (a, b, text)
        assert _accepts(pool, minus, data) == diff.accepts(data), (a, b, text)
        assert _accepts(pool, pool.negate(ea), data) == (not da.accepts(data))


@settings(max_examples=100, deadline=None)
@given(a=patterns, b=patterns, seed=st.integers(0, 2**16))
def test_lazy_products_never_lead_into_a_dead_end(a: str, b: str, seed: int) -> None:
    """Every state a lazy automaton of an intersection reaches has a completion: random walks
    along allowed bytes always can finish, and what they finish is in both languages."""
    pool = ExprPool()
    e = pool.minus(regex_to_expr(a, pool), regex_to_expr(b, pool))
    auto = LazyAutomaton(pool, e)
    if auto.is_empty:
        return
    rng = random.Random(seed)
    dfa = difference(regex_to_dfa(a), regex_to_dfa(b))
    for _ in range(5):
        q, out = 0, b""
        for _ in range(30):
            ways = [(byte, t) for byte, t in auto.edges(q).items()]
            if auto.finals[q] and (not ways or rng.random() < 0.3):
                break
            assert ways, (a, b, out)  # (never a dead end)
            byte, q = rng.choice(ways)
            out += bytes([byte])
            assert dfa.step(0, out) >= 0, (a, b, out)  # (every prefix can still be completed)
        if auto.finals[q]:
            assert dfa.accepts(out)


@settings(max_examples=150, deadline=None)
@given(pattern=patterns, words=st.lists(_TEXTS, min_size=1, max_size=12), texts=st.lists(_TEXTS, max_size=8))
def test_a_factored_alternation_is_the_same_language_and_derives_narrow(pattern: str, words: list[str], texts: list[str]) -> None:
    """Literals (and a pattern beside them) with their common first bytes taken out accept what
    their plain alternation does; the alternation of the literals that go on after one byte
    then holds no option of another first byte."""
    pool = ExprPool()
    parts = [pool.literal(w.encode()) for w in words] + [regex_to_expr(pattern, pool)]
    plain, trie = pool.alt(parts), factored(pool, parts)
    for text in texts + words + [w[:2] for w in words]:
        assert _accepts(pool, trie, text.encode()) == _accepts(pool, plain, text.encode()), (words, pattern, text)
    lits = factored(pool, [pool.literal(w.encode()) for w in words])
    for b in {w.encode()[0] for w in words if w}:
        after = pool.node(pool.derive(lits, b))
        options = after[1] if after[0] == KINDS["alt"] else (after,)
        assert len(options) <= len({w.encode()[1:2] for w in words if w.encode()[:1] == bytes([b])}), (words, b)


def _reference_facts(pool: ExprPool, e: int) -> tuple[int, int, frozenset, int]:
    """(size, largest counter, symbols, length lower bound) of ``e`` by a walk of its parts (what
    the pool keeps)."""
    node = pool.node(e)
    kind = node[0]
    if kind == KINDS["sym"]:
        return 1, 0, frozenset((node[1],)), 0
    if kind == KINDS["bytes"]:
        return 1, 0, frozenset(), 1
    if kind == KINDS["dfa"]:
        emb = pool.embedded(node[1])
        return len(emb.rows), 0, frozenset(k for es in emb.symbols.values() for k, _ in es), emb.min_lengths({})[node[2]]
    if kind == KINDS["and"]:
        return 0, 1 << 62, frozenset(), max(_reference_facts(pool, p)[3] for p in node[1])
    if kind not in (KINDS["seq"], KINDS["alt"], KINDS["rep"]):
        return 0, 0, frozenset(), (INF if kind == KINDS["nothing"] else 0)
    parts = [_reference_facts(pool, p) for p in (node[1:3] if kind == KINDS["seq"] else node[1] if kind == KINDS["alt"] else node[1:2])]
    size, counter, symbols = sum(p[0] for p in parts), max(p[1] for p in parts), frozenset().union(*(p[2] for p in parts))
    lower = min(INF, sum(p[3] for p in parts)) if kind == KINDS["seq"] else min(p[3] for p in parts)
    if kind == KINDS["rep"]:
        lo, hi = node[2], node[3]
        size *= max(hi if hi >= 0 else lo + 1 if lo >= 2 else 1, 1)
        counter = max(counter, lo, hi)
        lower = 0 if lo == 0 else min(INF, lo * lower)
    return size, counter, symbols, lower


@settings(max_examples=100, deadline=None)
@given(a=patterns, b=patterns, lo=st.integers(0, 5), extra=st.integers(0, 300), symbols=st.lists(st.integers(1, 9), max_size=3))
def test_sizes_counters_and_symbols_kept_by_the_pool_are_those_of_the_terms(a: str, b: str, lo: int, extra: int, symbols: list[int]) -> None:
    import pickle

    pool = ExprPool()
    x, y = regex_to_expr(a, pool), regex_to_expr(b, pool)
    calls = pool.concat([pool.symbol(k) for k in symbols])
    terms = [x, y, pool.repeat(pool.seq(x, calls), lo, lo + extra), pool.alt([calls, pool.star(y)]), pool.minus(x, y)]
    terms.append(pool.concat([terms[2], pool.literal(b"ab"), terms[3], terms[4]]))
    restored = pickle.loads(pickle.dumps(pool))
    for e in terms:
        want = _reference_facts(pool, e)
        assert (pool.size(e), pool.largest_counter(e), pool.symbols_in(e), pool.lower_bound(e)) == want, (a, b, e)
        assert (restored.size(e), restored.largest_counter(e), restored.symbols_in(e), restored.lower_bound(e)) == want


@settings(max_examples=100, deadline=None)
@given(heads=st.lists(st.integers(0, 7), max_size=8), tail=st.integers(0, 7), data=st.binary(max_size=12))
def test_a_chain_is_the_concatenation_of_its_parts(heads: list[int], tail: int, data: bytes) -> None:
    """``chain`` (and ``literal``, ``seq`` and ``concat_all``, built on it) interns the same terms,
    with the same facts, as concatenating one part at a time."""
    pool = ExprPool()
    digit = pool.byte_range(48, 57)
    parts = [NOTHING, EPSILON, digit, pool.alt([digit, pool.literal(b"x")]), pool.star(digit), pool.symbol(3),
             pool.minus(pool.star(digit), pool.literal(b"1")), pool.literal(b"ab")]
    terms = [parts[h] for h in heads if pool.node(parts[h])[0] != KINDS["seq"]]
    got = pool.chain(terms, parts[tail])  # (first: the terms it makes are new)
    if got != NOTHING:
        assert pool.nullable(got) == all(pool.nullable(p) for p in [*terms, parts[tail]])
        assert pool.is_algebraic(got) == any(pool.is_algebraic(p) for p in [*terms, parts[tail]])
    want = parts[tail]
    for p in reversed(terms):
        old = want
        want = NOTHING if NOTHING in (p, want) else want if p == EPSILON else p if want == EPSILON else pool.seq(p, want)
        if want not in (NOTHING, old, p):  # (one link: the head, then the chain so far)
            assert pool.node(want) == (KINDS["seq"], p, old)
            assert pool.nullable(want) == (pool.nullable(p) and pool.nullable(old))
            assert pool.is_algebraic(want) == (pool.is_algebraic(p) or pool.is_algebraic(old))
    assert got == want
    assert concat_all(pool, [*terms, parts[tail]]) == want
    literal = EPSILON
    for b in reversed(data):
        link = pool.seq(pool.bytes_of(1 << b), literal) if literal != EPSILON else pool.bytes_of(1 << b)
        assert literal == EPSILON or pool.node(link) == (KINDS["seq"], pool.bytes_of(1 << b), literal)
        literal = link
    assert pool.literal(data) == literal and pool.seq(pool.literal(data), parts[tail]) == pool.chain([pool.bytes_of(1 << b) for b in data], parts[tail])
    for e in (want, literal):
        assert (pool.size(e), pool.largest_counter(e), pool.symbols_in(e), pool.lower_bound(e)) == _reference_facts(pool, e)


@settings(max_examples=60, deadline=None)
@given(a=patterns, b=patterns, picks=st.lists(st.integers(0, 11), min_size=9, max_size=20),
       data=st.lists(st.sampled_from(b"0159ab") | st.integers(0, 255), min_size=1, max_size=4))
def test_an_alternation_derives_only_the_parts_that_read_the_byte(a: str, b: str, picks: list[int], data: list[int]) -> None:
    """A wide alternation derives only its parts whose first bytes hold the byte: the same
    derivatives as every part's, and first bytes hold every byte whose derivative is not empty."""
    pool = ExprPool()
    x, y = regex_to_expr(a, pool), regex_to_expr(b, pool)
    digit = pool.byte_range(48, 57)
    terms = [x, y, pool.star(x), pool.seq(pool.optional(y), x), pool.minus(x, y), pool.both([x, pool.star(digit)]),
             pool.embed(regex_to_dfa(b)), pool.symbol(2), pool.seq(pool.symbol(3), y), digit, pool.literal(b"a1"), pool.literal(b"b")]
    parts = [pool.seq(terms[p], pool.literal(bytes([48 + i]))) for i, p in enumerate(picks)]
    e = pool.alt(parts)
    assume(pool.node(e)[0] == KINDS["alt"] and len(pool.node(e)[1]) > 8)
    for t in terms + parts:
        assert all(pool.firsts.first_bytes(t) >> c & 1 for c in range(256) if pool.derive(t, c) != NOTHING)
    state = e
    for c in data:
        if pool.node(state)[0] == KINDS["alt"]:
            want = pool.alt([pool.derive(p, c) for p in pool.node(state)[1]])
        else:
            want = pool.derive(state, c)
        assert pool.derive(state, c) == want
        state = want


def test_counters_are_one_term_not_copies() -> None:
    pool = ExprPool()
    e = regex_to_expr('"(?:[^"\\\\]|\\\\.){0,100000}"', pool)
    assert len(pool) < 100  # (the repetition is one term; a DFA would have 100,000+ states)
    auto = LazyAutomaton(pool, e)
    q = auto.walk(0, b'"' + b"a" * 1000)
    # states are made as the walk reaches them: a few per character read (a row's targets), not 100,000
    assert q >= 0 and auto.num_states < 10 * 1001 and auto.accepts(b'"' + b"a" * 1000 + b'"')
    assert not auto.accepts(b'"' + b"a" * 100001 + b'"')


_BODIES = ["(?:.|-+)?[a-c]", "a?b", "(?:ab|a)", "(?:a|bb)", "[ab]-?", "(?:a-?){1,2}", "(?:a|aaa)", "(?:b|bbb-?)"]
_TAILS = ["", "c", "-c", "(?:-?a){1,3}", "/[a-c]{2,4}"]


@settings(max_examples=200, deadline=None)
@given(body=st.sampled_from(_BODIES), head=st.sampled_from(["", "a", "a?"]), tail=st.sampled_from(_TAILS),
       lo=st.integers(0, 4), extra=st.integers(0, 6), unbounded=st.booleans(),
       texts=st.lists(st.text(alphabet="abc-/", max_size=16), min_size=1, max_size=10))
def test_counts_merged_in_an_alternative_keep_its_language(body: str, head: str, tail: str, lo: int, extra: int,
                                                          unbounded: bool, texts: list[str]) -> None:
    # a body that reads one or two bytes leaves parts h·x{a,b}·t of several counts: the pool merges them
    pattern = f"{head}(?:{body}){{{lo},{'' if unbounded else lo + extra}}}{tail}"
    pool = ExprPool()
    e = regex_to_expr(pattern, pool)
    for text in texts:
        ref = regex.fullmatch(pattern, text, flags=regex.ASCII | regex.V0, timeout=0.5)
        assert _accepts(pool, e, text.encode()) == (ref is not None), (pattern, text)


def _parts(pool: ExprPool, e: int) -> int:
    node = pool.node(e)
    return len(node[1]) if node[0] == KINDS["alt"] else 1


def test_a_counted_body_of_one_or_two_bytes_keeps_its_states_small() -> None:
    # a host name: each count reads one byte or two, so after n bytes the counts n/2 .. n are all
    # reached; their parts are merged into one range (h·x{a,b}·t | h·x{c,d}·t), not kept one per count
    pool = ExprPool()
    e = regex_to_expr(r"https://[A-Za-z0-9]((.|-+)?[A-Za-z0-9]){0,252}/[a-z0-9](-?[a-z0-9]){2,62}", pool)
    widest = 0
    for b in b"https://" + b"ab-cd.ef" * 40:
        e = pool.derive(e, b)
        widest = max(widest, _parts(pool, e))
    assert e != NOTHING and widest <= 2, widest
    assert _accepts(pool, e, b"/container-1") and not _accepts(pool, e, b"/c")
    # a count reached either way, and none: x{0,k}·t | t is x{0,k}·t
    x = pool.repeat(pool.literal(b"ab"), 1, 5)
    t = pool.literal(b"!")
    assert pool.alt([pool.seq(x, t), t]) == pool.seq(pool.repeat(pool.literal(b"ab"), 0, 5), t)
    two = [pool.seq(pool.repeat(pool.literal(b"ab"), lo, hi), t) for lo, hi in ((0, 2), (3, 4))]
    assert pool.alt(two) == pool.seq(pool.repeat(pool.literal(b"ab"), 0, 4), t)
    apart = [pool.seq(pool.repeat(pool.literal(b"ab"), lo, hi), t) for lo, hi in ((0, 2), (4, 5))]
    assert _parts(pool, pool.alt(apart)) == 2  # (counts 0-2 and 4-5 do not meet: ab×3 stays out)
    assert not _accepts(pool, pool.alt(apart), b"ababab!") and _accepts(pool, pool.alt(apart), b"abababab!")


def test_clamped_counters_keep_short_strings_alike() -> None:
    pool = ExprPool()
    e = regex_to_expr("a{3,500}b", pool)
    c = clamp(pool, e, 4)
    for n in range(0, 7):
        for tail in (b"", b"b"):
            data = b"a" * n + tail
            if len(data) <= 4:
                de, dc = e, c
                for byte in data:
                    de, dc = pool.derive(de, byte), pool.derive(dc, byte)
                assert (de == NOTHING) == (dc == NOTHING) and pool.nullable(de) == pool.nullable(dc), data


def test_a_term_whose_counters_are_small_is_its_own_clamp_and_nothing_is_rebuilt() -> None:
    pool = ExprPool()
    e = regex_to_expr('"[a-z]{0,8}",("[0-9]{2,3}"|x*)', pool)
    terms = len(pool)
    assert clamp(pool, e, 8) == e and len(pool) == terms
    assert clamp(pool, e, 4) != e  # (a counter of 8 is cut for 4 bytes)


def test_clamp_and_restrict_walk_terms_deeper_than_the_stack() -> None:
    # (a term nested 3,000 levels, each an alternation before a concatenation: as an object with
    # a count of members in its states nests; both rewrites once recursed per level)
    from structgen.automata.expr_rewrite import restrict

    pool = ExprPool()
    a, b = pool.byte_range(ord("a"), ord("a")), pool.byte_range(ord("b"), ord("b"))
    e = pool.literal(b"}")
    for _ in range(3000):
        e = pool.alt((pool.seq(a, pool.seq(pool.repeat(b, 0, 600), e)), pool.literal(b"}")))
    c = clamp(pool, e, 4)
    r = restrict(pool, e, (1 << ord("a")) | (1 << ord("}")))
    for data in (b"}", b"a}", b"ab}", b"abb}", b"aa}", b"b}", b"a" * 50 + b"}"):
        de, dc, dr = e, c, r
        for byte in data:
            de, dc, dr = pool.derive(de, byte), pool.derive(dc, byte), pool.derive(dr, byte)
        if len(data) <= 4:  # (clamped: alike for short strings)
            assert (de == NOTHING) == (dc == NOTHING) and pool.nullable(de) == pool.nullable(dc), data
        assert pool.nullable(dr) == (pool.nullable(de) and b"b" not in data), data  # (restricted: no b)


def test_liveness_of_an_empty_intersection() -> None:
    pool = ExprPool()
    digits = regex_to_expr("[0-9]{2,4}", pool)
    letters = regex_to_expr("[a-z]+", pool)
    assert not pool.is_live(pool.both((digits, letters)))
    assert pool.witness_length(pool.both((digits, regex_to_expr("[0-5]*", pool)))) == 2
    assert LazyAutomaton(pool, pool.both((digits, letters))).is_empty


def test_liveness_tries_the_shortest_string_of_the_most_demanding_part_before_searching() -> None:
    """``{"a":0}`` (the object's shortest instance) is in the wide part too: live, and no
    product term searched. Where the guess fails, the search runs."""
    pool = ExprPool()
    wide = regex_to_expr(r'\{("[a-z]+":[0-9]+,?)*\}', pool)
    narrow = regex_to_expr(r'\{"a":[0-9]\}', pool)
    e = pool.both((wide, narrow))
    assert pool.search.shortest_text(narrow) == b'{"a":0}'
    assert pool.search.liveness(e) is True and not pool.search.witness and pool.search.alive == {e}
    assert pool.search.liveness(pool.both((narrow, regex_to_expr(r'\{"b":.*', pool)))) is False
    pool = ExprPool()
    guessed_wrong = pool.both((regex_to_expr("a+b?", pool), regex_to_expr("(a|b)*b", pool)))  # ("a", "b": neither)
    assert pool.search.liveness(guessed_wrong) is True and len(pool.search.alive) >= 2  # (a path searched)


@settings(max_examples=60, deadline=None)
@given(pattern=patterns)
def test_an_automaton_is_embedded_once_and_reads_the_bytes_of_its_rows(pattern: str) -> None:
    """Pools share one embedded form per automaton (the canonical universe is converted once per
    process, not per compile), and its readable bytes are those some row reads."""
    from structgen.automata.embedded import EmbeddedDfa
    from structgen.automata.expr import byte_mask

    try:
        dfa = regex_to_dfa(pattern)
    except Exception:  # noqa: BLE001 - (patterns outside what automata enforce)
        return
    first, second = ExprPool(), ExprPool()
    e1, e2 = first.embed(dfa), second.embed(dfa)
    if e1 == NOTHING:
        return
    emb = first.embedded(first.node(e1)[1])
    assert second.embedded(second.node(e2)[1]) is emb is EmbeddedDfa.of(dfa)
    want = 0
    for row in emb.rows:
        want |= byte_mask(b for b, t in enumerate(row) if t >= 0)
    assert readable_bytes(first, e1) == want == readable_bytes(second, e2)


def test_terms_without_symbols_share_one_empty_set() -> None:
    """A term that calls nothing has the one shared empty symbol set, not an empty set of its own
    (26,615 of them were left for the garbage collector after one real-world compile)."""
    pool = ExprPool()
    e = regex_to_expr("(ab|c[0-9]{2,5})*x|y+", pool)
    terms = range(len(pool))
    seen = {id(pool.symbols_in(x)) for x in terms} | {id(pool.first_symbols(x)) for x in terms}
    assert not pool.symbols_in(e) and len(seen) == 1


@settings(max_examples=200, deadline=None)
@given(mask=st.integers(1, (1 << 256) - 1), keep=st.integers(0, 255))
def test_a_row_gets_exactly_the_bytes_of_a_class(mask: int, keep: int) -> None:
    """A class's bytes fill the row, every one and no other (the native fill writes a class's
    bytes one by one; a byte set's classes are the set and the rest)."""
    from structgen.automata.lazy import LazyAutomaton

    pool = ExprPool()
    for m in (mask, mask & (0xFF << keep), mask | (1 << keep)):
        auto = LazyAutomaton(pool, pool.seq(pool.bytes_of(m), pool.literal(b"!")))
        auto.fill(0, 1 << keep)  # (one class first: the row is complete once both are)
        row = auto.row(0)
        assert [b for b in range(256) if row[b] >= 0] == [b for b in range(256) if m >> b & 1]
        assert all(row[b] == -1 for b in range(256) if not m >> b & 1)


def test_a_branch_whose_smallest_string_another_covers_is_found_live_by_a_later_guess() -> None:
    """``oneOf: [{"type": "number"}, {"type": ["number", "string"]}]``'s second branch minus the
    first: its smallest string (``0``) is subtracted, its next guess (``""``, a member of its
    choice, then a key of an object) is a witness without a search over derivatives."""
    pool = ExprPool()
    number = regex_to_expr(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?", pool)
    string = pool.literal(b'""')
    e = pool.minus(pool.alt([number, string]), number)
    assert pool.search._guessed(e) and pool.search.liveness(e) is True
    members = [pool.concat([pool.literal(b'{"' + k + b'":'), number, pool.literal(b"}")]) for k in (b"a", b"b", b"c")]
    obj = pool.alt([pool.literal(b"{}"), *members])
    taken = pool.alt([pool.literal(b"{}"), members[0], members[1]])  # (only "c" is left)
    assert pool.search._guessed(pool.minus(obj, taken))
    assert not pool.search._guessed(pool.minus(obj, obj)) and pool.liveness(pool.minus(obj, obj)) is False


def test_exclusive_patterns_under_a_long_length_bound_are_found_empty_without_walking_the_lengths() -> None:
    """An ARN of 1 to 1,600 characters that starts as a Kinesis stream's and as an SNS topic's
    (AWS::EventsV2::Subscriber's dependencies): the search over derivatives would walk every length
    up to the bound and give up. The same intersection with the counters read as ``*`` (a superset)
    matches nothing, which proves this one empty, and what it proves is remembered. A live
    intersection under the bound is still found live, and the superset is not taken as dead."""
    pool = ExprPool()
    bounded = regex_to_expr(".{1,1600}", pool)
    kinesis, sns = regex_to_expr("arn:[^:]*:kinesis:.*", pool), regex_to_expr("arn:[^:]*:sns:.*", pool)
    e = pool.both((bounded, regex_to_expr("arn:.*", pool), kinesis, sns))
    assert pool.search.liveness(e, 2_000) is False and e not in pool.search.gave_up
    relaxed = pool.search._relaxed(e)
    assert relaxed != e and pool.search.witness.get(relaxed) == INF and relaxed not in pool.search.gave_up
    live = pool.both((bounded, kinesis))
    assert pool.search.liveness(live, 2_000) is True
    loose = pool.both((regex_to_expr("[a-z:]{1,1600}", pool), regex_to_expr("(arn:)*", pool)))  # (live: its superset's search is cut)
    assert pool.search.liveness(loose, 2_000) is True and not pool.search.gave_up


def test_a_fork_starts_with_its_templates_terms_and_copies_what_the_template_makes_later() -> None:
    """A compile's pool starts as a fork of the template of shared JSON pieces: the template's
    terms are the fork's under the same ids (nothing copied), a piece the template makes after
    the fork is copied, and the fork's own terms never reach the template."""
    from structgen.automata.expr_rewrite import copy_from

    template = ExprPool()
    abc = template.concat([template.literal(b"ab"), template.star(template.byte_range(48, 57))])
    pool = ExprPool.forked(template)
    size = len(pool)
    assert copy_from(pool, template, abc) == abc and len(pool) == size and pool.node(abc) == template.node(abc)
    own = pool.literal(b"only in the fork")
    later = template.alt([abc, template.literal(b"xyz")])  # (made after the fork: an id the fork may use for another term)
    copied = copy_from(pool, template, later)
    assert own >= size  # (the fork's own terms come after the template's)
    for text, want in ((b"ab", True), (b"ab12", True), (b"xyz", True), (b"xy", False), (b"only in the fork", False)):
        e = copied
        for b in text:
            e = pool.derive(e, b)
        assert pool.nullable(e) == want, text
    assert all(template.node(i) != pool.node(own) for i in range(len(template)))


def _symbol_shape(pool: ExprPool, x: int, y: int) -> int:
    """``x·S1 | (S2·y)* | (x ∩ y)``: a term with calls 1 and 2."""
    return pool.alt([pool.concat([x, pool.symbol(1)]), pool.star(pool.concat([pool.symbol(2), y])), pool.both([x, y])])


@settings(max_examples=150, deadline=None)
@given(a=patterns, b=patterns, c=patterns, d=patterns, texts=st.lists(_TEXTS, min_size=1, max_size=10))
def test_a_substitution_accepts_what_the_pattern_with_the_callees_written_in_does(
    a: str, b: str, c: str, d: str, texts: list[str]
) -> None:
    """``substitute`` (native) replaces each call by its callee's term, through concatenations,
    alternations, repetitions and into intersections: the result accepts what ``regex`` says of
    the pattern with the callees written in. A memo kept from a substitution by a smaller mapping
    (of every call in the term it was given) gives the same term as a fresh one."""
    from structgen.automata.expr_rewrite import SubstitutionMemo, substitute

    pool = ExprPool()
    x, y, one, two = (regex_to_expr(p, pool) for p in (a, b, c, d))
    term = _symbol_shape(pool, x, y)
    memo = SubstitutionMemo()
    half = substitute(pool, pool.concat([x, pool.symbol(1)]), {pool.symbol(1): one}, memo, symbols=True)
    assert not pool.symbols_in(half) and len(memo) > 0
    got = substitute(pool, term, {pool.symbol(1): one, pool.symbol(2): two}, memo, symbols=True)
    assert got == substitute(pool, term, {pool.symbol(1): one, pool.symbol(2): two}, symbols=True)
    assert not pool.symbols_in(got)
    pattern = f"(?:{a})(?:{c})|(?:(?:{d})(?:{b}))*|(?:{a})(?<=^(?:{b}))"  # (the last: a string of both a and b)
    for text in texts:
        ref = regex.fullmatch(f"(?:{pattern})", text, flags=regex.ASCII | regex.V0, timeout=0.5)
        assert _accepts(pool, got, text.encode()) == (ref is not None), (pattern, text)


def test_a_substitution_walks_terms_deeper_than_the_stack_and_keeps_its_memo_to_one_pool() -> None:
    import pytest

    from structgen.automata.expr_rewrite import SubstitutionMemo, substitute

    pool = ExprPool()
    a = pool.literal(b"a")
    e = pool.symbol(1)
    for _ in range(20_000):  # (a chain of concatenations 20,000 deep, the call at the bottom)
        e = pool.alt((pool.seq(a, e), pool.literal(b"}")))
    memo = SubstitutionMemo()
    got = substitute(pool, e, {pool.symbol(1): pool.literal(b"!")}, memo, symbols=True)
    assert _accepts(pool, got, b"a" * 20_000 + b"!") and not _accepts(pool, got, b"a" * 3 + b"!!")
    assert _accepts(pool, got, b"aa}")
    other = ExprPool()
    with pytest.raises(ValueError, match="another pool"):
        substitute(other, other.symbol(1), {other.symbol(1): other.literal(b"x")}, memo, symbols=True)
