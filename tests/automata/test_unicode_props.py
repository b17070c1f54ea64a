"""Unicode property classes in JSON Schema patterns (structgen.automata.unicode_props), against the
``regex`` module's reading of ``\\p{..}`` (ECMA-262 ``u`` semantics for general categories)."""

from __future__ import annotations

import json
import re
import unicodedata
import warnings

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structgen.errors import SchemaNotSupported
from structgen.json_schema import load_schema, schema_to_dfa
from structgen.automata.unicode_props import expand_properties, property_set, regex_syntax_ok, spelled_dotall, unnamed_groups

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "N", "Nd", "Nl", "No", "P", "Pd", "S", "Sm", "Sc", "Z", "Zs",
         "Letter", "Uppercase_Letter", "Decimal_Number", "General_Category=Lu", "gc=N", "ASCII", "Any",
         "Graph", "Print", "White_Space", "space"]
AWS_TAG = r"^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$"


def contains(ranges: tuple, cp: int) -> bool:
    return any(a <= cp <= b for a, b in ranges)


def assigned(cp: int) -> bool:
    return unicodedata.category(chr(cp)) != "Cn"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_sets_agree_with_the_regex_module(name: str) -> None:
    positive, negative = property_set(name), property_set(name, True)
    assert positive is not None and negative is not None
    p, n = regex.compile(rf"\p{{{name}}}"), regex.compile(rf"\P{{{name}}}")
    moved = []  # (characters a newer Unicode moved between subcategories of one category)
    for cp in list(range(0, 0x3400)) + list(range(0x3400, 0x110000, 97)):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        for ours, theirs in ((positive, p), (negative, n)):
            if contains(ours, cp) and not theirs.fullmatch(ch):
                major = unicodedata.category(ch)[0]
                assert len(name) == 2 and regex.fullmatch(rf"\p{{{major}}}", ch), (name, hex(cp))
                moved.append(cp)
        if assigned(cp) and name not in ("Any",):
            assert contains(positive, cp) != contains(negative, cp), (name, hex(cp))
        elif not assigned(cp) and name not in ("Any", "ASCII"):
            assert not contains(positive, cp) and not contains(negative, cp)  # (see the module docs)
    assert len(moved) < 10, [hex(c) for c in moved]


@pytest.mark.slow
@FAST
@given(st.sampled_from(["Lu", "N", "Z", "L", "P"]), st.booleans(), st.characters(blacklist_categories=("Cs", "Cn")))
def test_patterns_with_properties_against_regex(name: str, negated: bool, ch: str) -> None:
    letter = "P" if negated else "p"
    pattern = rf"^a\{letter}{{{name}}}+$"
    dfa = schema_to_dfa({"type": "string", "pattern": pattern})
    text = json.dumps("a" + ch * 2, ensure_ascii=False).encode()
    if dfa.accepts(text):
        assert regex.search(pattern, "a" + ch * 2)
    elif ord(ch) >= 0x20 and ch not in '"\\':  # (raw characters: every one the pattern allows is accepted)
        assert not regex.search(pattern, "a" + ch * 2)


def test_aws_tag_pattern_compiles_and_is_exact_on_samples() -> None:
    dfa = schema_to_dfa({"type": "string", "pattern": AWS_TAG, "maxLength": 8})
    samples = ["", "abc", "Ünïcode", "a b", "a\u3000b", "x=1+2@y", "٣٤", "a!", "tab\t", "a\"b", "123456789", "ñ" * 8]
    for text in samples:
        want = regex.search(AWS_TAG, text) is not None and len(text) <= 8
        assert dfa.accepts(json.dumps(text, ensure_ascii=False).encode()) == want, text


def test_iot_fleet_metric_description_graph_pattern() -> None:
    # (CloudFormation's AWS::IoT::FleetMetric: \p{Graph} as UTS #18 and the regex package define it)
    pattern = r"[\p{Graph}\x20]*"
    dfa = schema_to_dfa({"type": "string", "pattern": f"^{pattern}$", "maxLength": 6})
    for text in ["", "a b", "Ünï ✓", "tab\t", "a\u3000b", "a\u00a0", "x\x7f", "日本", "a\u200bb"]:
        want = regex.fullmatch(pattern, text) is not None
        assert dfa.accepts(json.dumps(text, ensure_ascii=False).encode()) == want, text


