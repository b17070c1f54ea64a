"""Left and right recursion, ambiguity, the nesting bound and the budgets of the recursion
elimination (:mod:`structgen.cfg.shape`)."""

from __future__ import annotations

import time

import pytest

from structgen.cfg import compile_grammar, grammar_network
from structgen.automata.graphs import strongly_connected
from structgen.errors import CompileBudgetExceeded

from ..support.earley import GbnfReference
from .helpers import BYTES, accepts, guide


def agree(text: str, strings: list[str]) -> None:
    g, ref = guide(text, syntax="gbnf"), GbnfReference(text)
    assert [accepts(g, s) for s in strings] == [ref.accepts(s) for s in strings]


def test_direct_left_recursion_is_exact_and_unbounded() -> None:
    text = 'root ::= expr\nexpr ::= expr "+" term | expr "-" term | term\nterm ::= term "*" "1" | "1"'
    agree(text, ["1", "1+1", "1*1-1*1*1", "+1", "1+", "1**1", "1+1-1+1*1"])
    g = guide(text, max_depth=4)
    assert accepts(g, "+".join(["1*1"] * 2000))  # (no frame per operator: the recursion became a loop)


def test_indirect_and_hidden_left_recursion() -> None:
    agree('root ::= a\na ::= b "x" | "z"\nb ::= a "y" | c\nc ::= a "w" | "q"', ["z", "qx", "zyx", "zwx", "zyxwx", "zy", "x"])
    # left recursion hidden behind a rule that may be empty
    agree('root ::= a\na ::= opt a "c" | "d"\nopt ::= "" | "e"', ["d", "dc", "edc", "eedcc", "edcc", "ec", "dcc"])
    # a cycle of unit rules
    agree('root ::= a\na ::= b | "x"\nb ::= a | "y" | b "z"', ["x", "y", "xz", "yzz", "z", "xy"])


def test_ambiguous_grammars() -> None:
    agree('root ::= e\ne ::= e e | "a" | "(" e ")" | ""', ["", "a", "aa", "(a)(a)a", "((", "(a))", "()()"])
    agree('root ::= e\ne ::= e "+" e | e "*" e | "1"', ["1", "1+1*1", "1*1*1+1", "1+*1", "+"])
    g = guide('root ::= e\ne ::= e e | "a"')
    start = time.perf_counter()
    assert accepts(g, "a" * 1000)
    assert time.perf_counter() - start < 30  # (a generous bound: exponential work would never finish)


def test_right_recursion_uses_no_frames() -> None:
    text = 'root ::= list\nlist ::= item "," list | item\nitem ::= [0-9]+'
    g = guide(text, max_depth=2)
    assert accepts(g, ",".join(["12"] * 5000)) and not accepts(g, "1,")
    assert len(grammar_network(text)) == 1  # (the list is one loop, inlined into the root)
    ws = guide('root ::= "a" ws "b"\nws ::= [ \\t] ws | ""', max_depth=2)
    assert accepts(ws, "a" + " \t" * 3000 + "b")


def test_nesting_is_bounded_by_max_depth() -> None:
    text = 'root ::= p\np ::= "(" p ")" | "x"'
    g = compile_grammar(text, BYTES, max_depth=10)
    assert accepts(g, "(" * 8 + "x" + ")" * 8)
    assert not accepts(g, "(" * 20 + "x" + ")" * 20)  # (documented: nesting deeper than max_depth is cut)


def test_the_term_budget_names_the_rule() -> None:
    text = 'root ::= expr\nexpr ::= expr "+" term | term\nterm ::= "1" | "(" expr ")"'
    with pytest.raises(CompileBudgetExceeded) as info:
        grammar_network(text, max_terms=1)
    assert info.value.limit == 1 and info.value.path in ("expr", "term", "root")
    assert "terms built to remove recursion" in str(info.value)


def test_long_left_recursive_cycles_stay_small() -> None:
    """Paull's substitution on terms: each step adds a few terms (derivatives share the rest),
    so a cycle of many left-recursive rules does not blow up."""
    n = 60
    rules = [f'a{i} ::= a{i + 1} "x{i}" | a{i + 1} "y{i}"' for i in range(n)]
    rules.append(f'a{n} ::= a0 "z" | "w"')
    text = "root ::= a0\n" + "\n".join(rules)
    start = time.perf_counter()
    net = grammar_network(text)
    assert time.perf_counter() - start < 20 and len(net.pool) < 200_000
    g = guide(text)
    s = "w" + "".join(f"x{i}" if i % 2 else f"y{i}" for i in reversed(range(n)))
    assert accepts(g, s) and accepts(g, s + "z" + s[1:]) and not accepts(g, s + "z")


def test_strongly_connected_components_come_callees_first() -> None:
    graph = {1: [2], 2: [3, 1], 3: [], 4: [4, 1]}
    groups = strongly_connected(list(graph), graph.__getitem__)
    assert [sorted(g) for g in groups] == [[3], [1, 2], [4]]
