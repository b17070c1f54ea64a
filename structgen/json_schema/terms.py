"""JSON's lexical pieces as terms of an :class:`~structgen.automata.expr.ExprPool`: a string
character, a string, a number, literals, whitespace between tokens, comma-separated sequences and
integer ranges. The schema compiler composes these (no regex text is written and parsed again).

Every term describes the *serialised* JSON text, as UTF-8 bytes. A JSON string holds *decoded*
characters; one :attr:`JsonTerms.char` is exactly one decoded code point, in any of its encodings:

- a raw character other than ``"``, ``\\`` and the controls U+0000-U+001F;
- a two-character escape ``\\" \\\\ \\/ \\b \\f \\n \\r \\t``;
- ``\\uXXXX`` outside the surrogate range D800-DFFF, or a surrogate pair ``\\uD83D\\uDE00`` (a
  high surrogate then a low one: one astral character, as ``json.dumps`` writes an emoji),

which keeps ``minLength`` / ``maxLength`` exact. The constant pieces are built once per pool.

>>> from structgen.automata.expr import ExprPool
>>> from structgen.automata.expr_text import to_regex
>>> t = JsonTerms(ExprPool())
>>> to_regex(t.pool, t.integer_range(-5, 12))
'(?:[0-9]|-[1-5]|1[0-2])'
>>> to_regex(t.pool, t.sequence("[", t.boolean, "]", lo=1, hi=2))
'\\\\[(?:false|true)(?:,(?:false|true))?\\\\]'
"""

from __future__ import annotations

import functools
from typing import Callable, Iterable, Optional

from ..automata.expr import EPSILON, NOTHING, ExprPool, byte_mask
from ..automata.expr_rewrite import concat_all, copy_from
from ..automata.regex import regex_to_expr
from .ops import encoded

__all__ = ["SHARED_RANGES", "TEMPLATE", "JsonTerms"]

#: The integer ranges of OpenAPI's ``int32`` and ``int64`` formats (:data:`.formats.NUMBER_FORMATS`),
#: in most Kubernetes schemas: built once per process in the template pool (other ranges, once per
#: compile: the template would otherwise grow with every schema's bounds).
SHARED_RANGES = frozenset({(-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)})

#: Code points a JSON string holds raw: not ``"``, ``\\``, nor a control.
_RAW = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF))