def test_properties_inside_classes_and_outside() -> None:
    assert expand_properties("abc") == "abc"
    assert expand_properties(r"\p{Zl}") == r"[\u2028]"
    assert expand_properties(r"[a\p{Zp}]") == r"[a\u2029]"
    dfa = schema_to_dfa({"type": "string", "pattern": r"^[\p{Lu}0-9]+$"})
    assert dfa.accepts('"AÉ9"'.encode()) and not dfa.accepts(b'"a"')


@pytest.mark.parametrize(
    "pattern", [r"\p{Script=Greek}", r"\p{Cn}", r"[^\d\p{Lu}]", r"[^\p{L}\s]", r"[^\p{Bogus}]", r"\p{Bogus}", r"\pL",
                # a range up to a property (a syntax error in ECMA-262 u mode; the dash was once dropped)
                r"[^a-\p{L}]", r"[^a-\p{L}b]"],
)
def test_refused_properties(pattern: str) -> None:
    # (inside a negated class only the sets no Unicode version changes are exact)
    with pytest.raises(SchemaNotSupported) as info:
        schema_to_dfa({"type": "string", "pattern": pattern})
    assert info.value.keyword == "pattern" and info.value.path == "/pattern"


@pytest.mark.parametrize("pattern", [r"^[^\p{C}]+$", r"^[^\p{L}\p{Z}]*$", r"^[^\P{Cc}]$", r"^[^_\p{Z}]+$", r"^[^a-c\p{Lu}]$",
                                     r"^[^\-\u0041\p{Nd}]*$", r"^[^\p{L}a]$"])
def test_a_negated_class_with_properties_is_read_among_assigned_characters(pattern: str) -> None:
    # (CloudFormation writes ^[^\p{C}]+$ in 12 schemas, AWS::IoT::Job's among them, and [^_\p{Z}] in AWS::FinSpace::Environment)
    dfa = schema_to_dfa({"type": "string", "pattern": pattern, "maxLength": 3})
    for cp in list(range(0, 0x800)) + list(range(0x800, 0x110000, 251)):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if dfa.accepts(json.dumps(ch, ensure_ascii=False).encode()):
            assert regex.search(pattern, ch) and assigned(cp), (pattern, hex(cp))
        elif assigned(cp) and cp >= 0x20 and ch not in '"\\':
            assert not regex.search(pattern, ch), (pattern, hex(cp))


def test_a_negated_class_of_controls_is_exact() -> None:
    # (circle-ci's orb names: the code points of Cc are fixed by Unicode's stability policy)
    pattern = r"^[^\p{Cc}\s]+$"
    dfa = schema_to_dfa({"type": "string", "pattern": pattern})
    for text in ["orb/name@1.2", "Ünï", "a b", "a\u0085", "a\u0001", "a\x7f", "", "日本"]:
        want = regex.search(pattern, text) is not None
        assert dfa.accepts(json.dumps(text, ensure_ascii=False).encode()) == want, text


def test_metaschema_check_reads_properties() -> None:
    load_schema({"type": "string", "pattern": AWS_TAG})
    load_schema({"patternProperties": {r"^\p{Lu}": {}}})
    with pytest.raises(SchemaNotSupported):  # (not a regex at all)
        load_schema({"type": "string", "pattern": r"\p{L}("})


def test_pattern_properties_with_properties() -> None:
    dfa = schema_to_dfa({"type": "object", "patternProperties": {r"^\p{Lu}+$": {"type": "integer"}}, "additionalProperties": False})
    # (keys written under patterns with classes are printable ASCII: see json_schema's docs)
    assert dfa.accepts(b'{"AB": 1}') and not dfa.accepts(b'{"ab": 1}') and not dfa.accepts(b'{"AB": "x"}')


