"""The regex API's syntax beyond what interegular reads (structgen.automata.regex_syntax): Python's
``\\u``, ``\\U`` and ``\\N{..}`` escapes, the ``regex`` module's ``\\p{..}`` and POSIX classes,
checked against the ``regex`` module; no FutureWarning leaks; errors name the construct."""

from __future__ import annotations

import unicodedata
import warnings

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.regex import regex_to_dfa

#: The regex module's POSIX classes.
POSIX_NAMES = ["alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper",
               "word", "xdigit"]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Characters from every corner the constructs below touch: ASCII letters, digits, punctuation,
# controls, Latin-1, Greek, kana, CJK, an emoji, a title-case letter.
_SAMPLE = "aZ09_ -[]&~|:\t\n\x7f\xa0\xe9\xc9\xdf\u0391\u03c9\u01c5\u3042\u30a2\u4e00\u9fff\u2028\U0001F600"


def _agree(pattern: str, strings: list[str], flags: int) -> None:
    dfa = regex_to_dfa(pattern)
    for s in strings:
        assert dfa.accepts(s.encode()) == (regex.fullmatch(pattern, s, flags=flags) is not None), (pattern, s)


def _ascii() -> int:
    return int(regex.ASCII | regex.V0)


@pytest.mark.parametrize(
    "pattern",
    [
        r"\u00e9+",
        r"[\u3040-\u30ff\u4e00-\u9fff]{1,5}",
        r"\U0001F600|\u0041\u005a",
        r"\N{LATIN SMALL LETTER E WITH ACUTE}\N{EM DASH}?",
        r"[\u005d\u002d]+",  # "]" and "-" by escape: still literals inside a class
        r"a\u007b\u0032\u007d|\u002e",  # braces, a digit and "." by escape: still literals
        r"[^\u0000-\u007f]",
        r"\0|\012\101|[\0-\11]",  # octal, as Python reads it (interegular misread a bare \0)
    ],
)
def test_unicode_escapes_are_read_as_python_reads_them(pattern: str) -> None:
    strings = list(_SAMPLE) + ["\xe9\xe9", "\u3042\u4e00", "AZ", "]-", "a{2}", ".", "\xe9\u2014", "a", "\0", "\nA", "\x08"]
    _agree(pattern, strings, _ascii())


def test_compile_regex_takes_unicode_escapes() -> None:
    # (refused before as "regex module unicode properties are not supported.")
    vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b""], eos_token_ids=[256])
    guide = structgen.compile_regex(r"[\u3040-\u30ff\u4e00-\u9fff]{1,5}", vocab)
    state = guide.advance(guide.initial_state, list("ひらがな".encode()))
    assert state >= 0 and guide.is_final(state)
    assert guide.next_state(guide.initial_state, ord("a")) == -1


@pytest.mark.parametrize(
    "pattern",
    [r"\p{L}+", r"\P{L}", r"\pL\p{^L}", r"[\p{Lu}0-9_]+", r"[a-\p{Lu}]+", r"[\p{Nd}-z]+", r"\p{letter}\p{Uppercase Letter}\p{lu}",
     r"\p{Nd}{2}", r"[\p{Zs}\p{Zl}]", r"\p{General_Category=Lt}", r"\p{gc=Sc}|x", r"\P{Any}|y"],
)
def test_properties_as_the_regex_module_reads_them(pattern: str) -> None:
    # (Unicode, as the regex module reads them without its ASCII flag: \p{..} asks for Unicode)
    strings = [c for c in _SAMPLE if unicodedata.category(c) != "Cn"]
    strings += ["\xe9\u0391A", "aAA", "a1", "\u0661\u0662", "12", "y", "x", "\u20ac", "Aa_1"]
    _agree(pattern, strings, int(regex.V0))


