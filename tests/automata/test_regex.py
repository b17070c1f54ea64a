"""Regex → byte DFA: differential tests against Python's own regex engine, and the errors."""

from __future__ import annotations

import re
import signal

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.dfa import ByteDFA
from structgen.automata.regex import regex_to_dfa

from .reference.char_fsm import char_fsm_to_dfa, regex_to_char_fsm
from ..support.strategies import _ALPHABET, _CLASSES, _LITERALS, _atom, _quantified, patterns  # noqa: F401


def _py_fullmatch(pattern: str, s: str) -> bool:
    """The reference: the `regex` module (Python `re` semantics, V0) with ASCII classes.

    A backtracking engine can take exponential time on nested quantifiers; such cases are
    skipped (the timeout), never counted as agreement."""
    try:
        return regex.fullmatch(pattern, s, flags=regex.ASCII | regex.V0, timeout=0.5) is not None
    except TimeoutError:
        assume(False)
        raise


_ASCII_CLASSES = {"d": "[0-9]", "D": "[^0-9]", "w": "[a-zA-Z0-9_]", "W": "[^a-zA-Z0-9_]", "s": "[ \t\n\r\f\v]", "S": "[^ \t\n\r\f\v]"}


def _ascii_twin(pattern: str) -> re.Pattern[str]:
    """``pattern`` with ``\\d \\w \\s`` spelt out as ASCII classes, compiled without ``re.ASCII``.

    hypothesis's ``from_regex`` fails inside (an internal assertion) on ``re.ASCII`` patterns with
    a non-ASCII class range such as ``[😀-😂]``, so it draws from this twin: the same language."""
    return re.compile(re.sub(r"\\(.)", lambda m: _ASCII_CLASSES.get(m.group(1), m.group(0)), pattern))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, data=st.data())
def test_fsm_agrees_with_python_re(pattern: str, data: st.DataObject) -> None:
    dfa = regex_to_dfa(pattern)
    # Random strings (mostly rejected) and strings drawn from the pattern (accepted).
    for s in data.draw(st.lists(st.text(alphabet=_ALPHABET, max_size=8), max_size=20)):
        assert dfa.accepts(s.encode()) == _py_fullmatch(pattern, s), (pattern, s)
    for s in data.draw(st.lists(st.from_regex(_ascii_twin(pattern), fullmatch=True), min_size=1, max_size=5)):
        assert _py_fullmatch(pattern, s) and dfa.accepts(s.encode()), (pattern, s)


# Case folding that is not one to one: "ß".upper() == "SS", "İ".lower() == "i̇", the Kelvin sign
# and long s fold to ASCII letters, final sigma.
_TRICKY = ["ß", "İ", "\u212a", "ſ", "Σ", "ς", "k", "S", "I", "é", "É"]
_FLAG_PREFIXES = st.sampled_from(["", "", "(?i)", "(?s)", "(?is)"])
small_patterns = st.recursive(
    _quantified(st.one_of(_atom(), st.sampled_from(_TRICKY + ["[^ßk]", "[a-eſ]", "[^\\sİ]", "[Σ\u212a]"]))),
    lambda children: st.one_of(
        st.lists(children, min_size=2, max_size=3).map("".join),
        st.lists(children, min_size=2, max_size=3).map("|".join),
        _quantified(children.map(lambda p: f"({p})")),
        st.tuples(st.sampled_from(["i", "s", "-i", "-s", "is"]), children).map(lambda t: f"(?{t[0]}:{t[1]})"),
    ),
    max_leaves=5,
)