@pytest.mark.parametrize("pattern, inside", [("^[a||b]+$", "a|b"), ("^[[a]+$", "[a"), ("^[a&&b]$", "&")])
def test_schema_patterns_python_warns_about_leak_no_future_warning(pattern: str, inside: str) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the metaschema's format: regex check compiled them bare)
        dfa = schema_to_dfa({"type": "string", "pattern": pattern})
    assert dfa.accepts(json.dumps(inside).encode()) and not dfa.accepts(b'"c"')


def _plain(value: object) -> object:
    """A parse as nested lists and tuples (Python's parser's SubPatterns as their items)."""
    from structgen.json_schema.python_regex import sre

    if isinstance(value, sre.__class__) or type(value).__name__ == "SubPattern":
        return [_plain(v) for v in value.data]  # type: ignore[attr-defined]
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


_ECMA_PIECES = st.one_of(
    st.sampled_from([r"\p{L}", r"\p{Zl}", r"\P{Zl}", r"\p{N}", r"\p{Any}", r"\P{Any}", r"\p{ASCII}", r"\p{Cc}", r"\p{Zp}"]),
    st.sampled_from(["a", "b", "-", "_", ".", "\\-", "\\.", "\\d", "é", "+", "*", "?", "|", "{2}", "{1,3}"]),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.tuples(st.sampled_from(["", "[", "[^", "(", "(?:", "(?=", "(?<!"]), st.lists(_ECMA_PIECES, min_size=1, max_size=4)),
                       min_size=1, max_size=4))
def test_properties_read_through_placeholders_parse_as_spelled_out(pieces: list[tuple[str, list[str]]]) -> None:
    """A pattern's properties written as placeholder code points, read by Python's parser and
    filled in (:func:`fill_placeholders`), give the very items of the pattern spelled out: the
    same ranges in the same places, a class of one code point a LITERAL, repeats dropped."""
    import re
    import warnings

    from structgen.automata.unicode_props import PLACEHOLDER_FIRST
    from structgen.json_schema.python_regex import fill_placeholders, parse_items

    closing = {"": "", "[": "]", "[^": "]", "(": ")", "(?:": ")", "(?=": ")", "(?<!": ")"}
    pattern = "".join(opening + "".join(p for p in inner if not (opening.startswith("[") and p in "+*?|{2}{1,3}"))
                      + closing[opening] for opening, inner in pieces)
    try:
        spelled = expand_properties(pattern)
    except SchemaNotSupported:
        return
    sets: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = parse_items(spelled)
        except re.error:
            with pytest.raises(re.error):
                parse_items(expand_properties(pattern, placeholders=sets))
            return
        got = parse_items(expand_properties(pattern, placeholders=sets))
    fill_placeholders(got, sets, PLACEHOLDER_FIRST)
    assert _plain(got) == _plain(want), pattern


def _python_reads(pattern: str) -> bool:
    """The check as ``re.compile`` answers it, ECMA-262's named groups read as groups (the
    specification of :func:`regex_syntax_ok`)."""
    read = unnamed_groups(spelled_dotall(pattern))
    read = re.sub(r"\\([pP])\{([A-Za-z_&=]+)\}", lambda m: "\\w", read)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(read)
    except re.error:
        return False
    return True


_PATTERN_PIECES = st.sampled_from([
    "a", "b+", ".", "[a-z]", "[^\\d]", "(", ")", "(?:", "(?=x)", "(?!y)", "(?<=ab)", "(?<!a|bc)", "(?<=a+)", "(?<n>x)",
    "(?P<n>x)", "(?P=n)", "\\1", "{2,3}", "{3,2}", "*", "+?", "|", "^", "$", "\\p{L}", "\\P{Lu}", "\\p{", "[a||b]",
    "[[a]]", "[z-a]", "\\", "\\x4", "\\u00e9", "(?s)", "(?i)", "(?L)", "(?a)", "\\Z", "\\z", "]", "}", "{",
])


@settings(max_examples=600, deadline=None)
@given(st.lists(_PATTERN_PIECES, max_size=6).map("".join))
def test_the_regex_format_check_reads_as_pythons_compiler(pattern: str) -> None:
    assert regex_syntax_ok(pattern) is _python_reads(pattern)
