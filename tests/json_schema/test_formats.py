"""Lexical regexes: integer ranges, JSON strings, ECMA-262 patterns and formats."""

from __future__ import annotations

import calendar
import datetime
import ipaddress
import json
import re
import uuid
from typing import Any

import interegular
import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from structgen.automata.expr import ExprPool
from structgen.automata.expr_dfa import lazy_to_dfa
from structgen.automata.expr_text import to_regex
from structgen.json_schema import charsets
from structgen.json_schema import formats as jf
from structgen.json_schema import regex_text
from structgen.json_schema.terms import JsonTerms
from structgen.json_schema.ecma_pattern import pattern_regex
from structgen.json_schema.python_regex import matches_only
from structgen.automata.algebra import intersect
from structgen.errors import SchemaNotSupported
from structgen.automata.regex import regex_to_dfa
from ..support.paths import SUITES

SUITE = SUITES / "draft2020-12"
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def full(regex: str, text: str) -> bool:
    return re.fullmatch(regex, text) is not None


_TERMS = JsonTerms(ExprPool())
#: The JSON pieces the schema compiler builds, printed as regexes.
STRING = to_regex(_TERMS.pool, _TERMS.string)
NUMBER = to_regex(_TERMS.pool, _TERMS.number)


def integer_range(lo: int | None, hi: int | None) -> str:
    return to_regex(_TERMS.pool, _TERMS.integer_range(lo, hi))


def test_char_term_is_the_char_regex() -> None:
    # (the pattern translation writes CHAR as text; the compiler builds it as a term: one language)
    got = lazy_to_dfa(_TERMS.pool, _TERMS.char)
    want = regex_to_dfa(regex_text.CHAR)
    assert np.array_equal(got.transitions, want.transitions) and np.array_equal(got.finals, want.finals)
    assert np.array_equal(got.byte_classes, want.byte_classes)


# --- integer ranges -------------------------------------------------------------------------------

BOUNDS = [None, *range(-25, 26)]
NON_CANONICAL = ["00", "01", "-01", "+1", "1.0", "", "-", "1e1", " 1"]


def test_integer_range_exhaustive_on_small_ranges() -> None:
    values = range(-130, 131)
    for lo in BOUNDS:
        for hi in BOUNDS:
            if lo is not None and hi is not None and lo > hi:
                with pytest.raises(ValueError):
                    integer_range(lo, hi)
                continue
            rx = re.compile(integer_range(lo, hi))
            for v in values:
                expected = (lo is None or v >= lo) and (hi is None or v <= hi)
                assert (rx.fullmatch(str(v)) is not None) == expected, (lo, hi, v)
            for text in NON_CANONICAL:
                assert rx.fullmatch(text) is None, (lo, hi, text)
            if rx.fullmatch("-0"):  # JSON's -0 is 0: only sound when 0 is in range
                assert (lo is None or lo <= 0) and (hi is None or hi >= 0)


@FAST
@given(
    st.one_of(st.none(), st.integers(-10**12, 10**12)),
    st.one_of(st.none(), st.integers(-10**12, 10**12)),
    st.lists(st.integers(-10**13, 10**13), min_size=1, max_size=30),
)
def test_integer_range_random(lo: int | None, hi: int | None, values: list[int]) -> None:
    assume(lo is None or hi is None or lo <= hi)
    rx = re.compile(integer_range(lo, hi))
    probes = values + [b + d for b in (lo, hi) if b is not None for d in (-1, 0, 1)]
    for v in probes:
        expected = (lo is None or v >= lo) and (hi is None or v <= hi)
        assert (rx.fullmatch(str(v)) is not None) == expected, (lo, hi, v)


