"""Strings under a length: the liveness verdict without a product search, and masks that take
the tokens of a clamped state for short tokens and walk only the long ones from the state itself."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.expr import KINDS, NOTHING
from structgen.automata.string_length import fewest_units, string_length_verdict
from structgen.guides.pushdown import PushdownGuide

from .reference.liveness import Liveness  # (the Python search the native one replaced)

ASCII = [bytes([b]) for b in range(32, 127)]
VOCAB = structgen.Vocabulary.from_bytes([*ASCII, b"\xc3\xa9", None], eos_token_ids=[len(ASCII) + 1])
#: patterns whose length stays an intersection (a length the compiler cannot fold into the pattern)
PATTERNS = ["^[a-z/]+:[0-9]+$", "^(é|ab)*/?$", "^(é{3}|a+)b*$", "^(é{3}z|a+)b*$", "^[^x]*y[a-c]*$"]
#: spellings a JSON string may hold: plain, escaped, multi-byte, and bytes no pattern takes
PIECES = [b"a", b"b", b"c", b"/", b"\\/", b"\xc3\xa9", b"\\u00e9", b"0", b"1", b":", b"x", b"y", b"-", b"\\n", b'"']


@settings(max_examples=60, deadline=None)
@given(
    pattern=st.sampled_from(PATTERNS),
    lo=st.integers(0, 3),
    span=st.integers(0, 10),
    pieces=st.lists(st.sampled_from(PIECES), max_size=14),
)
def test_the_length_verdict_is_what_a_search_finds(pattern: str, lo: int, span: int, pieces: list[bytes]) -> None:
    """Along any bytes of a string with a pattern and a length, the verdict (where it gives one)
    and the pool's liveness agree with a plain search over the intersection's derivatives."""
    schema = {"type": "string", "pattern": pattern, "minLength": lo, "maxLength": lo + span}
    try:
        guide = structgen.compile_json_schema(schema, VOCAB)
    except structgen.UnsatisfiableConstraint:
        return
    auto = guide.automaton
    pool = auto.pool
    reference = Liveness(pool, KINDS)  # (no proof: every answer is searched for)
    e = auto.exprs[0]
    for b in b'"' + b"".join(pieces):
        verdict = string_length_verdict(pool, e)
        truth = reference.liveness(e)
        assert verdict is None or verdict == truth, (schema, e)
        assert pool.is_live(e) == bool(truth)
        e = pool.derive(e, b)
        if e == NOTHING:
            break


def test_units_count_characters_not_bytes() -> None:
    """A multi-byte character is one unit: after one ``é`` of ``é{3}``, two more fit in the two
    characters ``maxLength: 3`` leaves, though they take 4 bytes; ``ééz`` does not fit."""

    def after(schema: dict, data: bytes) -> tuple[object, int]:
        guide = structgen.compile_json_schema(schema, VOCAB)
        pool, e = guide.automaton.pool, guide.automaton.exprs[0]
        for b in data:
            e = pool.derive(e, b)
        assert pool.node(e)[0] == KINDS["and"]
        return pool, e

    assert string_length_verdict(*after({"type": "string", "pattern": "^(é{3}|a+)b*$", "maxLength": 3}, '"é'.encode())) is True
    assert string_length_verdict(*after({"type": "string", "pattern": "^(é{3}z|a+)b*$", "maxLength": 3}, '"é'.encode())) is False
    assert string_length_verdict(*after({"type": "string", "pattern": "^(é{3}z|a+)b*$", "maxLength": 4}, '"é'.encode())) is True
    # inside a character (the first byte of é read): live by the bytes of a shortest completion
    # (``éé`` and the quote: 5 bytes, at most 4 units after the rest of this é), not searched
    assert string_length_verdict(*after({"type": "string", "pattern": "^(é{3}|a+)b*$", "maxLength": 5}, b'"\xc3')) is True
    assert string_length_verdict(*after({"type": "string", "pattern": "^(é{3}|a+)b*$", "maxLength": 3}, b'"\xc3')) is None
    # (with a third part, a format's say, the two alone prove nothing: here it leaves no string)
    pool, e = after({"type": "string", "pattern": "^(é{3}|a+)b*$", "maxLength": 5}, b'"\xc3')
    third = pool.literal(b'z"')
    assert string_length_verdict(pool, pool.both([*pool.node(e)[1], third], checked=False)) is None
    pool, e = after({"type": "string", "pattern": "^(é{3}|a+)b*$", "maxLength": 3}, '"é'.encode())
    string, length = sorted(pool.node(e)[1], key=lambda m: pool.node(pool.node(m)[1])[0] == KINDS["rep"])
    assert fewest_units(pool, string, pool.node(pool.node(length)[1])[1]) == 2


ITEM = {"type": "string", "pattern": "^(a|bc):[a-z-]+:[0-9]{3}$", "maxLength": 120}  # (the length stays an intersection)


def nested(item: dict) -> dict:
    """A recursive schema (a pushdown guide) whose ``"s"`` is an array of ``item``: ``{"s":["...``."""
    node = {"type": "object", "properties": {"s": {"type": "array", "items": item}, "k": {"$ref": "#/$defs/n"}}, "required": ["s"]}
    return {"$defs": {"n": {**node, "additionalProperties": False}}, "$ref": "#/$defs/n"}


NESTED = nested(ITEM)


@pytest.mark.parametrize("schema", [{"type": "array", "items": ITEM}, NESTED], ids=["flat", "pushdown"])
def test_masks_take_short_tokens_from_the_clamped_state_and_walk_long_ones(schema: dict) -> None:
    """A state near the length bound for the longest token but far from it for short ones takes
    their tokens from the clamped state; every mask is exactly the tokens ``next_state`` takes,
    near the bound and far from it (a flat guide and a pushdown one)."""
    longs = [b"a" * k for k in (17, 25, 33, 49, 65, 100)] + [b"ab-" * 9, b"a:123", b'123"', b'a"]', b'","']
    tokens = [*ASCII, *longs]
    vocab = structgen.Vocabulary.from_bytes([*tokens, None], eos_token_ids=[len(tokens)])
    guide = structgen.compile_json_schema(schema, vocab)
    a = tokens.index(b"a")
    for k in (1, 5, 20, 40, 60, 80, 100, 110, 112, 113, 114):
        opening = b'{"s":["a:' if schema is NESTED else b'["a:'
        s = guide.advance(guide.initial_state, [tokens.index(bytes([b])) for b in opening] + [a] * k)
        allowed = set(guide.allowed_token_ids(s).tolist())
        stepped = {t for t in range(len(tokens)) if guide.next_state(s, t) >= 0}
        assert allowed == stepped, (k, sorted(allowed ^ stepped))
        longest_fit = max((len(t) for t in longs[:6] if tokens.index(t) in allowed), default=0)
        assert longest_fit == max((n for n in (17, 25, 33, 49, 65, 100) if 2 + k + n + 4 <= 120), default=0), k
    if schema is NESTED:
        assert isinstance(guide, PushdownGuide)
        solver = guide._frames.solver
        assert solver is not None and not guide._frames._walks  # (every root natively: no Python walk)
        _, cut, short = solver.walk_counts
        assert cut and short, "no clamped walk"


def test_long_strings_share_the_walk_of_short_tokens() -> None:
    """Positions of a long string that clamp alike for short tokens share that walk: the root
    walks computed do not grow with the string."""
    tokens = [*ASCII, b"a" * 64]
    vocab = structgen.Vocabulary.from_bytes([*tokens, None], eos_token_ids=[len(tokens)])
    guide = structgen.compile_json_schema(nested({"type": "string", "pattern": "^(a|bc):[a-z]+:[0-9]+$", "maxLength": 90}), vocab)
    assert isinstance(guide, PushdownGuide)
    a = tokens.index(b"a")
    s = guide.advance(guide.initial_state, [tokens.index(bytes([b])) for b in b'{"s":["a:'])
    for k in range(30):
        assert (tokens.index(b"a" * 64) in guide.allowed_token_ids(s).tolist()) == (2 + k + 64 + 2 <= 90), k
        s = guide.next_state(s, a)
    solver = guide._frames.solver  # (far from the bound every token clamps; nearer, short ones do)
    assert solver is not None
    plain, cut, short = solver.walk_counts
    assert cut >= 5 and short >= 1
    assert plain < 10  # (not one walk of the whole trie per position: a cut walk walks only the long tokens)


@settings(max_examples=40, deadline=None)
@given(pattern=st.sampled_from([*PATTERNS, "^a{3,9}(bc|d{5})?$", "^(x|yyyy)+z{2}$", "^https://[a-z]+(\\.[a-z]+){0,4}(/[^ ]*)?$"]))
def test_the_bound_on_shortest_completions_holds_everywhere(pattern: str) -> None:
    """The clamp's structural bound is at least the shortest completion of every term a string
    leads to (checked on every derivative reached, breadth first)."""
    from structgen.automata.expr_text import MinLength
    from structgen.automata.string_length import longest_shortest as _longest_shortest

    guide = structgen.compile_json_schema({"type": "string", "pattern": pattern}, VOCAB)
    pool = guide.automaton.pool
    start = guide.automaton.exprs[0]
    bound = _longest_shortest(pool, start)
    shortest = MinLength(pool, {})
    seen, level = {start}, [start]
    while level and len(seen) < 400:
        level = [d for x in level for m in pool.byte_classes(x) if (d := pool.derive(x, (m & -m).bit_length() - 1)) != NOTHING and d not in seen]
        seen.update(level)
        assert all(shortest.of(d) <= _longest_shortest(pool, d) <= bound for d in level), pattern
