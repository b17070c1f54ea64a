"""The grammar front end's entry points: arguments, errors, the guide it gives."""

from __future__ import annotations

import pickle

import pytest

import structgen
from structgen.cfg import SYNTAXES, compile_grammar, grammar_network, parse_grammar
from structgen.automata.expr import ExprPool
from structgen.errors import UnsatisfiableConstraint

from .helpers import BYTES, accepts


def test_compile_grammar_gives_a_picklable_pushdown_guide() -> None:
    g = compile_grammar('start: "(" start ")" | "x"', BYTES)
    assert g.description == "lark grammar" and "PushdownGuide" in repr(g)
    copy = pickle.loads(pickle.dumps(g))
    assert accepts(copy, "((x))") and not accepts(copy, "((x)")


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="needs a structgen.Vocabulary"):
        compile_grammar('root ::= "a"', object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="syntax must be one of gbnf, lark"):
        grammar_network('root ::= "a"', syntax="antlr")
    with pytest.raises(TypeError, match="a grammar is a str"):
        grammar_network(b'root ::= "a"')  # type: ignore[arg-type]
    assert SYNTAXES == ("gbnf", "lark")
    assert parse_grammar('root ::= "a"', ExprPool(), syntax="ebnf").syntax == "gbnf"


def test_a_vocabulary_that_cannot_spell_the_grammar() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b""], eos_token_ids=[2])
    with pytest.raises(UnsatisfiableConstraint, match="can be spelt"):
        compile_grammar('root ::= "c" root | "c"', vocab)


def test_the_network_calls_only_where_the_grammar_nests() -> None:
    net = grammar_network('root ::= "[" list? "]"\nlist ::= item ("," item)*\nitem ::= [0-9]+ | root')
    assert len(net) == 2 and sorted(net.callees(0)) == [1]
