"""The call graph of a network (:func:`.api.schema_to_network`): which sub-schemas become automata
of their own that their users call, and the flat twin of a regex with calls (for the automata
algebra, which needs one finite automaton).

Automaton ``k`` of the network (``k >= 1``; 0 is the root) is ``callees[k - 1]``, written into a
caller's regex as ``call_marker(k)``. A ``$ref`` target that recurses is always called; any other
sub-schema whose regex weighs more than :data:`CALL_THRESHOLD` is called too (equal regexes
share one automaton) instead of being copied at every use.

>>> regex_weight("ab"), regex_weight("[a-z]{0,10}"), regex_weight("(?:ab|c)*")
(2, 40, 3)
"""

from __future__ import annotations

from typing import Callable, Optional

from ..automata.dfa import ByteDFA
from ..automata.markers import call_index, call_marker
from .ops import Schema

__all__ = ["CALL_THRESHOLD", "CallGraph", "regex_weight"]

#: In a network, a sub-schema whose regex weighs more than this (:func:`regex_weight`: about the
#: NFA positions it expands to) becomes an automaton of its own that its users call (equal
#: regexes share one), instead of a copy at every use. ``$ref`` targets that recurse are always
#: called. (Read at every use: tests set it to 0 to make every sub-schema an automaton.)
CALL_THRESHOLD = 200


def regex_weight(regex: str, slot_weight: Optional[Callable[[str], int]] = None) -> int:
    """About how many character positions ``regex`` expands to: a class counts 4 (UTF-8 paths),
    ``x{m,n}`` counts ``max(m, n)`` copies of ``x``, an alternation the sum of its options
    (``slot_weight``: the weight of an embedded automaton's marker)."""
    stack: list[list[int]] = [[0, 0]]  # per open group: [total of finished options, current option]
    last = 0  # weight of the last atom (what a quantifier repeats)
    i, n = 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "\\":
            i += 2
            last = 1
            stack[-1][1] += 1
            continue
        if c == "[":
            j = i + 1
            if j < n and regex[j] == "^":
                j += 1
            if j < n and regex[j] == "]":
                j += 1
            while j < n and regex[j] != "]":
                j += 2 if regex[j] == "\\" else 1
            i = j + 1
            last = 4
            stack[-1][1] += 4
            continue
        if c == "(":
            stack.append([0, 0])
            i += 3 if regex.startswith("(?:", i) else 1
            continue
        if c == ")" and len(stack) > 1:
            total, cur = stack.pop()
            last = total + cur
            stack[-1][1] += last
            i += 1
            continue
        if c == "|":
            stack[-1][0] += stack[-1][1]
            stack[-1][1] = 0
            i += 1
            continue
        if c in "*+?":
            i += 1
            continue
        if c == "{":
            j = regex.find("}", i)
            body = regex[i + 1 : j] if j > 0 else ""
            parts = body.split(",")
            if j > 0 and 1 <= len(parts) <= 2 and all(p.isdigit() or p == "" for p in parts) and parts[0]:
                copies = max(int(p) for p in parts if p) if parts[-1] else int(parts[0]) + 1
                stack[-1][1] += last * (max(copies, 1) - 1)
                i = j + 1
                continue
        last = slot_weight(c) if slot_weight is not None and 0xD800 <= ord(c) < 0xDC00 else 1
        stack[-1][1] += last
        i += 1
    while len(stack) > 1:
        total, cur = stack.pop()
        stack[-1][1] += total + cur
    return stack[0][0] + stack[0][1]


#: Compiles a schema at a JSON pointer with the ``$ref`` targets entered so far, never as a call
#: of its own (the schema compiler's ``compile_node``).
CompileNode = Callable[[Schema, str, tuple], str]


