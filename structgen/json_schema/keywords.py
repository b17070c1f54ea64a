"""Keywords compiled through automaton algebra (a mixin of the schema compiler,
``json_schema._Compiler``): ``allOf`` that does not merge (intersection), ``not`` and
``if``/``then``/``else`` (subtraction of an over-approximation, see :mod:`.json_algebra`),
overlapping ``oneOf``, ``dependentRequired`` / ``dependentSchemas`` (unions),
``contains`` / ``minContains`` / ``maxContains`` (item counts), and ``unevaluatedProperties`` /
``unevaluatedItems`` (rewritten over what is evaluated in place).
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any, Callable, Iterator, Optional

from . import dispatch as _js
from ..errors import CompileBudgetExceeded, ConstraintError, SchemaNotSupported, UnsatisfiableConstraint
from .formats import quantify

__all__: list[str] = []

Schema = Any


class _KeywordsMixin:
    ws: str
    key_order: str
    extra_properties: bool

    # -- retries where an under-approximation came out empty ------------------------------------

    @contextlib.contextmanager
    def widened(self) -> Iterator[None]:
        """Objects in any key order and with extra keys while inside: both only add valid
        strings, so whatever is compiled here is still sound (the options are otherwise the
        user's choice of output style)."""
        saved = self.key_order, self.extra_properties
        self.key_order, self.extra_properties = "any", True
        try:
            yield
        finally:
            self.key_order, self.extra_properties = saved

    def retry_widened(self, attempt: Callable[[], Optional[str]]) -> Optional[str]:
        """``attempt()``; when it finds nothing (an intersection or a subtraction of our
        under-approximated languages came out empty), once more :meth:`widened`."""
        got = attempt()
        if got is None and not (self.key_order == "any" and self.extra_properties):
            with self.widened():
                got = attempt()
        return got

    def truly_empty(self, s: Schema, path: str, refs: tuple) -> bool:
        """Whether no instance is valid under ``s``: its over-approximation is empty."""
        try:
            return self.over(s, path, refs) is None  # type: ignore[attr-defined]
        except (ConstraintError, CompileBudgetExceeded):
            return False

    # -- unevaluated* ----------------------------------------------------------------------------

    def without_unevaluated(self, s: dict, path: str) -> Schema:
        """``unevaluatedProperties`` / ``unevaluatedItems`` rewritten as ``additionalProperties`` /
        ``items`` over what ``s`` and the schemas it applies in place (``allOf``, ``$ref``, and
        theirs) evaluate. Annotations that depend on which branch matched (``anyOf``, ``oneOf``,
        ``if``, ``dependentSchemas``, ``contains``) are refused."""
        for key in ("anyOf", "oneOf", "if"):
            if key in s:
                return {"anyOf": self.split_branches(s, key)}
        out = dict(s)
        for key, blockers in (("unevaluatedProperties", ("anyOf", "oneOf", "if", "dependentSchemas")),
                              ("unevaluatedItems", ("anyOf", "oneOf", "if", "contains"))):
            if key not in s:
                continue
            value = out.pop(key)
            found = self.evaluated({k: v for k, v in s.items() if k != key}, path, blockers, key, frozenset())
            if found is None or _js._accepts_all(value):
                continue  # everything is evaluated (or allowed)
            names, patterns, prefix = found
            if key == "unevaluatedProperties":
                rule: dict = {"additionalProperties": value}
                if names:
                    rule["properties"] = {n: True for n in names}
                if patterns:
                    rule["patternProperties"] = {p: True for p in patterns}
            else:
                rule = {"items": value}
                if prefix:
                    rule["prefixItems"] = [True] * prefix
            out["allOf"] = [*out.get("allOf", []), rule]
        return out

    @staticmethod
    def split_branches(s: dict, key: str) -> list:
        """``s`` as alternatives in which the branches that matched are known, so that their
        annotations are too: ``anyOf`` by the set of branches that hold (for up to 4 branches;
        beyond, one branch each: sound, less complete), ``oneOf`` by the branch that holds and
        the others negated, ``if`` as (if, then) or (not if, else)."""
        rest = {k: v for k, v in s.items() if k not in (key, "then", "else")}
        rest_all = list(rest.pop("allOf", []))
        if key == "anyOf":
            n = len(s[key])
            sets = [c for k in range(1, n + 1) for c in itertools.combinations(range(n), k)] if n <= 4 else [(i,) for i in range(n)]
            groups = [[s[key][i] for i in c] for c in sets]
        elif key == "oneOf":
            branches = s[key]
            groups = [[b, *({"not": o} for j, o in enumerate(branches) if j != i)] for i, b in enumerate(branches)]
        else:
            groups = [[s["if"], s.get("then", True)], [{"not": s["if"]}, s.get("else", True)]]
        return [{**rest, "allOf": [*rest_all, *group]} for group in groups]

    def evaluated(self, s: Schema, path: str, blockers: tuple, key: str, seen: frozenset) -> Optional[tuple[list, list, int]]:
        """(property names, patterns, prefix length) that ``s`` evaluates in place; ``None``: all."""
        if not isinstance(s, dict):
            return [], [], 0
        for b in blockers:
            if b in s:
                raise SchemaNotSupported(key, f"{path}/{key}", f"next to {b!r}, whose annotations depend on which branch matched")
        if key == "unevaluatedProperties" and ("additionalProperties" in s or "unevaluatedProperties" in s):
            return None
        if key == "unevaluatedItems" and ("items" in s or "unevaluatedItems" in s):
            return None
        names = list(s.get("properties", {}))
        patterns = list(s.get("patternProperties", {}))
        prefix = len(s.get("prefixItems", []))
        subs = [(sub, f"{path}/allOf/{i}") for i, sub in enumerate(s.get("allOf", []))]
        if isinstance(s.get("$ref"), str):
            target, target_path = self._resolve(s["$ref"], path)
            if target_path not in seen:
                seen = seen | {target_path}
                subs.append((target, target_path))
        for sub, where in subs:
            got = self.evaluated(sub, where, blockers, key, seen)
            if got is None:
                return None
            names += got[0]
            patterns += got[1]
            prefix = max(prefix, got[2])
        return list(dict.fromkeys(names)), list(dict.fromkeys(patterns)), prefix

    # -- keywords through automaton algebra ------------------------------------------------------

    def intersection(self, s: dict, path: str, refs: tuple) -> str:
        """``allOf`` (and ``$ref`` with siblings) whose schemas do not merge: the automata intersected."""
        rest = {k: v for k, v in s.items() if k not in ("allOf", "$ref")}
        parts = [(sub, f"{path}/allOf/{i}") for i, sub in enumerate(s.get("allOf", []))]
        if "$ref" in s:
            parts.append(({"$ref": s["$ref"]}, path))
        if _js._clean(rest):
            parts.append((rest, path))
        def attempt() -> Optional[str]:
            acc: Optional[str] = None
            for i, (sub, where) in enumerate(parts):
                regex = self.compile(sub, where, refs)  # type: ignore[attr-defined]
                acc = regex if i == 0 else self.inter(acc, regex, path)  # type: ignore[attr-defined]
                if acc is None:
                    return None
            return acc

        got = self.retry_widened(attempt)
        if got is None:
            if self.truly_empty(s, path, refs):
                raise UnsatisfiableConstraint("the allOf schemas have no instance in common", path or "/")
            raise SchemaNotSupported(
                "allOf", f"{path}/allOf" if "allOf" in s else path,
                "the automata of its schemas (each one an under-approximation) have nothing in common, though the schemas may",
            )
        return got

    def negation(self, s: dict, path: str, refs: tuple) -> str:
        rest = {k: v for k, v in s.items() if k != "not"}
        negated = self.over(s["not"], f"{path}/not", refs)  # type: ignore[attr-defined]

        def attempt() -> Optional[str]:
            positive = self.positive_in_universe(self.compile(rest or True, path, refs), path)  # type: ignore[attr-defined]
            return self.minus(positive, negated, path)  # type: ignore[attr-defined]

        got = self.retry_widened(attempt)
        if got is None:
            raise SchemaNotSupported("not", f"{path}/not", "nothing is left once the negated schema's over-approximation is taken away")
        return got

    def conditional(self, s: dict, path: str, refs: tuple) -> str:
        """(if ∩ then) ∪ (¬if ∩ else), the ¬ as a subtraction of the over-approximated ``if``."""
        rest = {k: v for k, v in s.items() if k not in ("if", "then", "else")}
        cond = s["if"]
        alts = []
        try:
            alts.append(self.compile(_js._conj(rest, _js._conj(cond, s.get("then", True))), path, refs))
        except (UnsatisfiableConstraint, _js._TooDeep):
            pass
        try:
            otherwise = self.positive_in_universe(self.compile(_js._conj(rest, s.get("else", True)), path, refs), path)
            alts.append(self.minus(otherwise, self.over(cond, f"{path}/if", refs), path))
        except (UnsatisfiableConstraint, _js._TooDeep):
            pass
        got = self.unite(alts, path)
        if got is None:
            raise UnsatisfiableConstraint("neither the then nor the else branch can be satisfied", path or "/")
        return got

    def dependencies(self, s: dict, path: str, refs: tuple) -> str:
        """``dependentRequired`` / ``dependentSchemas``: objects without the key, or with it and
        what it brings (one key at a time)."""
        required_deps = dict(s.get("dependentRequired", {}))
        schema_deps = dict(s.get("dependentSchemas", {}))
        name = next(iter(required_deps or schema_deps))
        rest = dict(s)
        needs: list = [name]
        extra: Schema = True
        if name in required_deps:
            needs += list(required_deps.pop(name))
            rest["dependentRequired"] = required_deps
        else:
            extra = schema_deps.pop(name)
            rest["dependentSchemas"] = schema_deps
        rest = _js._clean(rest)
        without = {**rest, "properties": {**rest.get("properties", {}), name: False}}
        with_it = _js._conj({**rest, "required": list(dict.fromkeys([*rest.get("required", []), *needs]))}, extra)
        alts, errors = [], []
        for branch in (without, with_it):
            try:
                alts.append(self.compile(branch, path, refs))
            except (UnsatisfiableConstraint, _js._TooDeep) as e:
                errors.append(e)
        if not alts:
            raise self.no_alternative(errors, "no object satisfies the dependencies", path)
        return _js._alt(alts)

    def exclusive(self, rest: dict, branches: list, path: str, refs: tuple) -> str:
        """``oneOf`` whose branches may overlap: branch i minus the over-approximations of the others."""
        if sum(map(_js._accepts_all, branches)) >= 2:
            raise UnsatisfiableConstraint("two oneOf branches accept everything: no instance matches exactly one", path or "/")
        overs = [self.over(b, f"{path}/oneOf/{i}", refs) for i, b in enumerate(branches)]
        alts, errors = self.exclusive_branches(rest, branches, overs, path, refs)
        if not alts and not errors and not (self.key_order == "any" and self.extra_properties):
            with self.widened():
                alts, errors = self.exclusive_branches(rest, branches, overs, path, refs)
        if not alts:
            if errors:
                raise self.no_alternative(errors, "no oneOf branch can be satisfied", path)  # type: ignore[attr-defined]
            raise SchemaNotSupported("oneOf", f"{path}/oneOf", "every branch is covered by the over-approximations of the others")
        return _js._alt(alts)

    def exclusive_branches(self, rest: dict, branches: list, overs: list, path: str, refs: tuple) -> tuple[list, list]:
        alts: list = []
        errors: list = []
        for i, branch in enumerate(branches):
            where = f"{path}/oneOf/{i}"
            try:
                positive = self.compile(_js._conj(rest, branch), where, refs)
                positive = self.positive_in_universe(positive, where)
            except (UnsatisfiableConstraint, _js._TooDeep) as e:
                errors.append(e)
                continue
            others = self.unite([o for j, o in enumerate(overs) if j != i], path)
            got = self.minus(positive, others, where)
            if got is not None:
                alts.append(got)
        return alts, errors

    def array_contains(self, s: dict, path: str, refs: tuple) -> str:
        """``contains`` with ``minContains`` / ``maxContains``: the array language intersected with
        "lo..hi items valid under contains"; with a maximum, the other items must be outside the
        over-approximation of ``contains``."""
        lo, hi = int(s.get("minContains", 1)), s.get("maxContains")
        hi = None if hi is None else int(hi)
        base = self.array({k: v for k, v in s.items() if k not in ("contains", "minContains", "maxContains")}, path, refs)
        if lo == 0 and hi is None:
            return base
        if hi is not None and lo > hi:
            raise UnsatisfiableConstraint(f"minContains {lo} > maxContains {hi}", path or "/")
        try:
            yes = self.compile(s["contains"], f"{path}/contains", refs)
        except (UnsatisfiableConstraint, _js._TooDeep):
            if lo > 0:
                raise
            return base
        yes = self.embed(self.to_dfa(yes, f"{path}/contains"))  # (small automata compose faster than long regexes)
        anything = self.embed(self.to_dfa(self.any_value(), path))
        if hi is None:
            others: Optional[str] = anything
        else:
            others = self.minus(self.positive_in_universe(anything, path), self.over(s["contains"], f"{path}/contains", refs), path)
        w = self.ws
        body = _count_items(yes, others, lo, hi, f"{w},{w}")
        shapes = [rf"\[{w}{body}{w}\]"] if body else []
        if lo == 0:
            shapes.append(rf"\[{w}\]")
        got = self.inter(base, _js._alt(shapes), path) if shapes else None
        if got is None:
            raise UnsatisfiableConstraint("no array has the items contains asks for", path or "/")
        return got


    # -- uniqueItems ---------------------------------------------------------------------------

    def finite_values(self, schemas: list, path: str) -> list:
        """The values items under ``schemas`` can take (a superset), when finite: ``enum``,
        ``const``, ``type`` boolean / null, ``false``. Else ``SchemaNotSupported``."""
        values: list = []
        for sub in schemas:
            vs = _finite_values(sub)
            if vs is None:
                raise SchemaNotSupported("uniqueItems", path, "over items with infinitely many values (supported: "
                                         "items from enum, const, boolean or null, or at most one item)")
            values += [v for v in vs if not any(_js._equal(v, x) for x in values)]
        return values

    def unique_items(self, array: str, item: str, values: list, path: str, refs: tuple) -> str:
        """``array`` (items from the regex ``item``) with at most one item equal to each of
        ``values``: one intersection per value, like ``contains: {const: v}, maxContains: 1``.
        An item is counted by its value (every spelling of it), so ``1`` and ``1.0`` are one."""
        w = self.ws
        got: Optional[str] = self.budget(array, path)  # type: ignore[attr-defined]
        for v in values:
            try:
                yes = self.inter(item, self.compile({"const": v}, path, refs), path)  # type: ignore[attr-defined]
            except UnsatisfiableConstraint:
                continue
            if yes is None:
                continue
            try:
                others = self.minus(self.positive_in_universe(item, path), self.over({"const": v}, path, refs), path)  # type: ignore[attr-defined]
            except UnsatisfiableConstraint:
                others = None
            body = _count_items(yes, others, 0, 1, f"{w},{w}")
            shapes = [rf"\[{w}\]"] + ([rf"\[{w}{body}{w}\]"] if body else [])
            got = self.inter(got, _js._alt(shapes), path)  # type: ignore[attr-defined]
            if got is None:
                raise UnsatisfiableConstraint("no array has unique items here", path or "/")
        assert got is not None
        return got


def _finite_values(s: Any) -> Optional[list]:
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


def _count_items(yes: str, others: Optional[str], lo: int, hi: Optional[int], sep: str) -> Optional[str]:
    """Item sequences (``sep`` between items) with ``lo..hi`` items from ``yes``, any from ``others``."""
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


