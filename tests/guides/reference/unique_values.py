"""JSON values as JSON Schema compares them, and their spellings as terms: the Python version of
``cpp/engine/json_values.h`` (was ``structgen/guides/unique_items.py``'s ``value_key``,
``value_texts`` and ``_without_exponents``), kept only for the differential tests
(``tests/json_schema/test_unique_items.py``)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Hashable

from structgen.automata.expr import ExprPool

_WS = b" \t\n\r"
_SHORT_ESCAPES = {'"': b'"', "\\": b"\\", "/": b"/", "\b": b"b", "\f": b"f", "\n": b"n", "\r": b"r", "\t": b"t"}


def value_key(v: Any) -> Hashable:
    """A key equal for JSON values that JSON Schema calls equal (as ``jsonschema`` does)."""
    if isinstance(v, bool):
        return ("b", v)
    if v is None:
        return ("n",)
    if isinstance(v, (int, float)):
        return ("#", v)  # (1 == 1.0 and hash(1) == hash(1.0))
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, list):
        return ("a", tuple(value_key(x) for x in v))
    return ("o", frozenset((k, value_key(x)) for k, x in v.items()))


def value_texts(pool: ExprPool, v: Any, chars: dict[str, int] | None = None) -> int:
    """Every JSON text of the value ``v`` (any whitespace, any escape, any spelling of a number with
    its significant digits, any key order): a term of ``pool``. Numbers: a superset (any exponent).
    ``chars`` caches the spellings of each character (per pool)."""
    chars = {} if chars is None else chars
    ws = pool.star(pool.bytes_of(_mask(_WS)))
    lit = pool.literal
    if v is None or isinstance(v, bool):
        return lit(json.dumps(v).encode())
    if isinstance(v, (int, float)):
        return _number_texts(pool, v)
    if isinstance(v, str):
        spelled = []
        for c in v:
            got = chars.get(c)
            if got is None:
                got = chars[c] = _char_texts(pool, c)
            spelled.append(got)
        return pool.concat([lit(b'"'), *spelled, lit(b'"')])
    if isinstance(v, list):
        if not v:
            return pool.concat([lit(b"["), ws, lit(b"]")])
        parts = [lit(b"["), ws, value_texts(pool, v[0], chars)]
        for x in v[1:]:
            parts += [ws, lit(b","), ws, value_texts(pool, x, chars)]
        return pool.concat([*parts, ws, lit(b"]")])
    if not v:
        return pool.concat([lit(b"{"), ws, lit(b"}")])
    # n members, each one of v's (a repeated key makes another value: a superset, never a loss)
    member = pool.alt(pool.concat([value_texts(pool, k, chars), ws, lit(b":"), ws, value_texts(pool, x, chars)]) for k, x in v.items())
    more = pool.repeat(pool.concat([ws, lit(b","), ws, member]), len(v) - 1, len(v) - 1)
    return pool.concat([lit(b"{"), ws, member, more, ws, lit(b"}")])


def _mask(chars: bytes) -> int:
    out = 0
    for b in chars:
        out |= 1 << b
    return out


def _char_texts(pool: ExprPool, c: str) -> int:
    """The spellings of the character ``c`` inside a JSON string."""
    forms = []
    cp = ord(c)
    if cp >= 0x20 and c not in '"\\' and not 0xD800 <= cp < 0xE000:
        forms.append(pool.literal(c.encode("utf-8")))
    if c in _SHORT_ESCAPES:
        forms.append(pool.literal(b"\\" + _SHORT_ESCAPES[c]))
    units = [cp] if cp < 0x10000 else [0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)]
    escaped = []
    for u in units:
        escaped.append(pool.literal(b"\\u"))
        for d in f"{u:04x}":
            escaped.append(pool.bytes_of(_mask(bytes({ord(d), ord(d.upper())}))))
    forms.append(pool.concat(escaped))
    return pool.alt(forms)


def _number_texts(pool: ExprPool, v: float) -> int:
    """The JSON numbers equal to ``v`` without an exponent, and with an exponent those with the sign
    and the significant digits of ``v`` (a superset: ``1e2`` is among the spellings of 10)."""
    lit = pool.literal
    zeros = pool.star(lit(b"0"))
    more_zeros = pool.optional(pool.seq(lit(b"."), zeros))
    digit = pool.byte_range(48, 57)
    exponent = pool.concat([pool.bytes_of(_mask(b"eE")), pool.optional(pool.bytes_of(_mask(b"+-"))), pool.repeat(digit, 1, None)])
    if v == 0:
        plain = pool.concat([pool.repeat(lit(b"0"), 1, None), more_zeros])
        with_exponent = pool.concat([pool.repeat(pool.bytes_of(_mask(b"0.")), 1, None), exponent])
        return pool.seq(pool.optional(lit(b"-")), pool.alt([plain, with_exponent]))
    if not math.isfinite(v):  # (a number too large for a float: every long or exponent spelling of its sign)
        digits = pool.repeat(digit, 1, None)
        long = pool.concat([pool.repeat(digit, 309, None), pool.optional(pool.seq(lit(b"."), digits)), pool.optional(exponent)])
        spelled = pool.alt([long, pool.seq(pool.repeat(pool.bytes_of(_mask(b"0123456789.")), 1, None), exponent)])
        return pool.seq(lit(b"-"), spelled) if v < 0 else spelled
    d = Decimal(repr(v) if isinstance(v, float) else str(v)).normalize()
    digits, x = "".join(map(str, d.as_tuple().digits)), int(d.as_tuple().exponent)
    k = len(digits)
    if x >= 0:  # (an integer: its digits, x zeros, then maybe a fraction of zeros)
        plain = pool.concat([zeros, lit((digits + "0" * x).encode()), more_zeros])
    elif k > -x:
        plain = pool.concat([zeros, lit(digits[: k + x].encode()), lit(b"."), lit(digits[k + x:].encode()), zeros])
    else:
        plain = pool.concat([zeros, lit(b"."), lit(("0" * (-x - k) + digits).encode()), zeros])
    shapes = [pool.concat([zeros, lit(digits.encode()), zeros, more_zeros]),  # (the dot anywhere)
              pool.concat([zeros, lit(b"."), zeros, lit(digits.encode()), zeros])]
    shapes += [pool.concat([zeros, lit(digits[:i].encode()), lit(b"."), lit(digits[i:].encode()), zeros]) for i in range(1, k)]
    number = pool.alt([plain, pool.seq(pool.alt(shapes), exponent)])
    return pool.seq(lit(b"-"), number) if v < 0 else number


def _without_exponents(text: bytes) -> tuple[Any] | None:
    """``(value,)`` of a JSON text whose numbers have no exponent (``value_texts`` of such a
    number is a superset), else ``None``."""
    exponents: list[str] = []

    def number(s: str) -> float:
        if "e" in s or "E" in s:
            exponents.append(s)
        return float(s)

    try:
        value = json.loads(text.decode("utf-8"), parse_float=number)
    except ValueError:
        return None
    return None if exponents else (value,)
