"""The ``format`` table: the regex of each supported format's strings, and OpenAPI's number formats.

Format regexes are ASCII and use no character JSON would escape, so a string's encoded contents
and its decoded value coincide: one regex serves both the automaton and ``jsonschema``'s check.
The automaton's side is a term (:func:`format_term`), parsed once per process into a template
pool and copied into each compile's pool. Which formats are exact and which are
under-approximations: ``docs/json_schema.md``.

>>> format_regex("uuid") == FORMATS["uuid"], format_regex("no-such-format")
(True, None)
>>> bool(compiled_format("date").fullmatch("2024-02-29")), bool(compiled_format("date").fullmatch("2023-02-29"))
(True, False)
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from ..automata.expr import ExprPool
from ..automata.expr_rewrite import copy_from
from ..automata.regex import regex_to_expr
from .python_regex import parse_items, width
from .terms import TEMPLATE

__all__ = [
    "FORMATS", "FREE_STRING_FORMATS", "NUMBER_FORMATS", "compiled_format", "format_regex", "format_term", "regex_width",
]

_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
              r"|(?:0[13578]|1[02])-31)")
_DATE = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_TIME = (r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
         r"(?:Z|[+\-](?:[01][0-9]|2[0-3]):[0-5][0-9])")
_D = "[0-9]+"
_DUR_TIME = rf"T(?:{_D}H(?:{_D}M(?:{_D}S)?)?|{_D}M(?:{_D}S)?|{_D}S)"
_DURATION = rf"P(?:(?:{_D}D|{_D}M(?:{_D}D)?|{_D}Y(?:{_D}M(?:{_D}D)?)?)(?:{_DUR_TIME})?|{_DUR_TIME}|{_D}W)"
_HEX = "[0-9a-fA-F]"
_UUID = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}"


def _ipv6() -> str:
    h = f"{_HEX}{{1,4}}"

    def groups(n: int) -> str:  # n hextets separated by ':'
        return "" if n == 0 else h if n == 1 else f"{h}(?::{h}){{{n - 1}}}"

    alts = [f"(?:{h}:){{7}}{h}", f"(?:{h}:){{6}}{_IPV4}"]
    for k in range(8):  # k hextets before '::', at most 7 - k after it
        right = "" if k == 7 else f"(?:{h}(?::{h}){{0,{6 - k}}})?"
        alts.append(f"{groups(k)}::{right}")
    for k in range(6):  # with a dotted quad: at most 5 - k hextets between '::' and it
        alts.append(f"{groups(k)}::(?:{h}:){{0,{5 - k}}}{_IPV4}")
    return "(?:" + "|".join(alts) + ")"


def _label(n: int) -> str:
    """An LDH label of at most n characters, without "--" in positions 3-4 (reserved for
    A-labels, RFC 5891 4.2.3.1, which we do not decode)."""
    a, h = "[A-Za-z0-9]", "[A-Za-z0-9\\-]"
    return f"{a}(?:{a}|{h}{a}|{h}{h}{a}|{h}(?:{a}{h}|{h}{a}){h}{{0,{n - 5}}}{a})?"


# Under-approximations keeping the 253-character limit of RFC 1123 (and 254 for an address).
_HOSTNAME = f"(?:{_label(63)}(?:\\.{_label(63)}){{0,2}}|{_label(30)}(?:\\.{_label(30)}){{3,7}})"
_EMAIL_DOMAIN = f"(?:{_label(63)}(?:\\.{_label(63)})?|{_label(30)}(?:\\.{_label(30)}){{2,5}})"
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?\^_`{|}~\-]"
_EMAIL = rf"{_ATEXT}{{1,20}}(?:\.{_ATEXT}{{1,20}}){{0,2}}@{_EMAIL_DOMAIN}"
_PCT = f"%{_HEX}{{2}}"
_UNRESERVED_SUB = r"A-Za-z0-9\-._~!$&'()*+,;="
_PCHAR = f"(?:[{_UNRESERVED_SUB}:@]|{_PCT})"
_SEGMENT_NC = f"(?:[{_UNRESERVED_SUB}@]|{_PCT})"
_AUTHORITY = (f"(?:(?:[{_UNRESERVED_SUB}:]|{_PCT})*@)?"
              f"(?:\\[{_ipv6()}\\]|(?:[{_UNRESERVED_SUB}]|{_PCT})*)(?::[0-9]*)?")
_PATH_ABEMPTY = f"(?:/{_PCHAR}*)*"
_PATH_ABSOLUTE = f"/(?:{_PCHAR}+{_PATH_ABEMPTY})?"
_QUERY_FRAGMENT = f"(?:\\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_URI = (f"[A-Za-z][A-Za-z0-9+\\-.]*:(?://{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}"
        f"|{_PCHAR}+{_PATH_ABEMPTY})?{_QUERY_FRAGMENT}")
_RELATIVE_REF = (f"(?://{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}|{_SEGMENT_NC}+{_PATH_ABEMPTY})?"
                 f"{_QUERY_FRAGMENT}")

# RFC 6901: reference tokens of raw characters ("~" only as "~0" / "~1"). Characters JSON would
# escape (quote, backslash, controls) are left out, so the encoded and decoded strings coincide.
_JSON_POINTER = r'(?:/(?:[^"\\\x00-\x1f/~]|~[01])*)*'
# draft-handrews-relative-json-pointer-01: a non-negative integer, then "#" or a JSON pointer.
_RELATIVE_JSON_POINTER = f"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})"

_IDN_HOSTNAME = _HOSTNAME.replace("A-Za-z0-9", "a-z0-9")  # (IDNA 2008 disallows upper case)
_B64 = "[A-Za-z0-9+/]"
#: RFC 4648 base64 with padding (OpenAPI's ``byte``).
_BASE64 = f"(?:{_B64}{{4}})*(?:{_B64}{{2}}==|{_B64}{{3}}=)?"
# A regex valid in both ECMA-262 and Python: literal characters, ".", simple classes and one
# quantifier per atom (no escapes: a backslash would need JSON escaping), ^ and $ at the ends.
_REGEX_ATOM = r'(?:[^"\\\x00-\x1f^$.|?*+()\[\]{}]|\.|\[[A-Za-z0-9_]+\])'
_REGEX = rf"\^?(?:{_REGEX_ATOM}(?:[*+?]|\{{[0-9]{{1,3}}\}})?)*\$?"

#: Supported ``format`` values and their regexes (exact unless noted in the module docs).
FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}T{_TIME}",
    "duration": _DURATION,
    "uuid": _UUID,
    "ipv4": _IPV4,
    "ipv6": _ipv6(),
    "hostname": _HOSTNAME,
    "email": _EMAIL,
    "uri": _URI,
    "uri-reference": f"(?:{_URI}|{_RELATIVE_REF})",
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": _RELATIVE_JSON_POINTER,
    # under-approximations: ASCII URIs are IRIs, ASCII addresses and lower-case LDH names IDNs
    "iri": _URI,
    "iri-reference": f"(?:{_URI}|{_RELATIVE_REF})",
    "idn-email": _EMAIL,
    "idn-hostname": _IDN_HOSTNAME,
    "regex": _REGEX,
    # OpenAPI
    "byte": _BASE64,
}
#: Formats that constrain no string: OpenAPI's numeric formats (on numbers, ``int32`` /
#: ``int64`` are bounds: :data:`NUMBER_FORMATS`) and its UI hints.
FREE_STRING_FORMATS = frozenset({"int32", "int64", "float", "double", "binary", "password"})
#: Bounds of OpenAPI's integer formats, as ``(minimum, maximum)``.
NUMBER_FORMATS: dict[str, tuple[int, int]] = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def format_regex(name: str) -> Optional[str]:
    """The regex of a supported ``format``, None when unknown."""
    return FORMATS.get(name)


@functools.lru_cache(maxsize=None)
def _template(name: str) -> int:
    """The term of a built-in format, parsed once per process into the template pool of the JSON
    pieces (which a guide's pool starts as a fork of)."""
    return regex_to_expr(FORMATS[name], TEMPLATE.pool)


def parse_formats() -> None:
    """Parse every built-in format's regex now (0.15 s in all; ``uri-reference`` alone 31 ms) and
    measure its width, so the first schema with a format does not (see
    :func:`structgen.compiler.warm_up`; ``date``'s width alone: 0.8 ms of a first compile)."""
    for name, regex in FORMATS.items():
        _template(name)
        regex_width(regex)


def format_term(name: str, pool: ExprPool) -> int:
    """The term (in ``pool``) of the contents of the strings of a supported ``format``.

    >>> pool = ExprPool()
    >>> e = format_term("ipv4", pool)
    >>> for b in b"10.0.0.1":
    ...     e = pool.derive(e, b)
    >>> pool.nullable(e)
    True
    """
    return copy_from(pool, TEMPLATE.pool, _template(name))


@functools.lru_cache(maxsize=None)
def compiled_format(name: str) -> "re.Pattern[str]":
    """The regex of a supported ``format``, compiled (it matches a string's decoded value)."""
    return re.compile(FORMATS[name])


@functools.lru_cache(maxsize=None)
def regex_width(regex: str) -> tuple[int, Optional[int]]:
    """Shortest and longest (None: unbounded) match of one of our regexes, in characters.

    >>> regex_width(FORMATS["date"]), regex_width(FORMATS["uri"])
    ((10, 10), (2, None))
    """
    return width(list(parse_items(regex)))
