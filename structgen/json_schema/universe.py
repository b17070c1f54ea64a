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
* numbers without exponent, so a number equal to ``1`` is ``-?1(\\.0+)?`` — a regular set;
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
from ..errors import CompileBudgetExceeded, ConstraintError, SchemaNotSupported, UnsatisfiableConstraint
from .arrays import count_items
from .context import Context, Regex
from .ecma_pattern import pattern_language_is_python, pattern_regex
from .numbers import number_bound, over_number, safe_digits
from .ops import clean, encoded
from .regex_text import CANON_STRING, CHAR, PLAIN_INTEGER_VALUE, PLAIN_NUMBER, literal, quantify

__all__ = ["MAX_ONEOF_BRANCHES", "UNIVERSE_DEPTH", "Universe"]

#: Nesting depth of the canonical universe (deeper positive strings are dropped before a subtraction).
UNIVERSE_DEPTH = 6
#: The over-approximation of a ``oneOf`` with at most this many branches leaves out what two
#: branches accept (one intersection per pair).
MAX_ONEOF_BRANCHES = 6

#: The canonical universe's automaton, per whitespace regex (the same for every schema).
_UNIVERSES: dict[str, ByteDFA] = {}


class Universe:
    """The canonical universe and over-approximations in it (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._universe: Optional[str] = None
        self._long_fractions: Regex = None

    # -- the canonical universe ----------------------------------------------------------------

    def universe(self) -> str:
        """The canonical universe ``U`` (one automaton per whitespace regex, shared by compiles)."""
        cached = self._universe
        if cached is None:
            dfa = _UNIVERSES.get(self.ctx.ws)
            if dfa is None:
                scalars = f"null|true|false|{PLAIN_NUMBER}|{CANON_STRING}"
                value = f"(?:{scalars})"
                for _ in range(UNIVERSE_DEPTH):
                    value = self.ctx.embed(self.ctx.to_dfa(f"(?:{scalars}|{self.array_of(value)}|{self.object_of(CANON_STRING, value)})"))
                dfa = _UNIVERSES[self.ctx.ws] = self.ctx.to_dfa(value)
            cached = self._universe = self.ctx.embed(dfa)
        return cached

    def array_of(self, item: str, lo: int = 0, hi: Optional[int] = None) -> str:
        """Arrays of ``lo``..``hi`` items from the regex ``item``."""
        w = self.ctx.ws
        sep = f"{w},{w}"
        if hi == 0:
            return rf"\[{w}\]"
        body = item + quantify(sep + item, max(lo - 1, 0), None if hi is None else hi - 1)
        return rf"\[{w}{body}{w}\]" if lo > 0 else rf"\[{w}(?:{body}{w})?\]"

    def object_of(self, key: str, value: str, lo: int = 0) -> str:
        """Objects of at least ``lo`` members ``key: value``."""
        w = self.ctx.ws
        member = f"{key}{w}:{w}{value}"
        sep = f"{w},{w}"
        body = member + quantify(sep + member, max(lo - 1, 0), None)
        return rf"\{{{w}{body}{w}\}}" if lo > 0 else rf"\{{{w}(?:{body}{w})?\}}"

    def object_having(self, key: str, value: str) -> str:
        """Objects with some member ``key: value`` (and any other members)."""
        w = self.ctx.ws
        u = self.universe()
        any_member = f"{CANON_STRING}{w}:{w}{u}"
        sep = f"{w},{w}"
        return rf"\{{{w}(?:{any_member}{sep})*{key}{w}:{w}{value}(?:{sep}{any_member})*{w}\}}"

    def positive_in_universe(self, regex: str, path: str) -> str:
        """``regex ∩ U``: the side a subtraction starts from (:class:`UnsatisfiableConstraint` if empty)."""
        got = self.ctx.inter(regex, self.universe(), path)
        if got is None:
            raise UnsatisfiableConstraint("no canonical serialisation is left to subtract from", path or "/")
        return got

    # -- over-approximation --------------------------------------------------------------------

    def over(self, s: Any, path: str, refs: tuple) -> Regex:
        """A regex holding every canonical serialisation of every instance valid under ``s``."""
        if s is True:
            return self.universe()
        if s is False:
            return None
        if "unevaluatedProperties" in s or "unevaluatedItems" in s:
            try:  # (the rewrite is exact; when it is refused, ignoring the keyword keeps a superset)
                rewritten = self.ctx.compiler.without_unevaluated(s, path)
            except SchemaNotSupported:
                rewritten = {k: v for k, v in s.items() if k not in ("unevaluatedProperties", "unevaluatedItems")}
            return self.over(rewritten, path, refs)
        s = clean(s)
        if not s:
            return self.universe()
        acc: Regex = self.universe()
        if "$ref" in s:
            target, target_path = self.ctx.refs.resolve(s["$ref"], path)
            if refs.count(target_path) > self.ctx.options.max_recursion_depth:
                return self.universe()  # (an over-approximation may stop anywhere)
            acc = self.over(target, target_path, refs + (target_path,))
        if "enum" in s or "const" in s:
            values = [s["const"]] if "const" in s else list(s["enum"])
            acc = self.ctx.inter(acc, self.ctx.unite([self.over_value(v) for v in values], path), path)
        acc = self.ctx.inter(acc, self.over_typed(s, path, refs), path)
        for i, sub in enumerate(s.get("allOf", [])):
            acc = self.ctx.inter(acc, self.over(sub, f"{path}/allOf/{i}", refs), path)
        for key in ("anyOf", "oneOf"):
            if key in s:
                acc = self.ctx.inter(acc, self.ctx.unite([self.over(b, f"{path}/{key}/{i}", refs) for i, b in enumerate(s[key])], path), path)
        if "oneOf" in s:
            acc = self.ctx.minus(acc, self.in_two_branches(s["oneOf"], path, refs), path)
        if "not" in s:
            try:
                inner = self.ctx.compiler.compile(s["not"], f"{path}/not", refs)
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                inner = None  # (subtracting less keeps a superset)
            acc = self.ctx.minus(acc, inner, path)
        if "if" in s:
            then = self.over(s.get("then", True), f"{path}/then", refs)
            otherwise = self.over(s.get("else", True), f"{path}/else", refs)
            cond_over = self.over(s["if"], f"{path}/if", refs)
            try:
                cond = self.ctx.compiler.compile(s["if"], f"{path}/if", refs)
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                cond = None
            branch = self.ctx.unite([self.ctx.inter(cond_over, then, path), self.ctx.minus(otherwise, cond, path)], path)
            acc = self.ctx.inter(acc, branch, path)
        return acc

    def in_two_branches(self, branches: list, path: str, refs: tuple) -> Regex:
        """Instances valid for sure under two ``oneOf`` branches (the union of the pairwise
        intersections of their languages), which ``oneOf`` rejects: subtracted from its
        over-approximation. Beyond :data:`MAX_ONEOF_BRANCHES` branches, or where a branch does not
        compile, less is subtracted (still a superset)."""
        if len(branches) > MAX_ONEOF_BRANCHES:
            return None
        ctx = self.ctx
        langs: list[Regex] = []
        for i, b in enumerate(branches):
            try:
                langs.append(ctx.compiler.compile(b, f"{path}/oneOf/{i}", refs))
            except (ConstraintError, CompileBudgetExceeded):
                langs.append(None)  # (nothing valid for sure: subtracting less keeps a superset)
        pairs = [ctx.inter(a, b, path) for i, a in enumerate(langs) for b in langs[i + 1 :]]
        return ctx.unite(pairs, path)

    def over_value(self, v: Any) -> str:
        w = self.ctx.ws
        if v is None or isinstance(v, bool):
            return "true" if v is True else "false" if v is False else "null"
        if isinstance(v, (int, float)):
            return over_number(v)
        if isinstance(v, str):
            return '"' + literal(encoded(v)) + '"'
        if isinstance(v, list):
            if not v:
                return rf"\[{w}\]"
            return rf"\[{w}" + f"{w},{w}".join(self.over_value(x) for x in v) + rf"{w}\]"
        # an object: its keys only, each present, and some member of each name with its value
        keys = [f'"{literal(encoded(k))}"' for k in v]
        if not v:
            return rf"\{{{w}\}}"
        acc: Regex = self.object_of("(?:" + "|".join(keys) + ")", self.universe(), lo=len(v))
        for key, x in zip(keys, v.values()):
            acc = self.ctx.inter(acc, self.object_having(key, self.over_value(x)), "")
        assert acc is not None
        return acc

    def over_typed(self, s: dict, path: str, refs: tuple) -> Regex:
        t = s.get("type")
        types = ["null", "boolean", "number", "string", "array", "object"] if t is None else ([t] if isinstance(t, str) else list(t))
        parts: list[Regex] = []
        for name in dict.fromkeys(types):
            if name in ("null", "boolean"):
                parts.append("null" if name == "null" else "(?:true|false)")
            elif name in ("number", "integer"):
                parts.append(self.over_number_schema(s, name == "integer" and "number" not in types, path))
            elif name == "string":
                parts.append(self.over_string(s, path))
            elif name == "array":
                parts.append(self.over_array(s, path, refs))
            elif name == "object":
                parts.append(self.over_object(s, path, refs))
        return self.ctx.unite(parts, path)

    def over_number_schema(self, s: dict, integer: bool, path: str) -> Regex:
        acc: Regex = PLAIN_INTEGER_VALUE if integer else PLAIN_NUMBER
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            if key in s:
                acc = self.ctx.inter(acc, number_bound(key, s[key]), path)
        # a long fraction may round onto a bound or onto a whole number: keep every such text
        return self.ctx.unite([acc, self.long_fractions(path)], path)

    def long_fractions(self, path: str) -> Regex:
        cached = self._long_fractions
        if cached is None:
            cached = self._long_fractions = self.ctx.minus(PLAIN_NUMBER, safe_digits(), path)
        return cached

    def over_string(self, s: dict, path: str) -> Regex:
        lo = int(s.get("minLength", 0))
        hi = None if s.get("maxLength") is None else int(s["maxLength"])
        if hi is not None and lo > hi:
            return None
        acc: Regex = '"' + quantify(CHAR, lo, hi) + '"'  # (format ignored: a superset)
        pattern = s.get("pattern")
        if isinstance(pattern, str) and pattern_language_is_python(pattern):
            try:
                body = pattern_regex(pattern)  # (exactly the strings re.search finds it in, every spelling)
            except SchemaNotSupported:
                return acc
            acc = None if body is None else self.ctx.inter(acc, f'"{body}"', path)
        return acc

    def over_array(self, s: dict, path: str, refs: tuple) -> Regex:
        u = self.universe()
        lo = int(s.get("minItems", 0))
        hi = None if s.get("maxItems") is None else int(s["maxItems"])
        if hi is not None and lo > hi:
            return None
        prefix = [self.over(p, f"{path}/prefixItems/{i}", refs) for i, p in enumerate(s.get("prefixItems", []))]
        tail = self.over(s.get("items", True), f"{path}/items", refs)
        w = self.ctx.ws
        sep = f"{w},{w}"
        cut = next((i for i, p in enumerate(prefix) if p is None), len(prefix))
        bodies, seq = [], ""
        for i in range(cut):  # arrays that end inside the prefix
            seq += (sep if i else "") + prefix[i]
            bodies.append(seq)
        if cut == len(prefix) and tail is not None:
            bodies.append(seq + (sep if seq else "") + tail + f"(?:{sep}{tail})*")
        shape = [rf"\[{w}\]"]
        body = self.ctx.unite(bodies, path)
        if body is not None:
            shape.append(rf"\[{w}{body}{w}\]")
        acc = self.ctx.unite(shape, path)
        if lo or hi is not None:
            acc = self.ctx.inter(acc, self.array_of(u, lo, hi), path)
        if "contains" in s:
            acc = self.ctx.inter(acc, self.over_contains(s, path, refs), path)
        return acc

    def over_contains(self, s: dict, path: str, refs: tuple) -> Regex:
        """Arrays with ``minContains``..``maxContains`` items valid under ``contains``, over-
        approximated: at least ``minContains`` items in its over-approximation, and at most
        ``maxContains`` items in its own (under-approximated) language. None when the bounds
        cross (``maxContains`` below ``minContains``): then no array is valid."""
        ctx = self.ctx
        lo, hi = int(s.get("minContains", 1)), s.get("maxContains")
        hi = None if hi is None else int(hi)
        if hi is not None and lo > hi:
            return None
        u = self.universe()
        w = ctx.ws
        sep = f"{w},{w}"
        acc: Regex = self.array_of(u)
        if lo >= 1:
            over = self.over(s["contains"], f"{path}/contains", refs)
            if over is None:
                return None
            body = count_items(over, ctx.minus(u, over, path), lo, None, sep)
            acc = ctx.inter(acc, None if body is None else rf"\[{w}{body}{w}\]", path)
        if hi is not None:
            try:  # (items valid for sure: when there are more than hi of them, the array is invalid)
                valid = ctx.inter(ctx.compiler.compile(s["contains"], f"{path}/contains", refs), u, path)
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                valid = None  # (counting less keeps a superset)
            if valid is not None:
                body = count_items(valid, ctx.minus(u, valid, path), 0, hi, sep)
                acc = ctx.inter(acc, ctx.unite([rf"\[{w}\]", None if body is None else rf"\[{w}{body}{w}\]"]), path)
        return acc

    def over_object(self, s: dict, path: str, refs: tuple) -> Regex:
        u = self.universe()
        acc: Regex = self.object_of(CANON_STRING, u, lo=int(s.get("minProperties", 0)))
        props = s.get("properties", {})
        for name in s.get("required", []):
            acc = self.ctx.inter(acc, self.object_having(f'"{literal(encoded(name))}"', u), path)
        for name, sub in props.items():
            key = f'"{literal(encoded(name))}"'
            o = self.over(sub, f"{path}/properties/{name}", refs)
            if o == u:
                continue
            others = self.ctx.minus(CANON_STRING, key, path)
            without = self.object_of(others, u) if others is not None else None
            acc = self.ctx.inter(acc, self.ctx.unite([without, self.object_having(key, o) if o is not None else None], path), path)
        if s.get("additionalProperties") is False and not s.get("patternProperties"):
            allowed = self.ctx.unite([f'"{literal(encoded(name))}"' for name in props], path)
            acc = self.ctx.inter(acc, self.object_of(allowed, u) if allowed else rf"\{{{self.ctx.ws}\}}", path)
        if "propertyNames" in s:
            names = self.over(s["propertyNames"], f"{path}/propertyNames", refs)
            names = self.ctx.inter(names, CANON_STRING, path)
            acc = self.ctx.inter(acc, self.object_of(names, u) if names else rf"\{{{self.ctx.ws}\}}", path)
        return acc
