"""Values: any JSON value (``{}``, ``true``), and the finite case (``enum`` / ``const``), where each
value is checked against the whole schema by ``jsonschema`` and then spelled out.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any, Optional

from ..automata.markers import call_marker
from ..errors import CompileBudgetExceeded, ConstraintError, SchemaError, SchemaNotSupported, UnsatisfiableConstraint
from .context import MAX_REGEX_SIZE, Context
from .ops import canonical_json, encoded, equal
from .regex_text import NUMBER, STRING, alt, literal

__all__ = ["Values"]


class Values:
    """Any value and ``enum`` / ``const`` values (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._any: Optional[str] = None  # the call of the automaton of any value (a network)
        self._any_flat: Optional[str] = None  # any value nested max_recursion_depth levels

    def any_value(self) -> str:
        """Any JSON value: in a network, one automaton that calls itself for nested values;
        otherwise nested at most ``max_recursion_depth`` levels."""
        ctx = self.ctx
        if ctx.calls.on and ctx.spans is None:
            if self._any is None:
                k = ctx.calls.any_callee = ctx.calls.new_callee()
                self._any = call_marker(k)
                ctx.calls.callees[k - 1] = self.any_regex(self._any)
            return self._any
        if self._any_flat is None:
            w = ctx.ws
            string = STRING if ctx.spans is None or ctx.spans.marked else ctx.compiler.string({}, "", ())
            scalars = f"null|true|false|{NUMBER}|{string}"
            value = f"(?:{scalars})"
            for _ in range(ctx.options.max_recursion_depth):
                array = rf"\[{w}(?:{value}(?:{w},{w}{value})*{w})?\]"
                member = f"{STRING}{w}:{w}{value}"
                obj = rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?\}}"
                value = f"(?:{scalars}|{array}|{obj})"
            self._any_flat = value
        return self._any_flat

    def any_regex(self, value: str) -> str:
        """Any JSON value, nested values being ``value``."""
        w = self.ctx.ws
        array = rf"\[{w}(?:{value}(?:{w},{w}{value})*{w})?\]"
        member = f"{STRING}{w}:{w}{value}"
        obj = rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?\}}"
        return f"(?:null|true|false|{NUMBER}|{STRING}|{array}|{obj})"

    def value(self, v: Any, path: str) -> str:
        """The spellings of the JSON value ``v`` (an integer also as ``1.0`` while that float is
        exact; keys in the value's order, or in any order for small objects with key order "any")."""
        w = self.ctx.ws
        if v is None or isinstance(v, bool):
            return json.dumps(v)
        if isinstance(v, int):
            if abs(v) <= 2**53:  # 1.0 equals 1, and parses back to exactly that value
                return literal(str(v)) + r"(?:\.0+)?"
            return literal(str(v))
        if isinstance(v, float):
            if not math.isfinite(v):
                raise SchemaNotSupported("enum", path, f"{v!r} is not a JSON number")
            forms = [literal(json.dumps(v))]
            if v.is_integer() and abs(v) < 2**53:
                forms.append(literal(str(int(v))))
            return alt(forms)
        if isinstance(v, str):
            return '"' + literal(encoded(v)) + '"'
        if isinstance(v, list):
            return rf"\[{w}" + f"{w},{w}".join(self.value(x, path) for x in v) + (rf"{w}\]" if v else r"\]")
        if isinstance(v, dict):
            members = [f'"{literal(encoded(k))}"{w}:{w}{self.value(x, path)}' for k, x in v.items()]
            if not v:
                return r"\{" + w + r"\}"
            orders = [members]
            if self.ctx.key_order == "any" and 1 < len(members) <= 4:
                orders = [list(p) for p in itertools.permutations(members)]
            return alt(rf"\{{{w}" + f"{w},{w}".join(order) + rf"{w}\}}" for order in orders)
        raise SchemaError(f"{v!r} is not a JSON value", path)

    def finite(self, s: dict, path: str) -> str:
        """``enum`` / ``const``: the values valid under the rest of ``s`` (checked by ``jsonschema``,
        ``pattern`` and ``format`` read as our regexes read them), each spelled out."""
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
        validator = ctx.validator.evolve(schema=rest)
        kept: dict[str, str] = {}  # canonical value -> its regex
        size = 0
        for v in values:
            key = canonical_json(v)
            if key in kept:
                continue
            try:
                ok = validator.is_valid(v)
            except SchemaNotSupported as e:
                raise SchemaNotSupported(e.keyword, path or "/", "inside a schema restricted by enum/const") from e
            except ConstraintError:
                raise
            except Exception as e:  # unresolvable references and the like
                raise SchemaNotSupported("$ref", path, f"cannot check the enum/const values: {e}") from e
            if ok:
                kept[key] = self.value(v, path)
                size += len(kept[key]) + 1
                if size > MAX_REGEX_SIZE:
                    raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE, path or "/")
        if not kept:
            raise UnsatisfiableConstraint("no enum/const value satisfies the rest of the schema", path or "/")
        return ctx.budget(alt(kept.values()), path)
