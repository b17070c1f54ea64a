"""Regex → byte DFA: differential tests against Python's own regex engine, and the errors."""

from __future__ import annotations

import re

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import structgen
from structgen.fsm import ByteDFA

# ---------------------------------------------------------------------------------------------
# A grammar of the regex syntax we support, for random patterns.

_LITERALS = list("abc01 -") + [r"\.", r"\*", r"\(", r"\\", r"\?", "é", "中", "😀", r"\n", r"\t"]
_CLASSES = [
    "[abc]", "[^ab]", "[a-c0-1]", "[^a-zé]", r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", ".", "[😀-😂]",
    r"[\]\-]", "[.]", r"[^\n]",
]
_ALPHABET = "abc01 -.*(\\?é中😀😁\n\tAZ_xÿ€"


def _atom() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(_LITERALS), st.sampled_from(_CLASSES))


def _quantified(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    quant = st.sampled_from(["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "*?", "+?", "??"])
    return st.tuples(inner, quant).map(lambda t: t[0] + t[1])


patterns = st.recursive(
    _quantified(_atom()),
    lambda children: st.one_of(
        st.lists(children, min_size=2, max_size=4).map("".join),
        st.lists(children, min_size=2, max_size=3).map("|".join),
        _quantified(children.map(lambda p: f"({p})")),
        _quantified(children.map(lambda p: f"(?:{p})")),
    ),
    max_leaves=8,
)


def _py_fullmatch(pattern: str, s: str) -> bool:
    """The reference: the `regex` module (Python `re` semantics, V0) with ASCII classes.

    A backtracking engine can take exponential time on nested quantifiers; such cases are
    skipped (the timeout), never counted as agreement."""
    try:
        return regex.fullmatch(pattern, s, flags=regex.ASCII | regex.V0, timeout=0.5) is not None
    except TimeoutError:
        assume(False)
        raise


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, data=st.data())
def test_fsm_agrees_with_python_re(pattern: str, data: st.DataObject) -> None:
    dfa = ByteDFA.from_regex(pattern)
    # Random strings (mostly rejected) and strings drawn from the pattern (accepted).
    for s in data.draw(st.lists(st.text(alphabet=_ALPHABET, max_size=8), max_size=20)):
        assert dfa.accepts(s.encode()) == _py_fullmatch(pattern, s), (pattern, s)
    compiled = re.compile(pattern, re.ASCII)
    for s in data.draw(st.lists(st.from_regex(compiled, fullmatch=True), min_size=1, max_size=5)):
        assert dfa.accepts(s.encode()), (pattern, s)


@settings(max_examples=100, deadline=None)
@given(pattern=patterns, s=st.text(alphabet=_ALPHABET, max_size=6))
def test_prefixes_of_accepted_strings_stay_alive(pattern: str, s: str) -> None:
    """Every byte prefix of an accepted string (also inside a multi-byte char) has a live state."""
    assume(_py_fullmatch(pattern, s))
    dfa = ByteDFA.from_regex(pattern)
    data = s.encode()
    for k in range(len(data) + 1):
        assert dfa.step(0, data[:k]) >= 0


@pytest.mark.parametrize(
    "pattern, accepted, rejected",
    [
        (r"\d{4}-\d{2}-\d{2}", ["2024-01-31"], ["2024-1-31", "２０２４-01-31", ""]),
        (r"^(?:yes|no)$", ["yes", "no"], ["yesno", "maybe"]),
        (r"(?i)héllo", ["HeLLo".replace("e", "é"), "héllo"], ["hello"]),
        (r"(?s).", ["\n", "x", "😀"], ["", "ab"]),
        (r".", ["x", "😀"], ["\n"]),
        (r"[^a]", ["b", "中", "\n"], ["a", ""]),
        (r"a{3,5}", ["aaa", "aaaaa"], ["aa", "aaaaaa"]),
        (r"\$\^", ["$^"], ["$", ""]),
        (r"", [""], ["a"]),
    ],
)
def test_examples(pattern: str, accepted: list[str], rejected: list[str]) -> None:
    dfa = ByteDFA.from_regex(pattern)
    for s in accepted:
        assert dfa.accepts(s.encode()), s
    for s in rejected:
        assert not dfa.accepts(s.encode()), s


def test_partial_utf8_lands_in_intermediate_state() -> None:
    dfa = ByteDFA.from_regex("😀+")
    emoji = "😀".encode()
    for k in range(1, 4):
        s = dfa.step(0, emoji[:k])
        assert s >= 0 and not dfa.finals[s]
    assert dfa.accepts(emoji * 2)
    assert dfa.step(0, emoji[:2] + b"a") == -1
    # Invalid UTF-8 never gets through: overlong encodings, surrogates, stray continuation bytes.
    anything = ByteDFA.from_regex("(?s).*")
    for bad in (b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80", b"\xff"):
        assert anything.step(0, bad) == -1, bad


def test_canonical_numbering_is_stable() -> None:
    a = ByteDFA.from_regex("(?:ab|ac)*d")
    b = ByteDFA.from_regex("(?:a(?:b|c))*d")
    assert (a.transitions == b.transitions).all() and (a.byte_classes == b.byte_classes).all()


@pytest.mark.parametrize(
    "pattern, construct, position",
    [
        (r"(a)\1", "back-reference", 3),
        (r"a(?=b)", "look-around", 1),
        (r"a(?!b)", "negative look-around", 1),
        (r"(?<=a)b", "look-around", 0),
        (r"\bword", "word boundary", 0),
        (r"a^b", "'^'", 1),
        (r"a$b", "'$'", 1),
        (r"a++", "possessive", 1),
        (r"(?>a)", "atomic group", 0),
        (r"(a)?(?(1)b|c)", "conditional", 4),
    ],
)
def test_unsupported_constructs_are_named(pattern: str, construct: str, position: int) -> None:
    with pytest.raises(structgen.RegexNotSupported) as e:
        ByteDFA.from_regex(pattern)
    assert construct in str(e.value) and e.value.position == position
    assert isinstance(e.value, structgen.ConstraintError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    "pattern, position, reason",
    [("a{", None, None), ("(ab", 0, "missing )"), ("[z-a]", 1, "bad character range"), ("a{3,1}", 2, "min repeat"), ("*a", 0, "nothing to repeat")],
)
def test_syntax_errors_have_positions(pattern: str, position: int | None, reason: str | None) -> None:
    if pattern == "a{":
        # Python reads "a{" as the literal text "a{"; interegular cannot: refused, not misread.
        with pytest.raises(structgen.RegexNotSupported, match="interegular"):
            ByteDFA.from_regex(pattern)
        return
    with pytest.raises(structgen.RegexSyntaxError) as e:
        ByteDFA.from_regex(pattern)
    assert e.value.position == position and reason in str(e.value) and repr(pattern) in str(e.value)


def test_verbose_flag_is_refused() -> None:
    with pytest.raises(structgen.RegexNotSupported, match="verbose"):
        ByteDFA.from_regex("(?x) a b")
