"""The canonical universe, and over-approximations in it: what the keywords that subtract a
language (``not``, ``if``/``then``/``else``, overlapping ``oneOf``, ``contains`` with
``maxContains``: :mod:`.keywords`, :mod:`.arrays`) take away.

Subtracting a language is sound only if what is subtracted *covers* every valid instance. So the
compiler has a second mode, :meth:`Universe.over`: an **over-approximation** — a regex whose
language holds every serialisation in the *canonical universe* ``U`` of every instance valid
under the schema (it may hold more; ignoring a keyword is always allowed there). ``U``
(:meth:`Universe.universe`) is JSON where equal values have few spellings:

* strings escaped only the way ``json.dumps(ensure_ascii=False)`` escapes, so equal strings
  (and object keys) are equal texts;
* numbers without exponent have few spellings, so a number equal to ``1`` is ``-?1(\\.0+)?`` — a
  regular set; a number with an exponent (``1e-120``, as ``json.dumps`` writes a small float) is
  in ``U`` too, and every over-approximation that holds a number holds every number with an
  exponent (its value is not read: a superset);
* objects nested at most :data:`UNIVERSE_DEPTH` levels; duplicate keys are possible (a positive
  side with free keys can write them, and ``json.loads`` keeps the last), so object
  over-approximations only use duplicate-proof facts: "has a member named k", "some member
  named k has a value in X", "every key is in K", "at least n members".

A positive language ``A`` minus the over-approximation ``O`` of a schema ``X`` is then
``(A ∩ U) \\ O``: each string left is valid under ``A``'s schema, canonical, and — being outside
``O`` — not valid under ``X``. Where it helps, an over-approximation also leaves out what is valid
*for sure* (a language the compiler wrote, sound by construction): ``not`` takes away its schema's
language, ``oneOf`` what two branches accept, ``maxContains`` arrays with more items of the
language of ``contains``.
"""

from __future__ import annotations

from typing import Any, Optional

from ..automata.dfa import ByteDFA
from ..automata.expr import NOTHING, ExprPool
from ..automata.expr_dfa import lazy_to_dfa
from ..errors import CompileBudgetExceeded, ConstraintError, SchemaNotSupported, UnsatisfiableConstraint
from .arrays import count_items
from .context import Context, Term
from .ecma_pattern import pattern_regex
from .numbers import number_bound, over_number, safe_digits
from .ops import Refs, Schema, clean
from .shapes import overlapping_pairs
from .terms import JsonTerms

__all__ = ["MAX_ONEOF_BRANCHES", "UNIVERSE_DEPTH", "Universe", "universe_dfa"]

#: Nesting depth of the canonical universe (deeper positive strings are dropped before a subtraction).
UNIVERSE_DEPTH = 6
#: The over-approximation of a ``oneOf`` with at most this many branches leaves out what two
#: branches accept (one intersection per pair).
MAX_ONEOF_BRANCHES = 6

#: The canonical universe's automaton, per whitespace regex (the same for every schema).
_UNIVERSES: dict[str, ByteDFA] = {}


def universe_dfa(whitespace: str) -> ByteDFA:
    """The automaton of the canonical universe ``U`` under ``whitespace`` (built once per process,
    a level of nesting at a time: each level is an automaton the next one embeds)."""
    dfa = _UNIVERSES.get(whitespace)
    if dfa is None:
        t = JsonTerms(ExprPool(), whitespace)
        scalars = t.alt([t.null, t.boolean, t.number, t.canon_string])
        value = scalars
        for _ in range(UNIVERSE_DEPTH + 1):
            dfa = lazy_to_dfa(t.pool, value)
            value = t.pool.embed(dfa)
            value = t.alt([scalars, t.sequence("[", value, "]"), t.sequence("{", t.member(t.canon_string, value), "}")])
        assert dfa is not None
        _UNIVERSES[whitespace] = dfa
    return dfa


