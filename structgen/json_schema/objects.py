"""Objects: ``properties``, ``required``, ``additionalProperties``, ``patternProperties``,
``propertyNames``, ``minProperties`` / ``maxProperties`` (a part of the schema compiler).

Two builders:

* the plain one (:meth:`Objects.members`): declared properties in schema order, optional
  ones skippable, no other key — the common case (pydantic models);
* the general one (:meth:`Objects.object_automaton`), used when keys may come in any
  order (``key_order="any"``), when keys beyond the declared ones are emitted
  (``extra_properties=True``, or an object without declared properties), or when
  ``patternProperties`` / ``propertyNames`` / ``minProperties`` / ``maxProperties`` apply. Its
  states are (declared keys written so far, extra members so far); each state's continuation is
  one term, shared by every state that reaches it.

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
from collections.abc import Hashable
from typing import Any, Callable, Optional

from ..automata.expr import EPSILON, NOTHING
from ..automata.markers import CLOSE_GUARD, GUARD_FIRST, MAX_GUARDED_KEYS
from ..errors import SchemaNotSupported, UnsatisfiableConstraint
from .context import Context, Term
from .ecma_pattern import compiled_pattern, pattern_regex
from .ops import Refs, TooDeep, conj, encoded, pointer_token

__all__ = ["MAX_ANY_ORDER_KEYS", "MAX_PATTERN_PROPERTIES", "Objects"]

#: Declared keys beyond this number are written in schema order even with ``key_order="any"``
#: (the automaton tracks the set of keys written: 2**n states).
MAX_ANY_ORDER_KEYS = 5
#: Extra keys are split by which patterns they match: 2**n classes.
MAX_PATTERN_PROPERTIES = 4
#: Optional entries in a row whose rest is one alternation (see :meth:`Objects.members`).
WIDE_RUN = 16
#: Code points of the keys next to ``patternProperties`` (no control character, no line or
#: paragraph separator), and next to patterns with classes (printable ASCII), besides ``\"``
#: and ``\\``: ``"`` and ``\`` themselves are left out.
_NO_CONTROL_KEY_CHARS = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x2027), (0x202A, 0x10FFFF))
_ASCII_KEY_CHARS = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E))


def _matches(pattern: str, name: str) -> bool:
    """Whether ``name`` matches ``pattern`` under Python's reading or ours (either one: then the
    pattern's schema applies to the declared property too, as it may for jsonschema)."""
    try:
        python = re.search(pattern, name) is not None
    except re.error:
        python = False
    return python or compiled_pattern(pattern).fullmatch(encoded(name)) is not None


#: The declared members of an object written so far (``Objects.object_automaton``).
_Written = tuple[Any, ...]


