"""Keywords compiled through automaton algebra or rewriting: ``allOf`` that does not merge
(intersection), ``not`` and ``if``/``then``/``else`` (subtraction of an over-approximation, see
:mod:`.universe`), overlapping ``oneOf`` (each branch minus the others' over-approximations),
``dependentRequired`` / ``dependentSchemas`` (unions), and ``unevaluatedProperties`` /
``unevaluatedItems`` (rewritten over what is evaluated in place).

>>> Keywords.split_branches({"if": {"minimum": 0}, "then": {"multipleOf": 2}}, "if")
[{'allOf': [{'minimum': 0}, {'multipleOf': 2}]}, {'allOf': [{'not': {'minimum': 0}}, True]}]
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

from ..automata.expr import NOTHING
from ..errors import CompileBudgetExceeded, ConstraintError, SchemaNotSupported, UnsatisfiableConstraint
from .context import Context, Term
from .discriminators import forbidden_keys, presence_branches
from .ops import Refs, Schema, TooDeep, accepts_all, clean, conj, detached, no_alternative
from .shapes import overlapping_pairs

__all__ = ["Keywords", "implied_by"]


class Keywords:
    """The keywords above (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def truly_empty(self, s: Schema, path: str, refs: Refs) -> bool:
        """Whether no instance is valid under ``s``: its over-approximation is empty (searched
        for a string here: over-approximations are built unsearched)."""
        try:
            return self.ctx.live(self.ctx.operand(self.ctx.compiler.over(s, path, refs)), path) == NOTHING
        except (ConstraintError, CompileBudgetExceeded):
            return False

    def without_unevaluated(self, s: dict[str, Any], path: str) -> dict[str, Any]:
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
            if found is None or accepts_all(value):
                continue  # everything is evaluated (or allowed)
            names, patterns, prefix = found
            if key == "unevaluatedProperties":
                rule: dict[str, Any] = {"additionalProperties": value}
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
    def split_branches(s: dict[str, Any], key: str) -> list[dict[str, Any]]:
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

    def evaluated(
        self, s: Schema, path: str, blockers: tuple[str, ...], key: str, seen: frozenset[str],
    ) -> Optional[tuple[list[str], list[str], int]]:
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
            target, target_path = self.ctx.refs.resolve(s["$ref"], path)
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

    def intersection(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """``allOf`` (and ``$ref`` with siblings) whose schemas do not merge: the automata intersected."""
        rest = {k: v for k, v in s.items() if k not in ("allOf", "$ref")}
        parts = [(sub, f"{path}/allOf/{i}") for i, sub in enumerate(s.get("allOf", []))]
        if "$ref" in s:
            parts.append(({"$ref": s["$ref"]}, path))
        if clean(rest):
            parts.append((rest, path))

        def attempt() -> Term:
            acc = NOTHING
            for i, (sub, where) in enumerate(parts):
                term = self.ctx.compiler.compile(sub, where, refs)
                acc = term if i == 0 else self.ctx.inter(acc, term, path)
                if acc == NOTHING:
                    return NOTHING
            return acc

        got = self.ctx.retry_widened(attempt)
        if got == NOTHING:
            if self.truly_empty(s, path, refs):
                raise UnsatisfiableConstraint("the allOf schemas have no instance in common", path or "/")
            raise SchemaNotSupported(
                "allOf", f"{path}/allOf" if "allOf" in s else path,
                "the automata of its schemas (each one an under-approximation) have nothing in common, though the schemas may",
            )
        return got

    def negation(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """``not``: the rest of ``s`` (made canonical) minus the over-approximated negated schema."""
        rest = {k: v for k, v in s.items() if k != "not"}
        absent = forbidden_keys(s["not"])
        if absent is not None:  # (keys that must not be there: no subtraction)
            return self.ctx.compiler.compile({"allOf": [rest, absent]} if rest else absent, path, refs)
        negated = self.ctx.compiler.over(s["not"], f"{path}/not", refs)

        def attempt() -> Term:
            positive = self.ctx.compiler.positive_in_universe(self.ctx.compiler.compile(rest or True, path, refs), path)
            return self.ctx.minus(positive, negated, path)

        got = self.ctx.retry_widened(attempt)
        if got == NOTHING:
            raise SchemaNotSupported("not", f"{path}/not", "nothing is left once the negated schema's over-approximation is taken away")
        return got

    def conditional(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """(if ∩ then) ∪ (¬if ∩ else), the ¬ as a subtraction of the over-approximated ``if``."""
        rest = {k: v for k, v in s.items() if k not in ("if", "then", "else")}
        cond = s["if"]
        alts: list[Term] = []
        split = presence_branches(s)  # (a key there or not: two disjoint branches, no subtraction)
        if split is not None:
            for branch in split:
                try:
                    alts.append(self.ctx.compiler.compile(branch, path, refs))
                except (UnsatisfiableConstraint, TooDeep):
                    pass
            if not alts:
                raise UnsatisfiableConstraint("neither the then nor the else branch can be satisfied", path or "/")
            return self.ctx.unite(alts)
        try:
            alts.append(self.ctx.compiler.compile(conj(rest, conj(cond, s.get("then", True))), path, refs))
        except (UnsatisfiableConstraint, TooDeep):
            pass
        try:
            otherwise = self.ctx.compiler.positive_in_universe(self.ctx.compiler.compile(conj(rest, s.get("else", True)), path, refs), path)
            alts.append(self.ctx.minus(otherwise, self.ctx.compiler.over(cond, f"{path}/if", refs), path))
        except (UnsatisfiableConstraint, TooDeep):
            pass
        got = self.ctx.unite(alts)
        if got == NOTHING:
            raise UnsatisfiableConstraint("neither the then nor the else branch can be satisfied", path or "/")
        return got

    def dependencies(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """``dependentRequired`` / ``dependentSchemas``: objects without the key, or with it and
        what it brings (one key at a time)."""
        required_deps = dict(s.get("dependentRequired", {}))
        schema_deps = dict(s.get("dependentSchemas", {}))
        name = next(iter(required_deps or schema_deps))
        rest = dict(s)
        needs: list[str] = [name]
        extra: Schema = True
        if name in required_deps:
            needs += list(required_deps.pop(name))
            rest["dependentRequired"] = required_deps
        else:
            extra = schema_deps.pop(name)
            rest["dependentSchemas"] = schema_deps
        rest = clean(rest)
        without = {**rest, "properties": {**rest.get("properties", {}), name: False}}
        with_it = conj({**rest, "required": list(dict.fromkeys([*rest.get("required", []), *needs]))}, extra)
        alts, errors = [], []
        for branch in (without, with_it):
            try:
                alts.append(self.ctx.compiler.compile(branch, path, refs))
            except (UnsatisfiableConstraint, TooDeep) as e:
                errors.append(detached(e))
        if not alts:
            raise no_alternative(errors, "no object satisfies the dependencies", path)
        return self.ctx.unite(alts)

    def exclusive(self, rest: dict[str, Any], branches: list[Schema], path: str, refs: Refs,
                  pairs: Optional[list[tuple[int, int]]] = None) -> Term:
        """``oneOf`` whose branches may overlap: branch i minus the over-approximations of the others
        (``pairs``: :func:`.shapes.overlapping_pairs` of them, where the caller has it)."""
        if sum(map(accepts_all, branches)) >= 2:
            raise UnsatisfiableConstraint("two oneOf branches accept everything: no instance matches exactly one", path or "/")
        implied = [i for i, b in enumerate(branches) if implied_by(rest, b)]
        if len(implied) >= 2:
            i, j = implied[:2]
            raise UnsatisfiableConstraint(
                f"oneOf branches {i} and {j} hold for every instance the rest of the schema allows "
                f"(their required keys and types follow from it): no instance matches exactly one", path or "/")
        # each branch minus the others it may share an instance with (a branch proved disjoint from
        # it, by type or constant, has nothing to take away): an over-approximation only where needed
        partners: list[list[int]] = [[] for _ in branches]
        for i, j in overlapping_pairs(rest, branches, resolve=self.ctx.refs.resolve) if pairs is None else pairs:
            partners[i].append(j)
            partners[j].append(i)
        overs = {j: self.ctx.compiler.over(branches[j], f"{path}/oneOf/{j}", refs)
                 for j in sorted({j for js in partners for j in js})}
        others = [self.ctx.unite([overs[j] for j in sorted(js)]) for js in partners]
        alts, errors = self.exclusive_branches(rest, branches, others, path, refs)
        if not alts and not errors and not self.ctx.is_wide:
            with self.ctx.widened():
                alts, errors = self.exclusive_branches(rest, branches, others, path, refs)
        if not alts:
            if errors:
                raise no_alternative(errors, "no oneOf branch can be satisfied", path)
            raise SchemaNotSupported("oneOf", f"{path}/oneOf", "every branch is covered by the over-approximations of the others")
        return self.ctx.unite(alts)

    def exclusive_branches(
        self, rest: dict[str, Any], branches: list[Schema], others: list[Term], path: str, refs: Refs,
    ) -> tuple[list[Term], list[Exception]]:
        """(each branch that is left minus ``others[i]``, the over-approximation of the branches it
        may overlap, the errors of the branches that cannot be satisfied)."""
        alts: list[Term] = []
        errors: list[Exception] = []
        for i, branch in enumerate(branches):
            where = f"{path}/oneOf/{i}"
            try:
                positive = self.ctx.compiler.compile(conj(rest, branch), where, refs)
                positive = self.ctx.compiler.positive_in_universe(positive, where)
            except (UnsatisfiableConstraint, TooDeep) as e:
                errors.append(detached(e))
                continue
            got = self.ctx.minus(positive, others[i], where)
            if got != NOTHING:
                alts.append(got)
        return alts, errors


_TYPE_IMPLIES = {"integer": {"integer", "number"}}


def implied_by(rest: dict[str, Any], branch: Schema) -> bool:
    """Whether every instance valid under ``rest`` is valid under ``branch`` for sure: a syntactic
    check (``branch`` constrains only ``required`` keys that ``rest`` requires, and types that
    ``rest``'s types fall under); ``False`` means "not known", not "no".

    >>> implied_by({"type": "object", "required": ["a", "b"]}, {"required": ["a"]})
    True
    >>> implied_by({"required": ["a"]}, {"required": ["b"]})
    False
    """
    if accepts_all(branch):
        return True
    if not isinstance(branch, dict) or not isinstance(rest, dict):
        return False
    own = clean(branch)
    if not set(own) <= {"required", "type"}:
        return False
    types = rest.get("type")
    have = None if types is None else {types} if isinstance(types, str) else set(types)
    objects = have is None or "object" in have  # (``required`` says nothing of other values)
    if objects and not set(own.get("required", [])) <= set(rest.get("required", [])):
        return False
    if "type" in own:
        wanted = {own["type"]} if isinstance(own["type"], str) else set(own["type"])
        if have is None or not all(_TYPE_IMPLIES.get(t, {t}) & wanted for t in have):
            return False
    return True
