"""Lark grammars: the syntax Lark and llguidance write, the language Lark's Earley parser
(``lexer="dynamic_complete"``) accepts, and every refusal by name."""

from __future__ import annotations

import json

import pytest

from structgen.cfg import grammar_network
from structgen.errors import (
    CompileBudgetExceeded,
    GrammarNotSupported,
    GrammarSyntaxError,
    SchemaError,
    UnsatisfiableConstraint,
)

from .helpers import accepts, guide, lark_reference


def language(text: str, strings: list[str], *, start: str = "start") -> list[bool]:
    """Our answers, checked against Lark's."""
    g = guide(text, syntax="lark", start=start)
    ref = lark_reference(text, start)
    got = [accepts(g, s) for s in strings]
    assert got == [ref(s) for s in strings], "Lark disagrees"
    return got


def test_rules_terminals_and_operators() -> None:
    text = """
start: greeting+ NAME? "!"
?greeting: "hi" | "hello"i -> hello
NAME.2: /[a-z]+/
"""
    assert language(text, ["hi!", "HeLLohi!", "hibob!", "!", "hi", "hiBOB!"]) == [True, True, True, False, False, False]


def test_repetition_ranges_and_llguidance_braces() -> None:
    text = 'start: "a" ~ 2 "b" ~ 1..3 C{2,} D{,1}\nC: "c"\nD: "d"'
    ours = guide(text, syntax="lark")
    assert [accepts(ours, s) for s in ["aabcc", "aabbbccccd", "abcc", "aabbbbcc", "aabc", "aabccdd"]] == [
        True, True, False, False, False, False]
    text = 'start: "a" ~ 2 "b" ~ 1..3'  # (Lark itself reads ~; braces are llguidance's)
    assert language(text, ["aab", "aabbb", "ab", "aabbbb"]) == [True, True, False, False]


def test_ignore_between_before_and_after_terminals() -> None:
    text = 'start: "a" "b"\n%ignore " "\n%ignore /#[^\\n]*\\n/'
    assert language(text, ["ab", " a  b ", "a#x\nb", "a b#y\n", "  ", "a\tb", "a#xb"]) == [
        True, True, True, True, False, False, False]


def test_ignore_does_not_enter_terminals() -> None:
    text = 'start: WORD+\nWORD: /[a-z]+/\n%ignore " "'
    assert language(text, ["ab cd", "abcd", "a b", " "]) == [True, True, True, False]


def test_string_flags_escapes_and_ranges() -> None:
    text = r'''start: "sel\"ect"i "\x41" "\\" "a".."c" ESC
ESC: "\n" | "\t"'''
    assert language(text, ['SEL"ECTA\\b\n', 'sel"ectA\\c\t', 'sel"ectA\\d\n', 'sel"ectA\\a ']) == [True, True, False, False]


def test_terminals_built_from_terminals() -> None:
    text = """
start: NUMBER
NUMBER: SIGN? DIGITS ("." DIGITS)?
SIGN: "+" | "-"
DIGITS: /[0-9]+/
"""
    assert language(text, ["1", "-1.5", "+12.0", "1.", ".5", "--1"]) == [True, True, True, False, False, False]


def test_common_imports_with_aliases_and_their_dependencies() -> None:
    text = """
start: NUM ("," NUM)*
%import common.SIGNED_NUMBER -> NUM
%import common (WS_INLINE, CNAME)
%ignore WS_INLINE
INT: "never"
"""
    assert language(text, ["1", "-1.5e3, 2", "+.5 ,7", "1,", "e"]) == [True, True, True, False, False]


def test_escaped_string_reads_its_shortest_match() -> None:
    """Lark's ESCAPED_STRING is all lazy: re.match stops at the first unescaped quote, so one
    token never holds two strings."""
    text = 'start: ESCAPED_STRING+\n%import common.ESCAPED_STRING\n%ignore " "'
    assert language(text, ['"a"', '"a" "b"', '"a\\"b"', '"a\\\\"', '"a"b"', '"a\\\\"b"', '""']) == [
        True, True, True, True, False, False, True]


def test_c_comment_ends_at_the_first_close() -> None:
    text = 'start: "x"+\n%import common.C_COMMENT\n%ignore C_COMMENT'
    assert language(text, ["x/* a */x", "x/* a */ x */", "/**/x/*\n*/"]) == [True, False, True]


