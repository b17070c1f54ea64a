"""Schema keywords that need automaton algebra: ``not``, ``if``/``then``/``else``, overlapping
``oneOf``, ``allOf`` that does not merge, ``contains`` with ``maxContains``.

Subtracting a language is sound only if what is subtracted *covers* every valid instance. So the
compiler has a second mode, :meth:`_AlgebraMixin.over`: an **over-approximation** — a regex whose
language holds every serialisation in the *canonical universe* ``U`` of every instance valid
under the schema (it may hold more; ignoring a keyword is always allowed there). ``U``
(:meth:`_AlgebraMixin.universe`) is JSON where equal values have few spellings:

* strings escaped only the way ``json.dumps(ensure_ascii=False)`` escapes, so equal strings
  (and object keys) are equal texts;
* numbers without exponent, so a number equal to ``1`` is ``-?1(\\.0+)?`` — a regular set;
* objects nested at most :data:`UNIVERSE_DEPTH` levels; duplicate keys are possible (a positive
  side with free keys can write them, and ``json.loads`` keeps the last), so object
  over-approximations only use duplicate-proof facts: "has a member named k", "some member
  named k has a value in X", "every key is in K", "at least n members".

A positive language ``A`` minus the over-approximation ``O`` of a schema ``X`` is then
``(A ∩ U) \\ O``: each string left is valid under ``A``'s schema, canonical, and — being outside
``O`` — not valid under ``X``.
"""

from __future__ import annotations

from typing import Any, Optional

from ..automata.algebra import difference, intersect
from ..errors import CompileBudgetExceeded, SchemaNotSupported, UnsatisfiableConstraint
from ..automata.dfa import ByteDFA
from .formats import CHAR, literal, pattern_language_is_python, pattern_regex, quantify
from .numbers import number_bound, safe_digits

__all__ = ["CANON_CHAR", "CANON_STRING", "UNIVERSE_DEPTH"]

#: One character of a JSON string as ``json.dumps(..., ensure_ascii=False)`` writes it.
CANON_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\bfnrt]|\\u00(?:0[0-7bef]|1[0-9a-f]))'
CANON_STRING = '"' + CANON_CHAR + '*"'
#: JSON numbers without exponent.
PLAIN_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
PLAIN_INTEGER_VALUE = r"-?(?:0|[1-9][0-9]*)(?:\.0+)?"
#: Nesting depth of the canonical universe (deeper positive strings are dropped before a subtraction).
UNIVERSE_DEPTH = 6

Regex = Optional[str]  # None: the empty language
#: The canonical universe's automaton, per whitespace regex (the same for every schema).
_UNIVERSES: dict[str, ByteDFA] = {}


