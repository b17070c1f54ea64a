"""FSM algebra (intersection, union, difference) and automata embedded in a regex by slot markers,
checked against Python's ``re`` on random patterns and strings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.automata.algebra import difference, intersect, product, union
from structgen.errors import CompileBudgetExceeded
from structgen.automata.markers import slot_marker
from structgen.automata.regex import regex_to_dfa

ATOMS = ["a", "b", "é", "[ab]", "[^a]", ".", "(?:ab|b)", "x"]


@st.composite
def patterns(draw: st.DrawFn, depth: int = 2) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(ATOMS))
    kind = draw(st.sampled_from(["cat", "alt", "star", "opt", "rep"]))
    a = draw(patterns(depth - 1))
    if kind == "cat":
        return a + draw(patterns(depth - 1))
    if kind == "alt":
        return f"(?:{a}|{draw(patterns(depth - 1))})"
    if kind == "star":
        return f"(?:{a})*"
    if kind == "opt":
        return f"(?:{a})?"
    lo = draw(st.integers(0, 2))
    return f"(?:{a}){{{lo},{lo + draw(st.integers(0, 2))}}}"


TEXTS = st.text(alphabet="abéx\n", max_size=6)


@settings(max_examples=150, deadline=None)
@given(patterns(), patterns(), st.lists(TEXTS, min_size=10, max_size=10))
def test_boolean_operations_match_re(pa: str, pb: str, texts: list[str]) -> None:
    a, b = regex_to_dfa(pa), regex_to_dfa(pb)
    both, either, only_a = intersect(a, b), union(a, b), difference(a, b)
    for text in texts:
        x, y = re.fullmatch(pa, text) is not None, re.fullmatch(pb, text) is not None
        data = text.encode()
        assert both.accepts(data) == (x and y), (pa, pb, text)
        assert either.accepts(data) == (x or y), (pa, pb, text)
        assert only_a.accepts(data) == (x and not y), (pa, pb, text)


@settings(max_examples=150, deadline=None)
@given(patterns(), patterns(), patterns(), st.lists(TEXTS, min_size=10, max_size=10))
def test_slots_stand_for_their_automaton(outer: str, inner: str, other: str, texts: list[str]) -> None:
    """``outer`` with each ``x`` replaced by slot 0 (inner) behaves like the regex with ``inner`` spliced in."""
    marked = outer.replace("x", slot_marker(0)) + slot_marker(1)
    spliced = outer.replace("x", f"(?:{inner})") + f"(?:{other})"
    dfa = regex_to_dfa(marked, slots=[regex_to_dfa(inner), regex_to_dfa(other)])
    for text in texts + [t + "x" for t in texts]:
        assert dfa.accepts(text.encode()) == (re.fullmatch(spliced, text) is not None), (spliced, text)


def test_product_results_are_minimal_and_canonical() -> None:
    a = intersect(regex_to_dfa("[0-9]+"), regex_to_dfa("(?:[0-9][0-9])+"))
    b = regex_to_dfa("(?:[0-9][0-9])+")
    assert a.num_states == b.num_states
    assert (a.transitions == b.transitions).all() and (a.finals == b.finals).all()


def test_empty_intersection_and_budget() -> None:
    assert intersect(regex_to_dfa("a+"), regex_to_dfa("b+")).is_empty
    many = regex_to_dfa("[ab]*a[ab]{12}")
    with pytest.raises(CompileBudgetExceeded, match="product automaton"):
        intersect(many, regex_to_dfa("[ab]{0,40}"), max_states=500)
    with pytest.raises(ValueError, match="dead pair"):
        product(many, many, lambda x, y: not x)


def test_without_slots_a_raw_surrogate_is_just_an_impossible_character() -> None:
    assert regex_to_dfa("a" + slot_marker(0) + "?").accepts(b"a")
    assert regex_to_dfa("a" + slot_marker(0) + "?").num_states == regex_to_dfa("a").num_states