def _interegular_dfa(pattern: str) -> ByteDFA:
    """The reference: interegular's own ``to_fsm()``, lowered to bytes. It can take exponential
    time (e.g. ``(?s)([^\\n]{1,3}[^\\n]{1,3}b){1,3}``); such examples are skipped."""

    def give_up(signum: int, frame: object) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        return char_fsm_to_dfa(regex_to_char_fsm(pattern))
    except TimeoutError:
        assume(False)
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM to bound interegular's time")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(flags=_FLAG_PREFIXES, body=small_patterns)
def test_nfa_construction_agrees_with_interegular(flags: str, body: str) -> None:
    """Python's parse, resolved and built by the NFA construction, gives the same language as
    interegular's own reading and ``to_fsm()`` (two readers, two constructions), flags and case
    folding included: canonical numbering of minimal DFAs makes that equal tables."""
    pattern = flags + body
    ours, theirs = regex_to_dfa(pattern), _interegular_dfa(pattern)
    assert ours.transitions.tolist() == theirs.transitions.tolist(), pattern
    assert ours.byte_classes.tolist() == theirs.byte_classes.tolist(), pattern
    assert ours.finals.tolist() == theirs.finals.tolist(), pattern


@pytest.mark.parametrize(
    "pattern, accepted, rejected",
    [
        # interegular's folding is str.lower/str.upper of each character: "SS" is not one
        # character, so it matches nothing; the Kelvin sign stands for itself and "k", not "K".
        ("(?i)ß", ["ß"], ["SS", "ss", "ẞ"]),
        ("(?i)\u212a", ["k", "\u212a"], ["K"]),  # no closure: "k" is folded, "K" is not
        ("(?i)k", ["k", "K"], ["\u212a"]),
        ("(?i)[^k]", ["\u212a", "x"], ["k", "K"]),
        ("(?i:a)b", ["ab", "Ab"], ["aB"]),
        ("(?i)a(?-i:b)", ["Ab"], ["AB"]),
        ("(?s:.)(?:.)", ["\nx"], ["x\n"]),
    ],
)
def test_flags(pattern: str, accepted: list[str], rejected: list[str]) -> None:
    dfa = regex_to_dfa(pattern)
    assert [dfa.accepts(s.encode()) for s in accepted + rejected] == [True] * len(accepted) + [False] * len(rejected)
    assert (dfa.transitions == _interegular_dfa(pattern).transitions).all()


def test_multiline_flag_changes_nothing_but_anchors_which_it_refuses() -> None:
    same = regex_to_dfa("a[bc]")  # (Python's (?m) changes only ^ and $)
    assert (regex_to_dfa("(?m)a[bc]").transitions == same.transitions).all()
    for pattern in ("(?m)a$\nb", "(?m)a\n^b", "(?m:a$)\n"):
        with pytest.raises(structgen.RegexNotSupported, match="multiline"):
            regex_to_dfa(pattern)


@pytest.mark.parametrize(
    "pattern, num_states",
    [("a{0,1000}", 1001), ("(?:a?){3000}", 3001), ("(?:a{0,2}){0,500}", 1001), (".{0,1000}", 8001), ("[a-z]{0,20000}", 20001)],
)
def test_long_counted_repetitions_compile(pattern: str, num_states: int) -> None:
    dfa = regex_to_dfa(pattern)
    assert dfa.num_states == num_states
    assert dfa.accepts(b"") and not dfa.accepts(b"a" * (num_states + 10))


@pytest.mark.parametrize(
    "pattern, max_states, what",
    [
        ("(?:a{1000}){1000}", 200_000, "NFA"),  # refused before anything is built
        (".{0,100000}", 200_000, "NFA"),
        ("[ab]*a[ab]{20}", 10_000, "automaton states"),  # the classic exponential blow-up
        ("(?:a|b?){300}", 1_000, "subset construction"),  # nullable copies: quadratic sets
    ],
)
def test_compile_budget(pattern: str, max_states: int, what: str) -> None:
    with pytest.raises(structgen.CompileBudgetExceeded) as e:
        regex_to_dfa(pattern, max_states=max_states)
    assert what in str(e.value) and "over the limit" in str(e.value)


