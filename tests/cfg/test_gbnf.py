"""GBNF / EBNF: the syntax llama.cpp and XGrammar write, what it means, and every refusal by name."""

from __future__ import annotations

import pytest

from structgen.cfg import detect_syntax, grammar_network
from structgen.errors import GrammarNotSupported, GrammarSyntaxError, UnsatisfiableConstraint

from ..support.earley import GbnfReference
from .helpers import accepts, guide


def language(text: str, strings: list[str]) -> list[bool]:
    g = guide(text, syntax="gbnf")
    ref = GbnfReference(text)
    got = [accepts(g, s) for s in strings]
    assert got == [ref.accepts(s) for s in strings], "the reference disagrees"
    return got


def test_literals_and_escapes() -> None:
    text = r'root ::= "a\n\t\"\\" "\x41\u00e9\U0001F600" [\]\-\^x] "\'"'
    assert language(text, ['a\n\t"\\Aé😀]\'', "a\n\t\"\\Aé😀-'", "a\n\t\"\\Aé😀x'", "a\n\t\"\\Aé😀y'"]) == [
        True, True, True, False]


def test_classes_ranges_negation_and_any() -> None:
    text = 'root ::= [a-c0-9] [^a-z\\n] .'
    assert language(text, ["a!\n", "5Zé", "d!x", "aa!", "a\n!", "b😀😀"]) == [True, True, False, False, False, True]


def test_repetitions_are_exact_at_any_bound() -> None:
    text = 'root ::= "a"{3} "b"{2,} "c"{1,4} "d"{,2} "e"? "f"* "g"+'
    ok = "aaabbcdg"
    assert language(text, [ok, "aabbcdg", "aaabcdg", "aaabbcccccdg", "aaabbcdddg", "aaabbceeg", "aaabbcfffg", "aaabbc"]) == [
        True, False, False, False, False, False, True, False]
    big = guide('root ::= "x"{2500,3000}')  # (llama.cpp reads a maximum over 2000 as unbounded)
    assert accepts(big, "x" * 3000) and not accepts(big, "x" * 3001) and not accepts(big, "x" * 2499)


def test_comments_multiline_rules_and_continuations() -> None:
    text = """
# a comment line
root ::= (
    "a"      # inside a group, newlines are spaces
    item
  ) |
  "z"
item ::= "b"
  | "c"   # a line starting with | goes on with the rule (as XGrammar reads it)
"""
    assert language(text, ["ab", "ac", "z", "a", "abz"]) == [True, True, True, False, False]


def test_empty_alternatives_and_rules() -> None:
    text = 'root ::= "<" space ">"\nspace ::= | " " | "\\n" [ \\t]{0,3}'
    assert language(text, ["<>", "< >", "<\n\t\t>", "<  >", "<\n\t\t\t\t>"]) == [True, True, True, False, False]


def test_start_rule_option() -> None:
    g = guide('root ::= "a"\nother ::= "b" root', start="other")
    assert accepts(g, "ba") and not accepts(g, "a")


def test_detect_syntax() -> None:
    assert detect_syntax('root ::= "a"') == "gbnf"
    assert detect_syntax('# root ::= "a" in a comment\nstart: "a"') == "lark"
    assert detect_syntax('// x ::= y\nstart: "a"') == "lark"
    with pytest.raises(TypeError):
        detect_syntax(b"root ::= x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "reason", "line", "column"),
    [
        ('root ::= "a"\nroot ::= "b"', "defined twice", 2, None),
        ('root ::= item', "'item' is used but never defined", 1, None),
        ('root = "a"', "expected '::='", 1, 6),
        ('root ::= "a', "unterminated literal", 1, 12),
        ('root ::= [a-', "unterminated character class", 1, 13),
        ('root ::= "\\q"', "unknown escape \\q", 1, 11),
        ('root ::= "\\x4"', "\\x needs 2 hexadecimal digits", 1, 11),
        ('root ::= "\\ud800"', "not a character that UTF-8 can write", 1, 11),
        ('root ::= [z-a]', "reversed", 1, 14),
        ('root ::= "a"{3,2}', "maximum below its minimum", 1, 18),
        ('root ::= "a"{x}', "expected a number", 1, 14),
        ('root ::= * "a"', "repeats nothing", 1, 10),
        ('root ::= ("a"', "expected ')'", 1, 14),
        ('root ::= "a")', "expected the end of the line", 1, 13),
        ('item ::= "a"', "no rule named 'root'", None, None),
        ("", "the grammar has no rule", 1, 1),
    ],
)
def test_syntax_errors_name_where(text: str, reason: str, line: int | None, column: int | None) -> None:
    with pytest.raises(GrammarSyntaxError) as info:
        grammar_network(text, syntax="gbnf")
    err = info.value
    assert reason in str(err) and err.syntax == "gbnf"
    assert err.line == line
    if column is not None:
        assert err.column == column


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ("root ::= <think> [a-z]*", "a token reference"),
        ("root ::= <[1000]>", "a token reference"),
        ("root ::= !<[1000]>*", "a token reference"),
        ('root ::= "a" (= "b")', "a look-ahead assertion"),
        ('root ::= TagDispatch(("<a>", x))', "built-in TagDispatch"),
    ],
)
def test_constructs_we_cannot_enforce_are_refused(text: str, construct: str) -> None:
    with pytest.raises(GrammarNotSupported) as info:
        grammar_network(text, syntax="gbnf")
    assert construct in info.value.construct and info.value.line == 1 and info.value.rule == "root"
    assert "cannot enforce exactly" in str(info.value)


def test_a_grammar_that_derives_nothing_is_unsatisfiable() -> None:
    with pytest.raises(UnsatisfiableConstraint, match="derives no string"):
        grammar_network('root ::= a\na ::= "x" a', syntax="gbnf")


def test_rules_that_derive_nothing_drop_out() -> None:
    text = 'root ::= "a" | dead "b" | empty "c"\ndead ::= "x" dead\nempty ::= ""'
    assert language(text, ["a", "c", "b", "xb", ""]) == [True, True, False, False, False]
