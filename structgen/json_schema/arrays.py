"""Arrays: ``prefixItems`` / ``items`` with ``minItems`` / ``maxItems`` (one term), ``contains`` with
``minContains`` / ``maxContains`` (the array language intersected with an item count), and
``uniqueItems`` over items from a finite set of values (one count per value) or, in a network,
over any items (an automaton whose frame remembers the items, :meth:`Arrays.unique_array`).

>>> from structgen.automata.expr import ExprPool
>>> from structgen.automata.expr_text import to_regex
>>> from structgen.json_schema.terms import JsonTerms
>>> t = JsonTerms(ExprPool())
>>> to_regex(t.pool, count_items(t, t.lit("1"), t.lit("2"), 1, 1))
'(?:1(?:,2)*|2(?:,2)*,1(?:,2)*)'
"""

from __future__ import annotations

from typing import Any, Optional

from ..automata.expr import EPSILON, NOTHING
from ..errors import SchemaNotSupported, UnsatisfiableConstraint
from .context import Context, Term
from .ops import Refs, Schema, TooDeep, equal
from .terms import JsonTerms

__all__ = ["Arrays", "array_term", "count_items", "finite_values"]


class Arrays:
    """Array schemas (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def array(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """The JSON arrays valid under ``s``."""
        ctx = self.ctx
        t = ctx.t
        if "contains" in s:
            return self.array_contains(s, path, refs)
        prefix = s.get("prefixItems", [])
        lo = int(s.get("minItems", 0))
        cap = None if s.get("maxItems") is None else int(s["maxItems"])
        if cap is not None and lo > cap:
            raise UnsatisfiableConstraint(f"minItems {lo} > maxItems {cap}", path or "/")
        elems: list[Term] = []
        tail: Optional[Term] = None
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
        values: list[Any] = []
        if unique:
            item_schemas = prefix[: len(elems)] + ([s.get("items", True)] if tail is not None else [])
            try:
                values = finite_values(item_schemas, f"{path}/uniqueItems")
            except SchemaNotSupported:
                if not ctx.calls.on and not ctx.calls.in_unique_items:  # (nested in a unique array's items: called too)
                    raise SchemaNotSupported(
                        "uniqueItems", f"{path}/uniqueItems", "over items with infinitely many values inside automata "
                        "algebra (allOf or $ref siblings that do not merge, not, if, overlapping oneOf) or with "
                        "extract_from (supported there: items from enum, const, boolean or null, or at most one item)") from None
                return self.unique_array(s, path, refs, len(elems), tail is not None, lo, cap)
        array = array_term(t, elems, tail, lo, cap)
        if unique:
            return self.unique_items(array, t.alt(elems + ([tail] if tail is not None else [])), values, path, refs)
        return array

    def unique_array(self, s: dict[str, Any], path: str, refs: Refs, prefix: int, tail: bool, lo: int, cap: Optional[int]) -> Term:
        """``uniqueItems`` over items with infinitely many values: an automaton of its own whose
        frame remembers the items written (:mod:`structgen.guides.unique_items`), calling one item
        automaton per ``prefixItems`` position compiled (``prefix``) and one for ``items`` (if
        ``tail``). The items are compiled without calls (the item frame reads an item's whole text),
        but for the unique arrays nested in them, which are called too (their bytes are recorded in
        every item frame below them)."""
        ctx = self.ctx
        calls = ctx.calls
        schemas = [(sub, f"{path}/prefixItems/{i}") for i, sub in enumerate(s.get("prefixItems", [])[:prefix])]
        if tail:
            schemas.append((s.get("items", True), f"{path}/items"))
        was, nested = calls.on, calls.in_unique_items
        calls.on, calls.in_unique_items = False, True
        try:
            items = [ctx.compiler.compile(sub, where, refs) for sub, where in schemas]
        except TooDeep:
            raise SchemaNotSupported("uniqueItems", f"{path}/uniqueItems", "over recursive items with infinitely many values") from None
        finally:
            calls.on, calls.in_unique_items = was, nested

        def array(called: list[Term]) -> Term:
            return array_term(ctx.t, called[:prefix], called[prefix] if tail else None, lo, cap)

        def flat() -> Term:
            raise SchemaNotSupported("uniqueItems", f"{path}/uniqueItems", "over items with infinitely many values "
                                     "inside automata algebra (allOf or $ref siblings that do not merge, not, if, "
                                     "overlapping oneOf)")

        return calls.unique_array(items, array, flat)

    def array_contains(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """``contains`` with ``minContains`` / ``maxContains``: the array language intersected with
        "lo..hi items valid under contains"; with a maximum, the other items must be outside the
        over-approximation of ``contains``."""
        ctx = self.ctx
        t = ctx.t
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
        yes = ctx.embed(ctx.to_dfa(yes, f"{path}/contains"))  # (small automata compose faster than long terms)
        anything = ctx.embed(ctx.to_dfa(ctx.compiler.any_value(), path))
        if hi is None:
            others = anything
        else:
            contains_over = ctx.compiler.over(s["contains"], f"{path}/contains", refs)
            others = ctx.minus(ctx.compiler.positive_in_universe(anything, path), contains_over, path)
        body = count_items(t, yes, others, lo, hi)
        shapes = [t.cat(t.lit("["), t.ws, body, t.ws, t.lit("]"))]
        if lo == 0:
            shapes.append(t.cat(t.lit("["), t.ws, t.lit("]")))
        got = ctx.inter(base, t.alt(shapes), path)
        if got == NOTHING:
            raise UnsatisfiableConstraint("no array has the items contains asks for", path or "/")
        return got

    def unique_items(self, array: Term, item: Term, values: list[Any], path: str, refs: Refs) -> Term:
        """``array`` (items from the term ``item``) with at most one item equal to each of
        ``values``: one intersection per value, like ``contains: {const: v}, maxContains: 1``.
        An item is counted by its value (every spelling of it), so ``1`` and ``1.0`` are one."""
        ctx = self.ctx
        t = ctx.t
        got = array
        for v in values:
            try:
                yes = ctx.inter(item, ctx.compiler.compile({"const": v}, path, refs), path)
            except UnsatisfiableConstraint:
                continue
            if yes == NOTHING:
                continue
            try:
                value_over = ctx.compiler.over({"const": v}, path, refs)
                others = ctx.minus(ctx.compiler.positive_in_universe(item, path), value_over, path)
            except UnsatisfiableConstraint:
                others = NOTHING
            body = count_items(t, yes, others, 0, 1)
            shapes = [t.cat(t.lit("["), t.ws, t.lit("]")), t.cat(t.lit("["), t.ws, body, t.ws, t.lit("]"))]
            got = ctx.inter(got, t.alt(shapes), path)
            if got == NOTHING:
                raise UnsatisfiableConstraint("no array has unique items here", path or "/")
        return got


def array_term(t: JsonTerms, elems: list[Term], tail: Optional[Term], lo: int, cap: Optional[int]) -> Term:
    """The JSON arrays of ``elems`` (one per position) then ``tail`` items (``None``: none), with
    ``lo``..``cap`` items in all (``cap`` no more than the positions when ``tail`` is ``None``)."""
    content = array_items(t, elems, tail, lo, cap)
    open_, close = t.lit("["), t.lit("]")
    if content == EPSILON:
        return t.cat(open_, t.ws, close)
    if lo == 0:
        return t.cat(open_, t.ws, t.opt(t.cat(content, t.ws)), close)
    return t.cat(open_, t.ws, content, t.ws, close)


def array_items(t: JsonTerms, elems: list[Term], tail: Optional[Term], lo: int, cap: Optional[int]) -> Term:
    """The items of :func:`array_term`'s arrays, between the brackets: position j's item after a
    separator when j > 0, built from the last position back to the first (a loop: a nested
    function calling itself was a cycle per array)."""
    sep = t.sep
    last = len(elems) if cap is None else min(len(elems), cap)
    content: Term
    if cap is not None and last >= cap or tail is None:
        content = EPSILON
    else:
        need, most = max(0, lo - last), None if cap is None else cap - last
        if last == 0:
            content = t.cat(tail, t.rep(t.cat(sep, tail), max(need - 1, 0), None if most is None else most - 1))
        else:
            content = t.rep(t.cat(sep, tail), need, most)
    for j in range(last - 1, -1, -1):
        piece = t.cat(elems[j], content) if j == 0 else t.cat(sep, elems[j], content)
        content = piece if j < lo or j == 0 else t.opt(piece)
    return content


def finite_values(schemas: list[Schema], path: str) -> list[Any]:
    """The values items under ``schemas`` can take (a superset), when finite: ``enum``,
    ``const``, ``type`` boolean / null, ``false``. Else ``SchemaNotSupported``."""
    values: list[Any] = []
    for sub in schemas:
        vs = _listed_values(sub)
        if vs is None:
            raise SchemaNotSupported("uniqueItems", path, "over items with infinitely many values (supported: "
                                     "items from enum, const, boolean or null, or at most one item)")
        values += [v for v in vs if not any(equal(v, x) for x in values)]
    return values


def _listed_values(s: Any) -> Optional[list[Any]]:
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


def count_items(t: JsonTerms, yes: Term, others: Term, lo: int, hi: Optional[int]) -> Term:
    """Item sequences (commas between items) with ``lo..hi`` items from ``yes`` and any number from
    ``others`` (``NOTHING``: none); ``NOTHING`` when no sequence qualifies. Exact when ``yes`` and
    ``others`` are disjoint sets of whole JSON values (an item then splits one way)."""
    sep = t.sep
    bodies = []
    if others == NOTHING:
        if hi is None or hi >= 1:
            bodies.append(t.cat(yes, t.rep(t.cat(sep, yes), max(lo - 1, 0), None if hi is None else hi - 1)))
    else:
        rest = t.star(t.cat(sep, others))
        counted = t.cat(sep, yes, rest)

        def times(a: int, b: Optional[int]) -> Term:
            return t.rep(counted, a, b)

        bodies.append(t.cat(others, rest, times(lo, hi)))
        if hi is None or hi >= 1:
            bodies.append(t.cat(yes, rest, times(max(lo - 1, 0), None if hi is None else hi - 1)))
    return t.alt(bodies)
