"""Arrays: ``prefixItems`` / ``items`` with ``minItems`` / ``maxItems`` (one regex), ``contains`` with
``minContains`` / ``maxContains`` (the array language intersected with an item count), and
``uniqueItems`` over items from a finite set of values (one count per value).

>>> count_items("1", "2", 1, 1, ",")
'(?:2(?:,2)*(?:,1(?:,2)*)|1(?:,2)*)'
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import SchemaNotSupported, UnsatisfiableConstraint
from .context import Context
from .ops import TooDeep, equal
from .regex_text import alt, quantify

__all__ = ["Arrays", "count_items", "finite_values"]


class Arrays:
    """Array schemas (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def array(self, s: dict, path: str, refs: tuple) -> str:
        """The JSON arrays valid under ``s``."""
        ctx = self.ctx
        if "contains" in s:
            return self.array_contains(s, path, refs)
        prefix = s.get("prefixItems", [])
        lo = int(s.get("minItems", 0))
        cap = None if s.get("maxItems") is None else int(s["maxItems"])
        if cap is not None and lo > cap:
            raise UnsatisfiableConstraint(f"minItems {lo} > maxItems {cap}", path or "/")
        elems: list[str] = []
        tail = None
        for i, sub in enumerate(prefix):
            if cap is not None and i >= cap:
                break
            try:
                elems.append(ctx.compiler.compile(sub, f"{path}/prefixItems/{i}", refs))
            except (UnsatisfiableConstraint, TooDeep):
                if i < lo:
                    raise
                cap = i
        if len(elems) == len(prefix) and (cap is None or cap > len(prefix)):
            try:
                tail = ctx.compiler.compile(s.get("items", True), f"{path}/items", refs)
            except (UnsatisfiableConstraint, TooDeep):
                if lo > len(prefix):
                    raise
                cap = len(prefix)
        if cap is not None and lo > cap:
            raise UnsatisfiableConstraint(f"minItems {lo} but at most {cap} items are possible", path or "/")
        unique = s.get("uniqueItems") is True and (cap is None or cap > 1)
        values: list = []
        if unique:
            item_schemas = prefix[: len(elems)] + ([s.get("items", True)] if tail is not None else [])
            values = finite_values(item_schemas, f"{path}/uniqueItems")  # (refuses infinite item languages)
        w = ctx.ws
        sep = f"{w},{w}"

        def after(j: int) -> str:  # items from position j on, each after a separator when j > 0
            if cap is not None and j >= cap:
                return ""
            if j >= len(elems):
                assert tail is not None
                need, most = max(0, lo - j), None if cap is None else cap - j
                if j == 0:
                    return tail + quantify(sep + tail, max(need - 1, 0), None if most is None else most - 1)
                return quantify(sep + tail, need, most)
            piece = ("" if j == 0 else sep) + elems[j] + after(j + 1)
            return piece if j < lo or j == 0 else f"(?:{piece})?"

        content = after(0)
        if not content:
            return rf"\[{w}\]"
        array = rf"\[{w}(?:{content}{w})?\]" if lo == 0 else rf"\[{w}{content}{w}\]"
        if unique:
            return self.unique_items(array, alt(elems + ([tail] if tail is not None else [])), values, path, refs)
        return ctx.budget(array, path)

    def array_contains(self, s: dict, path: str, refs: tuple) -> str:
        """``contains`` with ``minContains`` / ``maxContains``: the array language intersected with
        "lo..hi items valid under contains"; with a maximum, the other items must be outside the
        over-approximation of ``contains``."""
        ctx = self.ctx
        lo, hi = int(s.get("minContains", 1)), s.get("maxContains")
        hi = None if hi is None else int(hi)
        base = self.array({k: v for k, v in s.items() if k not in ("contains", "minContains", "maxContains")}, path, refs)
        if lo == 0 and hi is None:
            return base
        if hi is not None and lo > hi:
            raise UnsatisfiableConstraint(f"minContains {lo} > maxContains {hi}", path or "/")
        try:
            yes = ctx.compiler.compile(s["contains"], f"{path}/contains", refs)
        except (UnsatisfiableConstraint, TooDeep):
            if lo > 0:
                raise
            return base
        yes = ctx.embed(ctx.to_dfa(yes, f"{path}/contains"))  # (small automata compose faster than long regexes)
        anything = ctx.embed(ctx.to_dfa(ctx.compiler.any_value(), path))
        if hi is None:
            others: Optional[str] = anything
        else:
            contains_over = ctx.compiler.over(s["contains"], f"{path}/contains", refs)
            others = ctx.minus(ctx.compiler.positive_in_universe(anything, path), contains_over, path)
        w = ctx.ws
        body = count_items(yes, others, lo, hi, f"{w},{w}")
        shapes = [rf"\[{w}{body}{w}\]"] if body else []
        if lo == 0:
            shapes.append(rf"\[{w}\]")
        got = ctx.inter(base, alt(shapes), path) if shapes else None
        if got is None:
            raise UnsatisfiableConstraint("no array has the items contains asks for", path or "/")
        return got

    def unique_items(self, array: str, item: str, values: list, path: str, refs: tuple) -> str:
        """``array`` (items from the regex ``item``) with at most one item equal to each of
        ``values``: one intersection per value, like ``contains: {const: v}, maxContains: 1``.
        An item is counted by its value (every spelling of it), so ``1`` and ``1.0`` are one."""
        ctx = self.ctx
        w = ctx.ws
        got: Optional[str] = ctx.budget(array, path)
        for v in values:
            try:
                yes = ctx.inter(item, ctx.compiler.compile({"const": v}, path, refs), path)
            except UnsatisfiableConstraint:
                continue
            if yes is None:
                continue
            try:
                value_over = ctx.compiler.over({"const": v}, path, refs)
                others = ctx.minus(ctx.compiler.positive_in_universe(item, path), value_over, path)
            except UnsatisfiableConstraint:
                others = None
            body = count_items(yes, others, 0, 1, f"{w},{w}")
            shapes = [rf"\[{w}\]"] + ([rf"\[{w}{body}{w}\]"] if body else [])
            got = ctx.inter(got, alt(shapes), path)
            if got is None:
                raise UnsatisfiableConstraint("no array has unique items here", path or "/")
        assert got is not None
        return got


def finite_values(schemas: list, path: str) -> list:
    """The values items under ``schemas`` can take (a superset), when finite: ``enum``,
    ``const``, ``type`` boolean / null, ``false``. Else ``SchemaNotSupported``."""
    values: list = []
    for sub in schemas:
        vs = _listed_values(sub)
        if vs is None:
            raise SchemaNotSupported("uniqueItems", path, "over items with infinitely many values (supported: "
                                     "items from enum, const, boolean or null, or at most one item)")
        values += [v for v in vs if not any(equal(v, x) for x in values)]
    return values


def _listed_values(s: Any) -> Optional[list]:
    """The values an instance of ``s`` can take, when the schema lists them (a superset); else None."""
    if s is False:
        return []
    if not isinstance(s, dict):
        return None
    if "const" in s:
        return [s["const"]]
    if isinstance(s.get("enum"), list):
        return list(s["enum"])
    types = s.get("type")
    types = [types] if isinstance(types, str) else types
    if isinstance(types, list) and types and set(types) <= {"boolean", "null"}:
        return ([True, False] if "boolean" in types else []) + ([None] if "null" in types else [])
    return None


def count_items(yes: str, others: Optional[str], lo: int, hi: Optional[int], sep: str) -> Optional[str]:
    """Item sequences (``sep`` between items) with ``lo..hi`` items from ``yes``, any number from
    ``others`` (``None``: none); ``None`` when no sequence qualifies. Exact when ``yes`` and
    ``others`` are disjoint sets of whole JSON values (an item then splits one way)."""
    bodies = []
    if others is None:
        if hi is None or hi >= 1:
            bodies.append(yes + quantify(sep + yes, max(lo - 1, 0), None if hi is None else hi - 1))
    else:
        rest = f"(?:{sep}{others})*"
        counted = f"(?:{sep}{yes}{rest})"

        def times(a: int, b: Optional[int]) -> str:
            if b is not None and b <= 0:
                return ""
            return quantify(counted, a, b) if (a, b) != (1, 1) else counted

        bodies.append(others + rest + times(lo, hi))
        if hi is None or hi >= 1:
            bodies.append(yes + rest + times(max(lo - 1, 0), None if hi is None else hi - 1))
    return "(?:" + "|".join(bodies) + ")" if bodies else None