def test_the_format_ranges_are_made_once_per_process_and_others_once_per_pool() -> None:
    """The ``int32`` / ``int64`` ranges are the template's (built once per process: a fork of it
    holds them already); any other range is made once per pool; either is the term built anew."""
    from structgen.json_schema.formats import NUMBER_FORMATS
    from structgen.json_schema.terms import SHARED_RANGES, TEMPLATE

    assert SHARED_RANGES == frozenset(NUMBER_FORMATS.values())
    for lo, hi in sorted(SHARED_RANGES):
        TEMPLATE.integer_range(lo, hi)
        fork = JsonTerms(ExprPool.forked(TEMPLATE.pool))
        got = fork.integer_range(lo, hi)
        assert got < len(TEMPLATE.pool) and got == fork._integer_range(lo, hi)  # (the fork's own id: the same term)
        assert re.fullmatch(to_regex(fork.pool, got), str(hi)) and not re.fullmatch(to_regex(fork.pool, got), str(hi + 1))
    terms = JsonTerms(ExprPool())
    before = len(TEMPLATE.pool)
    first = terms.integer_range(3, 1234)
    assert terms.integer_range(3, 1234) == first == terms._integer_range(3, 1234) and len(TEMPLATE.pool) == before


def test_integer_range_huge_bounds() -> None:
    big = 10**40 + 12345
    rx = re.compile(integer_range(-big, big))
    assert rx.fullmatch(str(big)) and rx.fullmatch(str(-big)) and rx.fullmatch("0")
    assert not rx.fullmatch(str(big + 1)) and not rx.fullmatch(str(-big - 1))


# --- strings --------------------------------------------------------------------------------------


@FAST
@given(st.text())
def test_every_json_string_matches(text: str) -> None:
    assume(not any(0xD800 <= ord(c) <= 0xDFFF for c in text))
    assert full(STRING, json.dumps(text, ensure_ascii=False))
    assert full(regex_text.quantify(regex_text.CHAR, len(text), len(text)), json.dumps(text, ensure_ascii=False)[1:-1])
    if all(ord(c) < 0x10000 for c in text):  # astral characters would need surrogate-pair escapes
        assert full(regex_text.quantify(regex_text.CHAR, len(text), len(text)), json.dumps(text, ensure_ascii=True)[1:-1])


@FAST
@given(st.from_regex(STRING, fullmatch=True))
def test_string_regex_is_sound(serialised: str) -> None:
    decoded = json.loads(serialised)
    assert isinstance(decoded, str)
    # one unit per code point: the same text re-encoded has exactly len(decoded) units
    assert full(regex_text.quantify(regex_text.CHAR, len(decoded), len(decoded)), serialised[1:-1])


def test_only_paired_surrogate_escapes() -> None:
    # A high surrogate then a low one is one astral character (json.dumps writes emoji so);
    # lone or reversed halves are not characters.
    assert full(STRING, '"\\ud83d\\ude00"') and full(STRING, '"\\uD83D\\uDE00x"')
    assert not full(STRING, '"\\uDFFF"')
    assert not full(STRING, '"\\ud83d"') and not full(STRING, '"\\ude00\\ud83d"')
    assert full(STRING, '"\\u00e9\\uE000\\uffff"')
    assert not full(STRING, '"a\nb"')
    assert not full(STRING, '"a"b"')


def test_number_regex() -> None:
    for text in ["0", "-0", "12", "-1.5", "1e5", "2.5E-3", "1E+2"]:
        assert full(NUMBER, text)
        json.loads(text)
    for text in ["01", "1.", ".5", "+1", "1e", "--1", "NaN", "Infinity"]:
        assert not full(NUMBER, text)


# --- character sets and patterns ------------------------------------------------------------------


def encodings(ch: str) -> list[str]:
    """Some of the JSON spellings of one character."""
    out = {json.dumps(ch, ensure_ascii=False)[1:-1], json.dumps(ch)[1:-1]}
    if ord(ch) < 0x10000 and not 0xD800 <= ord(ch) <= 0xDFFF:
        out.add(f"\\u{ord(ch):04x}")
        out.add(f"\\u{ord(ch):04X}")
    return sorted(out)


