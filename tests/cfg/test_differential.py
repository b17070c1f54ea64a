"""Property tests: random grammars, and random strings and mutations of derivations, accepted
exactly when the reference says so (the Earley reference of ``tests/support/earley.py`` for GBNF,
Python Lark's Earley parser with ``lexer="dynamic_complete"`` for Lark)."""

from __future__ import annotations

import itertools
import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from structgen.errors import UnsatisfiableConstraint

from ..support.derive import gbnf_derivations, lark_derivations
from ..support.earley import GbnfReference
from .helpers import accepts, guide, lark_reference, within

GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"


def all_strings(alphabet: str, longest: int) -> list[str]:
    return ["".join(p) for n in range(longest + 1) for p in itertools.product(alphabet, repeat=n)]


# -- random GBNF grammars --------------------------------------------------------------------------

_POSTFIX = ["", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "{,2}"]


@st.composite
def gbnf_grammars(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 3))
    names = [f"r{i}" for i in range(n)]

    def item(depth: int) -> str:
        kinds = ["lit", "lit", "cls", "ref", "ref"] + (["group"] if depth < 2 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "lit":
            text = '"' + draw(st.text("ab", min_size=1, max_size=2)) + '"'
        elif kind == "cls":
            text = draw(st.sampled_from(["[ab]", "[^a]", "[a]", "[b-b]"]))
        elif kind == "ref":
            text = draw(st.sampled_from(names))
        else:
            text = "(" + alternatives(depth + 1) + ")"
        return text + draw(st.sampled_from(_POSTFIX))

    def alternatives(depth: int) -> str:
        options = [" ".join(item(depth) for _ in range(draw(st.integers(0, 3)))) for _ in range(draw(st.integers(1, 3)))]
        return " | ".join(options)

    return "\n".join(f"{name} ::= {alternatives(0)}" for name in names)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gbnf_grammars())
def test_random_gbnf_grammars_agree_with_earley(text: str) -> None:
    try:
        g = guide(text, syntax="gbnf", start="r0")
    except UnsatisfiableConstraint:
        ref = GbnfReference(text, "r0")
        assert not any(ref.accepts(s) for s in all_strings("ab", 5))
        return
    ref = GbnfReference(text, "r0")
    for s in all_strings("ab", 6):
        assert accepts(g, s) == ref.accepts(s), (text, s)


# -- random Lark grammars --------------------------------------------------------------------------

_TERMINALS = ['"a"', '"b"', '"ab"', "/[ab]+/", "/a+/", "/(?:ab)+/", "/a*b/", '"a"i', "A", "B"]


@st.composite
def lark_grammars(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 3))
    names = [f"r{i}" for i in range(n)]

    def item(depth: int) -> str:
        kinds = ["term", "term", "ref"] + (["group", "maybe"] if depth < 2 else [])
        kind = draw(st.sampled_from(kinds))
        # (repetitions only of terminals, and few empty choices: Lark's Earley parser takes
        # seconds a string on grammars that nest empty repetitions of rules)
        if kind == "term":
            return draw(st.sampled_from(_TERMINALS)) + draw(st.sampled_from(["", "", "*", "+", "?", " ~ 2", " ~ 1..2"]))
        if kind == "ref":
            return draw(st.sampled_from(names))
        if kind == "group":
            return "(" + alternatives(depth + 1) + ")" + draw(st.sampled_from(["", "", "+", " ~ 2"]))
        return "[" + alternatives(depth + 1) + "]"

    def alternatives(depth: int) -> str:
        options = [" ".join(item(depth) for _ in range(draw(st.integers(1, 3)))) for _ in range(draw(st.integers(1, 3)))]
        return " | ".join(options)

    rules = "\n".join(f"{name}: {alternatives(0)}" for name in names)
    terminals = 'A: "a" | "ab"\nB: /b/ "a"?'
    ignore = draw(st.sampled_from(["", '%ignore " "']))
    return f"{rules}\n{terminals}\n{ignore}\n"


@pytest.mark.slow  # (about 40 s: Lark's Earley parser is the slow side)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(lark_grammars())
def test_random_lark_grammars_agree_with_lark(text: str) -> None:
    import lark

    try:
        ref = lark_reference(text, "r0")
    except lark.exceptions.GrammarError:
        assume(False)
        return
    try:
        g = guide(text, syntax="lark", start="r0")
    except UnsatisfiableConstraint:
        assert not any(ref(s) for s in all_strings("ab ", 4))
        return
    checked = 0
    deadline = time.monotonic() + 2
    for s in all_strings("ab" + (" " if "%ignore" in text else ""), 5 if "%ignore" in text else 6):
        expected = within(0.5, ref, s)
        if expected is None or time.monotonic() > deadline:  # (Lark is too slow on this grammar: keep what was checked)
            break
        checked += 1
        assert accepts(g, s) == expected, (text, s)


# -- the grammar files: derivations, their mutations and random strings ----------------------------

def _mutations(s: str, rng: random.Random, alphabet: str, n: int) -> list[str]:
    out = []
    for _ in range(n):
        if not s:
            out.append(rng.choice(alphabet))
            continue
        i = rng.randrange(len(s))
        op = rng.randrange(4)
        if op == 0:
            out.append(s[:i] + s[i + 1 :])  # delete
        elif op == 1:
            out.append(s[:i] + rng.choice(alphabet) + s[i:])  # insert
        elif op == 2:
            out.append(s[:i] + rng.choice(alphabet) + s[i + 1 :])  # replace
        else:
            j = rng.randrange(len(s))
            out.append(s[:i] + s[j:] if j > i else s[:j] + s[i:])  # cut
    return out


def _files(suffix: str) -> list[str]:
    return sorted(p.name[: -len(suffix)] for p in GRAMMARS.glob("*" + suffix))


@pytest.mark.parametrize("name", _files(".gbnf"))
def test_gbnf_files_agree_with_earley_on_mutations(name: str) -> None:
    text = (GRAMMARS / f"{name}.gbnf").read_text(encoding="utf-8")
    g, ref = guide(text, syntax="gbnf"), GbnfReference(text)
    rng = random.Random(name)
    derived = gbnf_derivations(text, 15, seed=1, depth=6)
    alphabet = "".join(sorted(set("".join(derived)))) + "x\\\"{"
    for s in derived:
        assert accepts(g, s), s
        for m in _mutations(s, rng, alphabet, 6):
            assert accepts(g, m) == ref.accepts(m), m


@pytest.mark.parametrize("name", _files(".lark"))
def test_lark_files_agree_with_lark_on_mutations(name: str) -> None:
    text = (GRAMMARS / f"{name}.lark").read_text(encoding="utf-8")
    g, ref = guide(text, syntax="lark"), lark_reference(text)
    rng = random.Random(name)
    derived = lark_derivations(text, 8, seed=2, depth=5)
    assert len(derived) >= 5
    alphabet = "".join(sorted(set("".join(derived)))) + " (,'"
    for s in derived:
        assert accepts(g, s), s
        for m in _mutations(s, rng, alphabet, 5):
            assert accepts(g, m) == ref(m), m