class JsonTerms:
    """The JSON pieces and combinators over one pool (``whitespace``: the regex allowed between
    two tokens, the user's choice; ``""``: none)."""

    def __init__(self, pool: ExprPool, whitespace: str = "") -> None:
        self.pool = pool
        self.whitespace = whitespace
        self._cache: dict[str, int] = {}

    def cached(self, name: str, build: Callable[["JsonTerms"], int], *, shared: bool = True) -> int:
        """``build(self)``, once per pool under ``name``. A ``shared`` piece (one that does not
        depend on the whitespace) is built once per process in a template pool and copied."""
        got = self._cache.get(name)
        if got is None:
            if shared and self is not TEMPLATE:
                got = copy_from(self.pool, TEMPLATE.pool, TEMPLATE.cached(name, build))
            else:
                got = build(self)
            self._cache[name] = got
        return got

    # -- combinators -----------------------------------------------------------------------------

    def lit(self, text: str) -> int:
        """Exactly ``text`` (its UTF-8 bytes)."""
        return self.pool.literal(text.encode("utf-8"))

    def among(self, chars: str) -> int:
        """One of the ASCII characters ``chars``."""
        return self.pool.bytes_of(byte_mask(chars.encode("ascii")))

    def span(self, lo: str, hi: str) -> int:
        """One ASCII character from ``lo`` to ``hi``."""
        return self.pool.byte_range(ord(lo), ord(hi))

    def code_points(self, intervals: Iterable[tuple[int, int]]) -> int:
        """One character whose code point is in ``intervals`` (inclusive)."""
        return self.pool.code_points(tuple(intervals))

    def cat(self, *parts: int) -> int:
        """``parts`` one after the other."""
        return concat_all(self.pool, parts)

    def alt(self, parts: Iterable[int]) -> int:
        """Any of ``parts`` (``NOTHING`` when there is none)."""
        return self.pool.alt(parts)

    def opt(self, x: int) -> int:
        return self.pool.optional(x)

    def rep(self, x: int, lo: int, hi: Optional[int]) -> int:
        """``x`` repeated ``lo`` to ``hi`` times (``None``: unbounded): one term with counters."""
        if hi is not None and hi <= 0:
            return EPSILON
        return self.pool.repeat(x, lo, hi)

    def star(self, x: int) -> int:
        return self.pool.star(x)

    def quoted(self, body: int) -> int:
        """``"body"``."""
        return self.cat(self.quote, body, self.quote)

    def sequence(self, open_: str, item: int, close: str, lo: int = 0, hi: Optional[int] = None) -> int:
        """``open_``, then ``lo`` to ``hi`` items separated by commas, then ``close``
        (whitespace between tokens); ``NOTHING`` when ``lo`` items are needed and none exists."""
        o, c = self.lit(open_), self.lit(close)
        if hi == 0 or item == NOTHING:
            return self.cat(o, self.ws, c) if lo == 0 else NOTHING
        body = self.cat(item, self.rep(self.cat(self.sep, item), max(lo - 1, 0), None if hi is None else hi - 1))
        if lo > 0:
            return self.cat(o, self.ws, body, self.ws, c)
        return self.cat(o, self.ws, self.opt(self.cat(body, self.ws)), c)

    def string_of(self, text: str) -> int:
        """The JSON string of ``text``, as ``json.dumps`` writes it (one chain of bytes: a quoted
        literal made the literal's chain twice)."""
        return self.lit(f'"{encoded(text)}"')

    def member(self, key: int, value: int) -> int:
        """``key: value`` of an object."""
        return self.cat(key, self.colon, value)

    # -- constant pieces -------------------------------------------------------------------------

    @property
    def ws(self) -> int:
        """Whitespace between two tokens (``EPSILON`` when none is allowed)."""
        return self.cached("ws", lambda t: copy_from(t.pool, TEMPLATE.pool, _whitespace(t.whitespace)) if t.whitespace else EPSILON, shared=False)

    @property
    def sep(self) -> int:
        """A comma between two items."""
        return self.cached("sep", lambda t: t.cat(t.ws, t.lit(","), t.ws), shared=False)

    @property
    def colon(self) -> int:
        return self.cached("colon", lambda t: t.cat(t.ws, t.lit(":"), t.ws), shared=False)

    @property
    def quote(self) -> int:
        return self.cached("quote", lambda t: t.lit('"'))

    @property
    def digit(self) -> int:
        return self.cached("digit", lambda t: t.span("0", "9"))

    @property
    def digits(self) -> int:
        """One digit or more."""
        return self.cached("digits", lambda t: t.rep(t.digit, 1, None))

    @property
    def nonzero(self) -> int:
        return self.cached("nonzero", lambda t: t.span("1", "9"))

    @property
    def hex(self) -> int:
        return self.cached("hex", lambda t: t.among("0123456789ABCDEFabcdef"))

    @property
    def raw_char(self) -> int:
        """A character a JSON string holds as itself."""
        return self.cached("raw_char", lambda t: t.code_points(_RAW))

    @property
    def char(self) -> int:
        """One decoded character of a JSON string, in any of its encodings."""

        def build(t: "JsonTerms") -> int:
            h = t.hex
            unicode_escape = t.cat(t.lit("\\u"), t.alt([
                t.cat(t.among("0123456789ABCabc"), t.rep(h, 3, 3)),
                t.cat(t.among("Dd"), t.span("0", "7"), t.rep(h, 2, 2)),
                t.cat(t.among("EFef"), t.rep(h, 3, 3)),
                t.cat(t.among("Dd"), t.among("89ABab"), t.rep(h, 2, 2),
                         t.lit("\\u"), t.among("Dd"), t.among("CDEFcdef"), t.rep(h, 2, 2)),
            ]))
            return t.alt([t.raw_char, t.cat(t.lit("\\"), t.among('"\\/bfnrt')), unicode_escape])

        return self.cached("char", build)

    @property
    def string(self) -> int:
        """Any JSON string, quotes included."""
        return self.cached("string", lambda t: t.quoted(t.star(t.char)))

    @property
    def canon_char(self) -> int:
        """One character of a JSON string as ``json.dumps(..., ensure_ascii=False)`` writes it."""

        def build(t: "JsonTerms") -> int:
            low = t.alt([t.cat(t.lit("0"), t.among("01234567bef")), t.cat(t.lit("1"), t.among("0123456789abcdef"))])
            escapes = t.cat(t.lit("\\"), t.alt([t.among('"\\bfnrt'), t.cat(t.lit("u00"), low)]))
            return t.alt([t.raw_char, escapes])

        return self.cached("canon_char", build)

    @property
    def canon_string(self) -> int:
        """A JSON string as ``json.dumps(..., ensure_ascii=False)`` writes it (equal strings,
        equal texts)."""
        return self.cached("canon_string", lambda t: t.quoted(t.star(t.canon_char)))

    @property
    def natural(self) -> int:
        """A natural number in canonical decimal."""
        return self.cached("natural", lambda t: t.alt([t.lit("0"), t.cat(t.nonzero, t.star(t.digit))]))

    @property
    def integer(self) -> int:
        """Any JSON integer (no fraction, no exponent; ``-0`` is JSON and equals 0)."""
        return self.cached("integer", lambda t: t.cat(t.opt(t.lit("-")), t.natural))

    @property
    def fraction(self) -> int:
        """``.`` then digits."""
        return self.cached("fraction", lambda t: t.cat(t.lit("."), t.digits))

    @property
    def zeros_fraction(self) -> int:
        """``.0``, ``.00``, ...: what may follow a whole number and keep its value."""
        return self.cached("zeros_fraction", lambda t: t.cat(t.lit("."), t.rep(t.lit("0"), 1, None)))

    @property
    def plain_number(self) -> int:
        """JSON numbers without exponent."""
        return self.cached("plain_number", lambda t: t.cat(t.integer, t.opt(t.fraction)))

    @property
    def plain_integer_value(self) -> int:
        """JSON numbers without exponent whose value is a whole number."""
        return self.cached("plain_integer_value", lambda t: t.cat(t.integer, t.opt(t.zeros_fraction)))

    @property
    def number(self) -> int:
        """Any JSON number."""
        return self.cached("number", lambda t: t.cat(t.plain_number, t.opt(t.exponent)))

    @property
    def exponent(self) -> int:
        """A number's exponent: ``e``, a sign or none, digits."""
        return self.cached("exponent", lambda t: t.cat(t.among("eE"), t.opt(t.among("+-")), t.digits))

    @property
    def exponent_number(self) -> int:
        """JSON numbers with an exponent (``1e-7``, ``2.5E+3``: every spelling of every value)."""
        return self.cached("exponent_number", lambda t: t.cat(t.plain_number, t.exponent))

    @property
    def boolean(self) -> int:
        return self.cached("boolean", lambda t: t.alt([t.lit("true"), t.lit("false")]))

    @property
    def null(self) -> int:
        return self.cached("null", lambda t: t.lit("null"))

    # -- integer ranges --------------------------------------------------------------------------

    def natural_range(self, lo: int, hi: Optional[int]) -> int:
        """Canonical decimal naturals in [lo, hi] (0 <= lo; hi None: unbounded)."""
        parts = []
        top = len(str(hi)) if hi is not None else len(str(lo))
        for width in range(len(str(lo)), top + 1):
            a = max(lo, 10 ** (width - 1) if width > 1 else 0)
            b = 10**width - 1 if hi is None else min(hi, 10**width - 1)
            if a <= b:
                parts.append(self._same_length(str(a), str(b)))
        if hi is None:
            parts.append(self.cat(self.nonzero, self.rep(self.digit, len(str(lo)), None)))
        return self.alt(parts)

    def integer_range(self, lo: Optional[int], hi: Optional[int]) -> int:
        """The canonical JSON integers ``n`` with ``lo <= n <= hi`` (``None``: unbounded side):
        made once per pool, and the ranges of the ``int32`` / ``int64`` formats once per process."""
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"empty integer range [{lo}, {hi}]")
        if lo is None and hi is None:
            return self.integer
        return self.cached(f"integer[{lo},{hi}]", lambda t: t._integer_range(lo, hi), shared=(lo, hi) in SHARED_RANGES)

    def _integer_range(self, lo: Optional[int], hi: Optional[int]) -> int:
        if lo is not None and lo >= 0:
            return self.natural_range(lo, hi)
        minus = self.lit("-")
        if hi is not None and hi < 0:
            return self.cat(minus, self.natural_range(-hi, None if lo is None else -lo))
        negative = self.cat(minus, self.natural_range(1, None if lo is None else -lo))
        return self.alt([negative, self.natural_range(0, hi)])

    def _same_length(self, lo: str, hi: str) -> int:
        """Decimal strings of equal length, lo <= hi: the strings of that length in [lo, hi]."""
        if lo == hi:
            return self.lit(lo)
        n = len(lo)
        if n == 1:
            return self.span(lo, hi)
        if lo[0] == hi[0]:
            return self.cat(self.lit(lo[0]), self._same_length(lo[1:], hi[1:]))
        alts = []
        first_full, last_full = int(lo[0]), int(hi[0])
        if lo[1:] != "0" * (n - 1):
            alts.append(self.cat(self.lit(lo[0]), self._same_length(lo[1:], "9" * (n - 1))))
            first_full += 1
        if hi[1:] != "9" * (n - 1):
            alts.append(self.cat(self.lit(hi[0]), self._same_length("0" * (n - 1), hi[1:])))
            last_full -= 1
        if first_full <= last_full:
            alts.append(self.cat(self.span(str(first_full), str(last_full)), self.rep(self.digit, n - 1, n - 1)))
        return self.alt(alts)


#: The pieces that do not depend on the whitespace, built once per process in its pool, which a
#: guide's pool starts as a fork of (:meth:`.ExprPool.forked`; other pools, and pieces made after
#: the fork, copy them).
TEMPLATE = JsonTerms(ExprPool())


@functools.lru_cache(maxsize=64)
def _whitespace(regex: str) -> int:
    """The term of a whitespace regex in the template pool (parsed once per process, not per compile)."""
    return regex_to_expr(regex, TEMPLATE.pool)