class Universe:
    """The canonical universe and over-approximations in it (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._universe: Optional[Term] = None
        self._long_fractions: Optional[Term] = None

    # -- the canonical universe ----------------------------------------------------------------

    def universe(self) -> Term:
        """The canonical universe ``U`` (one automaton per whitespace regex, shared by compiles)."""
        if self._universe is None:
            self._universe = self.ctx.embed(universe_dfa(self.ctx.options.whitespace))
        return self._universe

    def array_of(self, item: Term, lo: int = 0, hi: Optional[int] = None) -> Term:
        """Arrays of ``lo``..``hi`` items from ``item``."""
        return self.ctx.t.sequence("[", item, "]", lo, hi)

    def object_of(self, key: Term, value: Term, lo: int = 0) -> Term:
        """Objects of at least ``lo`` members ``key: value``."""
        t = self.ctx.t
        return t.sequence("{", t.member(key, value), "}", lo)

    def object_having(self, key: Term, value: Term) -> Term:
        """Objects with some member ``key: value`` (and any other members)."""
        t = self.ctx.t
        any_member = t.member(t.canon_string, self.universe())
        return t.cat(
            t.lit("{"), t.ws, t.star(t.cat(any_member, t.sep)), t.member(key, value), t.star(t.cat(t.sep, any_member)),
            t.ws, t.lit("}"),
        )

    def positive_in_universe(self, term: Term, path: str) -> Term:
        """``term ∩ U``: the side a subtraction starts from (:class:`UnsatisfiableConstraint` if empty)."""
        got = self.ctx.inter(term, self.universe(), path)
        if got == NOTHING:
            raise UnsatisfiableConstraint("no canonical serialisation is left to subtract from", path or "/")
        return got

    # -- over-approximation --------------------------------------------------------------------

    def over(self, s: Any, path: str, refs: Refs) -> Term:
        """A term holding every canonical serialisation of every instance valid under ``s``."""
        ctx = self.ctx
        if s is True:
            return self.universe()
        if s is False:
            return NOTHING
        if "unevaluatedProperties" in s or "unevaluatedItems" in s:
            try:  # (the rewrite is exact; when it is refused, ignoring the keyword keeps a superset)
                rewritten = ctx.compiler.without_unevaluated(s, path)
            except SchemaNotSupported:
                rewritten = {k: v for k, v in s.items() if k not in ("unevaluatedProperties", "unevaluatedItems")}
            return self.ctx.compiler.over(rewritten, path, refs)
        s = clean(s)
        if not s:
            return self.universe()
        # one intersection of the parts, not searched for a string: the subtraction that uses an
        # over-approximation searches its own term (a search per part cost a search per keyword)
        parts: list[Term] = [self.universe()]
        without: list[Term] = []
        if "$ref" in s:
            target, target_path = ctx.refs.resolve(s["$ref"], path)
            if refs.count(target_path) > ctx.options.max_recursion_depth:
                return self.universe()  # (an over-approximation may stop anywhere)
            parts.append(self.ctx.compiler.over(target, target_path, refs + (target_path,)))
        if "enum" in s or "const" in s:
            values = [s["const"]] if "const" in s else list(s["enum"])
            parts.append(ctx.unite([self.over_value(v) for v in values]))
        parts.append(self.over_typed(s, path, refs))
        for i, sub in enumerate(s.get("allOf", [])):
            parts.append(self.ctx.compiler.over(sub, f"{path}/allOf/{i}", refs))
        for key in ("anyOf", "oneOf"):
            if key in s:
                parts.append(ctx.unite([self.ctx.compiler.over(b, f"{path}/{key}/{i}", refs) for i, b in enumerate(s[key])]))
        if NOTHING in parts:
            return NOTHING
        if "oneOf" in s:
            without.append(self.in_two_branches(s["oneOf"], path, refs))
        if "not" in s:
            try:
                without.append(ctx.compiler.compile(s["not"], f"{path}/not", refs))
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                pass  # (subtracting less keeps a superset)
        if "if" in s:
            then = self.ctx.compiler.over(s.get("then", True), f"{path}/then", refs)
            otherwise = self.ctx.compiler.over(s.get("else", True), f"{path}/else", refs)
            cond_over = self.ctx.compiler.over(s["if"], f"{path}/if", refs)
            try:
                cond = ctx.compiler.compile(s["if"], f"{path}/if", refs)
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                cond = NOTHING
            parts.append(ctx.unite([ctx.inter(cond_over, then, path), ctx.minus(otherwise, cond, path)]))
        return ctx.inter_all(parts, path, without, checked=False)

    def in_two_branches(self, branches: list[Schema], path: str, refs: Refs) -> Term:
        """Instances valid for sure under two ``oneOf`` branches (the union of the pairwise
        intersections of their languages), which ``oneOf`` rejects: subtracted from its
        over-approximation. Only pairs that :func:`.shapes.overlapping_pairs` does not prove
        disjoint are intersected: the others share nothing. Beyond
        :data:`MAX_ONEOF_BRANCHES` branches, or where a branch does not compile, less is
        subtracted (still a superset)."""
        if len(branches) > MAX_ONEOF_BRANCHES:
            return NOTHING
        ctx = self.ctx
        langs: dict[int, Term] = {}

        def lang(i: int) -> Term:
            if i not in langs:
                try:
                    langs[i] = ctx.compiler.compile(branches[i], f"{path}/oneOf/{i}", refs)
                except (ConstraintError, CompileBudgetExceeded):
                    langs[i] = NOTHING  # (nothing valid for sure: subtracting less keeps a superset)
            return langs[i]

        pairs = []
        for i, j in overlapping_pairs({}, branches, resolve=ctx.refs.resolve):
            a, b = lang(i), lang(j)
            if a == NOTHING or b == NOTHING:
                continue
            try:
                pairs.append(ctx.inter(a, b, path))
            except (ConstraintError, CompileBudgetExceeded):
                pass  # (branches the algebra cannot intersect, a unique array's: subtracting less keeps a superset)
        return ctx.unite(pairs)

    def over_value(self, v: Any) -> Term:
        ctx = self.ctx
        t = ctx.t
        if v is None or isinstance(v, bool):
            return t.lit("true" if v is True else "false" if v is False else "null")
        if isinstance(v, (int, float)):
            return t.alt([over_number(t, v), t.exponent_number])
        if isinstance(v, str):
            return t.string_of(v)
        if isinstance(v, list):
            if not v:
                return t.cat(t.lit("["), t.ws, t.lit("]"))
            items = [p for x in v for p in (t.sep, self.over_value(x))][1:]
            return t.cat(t.lit("["), t.ws, *items, t.ws, t.lit("]"))
        # an object: its keys only, each present, and some member of each name with its value
        if not v:
            return t.cat(t.lit("{"), t.ws, t.lit("}"))
        keys = [t.string_of(k) for k in v]
        acc = self.object_of(t.alt(keys), self.universe(), lo=len(v))
        for key, x in zip(keys, v.values()):
            acc = ctx.inter(acc, self.object_having(key, self.over_value(x)), "")
        assert acc != NOTHING
        return acc

    def over_typed(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        t = s.get("type")
        types = ["null", "boolean", "number", "string", "array", "object"] if t is None else ([t] if isinstance(t, str) else list(t))
        parts: list[Term] = []
        for name in dict.fromkeys(types):
            if name in ("null", "boolean"):
                parts.append(self.ctx.t.null if name == "null" else self.ctx.t.boolean)
            elif name in ("number", "integer"):
                parts.append(self.over_number_schema(s, name == "integer" and "number" not in types, path))
            elif name == "string":
                parts.append(self.over_string(s, path))
            elif name == "array":
                parts.append(self.over_array(s, path, refs))
            elif name == "object":
                parts.append(self.over_object(s, path, refs))
        return self.ctx.unite(parts)

    def over_number_schema(self, s: dict[str, Any], integer: bool, path: str) -> Term:
        ctx = self.ctx
        acc = ctx.t.plain_integer_value if integer else ctx.t.plain_number
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            if key in s:
                bound = number_bound(ctx.t, key, s[key])  # (without exponent, as plain_number)
                acc = bound if acc == ctx.t.plain_number else ctx.inter(acc, bound, path)
        # a long fraction may round onto a bound or onto a whole number: keep every such text;
        # and every number with an exponent (its value is not read)
        return ctx.unite([acc, self.long_fractions(path), ctx.t.exponent_number])

    def long_fractions(self, path: str) -> Term:
        if self._long_fractions is None:
            t = self.ctx.t
            # (not searched for a string: a part of over-approximations, which are not searched)
            self._long_fractions = self.ctx.inter_all([t.plain_number], path, without=[safe_digits(t)], checked=False)
        return self._long_fractions

    def over_string(self, s: dict[str, Any], path: str) -> Term:
        t = self.ctx.t
        lo = int(s.get("minLength", 0))
        hi = None if s.get("maxLength") is None else int(s["maxLength"])
        if hi is not None and lo > hi:
            return NOTHING
        acc = t.quoted(t.rep(t.char, lo, hi))  # (format ignored: a superset)
        pattern = s.get("pattern")
        if isinstance(pattern, str):
            try:  # (the strings either engine finds it in, every spelling)
                regex = pattern_regex(pattern, wide=True)
            except SchemaNotSupported:
                return acc
            acc = NOTHING if regex is None else self.ctx.inter(acc, self.ctx.quoted(regex, path), path)
        return acc

    def over_array(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        ctx = self.ctx
        t = ctx.t
        u = self.universe()
        lo = int(s.get("minItems", 0))
        hi = None if s.get("maxItems") is None else int(s["maxItems"])
        if hi is not None and lo > hi:
            return NOTHING
        prefix = [self.ctx.compiler.over(p, f"{path}/prefixItems/{i}", refs) for i, p in enumerate(s.get("prefixItems", []))]
        tail = self.ctx.compiler.over(s.get("items", True), f"{path}/items", refs)
        sep = t.sep
        cut = next((i for i, p in enumerate(prefix) if p == NOTHING), len(prefix))
        bodies = []
        seq: list[Term] = []
        for i in range(cut):  # arrays that end inside the prefix
            seq += [sep, prefix[i]] if i else [prefix[i]]
            bodies.append(t.cat(*seq))
        if cut == len(prefix) and tail != NOTHING:
            bodies.append(t.cat(*seq, *([sep] if seq else []), tail, t.star(t.cat(sep, tail))))
        shape = [t.cat(t.lit("["), t.ws, t.lit("]"))]
        body = ctx.unite(bodies)
        if body != NOTHING:
            shape.append(t.cat(t.lit("["), t.ws, body, t.ws, t.lit("]")))
        parts = [ctx.unite(shape)]
        if lo or hi is not None:
            parts.append(self.array_of(u, lo, hi))
        if "contains" in s:
            parts.append(self.over_contains(s, path, refs))
        # (not searched for a string, as in over: what subtracts or intersects it searches its own term)
        return ctx.inter_all(parts, path, checked=False)

    def over_contains(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """Arrays with ``minContains``..``maxContains`` items valid under ``contains``, over-
        approximated: at least ``minContains`` items in its over-approximation, and at most
        ``maxContains`` items in its own (under-approximated) language. ``NOTHING`` when the
        bounds cross (``maxContains`` below ``minContains``): then no array is valid."""
        ctx = self.ctx
        t = ctx.t
        lo, hi = int(s.get("minContains", 1)), s.get("maxContains")
        hi = None if hi is None else int(hi)
        if hi is not None and lo > hi:
            return NOTHING
        u = self.universe()
        acc = self.array_of(u)
        if lo >= 1:
            over = self.ctx.compiler.over(s["contains"], f"{path}/contains", refs)
            if over == NOTHING:
                return NOTHING
            body = count_items(t, over, ctx.minus(u, over, path), lo, None)
            acc = ctx.inter(acc, t.cat(t.lit("["), t.ws, body, t.ws, t.lit("]")), path)
        if hi is not None:
            try:  # (items valid for sure: when there are more than hi of them, the array is invalid)
                valid = ctx.inter(ctx.compiler.compile(s["contains"], f"{path}/contains", refs), u, path)
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                valid = NOTHING  # (counting less keeps a superset)
            if valid != NOTHING:
                body = count_items(t, valid, ctx.minus(u, valid, path), 0, hi)
                empty = t.cat(t.lit("["), t.ws, t.lit("]"))
                acc = ctx.inter(acc, ctx.unite([empty, t.cat(t.lit("["), t.ws, body, t.ws, t.lit("]"))]), path)
        return acc

    def over_object(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        ctx = self.ctx
        t = ctx.t
        u = self.universe()
        # one intersection of the parts, not searched (see over): before, a search per property
        parts = [self.object_of(t.canon_string, u, lo=int(s.get("minProperties", 0)))]
        props = s.get("properties", {})
        for name in s.get("required", []):
            parts.append(self.object_having(t.string_of(name), u))
        for name, sub in props.items():
            key = t.string_of(name)
            o = self.ctx.compiler.over(sub, f"{path}/properties/{name}", refs)
            if o == u:
                continue
            others = ctx.minus(t.canon_string, key, path)
            without = self.object_of(others, u) if others != NOTHING else NOTHING
            parts.append(ctx.unite([without, self.object_having(key, o) if o != NOTHING else NOTHING]))
        empty = t.cat(t.lit("{"), t.ws, t.lit("}"))
        if s.get("additionalProperties") is False and not s.get("patternProperties"):
            allowed = ctx.unite([t.string_of(name) for name in props])
            parts.append(self.object_of(allowed, u) if allowed != NOTHING else empty)
        if "propertyNames" in s:
            names = self.ctx.compiler.over(s["propertyNames"], f"{path}/propertyNames", refs)
            names = ctx.inter(names, t.canon_string, path)
            parts.append(self.object_of(names, u) if names != NOTHING else empty)
        return ctx.inter_all(parts, path, checked=False)