class _AlgebraMixin:
    """Methods of the schema compiler (``json_schema._Compiler``) that build automata."""

    # (provided by the compiler)
    ws: str
    max_depth: int

    # -- automata helpers ----------------------------------------------------------------------

    def dfa(self, regex: str, path: str = "") -> ByteDFA:
        return self.to_dfa(regex, path)  # type: ignore[attr-defined]

    def as_regex(self, dfa: ByteDFA) -> Regex:
        return None if dfa.is_empty else self.embed(dfa)  # type: ignore[attr-defined]

    def inter(self, a: Regex, b: Regex, path: str) -> Regex:
        if a is None or b is None:
            return None
        if a == b:
            return a
        return self.as_regex(intersect(self.dfa(a, path), self.dfa(b, path), max_states=self.max_states))  # type: ignore[attr-defined]

    def minus(self, a: Regex, b: Regex, path: str) -> Regex:
        if a is None or b is None:
            return a
        return self.as_regex(difference(self.dfa(a, path), self.dfa(b, path), max_states=self.max_states))  # type: ignore[attr-defined]

    def unite(self, parts: list, path: str) -> Regex:
        parts = [p for p in dict.fromkeys(parts) if p is not None]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"

    # -- the canonical universe ----------------------------------------------------------------

    def universe(self) -> str:
        cached = getattr(self, "_universe", None)
        if cached is None:
            dfa = _UNIVERSES.get(self.ws)
            if dfa is None:
                w = self.ws
                scalars = f"null|true|false|{PLAIN_NUMBER}|{CANON_STRING}"
                value = f"(?:{scalars})"
                for _ in range(UNIVERSE_DEPTH):
                    value = self.embed(self.dfa(f"(?:{scalars}|{self.array_of(value)}|{self.object_of(CANON_STRING, value)})"))  # type: ignore[attr-defined]
                dfa = _UNIVERSES[self.ws] = self.dfa(value)
            cached = self._universe = self.embed(dfa)  # type: ignore[attr-defined]
        return cached

    def array_of(self, item: str, lo: int = 0, hi: Optional[int] = None) -> str:
        w = self.ws
        sep = f"{w},{w}"
        if hi == 0:
            return rf"\[{w}\]"
        body = item + quantify(sep + item, max(lo - 1, 0), None if hi is None else hi - 1)
        return rf"\[{w}{body}{w}\]" if lo > 0 else rf"\[{w}(?:{body}{w})?\]"

    def object_of(self, key: str, value: str, lo: int = 0) -> str:
        w = self.ws
        member = f"{key}{w}:{w}{value}"
        sep = f"{w},{w}"
        body = member + quantify(sep + member, max(lo - 1, 0), None)
        return rf"\{{{w}{body}{w}\}}" if lo > 0 else rf"\{{{w}(?:{body}{w})?\}}"

    def object_having(self, key: str, value: str) -> str:
        """Objects with some member ``key: value`` (and any other members)."""
        w = self.ws
        u = self.universe()
        any_member = f"{CANON_STRING}{w}:{w}{u}"
        sep = f"{w},{w}"
        return rf"\{{{w}(?:{any_member}{sep})*{key}{w}:{w}{value}(?:{sep}{any_member})*{w}\}}"

    def positive_in_universe(self, regex: str, path: str) -> str:
        got = self.inter(regex, self.universe(), path)
        if got is None:
            raise UnsatisfiableConstraint("no canonical serialisation is left to subtract from", path or "/")
        return got

    # -- over-approximation --------------------------------------------------------------------

    def over(self, s: Any, path: str, refs: tuple) -> Regex:
        """A regex holding every canonical serialisation of every instance valid under ``s``."""
        from .dispatch import _TooDeep, _clean

        if s is True:
            return self.universe()
        if s is False:
            return None
        if "unevaluatedProperties" in s or "unevaluatedItems" in s:
            try:  # (the rewrite is exact; when it is refused, ignoring the keyword keeps a superset)
                rewritten = self.without_unevaluated(s, path)  # type: ignore[attr-defined]
            except SchemaNotSupported:
                rewritten = {k: v for k, v in s.items() if k not in ("unevaluatedProperties", "unevaluatedItems")}
            return self.over(rewritten, path, refs)
        s = _clean(s)
        if not s:
            return self.universe()
        acc: Regex = self.universe()
        if "$ref" in s:
            target, target_path = self._resolve(s["$ref"], path)  # type: ignore[attr-defined]
            if refs.count(target_path) > self.max_depth:
                return self.universe()  # (an over-approximation may stop anywhere)
            acc = self.over(target, target_path, refs + (target_path,))
        if "enum" in s or "const" in s:
            values = [s["const"]] if "const" in s else list(s["enum"])
            acc = self.inter(acc, self.unite([self.over_value(v) for v in values], path), path)
        acc = self.inter(acc, self.over_typed(s, path, refs), path)
        for i, sub in enumerate(s.get("allOf", [])):
            acc = self.inter(acc, self.over(sub, f"{path}/allOf/{i}", refs), path)
        for key in ("anyOf", "oneOf"):
            if key in s:
                acc = self.inter(acc, self.unite([self.over(b, f"{path}/{key}/{i}", refs) for i, b in enumerate(s[key])], path), path)
        if "not" in s:
            try:
                inner = self.compile(s["not"], f"{path}/not", refs)  # type: ignore[attr-defined]
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                inner = None  # (subtracting less keeps a superset)
            acc = self.minus(acc, inner, path)
        if "if" in s:
            then = self.over(s.get("then", True), f"{path}/then", refs)
            otherwise = self.over(s.get("else", True), f"{path}/else", refs)
            cond_over = self.over(s["if"], f"{path}/if", refs)
            try:
                cond = self.compile(s["if"], f"{path}/if", refs)  # type: ignore[attr-defined]
            except (UnsatisfiableConstraint, SchemaNotSupported, CompileBudgetExceeded):
                cond = None
            branch = self.unite([self.inter(cond_over, then, path), self.minus(otherwise, cond, path)], path)
            acc = self.inter(acc, branch, path)
        return acc

    def over_value(self, v: Any) -> str:
        from .numbers import over_number
        from .dispatch import _encoded

        w = self.ws
        if v is None or isinstance(v, bool):
            return "true" if v is True else "false" if v is False else "null"
        if isinstance(v, (int, float)):
            return over_number(v)
        if isinstance(v, str):
            return '"' + literal(_encoded(v)) + '"'
        if isinstance(v, list):
            if not v:
                return rf"\[{w}\]"
            return rf"\[{w}" + f"{w},{w}".join(self.over_value(x) for x in v) + rf"{w}\]"
        # an object: its keys only, each present, and some member of each name with its value
        keys = [f'"{literal(_encoded(k))}"' for k in v]
        if not v:
            return rf"\{{{w}\}}"
        acc: Regex = self.object_of("(?:" + "|".join(keys) + ")", self.universe(), lo=len(v))
        for key, x in zip(keys, v.values()):
            acc = self.inter(acc, self.object_having(key, self.over_value(x)), "")
        assert acc is not None
        return acc

    def over_typed(self, s: dict, path: str, refs: tuple) -> Regex:
        t = s.get("type")
        types = ["null", "boolean", "number", "string", "array", "object"] if t is None else ([t] if isinstance(t, str) else list(t))
        parts = []
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
        return self.unite(parts, path)

    def over_number_schema(self, s: dict, integer: bool, path: str) -> Regex:
        acc: Regex = PLAIN_INTEGER_VALUE if integer else PLAIN_NUMBER
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            if key in s:
                acc = self.inter(acc, number_bound(key, s[key]), path)
        # a long fraction may round onto a bound or onto a whole number: keep every such text
        return self.unite([acc, self.long_fractions(path)], path)

    def long_fractions(self, path: str) -> Regex:
        cached = getattr(self, "_long_fractions", None)
        if cached is None:
            cached = self._long_fractions = self.minus(PLAIN_NUMBER, safe_digits(), path)
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
            acc = None if body is None else self.inter(acc, f'"{body}"', path)
        return acc

    def over_array(self, s: dict, path: str, refs: tuple) -> Regex:
        u = self.universe()
        lo = int(s.get("minItems", 0))
        hi = None if s.get("maxItems") is None else int(s["maxItems"])
        if hi is not None and lo > hi:
            return None
        prefix = [self.over(p, f"{path}/prefixItems/{i}", refs) for i, p in enumerate(s.get("prefixItems", []))]
        tail = self.over(s.get("items", True), f"{path}/items", refs)
        w = self.ws
        sep = f"{w},{w}"
        cut = next((i for i, p in enumerate(prefix) if p is None), len(prefix))
        bodies, seq = [], ""
        for i in range(cut):  # arrays that end inside the prefix
            seq += (sep if i else "") + prefix[i]
            bodies.append(seq)
        if cut == len(prefix) and tail is not None:
            bodies.append(seq + (sep if seq else "") + tail + f"(?:{sep}{tail})*")
        shape = [rf"\[{w}\]"]
        body = self.unite(bodies, path)
        if body is not None:
            shape.append(rf"\[{w}{body}{w}\]")
        acc = self.unite(shape, path)
        if lo or hi is not None:
            acc = self.inter(acc, self.array_of(u, lo, hi), path)
        if "contains" in s and s.get("minContains", 1) >= 1:
            c = self.over(s["contains"], f"{path}/contains", refs)
            if c is None:
                return None
            acc = self.inter(acc, rf"\[{w}(?:{u}{sep})*{c}(?:{sep}{u})*{w}\]", path)
        return acc

    def over_object(self, s: dict, path: str, refs: tuple) -> Regex:
        from .dispatch import _encoded

        u = self.universe()
        acc: Regex = self.object_of(CANON_STRING, u, lo=int(s.get("minProperties", 0)))
        props = s.get("properties", {})
        for name in s.get("required", []):
            acc = self.inter(acc, self.object_having(f'"{literal(_encoded(name))}"', u), path)
        for name, sub in props.items():
            key = f'"{literal(_encoded(name))}"'
            o = self.over(sub, f"{path}/properties/{name}", refs)
            if o == u:
                continue
            others = self.minus(CANON_STRING, key, path)
            without = self.object_of(others, u) if others is not None else None
            acc = self.inter(acc, self.unite([without, self.object_having(key, o) if o is not None else None], path), path)
        if s.get("additionalProperties") is False and not s.get("patternProperties"):
            allowed = self.unite([f'"{literal(_encoded(name))}"' for name in props], path)
            acc = self.inter(acc, self.object_of(allowed, u) if allowed else rf"\{{{self.ws}\}}", path)
        if "propertyNames" in s:
            names = self.over(s["propertyNames"], f"{path}/propertyNames", refs)
            names = self.inter(names, CANON_STRING, path)
            acc = self.inter(acc, self.object_of(names, u) if names else rf"\{{{self.ws}\}}", path)
        return acc
