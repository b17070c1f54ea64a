"""Objects: ``properties``, ``required``, ``additionalProperties``, ``patternProperties``,
``propertyNames``, ``minProperties`` / ``maxProperties`` (a part of the schema compiler).

Two builders:

* the plain one (:meth:`Objects.members`): declared properties in schema order, optional
  ones skippable, no other key — one regex, the common case (pydantic models);
* the automaton one (:meth:`Objects.object_automaton`), used when keys may come in any
  order (``key_order="any"``), when keys beyond the declared ones are emitted
  (``extra_properties=True``, or an object without declared properties), or when
  ``patternProperties`` / ``propertyNames`` / ``minProperties`` / ``maxProperties`` apply. Its
  states are (declared keys written so far, extra members so far); each state's continuation is
  compiled to a DFA once and spliced into its parents by a slot marker.

No key is ever written twice: a declared key at most once, and an extra key never spells a
declared name (extra keys are written canonically, as ``json.dumps`` escapes, so that textual
inequality is key inequality). Extra keys may repeat among themselves (a regular language cannot
forbid it); ``json.loads`` keeps the last, whose value is valid too, and for counting an object's
size extras count as at most one toward ``minProperties``. With ``patternProperties``, extra keys
hold no control characters, and next to patterns with classes they are printable ASCII (where
ECMA and Python regexes agree). Key order "any" is used while the object has at most
:data:`MAX_ANY_ORDER_KEYS` declared keys; beyond that, schema order. In a network, an object in
any key order is rather an automaton of its own whose frame remembers the keys written
(:meth:`Objects.guarded_object`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Callable, Optional

from ..automata.dfa import ByteDFA, canonical_dfa, minimal_dfa
from ..automata.markers import MAX_GUARDED_KEYS, close_guard, key_guard
from ..automata.regex import slotted_regex_to_dfa
from ..errors import CompileBudgetExceeded, SchemaNotSupported, UnsatisfiableConstraint
from .context import MAX_REGEX_SIZE, Context
from .ecma_pattern import compiled_pattern, pattern_regex
from .ops import TooDeep, conj, encoded, pointer
from .regex_text import CANON_STRING, STRING, alt, literal

__all__ = ["MAX_ANY_ORDER_KEYS", "MAX_PATTERN_PROPERTIES", "Objects"]

#: Declared keys beyond this number are written in schema order even with ``key_order="any"``
#: (the automaton tracks the set of keys written: 2**n states).
MAX_ANY_ORDER_KEYS = 5
#: Extra keys are split by which patterns they match: 2**n classes.
MAX_PATTERN_PROPERTIES = 4
#: Objects with more declared entries than this are built linearly (see ``members``).
_LINEAR_MEMBERS = 4
_ASCII_KEY = r'"(?:[ !#-\[\]-~]|\\["\\])*"'
_NO_CONTROL_KEY = r'"(?:[^"\\\x00-\x1f' + "\u2028\u2029" + r']|\\["\\])*"'


def _matches(pattern: str, name: str) -> bool:
    """Whether ``name`` matches ``pattern`` under Python's reading or ours (either one: then the
    pattern's schema applies to the declared property too, as it may for jsonschema)."""
    try:
        python = re.search(pattern, name) is not None
    except re.error:
        python = False
    return python or compiled_pattern(pattern).fullmatch(encoded(name)) is not None