def test_templates() -> None:
    text = """
start: _list{item, ","} | "[" _list{_list{item, ";"}, ","} "]"
_list{x, sep}: x (sep x)*
item: "a" | "b"
"""
    assert language(text, ["a", "a,b,a", "[a;b,a]", "a;b", "[a,b;a;a]", "a,"]) == [True, True, True, False, True, False]


def test_override_and_extend() -> None:
    text = 'start: a\na: "x"\n%override a: "y"\n%extend a: "z"'
    g = guide(text, syntax="lark")
    assert [accepts(g, s) for s in ["x", "y", "z"]] == [False, True, True]


def test_priorities_aliases_and_modifiers_change_nothing() -> None:
    plain = 'start: a b\na: "x" | "y"\nb: "z"'
    fancy = '?start.5: _a b -> s\n_a.-1: "x" -> one | "y" -> two\n!b: "z"'
    for s in ["xz", "yz", "x", "zz"]:
        assert accepts(guide(plain, syntax="lark"), s) == accepts(guide(fancy, syntax="lark"), s)


def test_left_recursive_ambiguous_arithmetic() -> None:
    text = """
?start: sum
?sum: product | sum "+" product | sum "-" product
?product: atom | product "*" atom
?atom: NUMBER | "-" atom | "(" sum ")" | atom atom
NUMBER: /[0-9]+/
%ignore " "
"""
    strings = ["1", "1+2*3", "(1 - -2) * 3", "1 2 3", "1+", "((1)", "12+(3*4)-5"]
    assert language(text, strings) == [True, True, True, True, False, False, True]


def test_json_schema_inside_a_grammar() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
              "additionalProperties": False}
    text = f'start: "call " fn\nfn: %json {json.dumps(schema)}\n%ignore " "'
    g = guide(text, syntax="lark")
    assert accepts(g, 'call {"city": "Paris"}') and accepts(g, 'call  {"city":"Oslo"}  ')
    assert not accepts(g, 'call {"town": "Paris"}') and not accepts(g, "call {}")
    recursive = {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}, "maxItems": 2}}, "$ref": "#/$defs/t"}
    text = f'start: "<" %json {json.dumps(recursive)} ">" ("," "<" %json {{"type": "integer"}} ">")*'
    g = guide(text, syntax="lark")
    assert accepts(g, "<[[], [[]]]>,<7>") and not accepts(g, "<[[], [], []]>") and not accepts(g, "<[]>,<1.5>")


def test_json_schema_errors_come_through() -> None:
    with pytest.raises(SchemaError):
        grammar_network('start: %json {"type": 12}', syntax="lark")


def test_start_option() -> None:
    g = guide('start: "a"\nother: "b" start', syntax="lark", start="other")
    assert accepts(g, "ba") and not accepts(g, "a")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('start: "a"\nstart: "b"', "rule 'start' is defined twice"),
        ('start: A\nA: "a"\nA: "b"', "terminal 'A' is defined twice"),
        ("start: a", "rule 'a' is used but never defined"),
        ("start: A", "terminal 'A' is used but never defined"),
        ('start: A\nA: B\nB: A', "uses itself"),
        ('start: A\nA: "x" a\na: "y"', "rule 'a' inside a terminal"),
        ('start: ""', "an empty string is not a terminal"),
        ('start: "a" "b"\n"c"', "expected a rule, a terminal or a directive"),
        ("start: /a\nb/", "only with the x (verbose) flag"),
        ('start: "a" ~ 3..2', "maximum below its minimum"),
        ('start: "ab".."c"', "joins two one-character strings"),
        ('start: _sep{"a"}\n_sep{x, y}: x y', "takes 2 arguments, given 1"),
        ('start: _sep\n_sep{x}: x', "template '_sep' used without arguments"),
        ('start: "a"\n%override b: "x"', "%override of 'b', which is not defined"),
        ('start: "a"\n%import common.NOPE', "common has no terminal 'NOPE'"),
        ('start: "a"\n%frobnicate', "unknown directive %frobnicate"),
        ('start: /a(/', "missing ), unterminated subpattern"),
        ("other: \"a\"", "no rule named 'start'"),
        ('start: "a" $', "unexpected character '$'"),
        ('start: %json {"type": }', "%json needs a JSON value"),
    ],
)
def test_syntax_errors(text: str, reason: str) -> None:
    with pytest.raises(GrammarSyntaxError) as info:
        grammar_network(text, syntax="lark")
    assert reason in str(info.value) and info.value.syntax == "lark"