@FAST
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 40)), max_size=5), st.lists(st.integers(0, 400), max_size=40))
def test_encode_set_is_sound(spans: list[tuple[int, int]], probes: list[int]) -> None:
    ranges = charsets.norm((a, a + n) for a, n in spans)
    unit = charsets.encode_set(ranges)
    if unit is None:
        assert not ranges
        return
    rx = re.compile(unit)
    for cp in probes + [0x22, 0x5C, 0x0A, 0x2F]:
        inside = any(a <= cp <= b for a, b in ranges)
        for enc in encodings(chr(cp)):
            if rx.fullmatch(enc):
                assert inside, (ranges, cp, enc)
        # the canonical spelling is always accepted
        assert (rx.fullmatch(json.dumps(chr(cp), ensure_ascii=False)[1:-1]) is not None) == inside


PATTERNS = [
    "abc", "^abc$", "^[a-z]+$", r"^\d{3}-\d{4}$", r'^a"b\\c$', r"\s", r"^\S+@\S+\.\S+$", "^(foo|bar)baz$",
    "^a$|^b$", "^(a|b$)", "x*", ".", "^.{2,4}$", "[^a-z]", r"^\w+$", r"\D", "^$", "^(?:ab)+c?$", "é+", "^[\u00e0-\u00ff]{2}$",
    r"^\u0041\x42$", "^[\\]\\-]$", "^\\t$", r"\n", "^(?P<x>a)b$", "colou?r",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_pattern_translation_parses_everywhere(pattern: str) -> None:
    regex = pattern_regex(pattern)
    assert regex is not None
    re.compile(regex)
    interegular.parse_pattern(regex)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_pattern_translation_is_sound(pattern: str, data: st.DataObject) -> None:
    body = data.draw(st.from_regex(pattern_regex(pattern), fullmatch=True))
    decoded = json.loads('"' + body + '"')
    assert re.search(pattern, decoded), (pattern, body)


ECMA_SAFE = st.text(alphabet="abcxyz019 -_@.\"\\\t\nA", max_size=8)  # ASCII: \w \d agree there


@pytest.mark.parametrize("pattern", PATTERNS)
@FAST
@given(text=ECMA_SAFE)
def test_pattern_translation_is_complete_on_plain_text(pattern: str, text: str) -> None:
    """Where Python and ECMA-262 agree, a string the pattern finds is accepted (canonical JSON)."""
    if re.search(pattern, text) and (not pattern.endswith("$") or not text.endswith("\n")):
        assert full(pattern_regex(pattern), json.dumps(text, ensure_ascii=False)[1:-1]), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "lo", "hi"),
    [("^[a-z]+$", 2, 5), ("abc", 4, 6), ("abc", 5, None), ("^a.*$", 0, 3), ("^[0-9]*x[0-9]*$", 3, 4), ("b", 0, 1)],
)
def test_pattern_with_length(pattern: str, lo: int, hi: int | None) -> None:
    rx = re.compile(pattern_regex(pattern, lo, hi))
    for text in ["", "a", "ab", "abc", "abcd", "abcde", "abcdef", "xabcx", "1x2", "12x", "x", "12x34", "b", "zzzzzz"]:
        expected = bool(re.search(pattern, text)) and lo <= len(text) and (hi is None or len(text) <= hi)
        assert (rx.fullmatch(text) is not None) == expected, (pattern, lo, hi, text)


def test_pattern_with_impossible_length_is_empty() -> None:
    assert pattern_regex("^abc$", 4, None) is None
    assert pattern_regex("^[a-z]{5}$", 0, 3) is None


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"(a)\1", "escape \\1"), ("(?=a(?<=b))", "look-behind inside a look-ahead"),
        (r"(?<=\ba)", "word boundary inside a look-behind"), ("(?=a^)", "'^' inside a look-ahead"),
        ("(?i)abc", "flags"), ("a{,3}", "{,n}"), ("[]a]", "[]"), (r"\cC", "escape"), (r"\a", "escape"),
        (r"\Z", "escape"), ("a*+", "possessive"), ("(?>a)", "atomic"), (r"\01", "octal"),
        ("^(a|b)+$", "variable-width"),
    ],
)
def test_patterns_refused(pattern: str, why: str) -> None:
    with pytest.raises(SchemaNotSupported) as info:
        pattern_regex(pattern, 1, 3, path="/pattern")
    assert info.value.keyword == "pattern" and info.value.path == "/pattern"
    assert why in str(info.value)


