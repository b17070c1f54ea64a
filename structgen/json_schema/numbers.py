"""JSON numbers under bounds and ``multipleOf``: terms and automata over decimal digits.

Every language here is a set of JSON numbers written **without an exponent** (a sound
sub-language: ``1e2`` is valid JSON but never emitted when ``multipleOf`` or a bound beyond 0
applies), but for bounds on one side at 0 or short of it (``minimum: 0``), which a number with an
exponent meets by its sign alone (:func:`exponents_by_sign`).

Bounds (``minimum`` / ``maximum`` / ``exclusive*``) are compared exactly on the decimal text,
which equals ``jsonschema``'s comparison of Python numbers because rounding to a float is
monotone and a bound is the shortest text of its float. Strict bounds could still collapse
through rounding (``0.10000000000000000001 > 0.1`` but both parse to the same float), so under a
strict bound a number with a fraction has at most :data:`SAFE_DIGITS` digits; integers are
compared exactly by Python and keep every digit.

``multipleOf: m`` is a remainder automaton over the digits (:func:`multiple_of_dfa`): ``m`` is
``M / 10**s``; a number is a multiple when at most ``s`` fraction digits are non-zero and the
digits, read as the integer ``x * 10**s``, are divisible by ``M``. ``jsonschema`` divides floats
(``0.3 / 0.1`` is not a whole number there), so a non-integer ``m`` is accepted only when it is a
binary fraction (``1.5``, ``0.25``: exact as a float, so the division is exact on numbers of at
most :data:`SAFE_DIGITS` digits); ``0.1`` or ``0.0001`` are refused.

>>> from structgen.automata.expr import ExprPool
>>> from structgen.automata.expr_text import to_regex
>>> from structgen.json_schema.terms import JsonTerms
>>> t = JsonTerms(ExprPool())
>>> to_regex(t.pool, number_bound(t, "exclusiveMinimum", 2.5))
'(?:2\\\\.(?:[6-9][0-9]*|5[0-9]*[1-9][0-9]*)|(?:[3-9]|[1-9][0-9]+)(?:\\\\.[0-9]+)?)'
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Union

from ..automata.dfa import ByteDFA
from ..automata.expr import NOTHING
from ..errors import CompileBudgetExceeded, SchemaError, SchemaNotSupported, UnsatisfiableConstraint
from .context import Context, Term
from .ops import Refs
from .terms import JsonTerms

__all__ = [
    "SAFE_DIGITS", "Numbers", "decimal_of", "exponents_by_sign", "is_binary_fraction", "multiple_of_dfa", "number_bound",
    "over_number", "safe_digits",
]

#: Numbers with a fraction and at most this many digits keep their order and their exactness
#: through ``float()`` (doubles hold 15 significant decimal digits).
SAFE_DIGITS = 15


def decimal_of(v: Union[int, float]) -> Decimal:
    """The exact decimal that the JSON text of ``v`` spells (floats by their shortest repr)."""
    return Decimal(v) if isinstance(v, int) else Decimal(repr(float(v)))


def _split(d: Decimal) -> tuple[int, str]:
    """``d >= 0`` as its integer part and its fraction digits without trailing zeros."""
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)  # (a finite number: NaN and the infinities have a letter here)
    text = "".join(map(str, digits))
    if exp >= 0:
        return int(text + "0" * exp), ""
    whole, frac = text[:exp] or "0", text[exp:].rjust(-exp, "0")
    return int(whole), frac.rstrip("0")


def _frac(t: JsonTerms, op: str, g: str) -> Term:
    """Non-empty fraction digit strings ``f`` with ``0.f op 0.g`` (``NOTHING``: none)."""
    if not g:
        if op == "ge":
            return t.digits
        if op == "gt":
            return t.cat(t.star(t.digit), t.nonzero, t.star(t.digit))
        return t.rep(t.lit("0"), 1, None) if op == "le" else NOTHING
    d, rest = int(g[0]), g[1:]
    alts = []
    if op in ("ge", "gt") and d < 9:
        alts.append(t.cat(t.span(str(d + 1), "9"), t.star(t.digit)))
    if op in ("le", "lt") and d > 0:
        alts.append(t.cat(t.span("0", str(d - 1)), t.star(t.digit)))
    inner = _frac(t, op, rest)  # f = d f' with f' non-empty
    empty_ok = op in ("ge", "le") if not rest else op in ("le", "lt")  # f = d alone
    if inner != NOTHING:
        alts.append(t.cat(t.lit(str(d)), t.opt(inner) if empty_ok else inner))
    elif empty_ok:
        alts.append(t.lit(str(d)))
    return t.alt(alts)


def _magnitude(t: JsonTerms) -> Term:
    """Any unsigned number without exponent."""
    return t.cached("magnitude", lambda t: t.cat(t.natural, t.opt(t.fraction)))


def _mag(t: JsonTerms, op: str, d: Decimal) -> Term:
    """Unsigned number texts (no exponent) whose value ``op`` ``d`` (``d >= 0``)."""
    di, g = _split(d)
    alts = []
    f = _frac(t, op, g)
    point = t.cat(t.lit(f"{di}."), f)
    if op in ("ge", "gt"):
        alts.append(t.cat(t.natural_range(di + 1, None), t.opt(t.fraction)))
        alts.append(point)
        if op == "ge" and not g:
            alts.append(t.lit(str(di)))
    else:
        if di >= 1:
            alts.append(t.cat(t.natural_range(0, di - 1), t.opt(t.fraction)))
        alts.append(point)
        if op == "le" or g:
            alts.append(t.lit(str(di)))
    return t.alt(alts)


def _signed(t: JsonTerms, op: str, c: Decimal) -> Term:
    """JSON numbers (no exponent) ``x`` with ``x op c``."""
    minus = t.lit("-")
    zero = t.cat(t.lit("-0"), t.opt(t.zeros_fraction))
    if op in ("ge", "gt"):
        if c > 0 or (c == 0 and op == "gt"):
            return _mag(t, op, c)
        if c == 0:
            return t.alt([_mag(t, "ge", c), zero])
        return t.alt([_magnitude(t), t.cat(minus, _mag(t, "le" if op == "ge" else "lt", -c))])
    if c < 0 or (c == 0 and op == "lt"):
        return t.cat(minus, _mag(t, "ge" if op == "le" else "gt", -c))
    if c == 0:
        return t.alt([zero, t.cat(t.lit("0"), t.opt(t.zeros_fraction)), t.cat(minus, _mag(t, "gt", c))])
    return t.alt([_mag(t, op, c), t.cat(minus, _magnitude(t))])


_OPS = {"minimum": "ge", "exclusiveMinimum": "gt", "maximum": "le", "exclusiveMaximum": "lt"}


def number_bound(t: JsonTerms, key: str, value: Union[int, float]) -> Term:
    """The JSON numbers (no exponent) satisfying one bound keyword."""
    return _signed(t, _OPS[key], decimal_of(value))


def safe_digits(t: JsonTerms) -> Term:
    """JSON numbers without exponent whose fraction, if any, keeps the total digits within
    :data:`SAFE_DIGITS`; integers of any length."""

    def build(t: JsonTerms) -> Term:
        sign = t.opt(t.lit("-"))
        forms = [t.integer, t.cat(sign, t.lit("0."), t.rep(t.digit, 1, SAFE_DIGITS))]
        for i in range(1, SAFE_DIGITS):
            forms.append(t.cat(sign, t.nonzero, t.rep(t.digit, i - 1, i - 1), t.lit("."), t.rep(t.digit, 1, SAFE_DIGITS - i)))
        return t.alt(forms)

    return t.cached("safe_digits", build)


def is_binary_fraction(m: Union[int, float]) -> bool:
    """Whether the decimal text of ``m`` is exactly its float (so float division by it is exact)."""
    return Fraction(decimal_of(m)) == Fraction(float(m))


def multiple_of_dfa(m: Union[int, float], *, integer: bool, max_states: int) -> ByteDFA:
    """JSON numbers without exponent that are multiples of ``m`` (``integer``: no fraction)."""
    d = decimal_of(m)
    if d <= 0:
        raise ValueError("multipleOf must be positive")
    sign, digits, exp = d.normalize().as_tuple()
    assert isinstance(exp, int)  # (m > 0 above: finite)
    s = max(0, -exp)
    big_m = int(d * (10**s))
    if big_m * (s + 3) > max_states:
        raise CompileBudgetExceeded(f"states of a multipleOf {m} automaton", max_states)
    # a state: (kind, the remainder modulo big_m so far (for "start": whether "-" was read),
    # the fraction digits read)
    ids: dict[tuple[str, int, int], int] = {}
    rows: list[dict[int, int]] = []
    finals: list[int] = []
    todo: list[tuple[str, int, int]] = []
    scale: int = 10**s

    def sid(key: tuple[str, int, int]) -> int:
        if key not in ids:
            ids[key] = len(rows)
            rows.append({})
            todo.append(key)
        return ids[key]

    def is_final(key: tuple[str, int, int]) -> bool:
        kind = key[0]
        if kind in ("z", "i"):
            return key[1] * scale % big_m == 0
        if kind == "f":
            shift: int = 10 ** (s - key[2])  # (key[2] <= s)
            return key[1] * shift % big_m == 0
        return kind == "t"

    sid(("start", False, 0))
    digits_b = [ord(str(x)) for x in range(10)]
    while todo:
        key = todo.pop()
        row = rows[ids[key]]
        kind = key[0]
        if kind == "start":
            if not key[1]:
                row[ord("-")] = sid(("start", True, 0))
            row[ord("0")] = sid(("z", 0, 0))
            for x in range(1, 10):
                row[digits_b[x]] = sid(("i", x % big_m, 0))
        elif kind in ("z", "i"):
            if kind == "i":
                for x in range(10):
                    row[digits_b[x]] = sid(("i", (key[1] * 10 + x) % big_m, 0))
            if not integer:
                row[ord(".")] = sid(("dot", key[1], 0))
        elif kind == "dot" or (kind == "f" and key[2] < s):
            k = 0 if kind == "dot" else key[2]
            if k < s:
                for x in range(10):
                    row[digits_b[x]] = sid(("f", (key[1] * 10 + x) % big_m, k + 1))
            elif key[1] == 0:  # s == 0: only zeros after the point
                row[digits_b[0]] = sid(("t", 0, 0))
        elif kind == "f":  # k == s
            if key[1] == 0:
                row[digits_b[0]] = sid(("t", 0, 0))
        elif kind == "t":
            row[digits_b[0]] = sid(("t", 0, 0))
        if is_final(key):
            finals.append(ids[key])
    return ByteDFA.from_rows(rows, finals, max_states=max_states)


def exponents_by_sign(t: JsonTerms, s: dict[str, Any]) -> Term:
    """The numbers with an exponent that bounds on one side, none of them beyond 0, hold by their
    sign alone: ``minimum: 0`` holds ``1e-05`` (as ``json.dumps`` writes ``0.00001``) and ``1e+16``;
    ``exclusiveMinimum: 0`` holds them where no float of them rounds to 0 (``5e-324`` is the
    smallest float; a fraction's first digit that is not 0 within 15 digits, an exponent down to
    -308, or down to -323 for a number of at least 1). ``NOTHING`` under bounds on both sides or
    beyond 0 (those numbers are written without an exponent).

    >>> from structgen.automata.expr import ExprPool
    >>> from structgen.automata.expr_text import to_regex
    >>> t = JsonTerms(ExprPool())
    >>> to_regex(t.pool, exponents_by_sign(t, {"maximum": 0.5}))
    '-(?:0|[1-9][0-9]*)(?:\\\\.[0-9]+)?[Ee][+\\\\-]?[0-9]+'
    """
    lows = [(k, v) for k in ("minimum", "exclusiveMinimum") if isinstance(v := s.get(k), (int, float))]
    highs = [(k, v) for k in ("maximum", "exclusiveMaximum") if isinstance(v := s.get(k), (int, float))]
    if bool(lows) == bool(highs) or any(v > 0 for _, v in lows) or any(v < 0 for _, v in highs):
        return NOTHING
    strict = any(k.startswith("exclusive") and v == 0 for k, v in lows or highs)
    if strict:  # (no float of these rounds to 0: the smallest, 1e-323 and 1e-15 * 1e-308, do not)
        e = t.among("eE")
        up = t.cat(e, t.opt(t.lit("+")), t.rep(t.digit, 1, None))
        down_to = [t.rep(t.digit, 1, 2), t.cat(t.span("0", "2"), t.digit, t.digit)]
        whole = t.cat(t.nonzero, t.star(t.digit), t.opt(t.fraction))  # (at least 1)
        small = t.cat(t.lit("0."), t.rep(t.lit("0"), 0, SAFE_DIGITS - 1), t.nonzero, t.star(t.digit))  # (at least 1e-15)
        number = t.alt([
            t.cat(whole, t.alt([up, t.cat(e, t.lit("-"), t.alt([*down_to, t.cat(t.lit("3"), t.alt([t.cat(t.span("0", "1"), t.digit), t.cat(t.lit("2"), t.span("0", "3"))]))]))])),
            t.cat(small, t.alt([up, t.cat(e, t.lit("-"), t.alt([*down_to, t.cat(t.lit("30"), t.span("0", "8"))]))])),
        ])
    else:
        number = t.cat(t.natural, t.opt(t.fraction), t.exponent)
    return t.cat(t.lit("-"), number) if highs else number


def over_number(t: JsonTerms, v: Union[int, float]) -> Term:
    """Every text without exponent of a number equal to ``v`` (trailing zeros, ``-0``)."""
    d = decimal_of(v)
    di, g = _split(abs(d))
    body = t.cat(t.lit(f"{di}.{g}"), t.star(t.lit("0"))) if g else t.cat(t.lit(str(di)), t.opt(t.zeros_fraction))
    if d == 0:
        return t.cat(t.opt(t.lit("-")), body)
    return t.cat(t.lit("-"), body) if d < 0 else body


class Numbers:
    """``integer`` and ``number`` schemas (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def integer(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """Integers under the bounds and ``multipleOf`` of ``s`` (exact: digit ranges)."""
        try:
            bounds = {k: Fraction(s[k]) for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum") if k in s}
        except (OverflowError, ValueError, TypeError) as e:
            raise SchemaError(f"a numeric bound is not a finite number: {e}", path) from e
        lows = [math.ceil(bounds["minimum"])] if "minimum" in bounds else []
        lows += [math.floor(bounds["exclusiveMinimum"]) + 1] if "exclusiveMinimum" in bounds else []
        highs = [math.floor(bounds["maximum"])] if "maximum" in bounds else []
        highs += [math.ceil(bounds["exclusiveMaximum"]) - 1] if "exclusiveMaximum" in bounds else []
        lo, hi = (max(lows) if lows else None), (min(highs) if highs else None)
        if lo is not None and hi is not None and lo > hi:
            described = ", ".join(f"{k} {s[k]}" for k in bounds)
            raise UnsatisfiableConstraint(f"no integer satisfies {described} (minimum > maximum)", path or "/")
        term = self.ctx.t.integer_range(lo, hi)
        if "multipleOf" in s and s["multipleOf"] != 1:  # (every integer is a multiple of 1)
            term = self.ctx.inter(term, self.multiple_of(s["multipleOf"], True, path), path)
            if term == NOTHING:
                raise UnsatisfiableConstraint(f"no integer in range is a multiple of {s['multipleOf']}", path or "/")
        return term

    def multiple_of(self, m: Any, integer: bool, path: str) -> Term:
        """The multiples of ``m`` written without exponent, as an automaton (refused for a float
        that is not a binary fraction: jsonschema divides floats inexactly)."""
        where = f"{path}/multipleOf"
        if isinstance(m, float) and not (m.is_integer() or is_binary_fraction(m)):
            raise SchemaNotSupported("multipleOf", where, f"{m!r} is not a binary fraction (jsonschema divides floats inexactly)")
        try:
            dfa = multiple_of_dfa(m, integer=integer, max_states=self.ctx.options.max_states)
        except CompileBudgetExceeded as e:
            raise CompileBudgetExceeded(e.what, e.limit, where) from None
        term = self.ctx.embed(dfa)
        if isinstance(m, float) or not integer:  # (floats: exact only within SAFE_DIGITS digits)
            term = self.ctx.inter(term, safe_digits(self.ctx.t), path)
        if term == NOTHING:
            raise UnsatisfiableConstraint(f"no number written without exponent is a multiple of {m}", path or "/")
        return term

    def number(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """Numbers under the bounds and ``multipleOf`` of ``s`` (then without exponent)."""
        ctx = self.ctx
        keys = [k for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum") if k in s]
        if not keys and "multipleOf" not in s:
            return ctx.t.number
        # (no exponent: a sound sub-language; a bound's numbers are already written without one)
        term = ctx.t.plain_number
        for i, key in enumerate(keys):
            bound = number_bound(ctx.t, key, s[key])
            term = bound if i == 0 else ctx.inter(term, bound, path)
        if any(k.startswith("exclusive") for k in keys):
            term = ctx.inter(term, safe_digits(ctx.t), path)
        if "multipleOf" in s:
            term = ctx.inter(term, self.multiple_of(s["multipleOf"], False, path), path)
        else:
            term = ctx.unite([term, exponents_by_sign(ctx.t, s)])
        if term == NOTHING:
            raise UnsatisfiableConstraint("no number satisfies the bounds" + (" and multipleOf" if "multipleOf" in s else ""), path or "/")
        return term