class Objects:
    """Object schemas (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def object(self, s: dict, path: str, refs: tuple) -> str:
        props: dict = s.get("properties", {})
        additional = s.get("additionalProperties", True)
        patterns: dict = s.get("patternProperties", {})
        names_schema = s.get("propertyNames", True)
        required = list(dict.fromkeys(s.get("required", [])))
        names = list(props) + [r for r in required if r not in props]
        min_p, max_p = int(s.get("minProperties", 0)), s.get("maxProperties")
        max_p = None if max_p is None else int(max_p)
        w = self.ctx.ws
        if max_p is not None and max_p < len(required):
            raise UnsatisfiableConstraint(f"maxProperties {max_p} < {len(required)} required properties", path or "/")
        if max_p == 0:
            return rf"\{{{w}\}}"
        if not names and not patterns and "propertyNames" not in s and min_p == 0 and max_p is None:
            try:  # free keys (one regex: no declared name to keep apart)
                value = self.ctx.compiler.compile(additional, f"{path}/additionalProperties", refs)
            except (UnsatisfiableConstraint, TooDeep):
                return rf"\{{{w}\}}"
            member = f"{STRING}{w}:{w}{value}"
            return self.ctx.budget(rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?\}}", path)
        name_ok = self.ctx.validator.evolve(schema=names_schema)
        entries: list[tuple[str, bool]] = []
        split: list[tuple[str, str, bool]] = []  # (key, value, required) of each entry
        for name in names:
            is_required = name in required
            value_schema = props.get(name, True if any(_matches(p, name) for p in patterns) else additional)
            for p, sub in patterns.items():
                if _matches(p, name):
                    value_schema = conj(value_schema, sub)
            where = f"{path}/properties/{pointer([name])[1:]}" if name in props else f"{path}/additionalProperties"
            try:
                if names_schema is not True and not name_ok.is_valid(name):
                    raise UnsatisfiableConstraint(f"property name {name!r} is not valid under propertyNames", where)
                value = self.ctx.compiler.compile(value_schema, where, refs)
            except (UnsatisfiableConstraint, TooDeep):
                if is_required:
                    raise
                continue
            entries.append((f'"{literal(encoded(name))}"{w}:{w}{value}', is_required))
            split.append((f'"{literal(encoded(name))}"', value, is_required))
        wants_extra = (self.ctx.extra_properties or not names) and (additional is not False or patterns)
        plain = not (wants_extra or patterns or "propertyNames" in s or min_p > len(required) or max_p is not None
                     or (self.ctx.key_order == "any" and len(entries) > 1))
        if plain:
            return self.ctx.budget(self.members(entries), path)
        extra = self.extra_member(s, props, names, path, refs) if wants_extra else None

        def finite() -> str:
            # each member once as an automaton: the states below splice them many times
            members = [(self.ctx.embed(self.ctx.to_dfa(e, path)), r) for e, r in entries]
            more = None if extra is None else self.ctx.embed(self.ctx.to_dfa(extra, path))
            return self.ctx.budget(self.object_automaton(members, more, min_p, max_p, path), path)

        if (
            self.ctx.calls.on and self.ctx.key_order == "any" and max_p is None and min_p <= len(required)
            and len(split) <= MAX_GUARDED_KEYS and (len(split) > 1 or extra is not None)
        ):
            return self.guarded_object(split, extra, finite)
        return finite()

    def guarded_object(self, split: list[tuple[str, str, bool]], extra: Optional[str], finite: Callable[[], str]) -> str:
        """An object whose keys come in any order, any number of them: one automaton of its own
        (its frame remembers the keys written, see :mod:`structgen.guides.pushdown`), each declared key
        behind the guard "not written yet", ``}`` behind "every required key written". For the
        automata algebra, which needs a finite automaton, ``finite()`` builds today's version."""
        w = self.ctx.ws
        members = [f"{key}{key_guard(i)}{w}:{w}{value}" for i, (key, value, _) in enumerate(split)]
        if extra is not None:
            members.append(extra)
        member = members[0] if len(members) == 1 else "(?:" + "|".join(members) + ")"
        regex = rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?{close_guard()}\}}"
        required = sum(1 << i for i, (_, _, r) in enumerate(split) if r)
        return self.ctx.calls.call_regex(regex, required=required, flat=finite)

    def extra_member(self, s: dict, props: dict, names: list, path: str, refs: tuple) -> Optional[str]:
        """``key: value`` for keys that are not declared (``None``: no such member possible)."""
        w = self.ctx.ws
        patterns: dict = s.get("patternProperties", {})
        additional = s.get("additionalProperties", True)
        if len(patterns) > MAX_PATTERN_PROPERTIES:
            raise SchemaNotSupported("patternProperties", f"{path}/patternProperties", f"more than {MAX_PATTERN_PROPERTIES} patterns with free keys")
        # where Python's and ECMA's regexes may differ (classes, case folding, "$" before a
        # newline), extra keys are printable ASCII
        risky = any(re.search(r"\\[dDwWsSbBpP]|\(\?[a-z]*i", p) for p in patterns)
        keys: Optional[str] = _ASCII_KEY if risky else _NO_CONTROL_KEY if patterns else CANON_STRING
        declared = [f'"{literal(encoded(n))}"' for n in dict.fromkeys([*props, *names])]
        if declared:
            keys = self.ctx.minus(keys, "(?:" + "|".join(declared) + ")", path)
        if "propertyNames" in s:
            try:
                allowed = self.ctx.compiler.compile(s["propertyNames"], f"{path}/propertyNames", refs)
            except (UnsatisfiableConstraint, TooDeep):
                return None
            keys = self.ctx.inter(keys, allowed, path)
        if keys is None:
            return None
        langs = {}
        for p in patterns:
            body = pattern_regex(p, path=f"{path}/patternProperties")
            langs[p] = None if body is None else self.ctx.quoted(body, path)
        members = []
        for n in range(len(patterns) + 1):
            for chosen in itertools.combinations(patterns, n):
                k: Optional[str] = keys
                for p in patterns:
                    k = self.ctx.inter(k, langs[p], path) if p in chosen else self.ctx.minus(k, langs[p], path)
                if k is None:
                    continue
                value_schema: Any = additional if not chosen else {"allOf": [patterns[p] for p in chosen]}
                try:
                    value = self.ctx.compiler.compile(value_schema, f"{path}/additionalProperties" if not chosen else f"{path}/patternProperties", refs)
                except (UnsatisfiableConstraint, TooDeep):
                    continue
                members.append(f"{k}{w}:{w}{value}")
        return self.ctx.unite(members, path)

    def object_automaton(self, entries: list[tuple[str, bool]], extra: Optional[str], min_p: int, max_p: Optional[int], path: str) -> str:
        """Objects over declared ``entries`` (each at most once) and ``extra`` members."""
        w = self.ctx.ws
        sep = f"{w},{w}"
        n = len(entries)
        any_order = self.ctx.key_order == "any" and n <= MAX_ANY_ORDER_KEYS
        required = frozenset(i for i, (_, r) in enumerate(entries) if r)
        cap = max_p if max_p is not None else (1 if min_p > 0 else 0)  # extras counted up to this
        memo: dict[tuple, Optional[str]] = {}

        def allowed(seen: frozenset) -> list[int]:
            if any_order:
                return [i for i in range(n) if i not in seen]
            last = max(seen) if seen else -1
            out = []
            for j in range(last + 1, n):
                out.append(j)
                if j in required:
                    break
            return out

        def final(seen: frozenset, extras: int) -> bool:
            if not required <= seen:
                return False
            count = len(seen) + extras
            return len(seen) + min(extras, 1) >= min_p and (max_p is None or count <= max_p)

        def key(seen: frozenset, extras: int) -> tuple:
            if any_order:
                return (seen, extras)
            last = max(seen) if seen else -1
            return (last, len(seen) if (min_p or max_p is not None) else 0, extras, required <= seen)

        def rest(seen: frozenset, extras: int) -> Optional[str]:
            """The members after these (each preceded by a separator) and the closing brace."""
            k = key(seen, extras)
            if k in memo:
                return memo[k]
            memo[k] = None  # (no cycles: extras grow or stop)
            count = len(seen) + extras
            room = max_p is None or count + 1 <= max_p
            alts = []
            if room:
                for i in allowed(seen):
                    after = rest(seen | {i}, extras)
                    if after is not None:
                        alts.append(sep + entries[i][0] + after)
            loop = ""
            if extra is not None and room:
                if max_p is None and extras >= cap:
                    loop = f"(?:{sep}{extra})*"
                else:
                    after = rest(seen, extras + 1)
                    if after is not None:
                        alts.append(sep + extra + after)
            if final(seen, extras):
                alts.append(rf"{w}\}}")
            if not alts:
                memo[k] = None
                return None
            regex = loop + ("(?:" + "|".join(alts) + ")" if len(alts) > 1 else alts[0])
            memo[k] = self.ctx.embed(self.ctx.to_dfa(regex, path))
            return memo[k]

        firsts = []
        if max_p is None or max_p >= 1:
            for i in allowed(frozenset()):
                after = rest(frozenset({i}), 0)
                if after is not None:
                    firsts.append(entries[i][0] + after)
            if extra is not None:
                after = rest(frozenset(), min(1, cap) if max_p is None else 1)
                if after is not None:
                    firsts.append(extra + after)
        if final(frozenset(), 0):
            firsts.append(r"\}")
        if not firsts:
            raise UnsatisfiableConstraint("no object satisfies properties, required and the property counts together", path or "/")
        return rf"\{{{w}" + ("(?:" + "|".join(firsts) + ")" if len(firsts) > 1 else firsts[0])

    def members(self, entries: list[tuple[str, bool]]) -> str:
        """``{ ... }`` with the entries in order, optional ones skippable, commas only between.

        Written as a regex, "the first entry written" picks one of n continuations: n**2 in
        size. Past a few entries it is built linearly instead, as the automaton of
        ``(,w E0 w)?(,w E1 w)?...}`` (each entry behind a comma, required ones not optional)
        started after its first comma: the left quotient by ``,`` drops the first entry's comma.
        """
        w = self.ctx.ws
        if len(entries) > _LINEAR_MEMBERS and not self.ctx.regex_only:
            return self.linear_members(entries)
        sep = f"{w},{w}"
        rest = [""] * (len(entries) + 1)  # rest[i]: entries i.. each preceded by a separator
        for i in range(len(entries) - 1, -1, -1):
            entry, is_required = entries[i]
            piece = sep + entry
            rest[i] = (piece if is_required else f"(?:{piece})?") + rest[i + 1]
            if len(rest[i]) > MAX_REGEX_SIZE:
                raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE)
        firsts = []
        for i, (entry, is_required) in enumerate(entries):
            firsts.append(entry + rest[i + 1])
            if sum(map(len, firsts)) > MAX_REGEX_SIZE:
                raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE)
            if is_required:
                break
        body = alt(firsts)
        if any(is_required for _, is_required in entries):
            return rf"\{{{w}{body}{w}\}}"
        return rf"\{{{w}(?:{body}{w})?\}}"

    def linear_members(self, entries: list[tuple[str, bool]]) -> str:
        w = self.ctx.ws

        def build(convert: Callable[[str], str]) -> ByteDFA:
            text = "".join(
                f",{w}{convert(e)}{w}" if r else f"(?:,{w}{convert(e)}{w})?" for e, r in entries
            ) + r"\}"
            whole = slotted_regex_to_dfa(text, self.ctx.slots, max_states=self.ctx.options.max_states)
            after_comma = whole.step(0, b",")
            assert after_comma >= 0  # (every entry is behind a comma)
            q = canonical_dfa(whole.transitions, whole.finals, after_comma, whole.byte_classes)
            return minimal_dfa(q.transitions, q.finals, q.byte_classes)

        body = self.ctx.embed_calling(build)
        if any(r for _, r in entries):
            return rf"\{{{body}"
        return rf"\{{(?:{w}\}}|{body})"