@settings(max_examples=100, deadline=None)
@given(pattern=patterns, s=st.text(alphabet=_ALPHABET, max_size=6))
def test_prefixes_of_accepted_strings_stay_alive(pattern: str, s: str) -> None:
    """Every byte prefix of an accepted string (also inside a multi-byte char) has a live state."""
    assume(_py_fullmatch(pattern, s))
    dfa = regex_to_dfa(pattern)
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
        (r"a?a?", ["", "a", "aa"], ["aaa"]),  # every state final: minimisation must still split
        (r"(?:ab)?c?", ["", "ab", "abc", "c"], ["abab", "cc"]),
        # Braces Python reads as text, or as a repetition with no lower bound: read as Python reads them.
        (r"a{", ["a{"], ["a", "{"]),
        (r"x{a}", ["x{a}"], ["x", "xa"]),
        (r"a{,2}", ["", "a", "aa"], ["aaa", "a{,2}"]),
        # Python's parser reads an alternation of single characters as a class: the classes
        # \W \S together are every character; a class with \W and a letter holds the letter.
        (r"[\W\S]", ["a", " ", "_"], [""]),
        (r"(?i)[\Wa]", ["a", "A", "-"], ["b", "_"]),
    ],
)
def test_examples(pattern: str, accepted: list[str], rejected: list[str]) -> None:
    dfa = regex_to_dfa(pattern)
    for s in accepted:
        assert dfa.accepts(s.encode()), s
        assert re.fullmatch(pattern, s, re.ASCII), s  # (the examples agree with Python's re)
    for s in rejected:
        assert not dfa.accepts(s.encode()), s