class CallGraph:
    """The called automata of one compile.

    ``on``: calls are made (a network without documents); otherwise every method that would call
    inlines instead. ``slots`` is the compile's list of embedded automata (shared, it grows);
    ``inline`` compiles a schema without calling it (used for ``$ref`` targets and, calls off, for
    flat twins); ``any_value`` gives the regex of any JSON value.
    """

    def __init__(self, slots: list[ByteDFA], *, on: bool, inline: CompileNode, any_value: Callable[[], str]) -> None:
        self.on = on
        self.slots = slots
        self.inline = inline
        self.any_value = any_value
        self.callees: list[Optional[str]] = []  # a recursive $ref's regex is None until known
        self.required: dict[int, int] = {}  # automaton -> keys its close guard requires
        self.any_callee = 0  # the automaton of any JSON value (0: none yet)
        self._callee_source: dict[int, tuple[Schema, str]] = {}  # $ref callees: (schema, path)
        self._callee_of_regex: dict[tuple[str, int], int] = {}
        self._flat_builders: dict[int, Callable[[], str]] = {}
        self._ref_out: dict[str, str] = {}  # $ref target path -> its regex or call marker
        self._ref_active: dict[str, Optional[int]] = {}  # targets being compiled -> callee if recursive
        self._flat: dict[int, str] = {}
        self._twin_builders: dict[str, Callable[[], str]] = {}  # slot marker -> how to build its twin
        self._twins: dict[str, str] = {}  # slot marker -> its twin without calls (built on demand)

    def weight(self, regex: str) -> int:
        """:func:`regex_weight`, an embedded automaton weighing its number of states."""
        slots = self.slots
        return regex_weight(regex, lambda c: slots[ord(c) - 0xD800].num_states if ord(c) - 0xD800 < len(slots) else 1)

    def new_callee(self, regex: Optional[str] = None) -> int:
        self.callees.append(regex)
        k = len(self.callees)
        call_marker(k)  # (raises past the budget of called automata)
        return k

    def call_regex(self, regex: str, *, required: int = 0, flat: Optional[Callable[[], str]] = None) -> str:
        """A call of an automaton for ``regex`` (one per distinct regex and ``required``: the
        keys its close guard requires, for an object with guards). ``flat()``, if given, is the
        regex the automata algebra uses instead (it must have no guard)."""
        key = (regex, required)
        k = self._callee_of_regex.get(key)
        if k is None:
            k = self._callee_of_regex[key] = self.new_callee(regex)
            if required:
                self.required[k] = required
            if flat is not None:
                self._flat_builders[k] = flat
        return call_marker(k)

    def call_if_heavy(self, regex: str) -> str:
        """``regex``, or a call of it when it weighs more than :data:`CALL_THRESHOLD`."""
        return self.call_regex(regex) if self.weight(regex) > CALL_THRESHOLD else regex

    def call_ref(self, target: Schema, target_path: str) -> str:
        """A ``$ref`` target: inline when small and not recursive, else called."""
        done = self._ref_out.get(target_path)
        if done is not None:
            return done
        if target_path in self._ref_active:  # recursion: the target calls itself
            k = self._ref_active[target_path]
            if k is None:
                k = self._ref_active[target_path] = self.new_callee()
                self._callee_source[k] = (target, target_path)
            return call_marker(k)
        regex, k = self._entered(target, target_path)
        out = call_marker(k) if k else self.call_if_heavy(regex)
        self._ref_out[target_path] = out
        return out

    def compile_root(self, root: Schema) -> str:
        """The root's regex, compiled as a ``$ref`` target that ``"#"`` may call."""
        regex, k = self._entered(root, "")
        return call_marker(k) if k else regex

    def _entered(self, target: Schema, target_path: str) -> tuple[str, int]:
        """``target`` compiled while it counts as entered (a ``$ref`` to it inside recursion),
        and the automaton allocated for it by that recursion (0: none, it did not recurse)."""
        self._ref_active[target_path] = None
        try:
            regex = self.inline(target, target_path, (target_path,))
        finally:
            k = self._ref_active.pop(target_path)
        if k is not None:
            self.callees[k - 1] = regex
        return regex, k or 0

    def flat_twin(self, marker: str, build: Callable[[], str]) -> None:
        """Register how to build the twin without calls of the slot ``marker`` (for :meth:`flat`)."""
        self._twin_builders[marker] = build

    def flat(self, regex: str) -> str:
        """``regex`` with every call replaced by the callee's own regex, recursion unrolled
        ``max_recursion_depth`` times as without calls (for the automata algebra, which needs
        one finite automaton)."""
        n = len(self.callees)

        def callee(c: str) -> int:  # (0: not a call; a surrogate may also end a class range)
            k = call_index(c)
            return k if k is not None and 1 <= k <= n else 0

        if not n or not any(callee(c) or c in self._twin_builders for c in regex):
            return regex
        out = []
        for c in regex:
            k = callee(c)
            if k:
                out.append(f"(?:{self._flat_callee(k)})")
            elif c in self._twin_builders:
                twin = self._twins.get(c)
                if twin is None:
                    twin = self._twins[c] = self._twin_builders[c]()
                out.append(twin)
            else:
                out.append(c)
        return "".join(out)

    def _flat_callee(self, k: int) -> str:
        got = self._flat.get(k)
        if got is None:
            source = self._callee_source.get(k)
            if k in self._flat_builders:
                got = self.flat(self._flat_builders[k]())
            elif source is not None or k == self.any_callee:
                was, self.on = self.on, False
                try:
                    got = self.any_value() if source is None else self.inline(source[0], source[1], (source[1],))
                finally:
                    self.on = was
            else:
                regex = self.callees[k - 1]
                assert regex is not None  # (only a recursive $ref's regex is unknown for a while, and it has a source)
                got = self.flat(regex)
            self._flat[k] = got
        return got