@pytest.mark.parametrize(
    ("pattern", "valid", "invalid"),
    [
        ("(?s).*", ["", "a\nb"], []),
        ("(?s).+", ["x", "\n", "\u2028"], [""]),
        ("^(?s).+$", ["a\nb"], [""]),  # (Python 3.11 cannot read a flag after ^; the regex package can)
        ("^(?s)", ["", "x"], []),
        ("(?s)^a.b$", ["a\nb", "axb", "a.b"], ["ab", "a\n\nb", "a\nbc"]),
        ("(?s)^a[.]b$", ["a.b"], ["a\nb", "axb"]),  # (a class's dot is a dot)
    ],
)
def test_a_leading_dotall_flag(pattern: str, valid: list[str], invalid: list[str]) -> None:
    # (CloudFormation writes (?s) first, 36 times in 6 schemas: every character, newlines too, is a `.`)
    import regex

    from structgen.json_schema import schema_to_dfa

    dfa = schema_to_dfa({"type": "string", "pattern": pattern})
    for text in valid + invalid:
        assert dfa.accepts(json.dumps(text).encode()) == (regex.search(pattern, text) is not None) == (text in valid), text
    for elsewhere in ("a(?s).", "(?i)a", "(?si).", "(?m)^a"):
        with pytest.raises(SchemaNotSupported):
            schema_to_dfa({"type": "string", "pattern": elsewhere})


@pytest.mark.parametrize(
    ("pattern", "valid", "invalid"),
    [
        ("^(?<year>[0-9]{4})-(?<month>0[1-9]|1[0-2])$", ["2024-01", "1999-12"], ["2024-13", "24-01", "2024-1"]),
        ("^(?<$a_1>x|y)+(?<=y)$", ["xy", "y"], ["yx", ""]),  # (a look-behind stays one)
        ("^[(?<a>]+\\(?<b>c\\)$", ["(?<a>(<b>c)", "<<b>c)"], ["(?<a>", "x<b>c)", "((bc)"]),  # (in a class, after \\: text)
    ],
)
def test_named_groups_read_as_groups(pattern: str, valid: list[str], invalid: list[str]) -> None:
    """ECMA-262's named groups, ``(?<name>...)`` (Python writes ``(?P<name>``), match what the
    group does, in a schema's ``pattern`` and past the metaschema's ``format: regex`` check; a
    reference back by name (``\\k<name>``) is refused, named."""
    import regex

    from structgen.json_schema import schema_to_dfa

    dfa = schema_to_dfa({"type": "string", "pattern": pattern})
    python = regex.compile(pattern.replace("(?<y", "(?P<y").replace("(?<m", "(?P<m").replace("(?<$a_1>", "(?:"))
    for text in valid + invalid:
        assert dfa.accepts(json.dumps(text).encode()) == (python.search(text) is not None) == (text in valid), text
    with pytest.raises(SchemaNotSupported, match="not a regex Python can read"):
        schema_to_dfa({"type": "string", "pattern": "^(?<a>x)\\k<a>$"})


