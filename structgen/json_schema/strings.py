"""Strings: ``minLength`` / ``maxLength`` (in code points), ``pattern`` (:mod:`.ecma_pattern`),
``format`` (:mod:`.formats` and the ``formats=`` option), and spans of documents (:mod:`.spans`).
"""

from __future__ import annotations

from typing import Any, Optional

from ..automata.expr import NOTHING
from ..automata.string_length import mark_string_length
from ..errors import SchemaNotSupported, UnsatisfiableConstraint
from .context import Context, Term
from .ops import Refs
from .ecma_pattern import pattern_regex
from .formats import FORMATS, FREE_STRING_FORMATS, format_regex, format_term, regex_width
from .loading import anchored

__all__ = ["Strings"]

#: Formats whose regex keeps under the RFC's length limit by dropping some long valid values.
_CAPPED_FORMATS = ("hostname", "email", "idn-hostname", "idn-email")


#: A length folded into a pattern's regex (``pattern_regex(pattern, lo, hi)``) may multiply its
#: text: an unanchored ``[\\p{L}..]*$|resource-groups:Name$`` under ``maxLength: 128`` (cfn
#: ``AWS::SSM::MaintenanceWindowTarget``) became 51,856 characters, one alternative per position,
#: 0.45 s to parse. Past this many characters the length is intersected instead
#: (:meth:`Strings.with_length`, a lazy counter), as where the pattern cannot absorb it.
FOLDED_LIMIT = 4096


class Strings:
    """String schemas (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def string(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """The JSON strings (quotes included) valid under ``s``."""
        ctx = self.ctx
        t = ctx.t
        if ctx.spans is not None:
            spans, ctx.spans = ctx.spans, None  # (re-entered without spans for the other keywords)
            try:
                return spans.string(s, path, refs, self.string, t, embed=ctx.embed, to_dfa=ctx.to_dfa)
            finally:
                ctx.spans = spans
        if s.get("x-extract") is True:
            raise SchemaNotSupported("x-extract", f"{path}/x-extract", "needs the documents: pass extract_from=")
        lo = int(s.get("minLength", 0))
        hi = None if s.get("maxLength") is None else int(s["maxLength"])
        if hi is not None and lo > hi:
            raise UnsatisfiableConstraint(f"minLength {lo} > maxLength {hi}", path or "/")
        fmt: Any = s.get("format")  # (a string where it constrains: see format_body)
        pattern = s.get("pattern")
        body = None if fmt is None else self.format_body(fmt, f"{path}/format")
        if body is not None and pattern is not None:
            return self.format_and_pattern(body, fmt, pattern, lo, hi, path)
        if body is not None and fmt in ctx.options.formats:
            quoted = t.quoted(body)
            return self.with_length(quoted, lo, hi, path, f"format {fmt!r}") if lo or hi is not None else quoted
        if body is not None:
            wlo, whi = regex_width(FORMATS[fmt])
            if fmt in _CAPPED_FORMATS and (wlo < lo or (hi is not None and (whi is None or whi > hi))):
                key = "minLength" if wlo < lo else "maxLength"  # (our length cap is tighter than the RFC's)
                raise SchemaNotSupported(key, f"{path}/{key}", f"together with format {fmt!r}")
            if (hi is not None and wlo > hi) or (whi is not None and whi < lo):
                raise UnsatisfiableConstraint(f"no {fmt!r} string has {lo}..{hi} characters", path or "/")
            if wlo < lo or (hi is not None and (whi is None or whi > hi)):
                return self.with_length(t.quoted(body), lo, hi, path, f"format {fmt!r}")
            return t.quoted(body)
        if pattern is not None:
            folded = True  # (the length written into the pattern's own regex)
            try:
                regex = pattern_regex(pattern, lo, hi, path=f"{path}/pattern")
            except SchemaNotSupported:
                if lo == 0 and hi is None:
                    raise
                folded = False
            if folded and regex is not None and (lo or hi is not None) and len(regex) > FOLDED_LIMIT:
                folded = False
            if not folded:
                # (a length the pattern's own repetitions cannot absorb, or only in a regex past
                # FOLDED_LIMIT characters: intersect the automata)
                regex = pattern_regex(pattern, path=f"{path}/pattern")
                if regex is None:
                    raise UnsatisfiableConstraint(f"no string matches pattern {pattern!r}", path or "/") from None
                return self.with_length(ctx.quoted(regex, path), lo, hi, path, f"pattern {pattern!r}")
            if regex is None:
                raise UnsatisfiableConstraint(f"no string of {lo}..{hi} characters matches pattern {pattern!r}", path or "/")
            return ctx.quoted(regex, path)
        return t.quoted(t.rep(t.char, lo, hi))

    def format_body(self, fmt: Any, path: str) -> Optional[Term]:
        """The term of the string contents of a ``format`` (None: it constrains no string)."""
        ctx = self.ctx
        options = ctx.options
        if not isinstance(fmt, str):
            return None
        if fmt in options.formats:  # (a custom format: its regex matches the whole decoded string)
            regex = pattern_regex(anchored(options.formats[fmt]), path=path)
            if regex is None:
                raise UnsatisfiableConstraint(f"no string matches the regex of format {fmt!r}", path)
            return ctx.body(regex, path)
        if format_regex(fmt) is None:
            if fmt not in FREE_STRING_FORMATS and options.unknown_formats == "error":
                raise SchemaNotSupported("format", path, f"unknown format {fmt!r}; known: {', '.join(FORMATS)} (or pass formats=)")
            return None  # (unknown: an annotation, see format_annotations)
        return format_term(fmt, ctx.pool)

    def format_and_pattern(self, body: Term, fmt: str, pattern: str, lo: int, hi: Optional[int], path: str) -> Term:
        """A string under both a ``format`` and a ``pattern``: the two automata intersected.
        Built-in formats are under-approximations, so an empty result is a refusal there."""
        regex = pattern_regex(pattern, path=f"{path}/pattern")
        if regex is None:
            raise UnsatisfiableConstraint(f"no string matches pattern {pattern!r}", path or "/")
        what = f"format {fmt!r} and pattern {pattern!r}"
        try:
            both = self.ctx.inter(self.ctx.t.quoted(body), self.ctx.quoted(regex, path), path)
            if both == NOTHING:
                raise UnsatisfiableConstraint(f"no string matches {what}", path or "/")
            return self.with_length(both, lo, hi, path, what) if lo or hi is not None else both
        except UnsatisfiableConstraint:
            if fmt in self.ctx.options.formats:
                raise
            raise SchemaNotSupported(
                "pattern", f"{path}/pattern", f"no string of structgen's format {fmt!r} matches it (the format's regex leaves some valid strings out)"
            ) from None

    def with_length(self, string: Term, lo: int, hi: Optional[int], path: str, what: str) -> Term:
        """The strings of ``string`` (quotes included) of ``lo``..``hi`` characters: an
        intersection with ``"char{lo,hi}"`` (exact: a unit of both terms is one decoded character)."""
        # (a term with a counter, built lazily: far from its bound a state's masks are those of
        # the string alone, see structgen.automata.expr_rewrite.clamp)
        t = self.ctx.t
        lengths = t.quoted(t.rep(t.char, lo, hi))
        mark_string_length(self.ctx.pool, t.char, t.quote)
        kept = self.ctx.inter(string, lengths, path)
        if kept == NOTHING:
            raise UnsatisfiableConstraint(f"no string of {lo}..{hi} characters matches {what}", path or "/")
        return kept