class Objects:
    """Object schemas (a part of the schema compiler)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def key(self, name: str) -> Term:
        """The declared key ``name``, quoted (as ``json.dumps`` writes it)."""
        return self.ctx.t.string_of(name)

    def object(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        ctx = self.ctx
        t = ctx.t
        props: dict[str, Any] = s.get("properties", {})
        additional = s.get("additionalProperties", True)
        patterns: dict[str, Any] = s.get("patternProperties", {})
        names_schema = s.get("propertyNames", True)
        required = list(dict.fromkeys(s.get("required", [])))
        names = list(props) + [r for r in required if r not in props]
        min_p, max_p = int(s.get("minProperties", 0)), s.get("maxProperties")
        max_p = None if max_p is None else int(max_p)
        if max_p is not None and max_p < len(required):
            raise UnsatisfiableConstraint(f"maxProperties {max_p} < {len(required)} required properties", path or "/")
        if max_p is not None and max_p < min_p:
            raise UnsatisfiableConstraint(f"maxProperties {max_p} < minProperties {min_p}", path or "/")
        if max_p == 0:
            return t.sequence("{", NOTHING, "}")
        if not names and not patterns and "propertyNames" not in s and min_p == 0 and max_p is None:
            try:  # free keys (no declared name to keep apart)
                value = ctx.compiler.compile(additional, f"{path}/additionalProperties", refs)
            except (UnsatisfiableConstraint, TooDeep):
                return t.sequence("{", NOTHING, "}")
            return t.sequence("{", t.member(t.string, value), "}")
        name_ok = None if names_schema is True else ctx.validator.evolve(schema=names_schema)  # (a validator is made on first use)
        entries: list[tuple[Term, Term, bool]] = []  # (key, value, required) of each entry
        for name in names:
            is_required = name in required
            value_schema = props.get(name, True if any(_matches(p, name) for p in patterns) else additional)
            for p, sub in patterns.items():
                if _matches(p, name):
                    value_schema = conj(value_schema, sub)
            where = f"{path}/properties/{pointer_token(name)}" if name in props else f"{path}/additionalProperties"
            try:
                if name_ok is not None and not name_ok.is_valid(name):
                    raise UnsatisfiableConstraint(f"property name {name!r} is not valid under propertyNames", where)
                value = ctx.compiler.compile(value_schema, where, refs)
            except (UnsatisfiableConstraint, TooDeep):
                if is_required:
                    raise
                continue
            entries.append((self.key(name), value, is_required))
        wants_extra = (ctx.extra_properties or not names) and (additional is not False or patterns)
        plain = not (wants_extra or patterns or "propertyNames" in s or min_p > len(required) or max_p is not None
                     or (ctx.key_order == "any" and len(entries) > 1))
        if plain:
            return self.members(entries)
        extra = self.extra_member(s, props, names, path, refs) if wants_extra else NOTHING

        def finite() -> Term:
            return self.object_automaton(entries, extra, min_p, max_p, path)

        if (
            ctx.calls.on and ctx.key_order == "any" and max_p is None and min_p <= len(required)
            and len(entries) <= MAX_GUARDED_KEYS and (len(entries) > 1 or extra != NOTHING)
        ):
            return self.guarded_object(entries, extra, finite)
        return finite()

    def guarded_object(self, entries: list[tuple[Term, Term, bool]], extra: Term, finite: Callable[[], Term]) -> Term:
        """An object whose keys come in any order, any number of them: one automaton of its own
        (its frame remembers the keys written, see :mod:`structgen.guides.pushdown`), each declared key
        behind the guard "not written yet", ``}`` behind "every required key written". For the
        automata algebra, which needs a finite automaton, ``finite()`` builds today's version."""
        ctx = self.ctx
        t, pool = ctx.t, ctx.pool
        members = [t.cat(key, pool.symbol(GUARD_FIRST + i), t.colon, value) for i, (key, value, _) in enumerate(entries)]
        member = t.alt([*members, extra])
        close = t.cat(pool.symbol(GUARD_FIRST + CLOSE_GUARD), t.lit("}"))
        body = t.cat(member, t.star(t.cat(t.sep, member)), t.ws)
        term = t.cat(t.lit("{"), t.ws, t.opt(body), close)
        required = sum(1 << i for i, (_, _, r) in enumerate(entries) if r)
        return ctx.calls.call(term, required=required, flat=finite)

    def extra_member(self, s: dict[str, Any], props: dict[str, Any], names: list[str], path: str, refs: Refs) -> Term:
        """``key: value`` for keys that are not declared (``NOTHING``: no such member possible)."""
        ctx = self.ctx
        t = ctx.t
        patterns: dict[str, Any] = s.get("patternProperties", {})
        additional = s.get("additionalProperties", True)
        if len(patterns) > MAX_PATTERN_PROPERTIES:
            raise SchemaNotSupported("patternProperties", f"{path}/patternProperties", f"more than {MAX_PATTERN_PROPERTIES} patterns with free keys")
        # where Python's and ECMA's regexes may differ (classes, case folding, "$" before a
        # newline), extra keys are printable ASCII
        risky = any(re.search(r"\\[dDwWsSbBpP]|\(\?[a-z]*i", p) for p in patterns)
        if patterns:
            escapes = t.cat(t.lit("\\"), t.among('"\\'))
            chars = t.code_points(_ASCII_KEY_CHARS if risky else _NO_CONTROL_KEY_CHARS)
            keys = t.quoted(t.star(t.alt([chars, escapes])))
        else:
            keys = t.canon_string
        declared = [self.key(n) for n in dict.fromkeys([*props, *names])]
        if declared:
            keys = ctx.minus(keys, t.alt(declared), path)
        if "propertyNames" in s:
            try:
                allowed = ctx.compiler.compile(s["propertyNames"], f"{path}/propertyNames", refs)
            except (UnsatisfiableConstraint, TooDeep):
                return NOTHING
            keys = ctx.inter(keys, allowed, path)
        if keys == NOTHING:
            return NOTHING
        langs = {}
        for p in patterns:
            regex = pattern_regex(p, path=f"{path}/patternProperties")
            langs[p] = NOTHING if regex is None else ctx.quoted(regex, path)
        members = []
        for n in range(len(patterns) + 1):
            for chosen in itertools.combinations(patterns, n):
                k = keys
                for p in patterns:
                    k = ctx.inter(k, langs[p], path) if p in chosen else ctx.minus(k, langs[p], path)
                if k == NOTHING:
                    continue
                value_schema: Any = additional if not chosen else {"allOf": [patterns[p] for p in chosen]}
                try:
                    value = ctx.compiler.compile(value_schema, f"{path}/additionalProperties" if not chosen else f"{path}/patternProperties", refs)
                except (UnsatisfiableConstraint, TooDeep):
                    continue
                members.append(t.member(k, value))
        return ctx.unite(members)

    def object_automaton(self, entries: list[tuple[Term, Term, bool]], extra: Term, min_p: int, max_p: Optional[int], path: str) -> Term:
        """Objects over declared ``entries`` (``(key, value, required)``, each at most once) and
        ``extra`` members."""
        t = self.ctx.t
        sep = t.sep
        n = len(entries)
        if not n and extra != NOTHING and max_p is not None and max_p >= 1 and min_p <= 1:
            # Extra members only, at most max_p of them: one repetition with a counter, where the
            # count kept in the states below would nest max_p levels (300 in CloudFormation's
            # AWS::SageMaker::TrialComponent, deeper than Python's stack for a walk of the term).
            # (One extra member counts towards minProperties, as below: two may repeat a key.)
            some = t.cat(extra, t.rep(t.cat(sep, extra), 0, max_p - 1), t.ws, t.lit("}"))
            return t.cat(t.lit("{"), t.ws, t.alt([some, t.lit("}")] if min_p == 0 else [some]))
        any_order = self.ctx.key_order == "any" and n <= MAX_ANY_ORDER_KEYS
        required = frozenset(i for i, (_, _, r) in enumerate(entries) if r)
        last_required = max(required, default=-1)
        counted = bool(min_p or max_p is not None)
        cap = max_p if max_p is not None else (1 if min_p > 0 else 0)  # extras counted up to this
        memo: dict[tuple[Hashable, ...], Term] = {}
        # The declared members written so far: in any order, the set of them; in the schema's
        # order, the last one and how many (no required entry is ever skipped, so they are all
        # written once the last required one is: see ``allowed``).
        start: _Written = (frozenset(),) if any_order else (-1, 0)

        def allowed(state: _Written) -> list[int]:
            if any_order:
                return [i for i in range(n) if i not in state[0]]
            out = []
            for j in range(state[0] + 1, n):
                out.append(j)
                if j in required:
                    break
            return out

        def after(state: _Written, i: int) -> _Written:
            return (state[0] | {i},) if any_order else (i, state[1] + 1)

        def written(state: _Written) -> int:
            return len(state[0]) if any_order else state[1]

        def final(state: _Written, extras: int) -> bool:
            if not (required <= state[0] if any_order else state[0] >= last_required):
                return False
            count = written(state)
            return count + min(extras, 1) >= min_p and (max_p is None or count + extras <= max_p)

        def key(state: _Written, extras: int) -> tuple[Hashable, ...]:
            if any_order:
                return (state[0], extras)
            return (state[0], state[1] if counted else 0, extras)

        def rest(state: _Written, extras: int) -> Term:
            """The members after these (each preceded by a separator) and the closing brace."""
            k = key(state, extras)
            if k in memo:
                return memo[k]
            memo[k] = NOTHING  # (no cycles: extras grow or stop)
            room = max_p is None or written(state) + extras + 1 <= max_p
            alts = []
            ahead = allowed(state) if room else []
            shared = not (any_order or counted) and len(ahead) > 1
            if shared:
                # (in the schema's order, uncounted: past an optional entry the choices are that
                # entry's and those of the state after it, whose closing brace and extras are
                # these: one alternation shared down a run, not every later entry listed per state)
                nxt = after(state, ahead[0])
                rest(nxt, extras)
                alts = [member(ahead[0], state, extras), memo[("choices",) + key(nxt, extras)]]
            else:
                for i in ahead:
                    alts.append(member(i, state, extras))
            loop = EPSILON
            if extra != NOTHING and room:
                if max_p is None and extras >= cap:
                    loop = t.star(t.cat(sep, extra))
                else:
                    alts.append(t.cat(sep, t.cat(extra, rest(state, extras + 1))))
            if final(state, extras) and not shared:  # (shared: the next state's choices hold it)
                alts.append(t.cat(t.ws, t.lit("}")))
            choices = memo[("choices",) + k] = t.alt(alts)
            got = memo[k] = t.cat(loop, choices)
            return got

        def member(i: int, before: _Written, extras: int) -> Term:
            """Entry ``i`` after a separator, then the rest: one term for every set of members before
            it that leaves the same rest (in schema order, every earlier position: a term per
            entry rather than one per pair of positions)."""
            state = after(before, i)
            k = ("member", i, *key(state, extras))
            got = memo.get(k)
            if got is None:
                name, value, _ = entries[i]  # (the member written then the rest: the term the first entry is too)
                got = memo[k] = t.cat(sep, t.cat(name, t.colon, value, rest(state, extras)))
            return got

        firsts = []
        try:
            if max_p is None or max_p >= 1:
                for i in allowed(start):
                    name, value, _ = entries[i]
                    firsts.append(t.cat(name, t.colon, value, rest(after(start, i), 0)))
                if extra != NOTHING:
                    firsts.append(t.cat(extra, rest(start, min(1, cap) if max_p is None else 1)))
        finally:
            del rest, member  # (each calls the other: a cycle left for the collector)
        if final(start, 0):
            firsts.append(t.lit("}"))
        got = t.alt(firsts)
        if got == NOTHING:
            raise UnsatisfiableConstraint("no object satisfies properties, required and the property counts together", path or "/")
        return t.cat(t.lit("{"), t.ws, got)

    def members(self, entries: list[tuple[Term, Term, bool]]) -> Term:
        """``{ ... }`` with the entries (``(key, value, required)``) in order, optional ones
        skippable, commas only between: "the first entry written" picks one of the entries up to
        the first required one, each followed by the chain of the entries after it. Entry ``i``
        written, then the rest, is one term, made once: the first entry is it, a later entry is
        a separator then it (so neither a compile nor a derivative chains a key's bytes again
        before another tail). In a long run of optional entries, one entry after every
        :data:`WIDE_RUN` is an optional part before the rest instead (an alternation holds every
        later entry of its run: quadratic in the run's length)."""
        t = self.ctx.t
        sep = t.sep
        rest = [EPSILON] * (len(entries) + 1)  # rest[i]: entries i.. each preceded by a separator
        written: list[Optional[Term]] = [None] * len(entries)  # written[i]: entry i, then rest[i + 1]
        run = 0  # (the optional entries in the alternation rest[i + 1])
        for i in range(len(entries) - 1, -1, -1):
            key, value, is_required = entries[i]
            if is_required or run < WIDE_RUN:
                chain = written[i] = t.cat(key, t.colon, value, rest[i + 1])  # (the key's chain made once)
                led = t.cat(sep, chain)
                rest[i] = led if is_required else t.alt((led, rest[i + 1]))
                run = 0 if is_required else run + 1
            else:
                rest[i] = t.cat(t.opt(t.cat(sep, key, t.colon, value)), rest[i + 1])
                run = 0
        firsts = []
        for i, (key, value, is_required) in enumerate(entries):
            first = written[i]
            firsts.append(first if first is not None else t.cat(key, t.colon, value, rest[i + 1]))
            if is_required:
                break
        body = t.alt(firsts)
        open_, close = t.lit("{"), t.lit("}")
        if any(is_required for _, _, is_required in entries):
            return t.cat(open_, t.ws, body, t.ws, close)
        return t.cat(open_, t.ws, t.opt(t.cat(body, t.ws)), close)