def test_python_categories_agree_with_re() -> None:
    for name, shorthand in (("digit", r"\d"), ("space", r"\s"), ("word", r"\w")):
        table = charsets.python_category(name)
        rx = re.compile(shorthand)
        for cp in list(range(0, 0x3100)) + list(range(0x3100, 0x110000, 97)):
            inside = any(a <= cp <= b for a, b in table)
            assert inside == (rx.match(chr(cp)) is not None), (name, hex(cp))
    # the shortcut in _single_set: Python's \d and \w contain ECMA-262's
    for name in ("digit", "word"):
        assert charsets.union(charsets.ECMA[name], charsets.python_category(name)) == charsets.python_category(name)
    # while \s differs both ways (U+FEFF is ECMA-only, U+001C-U+001F Python-only): intersected
    assert re.fullmatch(pattern_regex("^\\s$"), "\ufeff") is None
    assert re.fullmatch(pattern_regex("^\\s$"), "\\u001c") is None
    assert re.fullmatch(pattern_regex("^\\s$"), "\u00a0")


def test_matches_only() -> None:
    assert matches_only(r"[ ]?", " \t\n\r")
    assert matches_only(r"(?:[ \t]|\n)*", " \t\n\r")
    assert not matches_only(r"\s*", " \t\n\r")
    assert not matches_only(r"[^a]", " \t\n\r")
    assert not matches_only(r"x", " \t\n\r")
    assert not matches_only(r"(", " \t\n\r")


# --- formats --------------------------------------------------------------------------------------


def test_every_format_regex_parses() -> None:
    for name, regex in jf.FORMATS.items():
        interegular.parse_pattern(regex)
        # encoded == decoded: no string of the format holds a quote, a backslash or a control
        escaped = intersect(regex_to_dfa(regex), regex_to_dfa(r'(?s:.)*["\\\x00-\x1f](?s:.)*'))
        assert escaped.is_empty, name
        assert jf.format_regex(name) == regex
    assert jf.format_regex("uri-template") is None


def test_date_is_exact() -> None:
    rx = re.compile(jf.FORMATS["date"])
    for year in range(1, 10000):
        assert (rx.fullmatch(f"{year:04d}-02-29") is not None) == calendar.isleap(year), year
    assert not rx.fullmatch("0000-01-01")
    for year in (1, 1900, 2000, 2023, 2024, 9999):
        for month in range(0, 14):
            for day in range(0, 33):
                text = f"{year:04d}-{month:02d}-{day:02d}"
                try:
                    datetime.date(year, month, day)
                    valid = True
                except ValueError:
                    valid = False
                assert (rx.fullmatch(text) is not None) == valid, text


def parse_time(text: str) -> None:
    base, frac = re.match(r"([^.]*)(?:\.([0-9]+))?", text).groups()  # type: ignore[union-attr]
    tail = text[len(base) + (len(frac) + 1 if frac else 0):]
    datetime.time.fromisoformat(base + (("." + (frac + "000000")[:6]) if frac else "") + tail.replace("Z", "+00:00"))


@FAST
@given(st.data())
def test_formats_are_sound(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(jf.FORMATS)))
    text = data.draw(st.from_regex(jf.FORMATS[name], fullmatch=True))
    if name in ("regex", "byte"):  # (checked by their own tests above)
        return
    name = {"iri": "uri", "iri-reference": "uri-reference", "idn-email": "email", "idn-hostname": "hostname"}.get(name, name)
    if name == "date":
        datetime.date.fromisoformat(text)
    elif name == "time":
        parse_time(text)
    elif name == "date-time":
        date, time = text.split("T")
        datetime.date.fromisoformat(date)
        parse_time(time)
    elif name == "uuid":
        uuid.UUID(text)
    elif name == "ipv4":
        ipaddress.IPv4Address(text)
    elif name == "ipv6":
        ipaddress.IPv6Address(text)
    elif name in ("hostname", "email"):
        host = text
        if name == "email":
            local, host = text.rsplit("@", 1)
            assert 1 <= len(local) <= 64 and len(text) <= 254 and ".." not in local
            assert not local.startswith(".") and not local.endswith(".")
        assert len(host) <= 253
        for label in host.split("."):
            assert 1 <= len(label) <= 63 and re.fullmatch(r"[A-Za-z0-9-]+", label)
            assert not label.startswith("-") and not label.endswith("-") and label[2:4] != "--"
    elif name in ("json-pointer", "relative-json-pointer"):
        if name == "relative-json-pointer":
            prefix = re.match(r"0|[1-9][0-9]*", text)
            assert prefix is not None
            text = text[prefix.end():]
            if text == "#":
                return
        assert text == "" or text.startswith("/")
        for token in text.split("/")[1:]:
            assert re.fullmatch(r"(?:[^~]|~[01])*", token) and json.loads(json.dumps(token)) == token
            assert not set(token) & set('"\\') and all(ord(c) >= 0x20 for c in token)
    elif name == "duration":
        assert re.fullmatch(r"P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?", text)
    else:
        assert name.startswith("uri")
        assert not set(text) & set(" \"<>\\^`{|}")
        assert re.fullmatch(r"(?:[^%]|%[0-9A-Fa-f]{2})*", text)
        if name == "uri":
            assert re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", text)