@pytest.mark.parametrize("name", POSIX_NAMES)
def test_posix_classes_as_the_regex_module_reads_them_with_ascii(name: str) -> None:
    for pattern in (f"[[:{name}:]]", f"[[:^{name}:]]", f"[^[:{name}:]]", f"[x[:{name}:]]+"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (Python's "Possible nested set" must not leak)
            dfa = regex_to_dfa(pattern)
        for cp in list(range(0x80)) + [0xA0, 0xE9, 0x3042, 0x1F600]:
            expected = regex.fullmatch(pattern, chr(cp), flags=_ascii()) is not None
            assert dfa.accepts(chr(cp).encode()) == expected, (pattern, hex(cp))


@pytest.mark.parametrize(
    "pattern, accepted, rejected",
    [
        ("[[:alpha:]]+", ["abZ"], ["a1", "[:alph]"]),  # not "[[:alph]" followed by "]+"
        ("[[a]+", ["[a["], ["]"]),
        ("[a&&b]+", ["a&b"], ["c"]),
        ("[a~~b||c]+", ["~|"], ["d"]),
        ("[--/]+", ["-./"], [","]),
        ("[[:digit:]-z]+", ["1-z"], ["y"]),  # (a "-" next to a set is a literal, as in the regex module)
        (r"[\d-z]+", ["1-z"], ["y"]),
        ("[+--]+", ["+,-"], ["."]),
        ("[]a]+", ["]a"], ["b"]),
        ("[^]a]", ["b"], ["]", "a"]),
        ("a(?#[[:x:]] a comment)b", ["ab"], ["a b"]),
        (r"(?a)\w+(?a:\d)", ["ab1"], ["\xe9\xe91"]),  # (ASCII classes: what \d \w \s are anyway)
        (r"(?ai)A(?a-i:b)", ["ab"], ["aB"]),
    ],
)
def test_class_spellings_python_warns_about(pattern: str, accepted: list[str], rejected: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dfa = regex_to_dfa(pattern)
    assert [dfa.accepts(s.encode()) for s in accepted + rejected] == [True] * len(accepted) + [False] * len(rejected)
    for s in accepted + rejected:
        assert dfa.accepts(s.encode()) == (regex.fullmatch(pattern, s, flags=_ascii()) is not None), (pattern, s)


@pytest.mark.parametrize(
    "pattern, error, message, position",
    [
        (r"\ud800", structgen.RegexNotSupported, r"surrogate code point \\ud800", 0),
        (r"x(?u)\w", structgen.RegexNotSupported, r"the Unicode flag \(\?u\) \(\\d \\w \\s are ASCII", 1),
        (r"a[\udc00-\udfff]", structgen.RegexNotSupported, "UTF-8 text cannot contain one", 2),
        (r"\p{Han}+", structgen.RegexNotSupported, r"Unicode property \\p\{Han\} .*scripts and other properties are not", 0),
        (r"[^\p{L}]", structgen.RegexNotSupported, r"inside a negated class \(write \\P", 2),
        (r"[x[:^alpha:]]", structgen.RegexNotSupported, "negated POSIX class", 2),
        (r"[[:letters:]]", structgen.RegexSyntaxError, r"unknown POSIX class \[:letters:\] \(known: alnum, alpha", 1),
        (r"\p", structgen.RegexSyntaxError, "need a property name", 0),
        (r"\p{L", structgen.RegexSyntaxError, "missing }", 0),
        (r"\u00e9\u00e9(", structgen.RegexSyntaxError, "missing \\)", 12),  # the user's position
        (r"\p{L}\p{L}(", structgen.RegexSyntaxError, "missing \\)", 10),
        (r"\N{NO SUCH NAME}", structgen.RegexSyntaxError, "undefined character name", 0),
        (r"\u12", structgen.RegexSyntaxError, "incomplete escape", 0),
    ],
)
def test_errors_name_the_construct_and_the_position(pattern: str, error: type, message: str, position: int) -> None:
    with pytest.raises(error, match=message) as info:
        regex_to_dfa(pattern)
    assert info.value.position == position
    assert info.value.pattern == pattern


def test_patterns_without_these_constructs_are_not_rewritten() -> None:
    from structgen.automata.regex_syntax import POSIX_CLASSES, plain_syntax

    assert sorted(POSIX_CLASSES) == POSIX_NAMES
    for pattern in [r"\d{4}-\d{2}", r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"', r"[a-z]+\\u"]:
        assert plain_syntax(pattern).text == pattern


# -- random patterns against the regex module -----------------------------------------------------

_ESCAPED = st.sampled_from(list("aZ09-]&.\xe9\u3042\U0001F600")).map(
    lambda c: f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
)
_POSIX_ITEMS = st.sampled_from([f"[:{n}:]" for n in POSIX_NAMES])
_CLASS_ITEMS = st.one_of(_ESCAPED, _POSIX_ITEMS, st.sampled_from(list("az09-&~|[") + ["\\d", "\\]"]))


def _class(items: list[str], negated: bool) -> str:
    body = "".join(items)
    return f"[{'^' if negated else ''}{body}]"


_ASCII_ATOMS = st.one_of(
    _ESCAPED, st.builds(_class, st.lists(_CLASS_ITEMS, min_size=1, max_size=4), st.booleans()), st.sampled_from(["a", "\\d", "."])
)
_ASCII_PATTERNS = st.lists(st.tuples(_ASCII_ATOMS, st.sampled_from(["", "?", "+", "{1,2}"])), min_size=1, max_size=3).map(
    lambda parts: "".join(a + q for a, q in parts)
)


@FAST
@given(pattern=_ASCII_PATTERNS, strings=st.lists(st.text(alphabet=_SAMPLE, max_size=4), max_size=12))
def test_escapes_and_posix_classes_agree_with_the_regex_module(pattern: str, strings: list[str]) -> None:
    try:
        regex.compile(pattern, flags=_ascii())
    except regex.error:
        with pytest.raises(structgen.ConstraintError):
            regex_to_dfa(pattern)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dfa = regex_to_dfa(pattern)
    for s in strings:
        assert dfa.accepts(s.encode()) == (regex.fullmatch(pattern, s, flags=_ascii()) is not None), (pattern, s)