def test_syntax_errors_name_the_line_and_column() -> None:
    with pytest.raises(GrammarSyntaxError) as info:
        grammar_network('start: a\n\na: "x" )', syntax="lark")
    assert (info.value.line, info.value.column, info.value.rule) == (3, 8, "a")


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ('start: NAME\n%declare NAME', "%declare NAME"),
        ('start: "a"\n%import python (NAME)', "%import python"),
        ('start: "a"\n%import .other (x)', "a relative %import"),
        ("start: <|eot_id|>", "token or grammar reference <|eot_id|>"),
        ("start: <[128000]>", "token or grammar reference <[128000]>"),
        ("start: @sub", "token or grammar reference @sub"),
        ('start[lazy]: /.*/ "x"', "rule attributes"),
        ('start: "a"\n%llguidance {"allow_invalid_utf8": true}', "%llguidance option 'allow_invalid_utf8'"),
        ('start: A\nA: %regex {"substring_words": "a b"}', "%regex"),
        ("start: /select\\b/i", "word boundary"),
        ("start: /[0-9]+(?!\\.)/", "a look-ahead at its end"),
        ("start: /(?<=x)y/", "a look-behind at its start"),
        ("start: /^#.*/m", "an anchor ^"),
        ("start: /a(?P<g>b)(?P=g)/", "a back-reference"),
        ('start: /".*?"x+/', "mixing lazy and greedy repetitions"),
        ("start: /a/l", "the locale flag"),
    ],
)
def test_constructs_we_cannot_enforce_are_refused(text: str, construct: str) -> None:
    with pytest.raises(GrammarNotSupported) as info:
        grammar_network(text, syntax="lark")
    assert construct in info.value.construct, info.value.construct
    assert info.value.syntax == "lark" and "cannot enforce exactly" in str(info.value)


def test_llguidance_and_not_operators_on_terminals() -> None:
    g = guide('start: WORD ("," WORD)*\nWORD: /[a-z]+/ & ~/(?s:.*)(?:if|else)(?s:.*)/', syntax="lark")
    assert [accepts(g, s) for s in ["abc", "ab,cd", "elsewhere", "iffy,x", "abc,xifx"]] == [True, True, False, False, False]
    g = guide("start: PAIR+\nPAIR: (/[ab]+/ & /a.*/) ~/b+/", syntax="lark")  # (~ over bytes: anything but b+)
    assert accepts(g, "aba") and accepts(g, "aab") and accepts(g, "a") and not accepts(g, "b")
    with pytest.raises(GrammarSyntaxError, match="& and ~ combine terminals only"):
        grammar_network('start: a & b\na: "x"\nb: "x"', syntax="lark")


def test_llguidance_options_that_change_nothing_are_read() -> None:
    g = guide('%llguidance {}\n%llguidance {"no_forcing": true}\nstart: "a"', syntax="lark")
    assert accepts(g, "a")


def test_interior_look_arounds_are_read_within_the_terminal() -> None:
    text = 'start: NAME ("." NAME)*\nNAME: /(?!(?:if|else)(?![a-z]))[a-z]+/'
    assert language(text, ["x", "iffy.elsewhere", "x.if", "else", "ifx.y"]) == [True, True, False, False, True]


def test_python_unicode_classes_and_case_folding() -> None:
    text = 'start: /\\d+/ "k"i /\\w/'
    assert language(text, ["42kx", "٤٢Kß", "1\u212aé", "1k_", "1k-", "ⅷkx"]) == [True, True, True, True, False, False]


def test_template_explosion_is_a_budget_error() -> None:
    with pytest.raises(GrammarSyntaxError, match="a template argument is a name"):
        grammar_network('start: t{"a"}\nt{x}: x | t{(x x)}', syntax="lark")
    text = "start: t{a}\nt{x}: x | t{t2{x}}\nt2{y}: y y\na: \"a\""
    with pytest.raises(CompileBudgetExceeded) as info:
        grammar_network(text, syntax="lark")
    assert info.value.what == "template uses nested in arguments" and info.value.path == "t"
    many = "start: " + " ".join(f"t{{a{i}}}" for i in range(3)) + "\nt{x}: x\n" + "".join(f'a{i}: "{i}"\n' for i in range(3))
    assert grammar_network(many, syntax="lark") is not None


def test_a_grammar_that_derives_nothing_is_unsatisfiable() -> None:
    with pytest.raises(UnsatisfiableConstraint):
        grammar_network('start: "a" start', syntax="lark")