@FAST
@given(st.ip_addresses())
def test_ip_addresses_are_accepted(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    name = "ipv4" if address.version == 4 else "ipv6"
    assert full(jf.FORMATS[name], str(address))
    if address.version == 6:
        assert full(jf.FORMATS[name], address.exploded)


@FAST
@given(st.uuids(), st.dates(), st.times(), st.datetimes(timezones=st.just(datetime.timezone.utc)))
def test_common_values_are_accepted(u: uuid.UUID, d: datetime.date, t: datetime.time, dt: datetime.datetime) -> None:
    assert full(jf.FORMATS["uuid"], str(u)) and full(jf.FORMATS["uuid"], str(u).upper())
    assert full(jf.FORMATS["date"], d.isoformat())
    assert full(jf.FORMATS["time"], t.isoformat() + "Z")
    assert full(jf.FORMATS["date-time"], dt.isoformat().replace("+00:00", "Z"))
    assert full(jf.FORMATS["date-time"], dt.isoformat())


@pytest.mark.parametrize("name", sorted(jf.FORMATS))
def test_format_suite_has_no_invalid_accepted(name: str) -> None:
    """The JSON Schema Test Suite's format-assertion cases: an invalid value must never match."""
    path = SUITE / "optional" / "format" / f"{name}.json"
    if not path.exists():
        pytest.skip(f"no suite file for {name}")
    rx = re.compile(jf.FORMATS[name])
    checked = 0
    for case in json.loads(path.read_text()):
        for test in case["tests"]:
            if isinstance(test["data"], str) and not test["valid"]:
                assert rx.fullmatch(test["data"]) is None, (name, test["description"], test["data"])
                checked += 1
    assert checked > 0


def test_well_known_format_values() -> None:
    good = {
        "duration": ["P1Y2M3DT4H5M6S", "PT1S", "P2W", "P1D", "PT36H"],
        "hostname": ["example.com", "a.b.c.d.example.co.uk", "localhost", "xn-a.com"],
        "email": ["joe.bloggs@example.com", "a+b@x.io"],
        "uri": ["https://example.com/a/b?c=d#e", "urn:isbn:0451450523", "mailto:x@y.z", "http://[::1]:80/"],
        "uri-reference": ["/a/b", "../x?y#z", "#frag", ""],
        "ipv6": ["::", "::1", "1::", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4"],
    }
    bad = {
        "duration": ["P", "PT", "P1Y2D", "1D", "PT1D", "P1W1D"],
        "hostname": ["-a.com", "a-.com", "a..b", "xn--abc", "a" * 64 + ".com"],
        "email": ["a@", "@b", "a@@b", "a b@c.d", ".a@b.c"],
        "uri": ["//example.com", "no scheme", "http://a b", "http://%zz"],
        "ipv6": ["1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", ":1", "1.2.3.4"],
    }
    for name, values in good.items():
        for v in values:
            assert full(jf.FORMATS[name], v), (name, v)
    for name, values in bad.items():
        for v in values:
            assert not full(jf.FORMATS[name], v), (name, v)


def test_json_pointer_formats_in_a_schema() -> None:
    from structgen.json_schema import schema_to_dfa

    dfa = schema_to_dfa({"type": "string", "format": "json-pointer"})
    for text, ok in [('""', True), ('"/a~0b/c~1/"', True), ('"/é"', True), ('"a"', False), ('"/a~"', False), ('"/a~2"', False)]:
        assert dfa.accepts(text.encode()) is ok, text
    rel = schema_to_dfa({"type": "string", "format": "relative-json-pointer"})
    for text, ok in [('"0"', True), ('"1#"', True), ('"2/a"', True), ('"01"', False), ('"#"', False), ('"-1/a"', False)]:
        assert rel.accepts(text.encode()) is ok, text


# --- formats as the specification reads them (issue 15) -------------------------------------------


@FAST
@given(st.from_regex(re.compile(jf.FORMATS["byte"]), fullmatch=True))
def test_byte_is_base64(text: str) -> None:
    import base64

    base64.b64decode(text, validate=True)  # (raises on anything else)


@FAST
@given(st.from_regex(re.compile(jf.FORMATS["regex"]), fullmatch=True))
def test_regex_format_strings_are_regexes_in_both_engines(text: str) -> None:
    import regex as ecma_like

    re.compile(text)
    ecma_like.compile(text, ecma_like.V1)  # (the stricter reading of classes: still compiles)
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    assert checker.conforms(text, "regex")


@FAST
@given(st.from_regex(re.compile(jf.FORMATS["idn-hostname"]), fullmatch=True))
def test_idn_hostname_strings_pass_idna(text: str) -> None:
    import idna

    idna.encode(text)
    assert jsonschema.Draft202012Validator.FORMAT_CHECKER.conforms(text, "idn-hostname")


@FAST
@given(st.sampled_from(["iri", "iri-reference", "idn-email"]), st.data())
def test_under_approximated_formats_are_sound(name: str, data: st.DataObject) -> None:
    text = data.draw(st.from_regex(re.compile(jf.FORMATS[name]), fullmatch=True))
    assert jsonschema.Draft202012Validator.FORMAT_CHECKER.conforms(text, name)
    base = {"iri": "uri", "iri-reference": "uri-reference", "idn-email": "email"}[name]
    assert re.fullmatch(jf.FORMATS[base], text)  # (an ASCII URI is an IRI, ...)


def _accepts(schema: Any, text: str, **kw: Any) -> bool:
    from structgen.json_schema import schema_to_dfa

    return schema_to_dfa(schema, **kw).accepts(text.encode())


def test_unknown_format_is_an_annotation_with_a_warning() -> None:
    from structgen.errors import AnnotationWarning

    schema = {"type": "object", "properties": {"p": {"type": "string", "format": "path"}}}
    with pytest.warns(AnnotationWarning, match=r"format 'path' at /properties/p/format") as record:
        assert _accepts(schema, '{"p": "any thing"}')
    assert record[0].message.path == "/properties/p/format"  # type: ignore[union-attr]
    with pytest.raises(SchemaNotSupported) as info:
        _accepts(schema, '{"p": "x"}', unknown_formats="error")
    assert info.value.path == "/properties/p/format"
    with pytest.raises(ValueError, match="unknown_formats"):
        _accepts(schema, '{"p": "x"}', unknown_formats="ignore")


def test_format_annotations_lists_unknown_formats() -> None:
    from structgen.json_schema import format_annotations

    schema = {"items": {"format": "text"}, "properties": {"a": {"format": "date"}, "b": {"format": "x"}}}
    assert format_annotations(schema) == [("/properties/b/format", "x"), ("/items/format", "text")] or sorted(
        format_annotations(schema)
    ) == [("/items/format", "text"), ("/properties/b/format", "x")]
    assert format_annotations(schema, {"x": "a", "text": "b"}) == []


def test_custom_formats_are_enforced() -> None:
    import warnings

    arn = r"arn:aws:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+"
    schema = {"type": "string", "format": "AWS::KMS::Key.Arn"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a registered format is not an annotation)
        assert _accepts(schema, '"arn:aws:kms:us-east-1:123456789012:key/ab-12"', formats={"AWS::KMS::Key.Arn": arn})
        assert not _accepts(schema, '"arn:aws:kms:us-east-1:1234:key/ab"', formats={"AWS::KMS::Key.Arn": arn})
        # with lengths and a pattern: the automata are intersected
        long_schema = {**schema, "maxLength": 44, "pattern": "us-"}
        assert _accepts(long_schema, '"arn:aws:kms:us-east-1:123456789012:key/ab-12"', formats={"AWS::KMS::Key.Arn": arn})
        assert not _accepts(long_schema, '"arn:aws:kms:us-east-1:123456789012:key/ab-123"', formats={"AWS::KMS::Key.Arn": arn})
        assert not _accepts(long_schema, '"arn:aws:kms:eu-west-1:123456789012:key/ab"', formats={"AWS::KMS::Key.Arn": arn})
        # a custom regex overrides the built-in format of the same name
        assert _accepts({"type": "string", "format": "date"}, '"tomorrow"', formats={"date": "tomorrow|today"})
    with pytest.raises(TypeError):
        _accepts(schema, '"x"', formats={"AWS::KMS::Key.Arn": 1})


def test_custom_format_under_enum_is_checked_the_same_way() -> None:
    schema = {"enum": ["ab", "cd", 3], "format": "two-a"}
    assert _accepts(schema, '"ab"', formats={"two-a": "a."})
    assert not _accepts(schema, '"cd"', formats={"two-a": "a."})
    assert _accepts(schema, "3", formats={"two-a": "a."})


def test_openapi_formats() -> None:
    assert _accepts({"type": "integer", "format": "int32"}, str(2**31 - 1))
    assert not _accepts({"type": "integer", "format": "int32"}, str(2**31))
    assert not _accepts({"type": "integer", "format": "int32", "minimum": 5}, "4")
    assert _accepts({"type": "integer", "format": "int64"}, str(-(2**63)))
    assert not _accepts({"type": "integer", "format": "int64"}, str(-(2**63) - 1))
    for name in ("float", "double"):
        assert _accepts({"type": "number", "format": name}, "1.5e300")
    for name in ("binary", "password", "int32"):
        assert _accepts({"type": "string", "format": name}, '"any \\u0000 thing"')
    assert _accepts({"type": "string", "format": "byte"}, '"YWJjZA=="')
    assert not _accepts({"type": "string", "format": "byte"}, '"YWJjZA="')
    assert not _accepts({"enum": [2**40, 1], "format": "int32"}, str(2**40))


def test_pattern_with_format_is_an_intersection() -> None:
    from structgen.errors import UnsatisfiableConstraint

    schema = {"type": "string", "format": "uri", "pattern": "^https://"}
    assert _accepts(schema, '"https://example.com/a"')
    assert not _accepts(schema, '"http://example.com/a"')
    assert not _accepts(schema, '"https://exa mple"')
    schema = {"type": "string", "format": "date", "pattern": "-02-", "maxLength": 10}
    assert _accepts(schema, '"2024-02-29"') and not _accepts(schema, '"2023-02-29"') and not _accepts(schema, '"2024-03-01"')
    # an empty intersection with a built-in (under-approximated) format is a refusal, not "unsatisfiable"
    with pytest.raises(SchemaNotSupported) as info:
        _accepts({"type": "string", "format": "hostname", "pattern": "^_"}, '"x"')
    assert info.value.keyword == "pattern"
    # with a custom format (exact) it is unsatisfiable
    with pytest.raises(UnsatisfiableConstraint):
        _accepts({"type": "string", "format": "digits", "pattern": "^a"}, '"x"', formats={"digits": "[0-9]+"})