def test_partial_utf8_lands_in_intermediate_state() -> None:
    dfa = regex_to_dfa("😀+")
    emoji = "😀".encode()
    for k in range(1, 4):
        s = dfa.step(0, emoji[:k])
        assert s >= 0 and not dfa.finals[s]
    assert dfa.accepts(emoji * 2)
    assert dfa.step(0, emoji[:2] + b"a") == -1
    # Invalid UTF-8 never gets through: overlong encodings, surrogates, stray continuation bytes.
    anything = regex_to_dfa("(?s).*")
    for bad in (b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80", b"\xff"):
        assert anything.step(0, bad) == -1, bad


def test_canonical_numbering_is_stable() -> None:
    a = regex_to_dfa("(?:ab|ac)*d")
    b = regex_to_dfa("(?:a(?:b|c))*d")
    assert (a.transitions == b.transitions).all() and (a.byte_classes == b.byte_classes).all()


@pytest.mark.parametrize(
    "pattern, construct, position",
    [
        (r"(a)\1", "back-reference", 3),
        (r"(?m)a^b", "multiline", 5),
        (r"a++", "possessive", 1),
        (r"(?>a)", "atomic group", 0),
        (r"(a)?(?(1)b|c)", "conditional", 4),
    ],
)
def test_unsupported_constructs_are_named(pattern: str, construct: str, position: int) -> None:
    with pytest.raises(structgen.RegexNotSupported) as e:
        regex_to_dfa(pattern)
    assert construct in str(e.value) and e.value.position == position
    assert isinstance(e.value, structgen.ConstraintError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    "pattern, position, reason",
    [("(ab", 0, "missing )"), ("[z-a]", 1, "bad character range"), ("a{3,1}", 2, "min repeat"), ("*a", 0, "nothing to repeat")],
)
def test_syntax_errors_have_positions(pattern: str, position: int, reason: str) -> None:
    with pytest.raises(structgen.RegexSyntaxError) as e:
        regex_to_dfa(pattern)
    assert e.value.position == position and reason in str(e.value) and repr(pattern) in str(e.value)


@pytest.mark.parametrize("construct, inner", [("back-reference", "(?P<n>a)(?P=n)"), ("possessive", "a++"), ("atomic group", "(?>a)"),
                                               ("conditional", "(a)?(?(1)b|c)"), ("multiline", "(?m:^a)")])
@pytest.mark.parametrize("around", ["x|{}", "(?:y|{})*", "z(?={})", "({}){{2}}", "(?:a|(?:b|{}))+?", "(?<!q)(?:{}|w)?"])
def test_unsupported_constructs_are_found_wherever_they_nest(construct: str, inner: str, around: str) -> None:
    """The walk that refuses what an automaton cannot enforce reaches inside alternations,
    repetitions, groups and look-arounds (each item without a sub-pattern is passed over)."""
    with pytest.raises(structgen.RegexNotSupported, match=construct.split()[0]):
        regex_to_dfa(around.format(inner))


def test_verbose_flag_is_refused() -> None:
    with pytest.raises(structgen.RegexNotSupported, match="verbose"):
        regex_to_dfa("(?x) a b")


_CLASS_CHARS = st.one_of(
    st.integers(0x20, 0x7E).map(chr).filter(lambda c: c not in "[]\\^-"),
    st.integers(0xA0, 0x2FFF).map(chr),
    st.integers(0x10000, 0x10FFF).map(chr),
    st.sampled_from(["\\]", "\\-", "\\\\", "\\[", "\\^", "\\n", "\\u00e9", "\\x41"]),
)
_CLASS_ITEMS = st.one_of(_CLASS_CHARS, st.tuples(st.integers(0x21, 0x2FF0), st.integers(0, 400)).map(
    lambda p: f"{chr(p[0])}-{chr(min(p[0] + p[1], 0x2FFF))}" if chr(p[0]) not in "[]\\^-" else chr(p[0] + 1)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(_CLASS_ITEMS, min_size=30, max_size=60),
    negated=st.booleans(),
    context=st.sampled_from(["{c}", "a{c}+b", "(?:{c}|x){{1,3}}", "{c}*(?=q){c}?", "(?<!y){c}z", "(?i:{c})k",
                             "(?s:.){c}{c}", "[a-c]{c}|{c}[a-c]"]),
)
def test_a_large_class_read_on_its_own_matches_what_interegular_reads(items: list[str], negated: bool, context: str) -> None:
    """A bracket class of 64 characters or more is read into code-point ranges by Python's parser
    and stands in the pattern for an automaton of its own: the languages are the same as where
    interegular reads the class (in both the eager and the lazy construction)."""
    from structgen.automata.algebra import difference
    from structgen.automata.expr import ExprPool
    from structgen.automata.expr_dfa import lazy_to_dfa
    from structgen.automata.nfa import pattern_to_dfa
    from structgen.automata.regex import _parse, parse_regex, regex_to_expr
    from structgen.automata.regex_syntax import plain_syntax

    cls = "[" + ("^" if negated else "") + "".join(items) + "]"
    assume(len(cls) >= 64)
    pattern = context.format(c=cls)
    try:
        re.compile(pattern)
        plain = pattern_to_dfa(parse_regex(pattern), max_states=200_000)
    except (re.error, structgen.StructgenError):
        return
    slotted = regex_to_dfa(pattern)
    spelled = plain_syntax(cls).text  # (as the parser sees it: \\u00e9 is \\xe9 there)
    if len(spelled) >= 64 and "(?i" not in pattern and "(?<" not in pattern and "(?=" not in pattern:
        assert _parse(pattern, 0)[1], "the class was not slotted"
    assert difference(slotted, plain).is_empty and difference(plain, slotted).is_empty
    pool = ExprPool()
    lazy = lazy_to_dfa(pool, regex_to_expr(pattern, pool))
    assert difference(lazy, plain).is_empty and difference(plain, lazy).is_empty


_ECMA_ATOMS = st.sampled_from([".", "[^ ]", "a", "\\d", "[\\u0100-\\uffff]", "(?:x|.)", "[ -~]", "\\s", "[^a-z]", "é"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    atoms=st.lists(st.tuples(_ECMA_ATOMS, st.sampled_from(["", "*", "+", "?", "{2}"])), min_size=1, max_size=4),
    start=st.booleans(), end=st.booleans(), look=st.sampled_from(["", "(?=.)", "(?!a)"]),
)
def test_known_groups_and_wide_ranges_read_on_their_own_match_what_interegular_reads(
    atoms: list[tuple[str, str]], start: bool, end: bool, look: str
) -> None:
    """A translated ``pattern`` holds a JSON string character's spellings (twice where it is not
    anchored) and classes with the surrogates' range taken out: each is read once per process and
    stands in the regex for an automaton of its own (outside look-arounds). The languages are the
    same as where interegular reads them (eager and lazy construction)."""
    from structgen.automata.algebra import difference
    from structgen.automata.expr import ExprPool
    from structgen.automata.expr_dfa import lazy_to_dfa
    from structgen.automata.nfa import pattern_to_dfa
    from structgen.automata.regex import _parse, parse_regex, regex_to_expr
    from structgen.json_schema.ecma_pattern import pattern_regex
    from structgen.json_schema.regex_text import CHAR

    ecma = ("^" if start else "") + look + "".join(a + q for a, q in atoms) + ("$" if end else "")
    try:
        regex = pattern_regex(ecma)
    except structgen.StructgenError:
        return
    if regex is None:
        return
    plain = pattern_to_dfa(parse_regex(regex), max_states=200_000)  # (parse_regex reads no slot)
    slotted = regex_to_dfa(regex)
    assert difference(slotted, plain).is_empty and difference(plain, slotted).is_empty
    pool = ExprPool()
    lazy = lazy_to_dfa(pool, regex_to_expr(regex, pool))
    assert difference(lazy, plain).is_empty and difference(plain, lazy).is_empty
    if not start and not look:  # (an unanchored pattern starts with any characters: a known group)
        assert CHAR in regex and _parse(regex, 0)[1], regex


def test_a_known_group_is_a_non_capturing_group() -> None:
    from structgen.automata.regex import register_group

    with pytest.raises(ValueError, match="not a non-capturing group"):
        register_group("(abcdefghijkl)")


def test_a_parse_is_kept_until_a_group_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pattern read again (another compile of it) is the same parse, made once; a group
    registered since reads it anew (the group then stands in it for a slot of its own), and past
    ``PARSE_CACHE`` parses the least recently used goes."""
    from structgen.automata import regex as rx

    monkeypatch.setattr(rx, "_PARSES", type(rx._PARSES)())
    monkeypatch.setattr(rx, "_KNOWN_GROUPS", {})
    made = []
    anew = rx._parse_anew
    monkeypatch.setattr(rx, "_parse_anew", lambda *a: made.append(a) or anew(*a))
    pattern = "x(?:abc|[0-9]{2}|zzz)+y"
    first = rx._parse(pattern, 0)
    assert rx._parse(pattern, 0) is first and len(made) == 1 and not first[1]
    assert rx._parse(pattern, 3) is not first and len(made) == 2  # (slots numbered from 3: another parse)
    rx.register_group("(?:abc|[0-9]{2}|zzz)")
    again = rx._parse(pattern, 0)
    assert again is not first and len(again[1]) == 1 and made[2] == (pattern, 0, True)  # (and the group's own, read once)
    monkeypatch.setattr(rx, "PARSE_CACHE", 2)
    rx._parse("a+", 0)
    rx._parse("b+", 0)
    assert len(rx._PARSES) == 2 and (pattern, 0, True, 1) not in rx._PARSES
    with pytest.raises(structgen.errors.RegexSyntaxError):
        rx._parse("(", 0)
    assert len(rx._PARSES) == 2


def test_a_pattern_holding_a_known_group_is_read_with_the_group_slotted_and_errors_placed_in_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A registered group is slotted before Python's parser reads the rest (the same slot, the same
    language as read whole); an error after it is placed where it stands in the pattern."""
    from structgen.automata import regex as rx
    from structgen.automata.algebra import difference

    monkeypatch.setattr(rx, "_PARSES", type(rx._PARSES)())
    monkeypatch.setattr(rx, "_KNOWN_GROUPS", {})
    group = "(?:abc|[0-9]{2}|zzz)"
    rx.register_group(group)
    pattern = f"x{group}+[{'q' * 70}]{group}?"
    parsed, slots = rx._parse(pattern, 0)
    assert len(slots) == 2  # (the group, then the large class)
    whole = rx.pattern_to_dfa(rx.parse_regex(pattern), max_states=10_000)  # (no slot)
    slotted = rx.regex_to_dfa(pattern)
    assert difference(slotted, whole).is_empty and difference(whole, slotted).is_empty
    for bad, error, position in [
        (f"x{group}+y(", structgen.RegexSyntaxError, len(f"x{group}+y")),
        (f"{group}{group}(a)\\1", structgen.RegexNotSupported, len(f"{group}{group}(a)")),
    ]:
        with pytest.raises(error) as e:
            rx._parse(bad, 0)
        assert e.value.position == position and repr(bad) in str(e.value), str(e.value)


def test_a_plain_pattern_holding_a_large_class_is_read_with_the_class_slotted_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large bracket class of a pattern in plain syntax is slotted before Python's parser reads
    the pattern (read alone, by :func:`class_ranges`: the same language as read whole, and the
    parser never sees the class); a pattern that plain_syntax rewrites (a POSIX class, here one that would end the
    bracket early) is read whole first; an error after the class is placed where it stands."""
    from structgen.automata import regex as rx
    from structgen.automata.algebra import difference

    monkeypatch.setattr(rx, "_PARSES", type(rx._PARSES)())
    large = "[" + "".join(chr(c) for c in range(0x391, 0x391 + 60)) + "a-z0-9_.:/=+\\-@ ]"
    pattern = f"^(?:{large}*|x{large}?y)$"
    read: list[str] = []
    real_parse = rx._sre_parse.parse
    monkeypatch.setattr(rx._sre_parse, "parse", lambda text, *a: read.append(text) or real_parse(text, *a))
    parsed, slots = rx._parse(pattern, 0)
    assert len(slots) == 1 and not [text for text in read if large in text]  # (the class: alone, by class_ranges)
    monkeypatch.setattr(rx._sre_parse, "parse", real_parse)
    whole = rx.pattern_to_dfa(rx.parse_regex(pattern), max_states=10_000)  # (no slot)
    slotted = rx.regex_to_dfa(pattern)
    assert difference(slotted, whole).is_empty and difference(whole, slotted).is_empty
    posix = rx.regex_to_dfa("[" + "q" * 70 + "[:alpha:]]")  # (read as the class ends at its first "]": q [ : a l p h, then "]")
    assert posix.accepts(b"b") and posix.accepts(b"q") and not posix.accepts(b"[]")
    bad = f"{large}+(a)\\1"
    with pytest.raises(structgen.RegexNotSupported) as e:
        rx._parse(bad, 0)
    assert e.value.position == len(f"{large}+(a)"), str(e.value)


@pytest.mark.parametrize("text", [
    "^$", "^", "$", "^a|b$", "^^a", "^a$$", "^(a)$", "^[$]$", "^a\\\\$", "^(?:x|y)+$", "^\\d{2,}$", "^(?P<n>a)(?P=n)$",
    "^[a-z0-9][\\.\\-a-z0-9]{1,61}[a-z0-9]$", "^(arn:aws[-a-z]*:elasticfilesystem:[0-9a-z-:]+:(ap|fs)-[0-9a-f]{8,40})$",
    "(^a)$", "^a(?=b)", "^(?i:ab)$", "^a|^b", "^\\$$",
])
def test_a_pattern_read_without_its_anchors_is_its_parse_cut(text: str) -> None:
    """The parse of a pattern without its outer anchors is cut from the pattern's own parse where
    they stand as its first and last items (else read again): the same as reading the rest."""
    from structgen.automata import regex as rx

    body = rx.strip_anchors(text)
    if body == text:
        return
    parsed = rx._sre_parse.parse(text, 0)
    cut = rx._without_anchors(parsed, text.startswith("^"), len(body) + text.startswith("^") < len(text))
    if "|" in text:  # (not cut: the parser may have factored a "^" out of the branches)
        if text == "^a|^b":
            assert cut is not None and repr(cut) != repr(rx._sre_parse.parse(body, 0))
        return
    assert cut is not None and repr(cut) == repr(rx._sre_parse.parse(body, 0)) and cut.state is parsed.state


_CLASS_PIECES = st.one_of(
    st.sampled_from(list("ab-]^[&~|\\é中\n") + ["\\-", "\\]", "\\\\", "\\[", "\\d", "\\w", "\\n", "\\b", "\\1", "\\0", "\\é", "\\"]),
    st.integers(0, 0x10FFFF).map(lambda c: f"\\u{c & 0xFFFF:04x}"),
    st.integers(0, 0x10FFFF).map(lambda c: f"\\U{c:08x}"),
    st.integers(0x10FFF0, 0x110010).map(lambda c: f"\\U{c:08x}"),
    st.integers(0, 255).map(lambda c: f"\\x{c:02X}"),
    st.integers(0, 0xFFF).map(lambda c: f"\\u{c:03x}"),  # (three digits: an error)
    st.characters(codec="utf-8", exclude_characters="\\"),
)


def _parser_class(text: str) -> tuple[bool, set[int]] | str:
    """What Python's parser makes of a bracket class: ``(negated, code points)``; "error"; or
    "other" (more than one item, a category)."""
    import warnings

    from structgen.json_schema.python_regex import sre

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parsed = list(re._parser.parse(text, 0))  # type: ignore[attr-defined]
        except (re.error, ValueError, OverflowError):
            return "error"
    if len(parsed) != 1 or parsed[0][0] not in (sre.IN, sre.LITERAL, sre.NOT_LITERAL):
        return "other"
    op, av = parsed[0]
    if op is not sre.IN:
        return op is sre.NOT_LITERAL, {av}
    negated, points = False, set()
    for op, av in av:
        if op is sre.NEGATE:
            negated = True
        elif op is sre.LITERAL:
            points.add(av)
        elif op is sre.RANGE:
            points.update(range(av[0], av[1] + 1))
        else:
            return "other"
    return negated, points


@settings(max_examples=1500, deadline=None)
@given(negated=st.booleans(), pieces=st.lists(_CLASS_PIECES, min_size=1, max_size=12))
def test_a_bracket_class_is_read_as_pythons_parser_reads_it(negated: bool, pieces: list[str]) -> None:
    """:func:`class_ranges` (one regex scan) reads a class as ``re``'s parser does, or leaves it
    to the parser (``None``): never another set, never a class the parser refuses."""
    from structgen.automata.regex import class_ranges

    text = "[" + "^" * negated + "".join(pieces) + "]"
    got = class_ranges(text)
    if got is None:
        return
    want = _parser_class(text)
    assert not isinstance(want, str), (text, got, want)
    points = {c for lo, hi in got[1] for c in range(lo, hi + 1)}
    assert (got[0], points) == want, text


def test_a_large_class_reads_fast_and_means_the_same() -> None:
    """A ``\\p{L}``'s 3,000 escapes: the class's automaton is the parser's, read without it."""
    from structgen.automata.regex import _class_dfa, class_ranges
    from structgen.automata.unicode_props import expand_properties

    text = expand_properties("[\\p{L}\\p{N}_.:/=+\\-@]")
    assert len(text) > 10_000 and class_ranges(text) is not None
    want = _parser_class(text)
    assert not isinstance(want, str)
    dfa = _class_dfa(text)
    assert dfa is not None
    for c in (0x41, 0x5F, 0x2D, 0x40, 0x4E2D, 0x10FFFF, 0x20, 0x3000, 0x1F600):
        assert dfa.accepts(chr(c).encode()) == (c in want[1]), hex(c)
