"""Values: any JSON value (``{}``, ``true``), and the finite case (``enum`` / ``const``), where each
value is checked against the whole schema by ``jsonschema`` and then spelled out.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any, Callable, Optional

from ..automata.expr import NOTHING
from ..automata.expr_rewrite import factored
from ..errors import CompileBudgetExceeded, ConstraintError, SchemaError, SchemaNotSupported, UnsatisfiableConstraint
from .context import MAX_REGEX_SIZE, Context, Term
from .ops import canonical_json, clean, encoded, equal

#: Enumerations of more values than this are a trie of their spellings (see :func:`.expr_rewrite.factored`).
FACTOR_FROM = 8

__all__ = ["Values"]


class Values:
    """Any value and ``enum`` / ``const`` values (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._any: Optional[Term] = None  # the call of the automaton of any value (a network)
        self._any_flat: Optional[Term] = None  # any value nested max_recursion_depth levels

    def any_value(self) -> Term:
        """Any JSON value: in a network, one automaton that calls itself for nested values;
        otherwise nested at most ``max_recursion_depth`` levels."""
        ctx = self.ctx
        if ctx.calls.on and ctx.spans is None:
            if self._any is None:
                k = ctx.calls.any_callee = ctx.calls.new_callee()
                self._any = ctx.pool.symbol(k)
                ctx.calls.callees[k - 1] = self.any_term(self._any)
            return self._any
        if self._any_flat is None:
            t = ctx.t
            string = t.string if ctx.spans is None or ctx.spans.marked else ctx.compiler.string({}, "", ())
            scalars = t.alt([t.null, t.boolean, t.number, string])
            value = scalars
            for _ in range(ctx.options.max_recursion_depth):
                value = t.alt([scalars, t.sequence("[", value, "]"), t.sequence("{", t.member(t.string, value), "}")])
            self._any_flat = value
        return self._any_flat

    def any_term(self, value: Term) -> Term:
        """Any JSON value, nested values being ``value``."""
        t = self.ctx.t
        containers = [t.sequence("[", value, "]"), t.sequence("{", t.member(t.string, value), "}")]
        return t.alt([t.null, t.boolean, t.number, t.string, *containers])

    def value(self, v: Any, path: str) -> Term:
        """The spellings of the JSON value ``v`` (an integer also as ``1.0`` while that float is
        exact; keys in the value's order, or in any order for small objects with key order "any")."""
        t = self.ctx.t
        if v is None or isinstance(v, bool):
            return t.lit(json.dumps(v))
        if isinstance(v, int):
            if abs(v) <= 2**53:  # 1.0 equals 1, and parses back to exactly that value
                return t.cat(t.lit(str(v)), t.opt(t.zeros_fraction))
            return t.lit(str(v))
        if isinstance(v, float):
            if not math.isfinite(v):
                raise SchemaNotSupported("enum", path, f"{v!r} is not a JSON number")
            forms = [t.lit(json.dumps(v))]
            if v.is_integer() and abs(v) < 2**53:
                forms.append(t.lit(str(int(v))))
            return t.alt(forms)
        if isinstance(v, str):
            return t.string_of(v)
        if isinstance(v, list):
            if not v:
                return t.cat(t.lit("["), t.ws, t.lit("]"))
            items = [self.value(x, path) for x in v]
            joined = [p for x in items for p in (t.sep, x)][1:]
            return t.cat(t.lit("["), t.ws, *joined, t.ws, t.lit("]"))
        if isinstance(v, dict):
            if not v:
                return t.cat(t.lit("{"), t.ws, t.lit("}"))
            members = [t.member(t.string_of(k), self.value(x, path)) for k, x in v.items()]
            orders = [members]
            if self.ctx.key_order == "any" and 1 < len(members) <= 4:
                orders = [list(p) for p in itertools.permutations(members)]
            return t.alt(t.cat(t.lit("{"), t.ws, *[p for m in order for p in (t.sep, m)][1:], t.ws, t.lit("}")) for order in orders)
        raise SchemaError(f"{v!r} is not a JSON value", path)

    def finite(self, s: dict[str, Any], path: str) -> Term:
        """``enum`` / ``const``: the values valid under the rest of ``s`` (checked by ``jsonschema``,
        ``pattern`` and ``format`` read as our regexes read them), each spelled out. Where the rest
        only names types that a value's Python type decides (``string``, ``boolean``, ``null``), the
        check is that type test, and the strings are spelled in one native call (an enumeration of
        1,772 values: 9.2 ms, mostly ``jsonschema`` calls and a term per value)."""
        ctx = self.ctx
        if "const" in s:
            values = [s["const"]]
            if "enum" in s:
                values = [v for v in values if any(equal(v, e) for e in s["enum"])]
        else:
            values = list(s["enum"])
        if ctx.spans is not None:
            values = ctx.spans.filter_values(values, s)
        rest = {k: v for k, v in s.items() if k not in ("enum", "const")}  # (jsonschema's enum check is linear)
        quick = _type_test(clean(rest))
        if quick is None:
            quick = ctx.validator.evolve(schema=rest).is_valid
        kept: dict[str, Any] = {}  # canonical value -> the value
        size = 0
        for v in values:
            key = json.dumps(v) if type(v) is str else canonical_json(v)  # (a string's canonical text is its JSON)
            if key in kept:
                continue
            try:
                ok = quick(v)
            except SchemaNotSupported as e:
                raise SchemaNotSupported(e.keyword, path or "/", "inside a schema restricted by enum/const") from e
            except ConstraintError:
                raise
            except Exception as e:  # unresolvable references and the like
                raise SchemaNotSupported("$ref", path, f"cannot check the enum/const values: {e}") from e
            if ok:
                size += len(key) + 1  # (about the regex this spells out: a budget on enumerations)
                if size > MAX_REGEX_SIZE:
                    raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE, path or "/")
                kept[key] = v
        if not kept:
            raise UnsatisfiableConstraint("no enum/const value satisfies the rest of the schema", path or "/")
        spelled = [spelling(v, k).encode("utf-8") for k, v in kept.items() if type(v) is str]
        terms = ctx.pool.literals(spelled) if spelled else []
        terms += [self.value(v, path) for v in kept.values() if type(v) is not str]
        got = factored(ctx.pool, terms) if len(terms) > FACTOR_FROM else ctx.unite(terms)
        assert got != NOTHING
        return got


