"""The schema compiler: a (2020-12) schema → a term (an expression of the compile's pool, see
:mod:`.context`) whose language is the serialisations of the valid instances, with automata
embedded and, in a network, calls of other automata.

:class:`SchemaCompiler` dispatches each schema to the part that compiles it (``enum``/``const``,
``not``, ``if``, dependencies, ``anyOf``/``oneOf``, then one builder per type) after
:meth:`SchemaCompiler.normalize` has merged its ``$ref`` and ``allOf`` into one schema object. What
each keyword compiles to, and where that departs from the specification: ``docs/json_schema.md``.

**Soundness first**: every string the term matches parses with ``json.loads`` and is valid
under the schema. A keyword that cannot be enforced exactly raises :class:`SchemaNotSupported`
(with the keyword and a JSON pointer) at compile time; it is never ignored.

>>> from structgen.automata.expr_text import to_regex
>>> from structgen.json_schema.options import SchemaOptions
>>> compiler = SchemaCompiler({"enum": ["a", 1]}, SchemaOptions())
>>> to_regex(compiler.ctx.pool, compiler.run())
'(?:"a"|1(?:\\\\.0+)?)'
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from typing import Any, Callable, Optional, TypeGuard, Union

from ..errors import CompileBudgetExceeded, ConstraintError, UnsatisfiableConstraint
from .arrays import Arrays
from .context import Context, Term
from .discriminators import if_chain_union, one_of_keys
from .formats import NUMBER_FORMATS
from .keywords import Keywords
from .numbers import Numbers
from .objects import Objects
from .ops import (
    TYPES, MergeClash, Refs, Schema, TooDeep, accepts_all, clean, conj, detached, known_text, merge, no_alternative, type_set,
)
from .options import SchemaOptions
from .shapes import overlaps
from .spans import SpanStrings
from .strings import Strings
from .universe import Universe
from .values import Values

__all__ = ["SchemaCompiler"]


class SchemaCompiler:
    """One compile of ``root`` (a 2020-12 schema) under ``options``: :meth:`run` gives the term
    of the root in ``ctx.pool``; in a network (``network=True``, no ``spans``) :attr:`ctx` then
    holds its called automata (``ctx.calls``)."""

    def __init__(
        self, root: Schema, options: SchemaOptions, spans: Optional[SpanStrings] = None, *,
        network: bool = False,
    ) -> None:
        self.ctx = ctx = Context(root, options, spans, self, network=network)
        self.values = Values(ctx)
        self.strings = Strings(ctx)
        self.numbers = Numbers(ctx)
        self.arrays = Arrays(ctx)
        self.objects = Objects(ctx)
        self.keywords = Keywords(ctx)
        # (kind, schema text, root?, base, entered, widened, calls on[, path]) -> term or error
        self._memos: dict[tuple[Hashable, ...], Union[Term, Exception]] = {}
        self._texts: dict[int, tuple[Schema, str]] = {}  # id(sub-schema) -> (it, held so the id stays its own; its text)
        if isinstance(root, dict):
            self._texts[id(root)] = (root, ctx.refs.text)  # (written once, by the resolver)
        self.universe = Universe(ctx)

    def run(self) -> Term:
        """The term of the root (the root counts as entered once, like a ``$ref`` target)."""
        ctx = self.ctx
        try:
            if ctx.calls.on:
                return ctx.calls.compile_root(ctx.root)  # (a $ref to "#" may call it)
            return self.compile(ctx.root, "", ("",))
        except TooDeep as e:
            raise CompileBudgetExceeded("recursion depth (max_recursion_depth)", e.limit, e.path) from None
        except RecursionError:  # (sub-schemas that each inline the next, past Python's limit: a budget, not a crash)
            raise CompileBudgetExceeded(
                "sub-schemas compiled one inside another (Python's recursion limit)", sys.getrecursionlimit()) from None

    def release(self) -> None:
        """Drop the memo tables once the root's term is made: what they hold (terms, the errors
        of branches, each sub-schema's text) would otherwise wait for the cyclic collector, as the
        compiler and its parts refer to one another."""
        self._memos.clear()
        self._texts.clear()

    # -- the Compiler protocol (what the parts ask of each other) ------------------------------

    def compile(self, s: Schema, path: str, refs: Refs) -> Term:
        """The term of ``s`` at ``path`` (``refs``: the ``$ref`` targets entered so far); in a
        network a ``$ref`` target or a heavy sub-schema becomes a call. Memoised: the algebra
        compiles a sub-schema again for each keyword that subtracts it (a ``oneOf`` inside a
        ``oneOf`` would otherwise cost exponential time in the nesting)."""
        return self._memo("compile", self._compile, s, path, refs)

    def _memo(self, kind: str, make: Callable[[Schema, str, Refs], Term], s: Schema, path: str, refs: Refs) -> Term:
        if isinstance(s, bool):
            return make(s, path, refs)
        # A term depends on the sub-schema and the base URI its $refs resolve from, not on where
        # it sits (but for the root), and on the $ref targets entered only through those it may
        # enter again (recursion depth): one compile per distinct sub-schema. An error names its
        # path, so errors are kept per path.
        held = self._texts.get(id(s))  # (the algebra and the flat twins compile one object again and again)
        if held is not None and held[0] is s:
            text = held[1]
        else:
            text = known_text(s)  # (a slice of the root's text, where s is inside it)
            self._texts[id(s)] = (s, text)
        resolver = self.ctx.refs
        entered = tuple((t, refs.count(t)) for t in dict.fromkeys(refs) if resolver.leads_to(s, path, text, t))
        key = (kind, text, not path, resolver.base_at(path), entered, self.ctx.is_wide, self.ctx.calls.on)
        got = self._memos.get(key)
        if isinstance(got, BaseException):
            got = self._memos.get((*key, path))
        calls = self.ctx.calls
        if got is None and calls.flattening and not calls.on and not calls.in_unique_items and kind == "compile":
            called = self._memos.get(key[:-1] + (True,))  # (compiled with calls already: flattened, not compiled again)
            if called is not None and not isinstance(called, BaseException):
                got = calls.flat_of_called(called)
                if got is not None:
                    self._memos.setdefault(key, got)
        if got is None:
            try:
                got = make(s, path, refs)
            except (ConstraintError, TooDeep, CompileBudgetExceeded) as e:
                got = self._memos[key + (path,)] = detached(e)
            self._memos.setdefault(key, got)
        if isinstance(got, BaseException):
            error, got = got, None
            try:
                raise error
            finally:
                del error  # (this frame, in the error's traceback, holding the error: a cycle)
        return got

    def _compile(self, s: Schema, path: str, refs: Refs) -> Term:
        calls = self.ctx.calls
        if not calls.on:
            return self.compile_node(s, path, refs)
        if _alias(s):
            target, target_path = self.ctx.refs.resolve(s["$ref"], path)
            seen = {path, target_path}
            while _alias(target):  # (a target that is a $ref alone: what it lands on is the target, recursion included)
                target, target_path = self.ctx.refs.resolve(target["$ref"], target_path)
                if target_path in seen:
                    break
                seen.add(target_path)
            return calls.call_ref(target, target_path)
        term = self.compile_node(s, path, refs)
        return calls.call_if_heavy(term) if path else term

    def compile_node(self, s: Schema, path: str, refs: Refs) -> Term:
        """The term of ``s`` itself (never a call of it): dispatched by its keywords."""
        if s is True:
            return self.any_value()
        if s is False:
            raise UnsatisfiableConstraint("the schema is false, no instance is valid", path or "/")
        if "enum" in s or "const" in s:
            return self.values.finite(s, path)
        if "unevaluatedProperties" in s or "unevaluatedItems" in s:
            s = self.without_unevaluated(s, path)
        if "if" in s or "allOf" in s:
            chain = if_chain_union(s)  # (a discriminated union: disjoint branches, no algebra)
            if chain is not None:
                return self.compile_node(chain, path, refs)
        original = s
        try:
            s, path, refs = self.normalize(s, path, refs)
        except MergeClash:
            return self.keywords.intersection(original, path, refs)  # (allOf / $ref siblings that do not merge)
        if isinstance(s, bool):
            return self.compile(s, path, refs)
        s = clean(s)
        if not s:
            return self.any_value()
        if "enum" in s or "const" in s:
            return self.values.finite(s, path)
        if "not" in s:
            if accepts_all(s["not"]):
                raise UnsatisfiableConstraint("'not' of a schema that accepts everything", path or "/")
            return self.keywords.negation(s, path, refs)
        if "if" in s:
            return self.keywords.conditional(s, path, refs)
        if "dependentRequired" in s or "dependentSchemas" in s:
            return self.keywords.dependencies(s, path, refs)
        for key in ("anyOf", "oneOf"):
            if key in s:
                return self.union(s, key, path, refs)
        return self.typed(s, path, refs)

    def any_value(self) -> Term:
        return self.values.any_value()

    def string(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        return self.strings.string(s, path, refs)

    def array(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        return self.arrays.array(s, path, refs)

    def over(self, s: Any, path: str, refs: Refs) -> Term:
        return self._memo("over", self.universe.over, s, path, refs)

    def positive_in_universe(self, term: Term, path: str) -> Term:
        return self.universe.positive_in_universe(term, path)

    def without_unevaluated(self, s: dict[str, Any], path: str) -> dict[str, Any]:
        return self.keywords.without_unevaluated(s, path)

    # -- dispatch --------------------------------------------------------------------------------

    def normalize(self, s: Schema, path: str, refs: Refs) -> tuple[Schema, str, Refs]:
        """Expand top-level ``$ref`` and ``allOf`` into one schema object (:class:`MergeClash`
        where they do not merge; :class:`TooDeep` past ``max_recursion_depth``)."""
        depth = self.ctx.options.max_recursion_depth
        while isinstance(s, dict):
            if "unevaluatedProperties" in s or "unevaluatedItems" in s:
                s = self.without_unevaluated(s, path)  # (in its own scope, before any merge)
            if "$ref" in s:
                target, target_path = self.ctx.refs.resolve(s["$ref"], path)
                if refs.count(target_path) > depth:
                    raise TooDeep("recursion depth (max_recursion_depth)", depth, target_path or "/")
                refs = refs + (target_path,)
                rest = {k: v for k, v in s.items() if k != "$ref"}
                if not clean(rest):
                    s, path = target, target_path
                    continue
                t, _, refs = self.normalize(target, target_path, refs)
                s = merge(t, rest, path)
            elif "allOf" in s:
                acc: Schema = True
                for i, sub in enumerate(s["allOf"]):
                    n, _, refs = self.normalize(sub, f"{path}/allOf/{i}", refs)
                    acc = merge(acc, n, path)
                # the siblings last, so that properties come out base first (pydantic inheritance)
                s = merge(acc, {k: v for k, v in s.items() if k != "allOf"}, path)
            else:
                break
        return s, path, refs

    def union(self, s: dict[str, Any], key: str, path: str, refs: Refs) -> Term:
        """``anyOf`` / ``oneOf``: the siblings distributed into each branch; a ``oneOf`` whose
        branches are not provably disjoint is left to :meth:`.Keywords.exclusive`."""
        rest = {k: v for k, v in s.items() if k != key}
        branches = s[key]
        if key == "oneOf":  # (the branches' shapes read once: which pairs may overlap, and beyond {})
            pairs, beyond_empty = overlaps(rest, branches, resolve=self.ctx.refs.resolve)
            if pairs and not beyond_empty:
                branches = self.without_shared_empty(rest, branches)
            elif pairs:
                keyed = one_of_keys(rest, branches, self.ctx.refs.resolve)  # (one key each: disjoint once the others are absent)
                if keyed is None:
                    return self.keywords.exclusive(rest, branches, path, refs, pairs=pairs)
                branches = keyed
        alts: list[Term] = []
        errors: list[Exception] = []
        for i, branch in enumerate(branches):
            where = f"{path}/{key}/{i}"
            try:
                try:
                    n, npath, nrefs = self.normalize(branch, where, refs)
                except MergeClash:  # (the branch's own allOf does not merge: intersected)
                    alts.append(self.compile(conj(rest, branch) if rest else branch, where, refs))
                    continue
                try:
                    merged = merge(rest, n, where) if rest else n
                except MergeClash:
                    merged = {"allOf": [rest, n]}
                alts.append(self.compile(merged, where if rest else npath, nrefs))
            except (UnsatisfiableConstraint, TooDeep) as e:
                errors.append(detached(e))
        if not alts:
            raise no_alternative(errors, f"no {key} branch can be satisfied", path)
        return self.ctx.unite(alts)

    def without_shared_empty(self, rest: dict[str, Any], branches: list[Schema]) -> list[Schema]:
        """``oneOf`` branches that may share only ``{}`` (objects whose allowed keys have nothing
        in common: bitbucket-pipelines' ``{"step": ...}`` / ``{"parallel": ...}`` items), made
        disjoint: where two or more accept ``{}``, none does (``minProperties: 1`` each)."""
        empty = [b for b in branches if self.ctx.validator.evolve(schema=conj(rest, b) if rest else b).is_valid({})]
        if len(empty) < 2:
            return branches
        return [conj(b, {"minProperties": 1}) for b in branches]

    def typed(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """One builder per type the schema allows (all of them without ``type``), united."""
        t = s.get("type")
        types = list(TYPES) if t is None else list(dict.fromkeys(type_set(t) if isinstance(t, str) else t))
        if "number" in types and "integer" in types:
            types.remove("integer")
        fmt = s.get("format")
        if fmt in NUMBER_FORMATS and fmt not in self.ctx.options.formats and ("number" in types or "integer" in types):
            lo, hi = NUMBER_FORMATS[fmt]  # (OpenAPI's int32 / int64: bounds on numbers)
            s = {**s, "minimum": max(s.get("minimum", lo), lo), "maximum": min(s.get("maximum", hi), hi)}
        t = self.ctx.t
        builders: dict[str, Callable[[dict[str, Any], str, Refs], Term]] = {
            "object": self.objects.object, "array": self.array, "string": self.string, "number": self.numbers.number,
            "integer": self.numbers.integer, "boolean": lambda *_: t.boolean, "null": lambda *_: t.null,
        }
        alts: list[Term] = []
        errors: list[Exception] = []
        for name in types:
            try:
                alts.append(builders[name](s, path, refs))
            except (UnsatisfiableConstraint, TooDeep) as e:
                errors.append(detached(e))
        if not alts:
            raise no_alternative(errors, f"no instance of type {types} satisfies the schema", path)
        return self.ctx.unite(alts)


def _alias(s: Schema) -> TypeGuard[dict[str, Any]]:
    """Whether ``s`` is a ``$ref`` and nothing else that constrains (a name for its target)."""
    return isinstance(s, dict) and isinstance(s.get("$ref"), str) and not clean({k: v for k, v in s.items() if k != "$ref"})