def spelling(text: str, canonical: str) -> str:
    """The JSON string of ``text`` as an enumeration spells it (:meth:`.Terms.string_of`'s), given its
    canonical text (``json.dumps``): the same text where ``text`` is ASCII without DEL (only
    ``json.dumps`` escapes those, and every other character past ``~``).

    >>> spelling("a\\x7f", json.dumps("a\\x7f")), spelling("é", json.dumps("é")), spelling('"', json.dumps('"'))
    ('"a\\x7f"', '"é"', '"\\\\""')
    """
    return canonical if text.isascii() and "\x7f" not in text else f'"{encoded(text)}"'


#: The types a value's Python type decides alone (``integer`` and ``number`` read 1.0 by dialect).
_TYPES = {"string": str, "boolean": bool, "null": type(None)}


def _type_test(rest: dict[str, Any]) -> Optional[Callable[[Any], bool]]:
    """Whether a value is valid under ``rest`` (a cleaned schema), where its keywords are at most a
    ``type`` of :data:`_TYPES`; ``None`` where ``jsonschema`` must tell.

    >>> _type_test({})("x"), _type_test({"type": ["string", "null"]})(None), _type_test({"type": "string"})(1)
    (True, True, False)
    >>> _type_test({"type": "integer"}) is None, _type_test({"type": "string", "minLength": 2}) is None
    (True, True)
    """
    if not rest:
        return lambda v: True
    if set(rest) != {"type"}:
        return None
    names = rest["type"] if isinstance(rest["type"], list) else [rest["type"]]
    if not names or not all(isinstance(n, str) and n in _TYPES for n in names):
        return None
    kinds = tuple(_TYPES[n] for n in names)
    return lambda v: isinstance(v, kinds)  # (as jsonschema's type checker tests these three)
