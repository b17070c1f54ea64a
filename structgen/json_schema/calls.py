"""The call graph of a network (:func:`.api.schema_to_network`): which sub-schemas become automata
of their own that their users call, and the flat twin of a term with calls (for the automata
algebra, which needs one finite automaton).

Automaton ``k`` of the network (``k >= 1``; 0 is the root) is ``callees[k - 1]``, a call of it the
symbol ``k`` of the pool (guards are the symbols from :data:`~structgen.automata.markers.GUARD_FIRST`
on). A ``$ref`` target that recurses is always called; any other sub-schema whose term weighs
more than :data:`CALL_THRESHOLD` is called too (equal terms share one automaton) instead of being
copied at every use.

>>> from structgen.automata.expr import ExprPool
>>> pool = ExprPool()
>>> digit = pool.byte_range(48, 57)
>>> weight = Weights(pool)
>>> weight(pool.literal(b"ab")), weight(pool.repeat(digit, 0, 10)), weight(pool.star(pool.literal(b"ab")))
(2, 10, 2)
"""

from __future__ import annotations

from typing import Callable, Optional

from ..automata.expr import NOTHING, ExprPool
from ..automata.expr_rewrite import SubstitutionMemo, substitute
from ..automata.markers import GUARD_FIRST
from ..errors import CompileBudgetExceeded, SchemaNotSupported
from .ops import Refs, Schema

__all__ = ["CALL_THRESHOLD", "CallGraph", "Weights"]

#: In a network, a sub-schema whose term weighs more than this (:class:`Weights`: about the
#: positions its automaton expands to) becomes an automaton of its own that its users call (equal
#: terms share one), instead of a copy at every use. ``$ref`` targets that recurse are always
#: called. (Read at every use: tests set it to 0 to make every sub-schema an automaton.)
CALL_THRESHOLD = 200


class Weights:
    """The weight of a term: about how many positions it expands to where it is copied (into a
    caller, or inlined for the algebra): :meth:`.ExprPool.size`, kept by the pool as terms are
    built (a walk of every new term per sub-schema was a fifth of a small schema's compile)."""

    def __init__(self, pool: ExprPool) -> None:
        self.pool = pool

    def __call__(self, e: int) -> int:
        return self.pool.size(e)


#: Compiles a schema at a JSON pointer with the ``$ref`` targets entered so far, never as a call
#: of its own (the schema compiler's ``compile_node``).
CompileNode = Callable[[Schema, str, Refs], int]


class CallGraph:
    """The called automata of one compile.

    ``on``: calls are made (a network without documents); otherwise every method that would call
    inlines instead. ``inline`` compiles a schema without calling it (used for ``$ref`` targets
    and, calls off, for the flat twin of a recursive target whose term is not known yet);
    ``any_value`` gives the term of any JSON value; ``depth``: ``max_recursion_depth``.
    """

    def __init__(self, pool: ExprPool, *, on: bool, inline: CompileNode, any_value: Callable[[], int], depth: int = 3) -> None:
        self.on = on
        self.depth = depth  # max_recursion_depth
        self.pool = pool
        self.inline = inline
        self.any_value = any_value
        self.weight = Weights(pool)
        self.callees: list[Optional[int]] = []  # a recursive $ref's term is None until known
        self.required: dict[int, int] = {}  # automaton -> keys its close guard requires
        self.unique_items: dict[int, tuple[int, ...]] = {}  # unique array automaton -> its item automata
        self.in_unique_items = False  # compiling the items of a unique array (calls off, but for nested unique arrays)
        self.any_callee = 0  # the automaton of any JSON value (0: none yet)
        self._callee_source: dict[int, tuple[Schema, str]] = {}  # $ref callees: (schema, path)
        self._callee_of_term: dict[tuple[int, int], int] = {}
        self._flat_builders: dict[int, Callable[[], int]] = {}
        self._ref_out: dict[str, int] = {}  # $ref target path -> its term or call
        self._ref_active: dict[str, Optional[int]] = {}  # targets being compiled -> callee if recursive
        self.flattening = False  # compiling a flat twin with calls off (see flat_of_called)
        self._known: set[int] = set()  # callees whose term, and every term they reach, is known
        self._built: dict[int, int] = {}  # callee -> what its flat builder made
        self._flat: dict[tuple[int, int], int] = {}  # (callee, level) -> its flat term
        self._flat_mapping: dict[int, dict[int, int]] = {}  # level -> call symbol -> its callee's flat term
        self._flat_terms: dict[tuple[int, int], int] = {}  # (term, level) -> flat term (see flat)
        self._flat_done: dict[int, SubstitutionMemo] = {}  # level -> sub-term -> flat sub-term, shared by its flats

    def new_callee(self, term: Optional[int] = None) -> int:
        """A new automaton (``term``: its expression, if known yet)."""
        self.callees.append(term)
        k = len(self.callees)
        if k >= GUARD_FIRST:
            raise CompileBudgetExceeded("called automata in one schema", GUARD_FIRST)
        return k

    def call(self, term: int, *, required: int = 0, flat: Optional[Callable[[], int]] = None) -> int:
        """A call of an automaton for ``term`` (one per distinct term and ``required``: the keys
        its close guard requires, for an object with guards). ``flat()``, if given, is the term
        the automata algebra uses instead (it must have no guard)."""
        key = (term, required)
        k = self._callee_of_term.get(key)
        if k is None:
            k = self._callee_of_term[key] = self.new_callee(term)
            if required:
                self.required[k] = required
            if flat is not None:
                self._flat_builders[k] = flat
        return self.pool.symbol(k)

    def unique_array(self, items: list[int], array: Callable[[list[int]], int], flat: Callable[[], int]) -> int:
        """A call of a new array automaton whose items must be unique: ``items`` are the terms of
        its item automata (one per ``prefixItems`` position, then ``items``; they call nothing but
        the unique arrays nested in them),
        ``array(calls)`` the array's term given a call of each (see
        :mod:`structgen.guides.unique_items`). ``flat()`` is what the automata algebra uses."""
        if any(k not in self.unique_items for item in items for k in self.pool.symbols_in(item)):
            raise AssertionError("the items of a unique array call nothing but unique arrays nested in them")
        called = [self.new_callee(item) for item in items]
        k = self.new_callee(array([self.pool.symbol(i) for i in called]))
        self.unique_items[k] = tuple(called)
        self._flat_builders[k] = flat
        return self.pool.symbol(k)

    def call_if_heavy(self, term: int) -> int:
        """``term``, or a call of it when it weighs more than :data:`CALL_THRESHOLD`."""
        return self.call(term) if self.weight(term) > CALL_THRESHOLD else term

    def call_ref(self, target: Schema, target_path: str) -> int:
        """A ``$ref`` target: inline when small and not recursive, else called."""
        done = self._ref_out.get(target_path)
        if done is not None:
            return done
        if target_path in self._ref_active:  # recursion: the target calls itself
            k = self._ref_active[target_path]
            if k is None:
                k = self._ref_active[target_path] = self.new_callee()
                self._callee_source[k] = (target, target_path)
            return self.pool.symbol(k)
        term, k = self._entered(target, target_path)
        out = self.pool.symbol(k) if k else self.call_if_heavy(term)
        self._ref_out[target_path] = out
        return out

    def compile_root(self, root: Schema) -> int:
        """The root's term, compiled as a ``$ref`` target that ``"#"`` may call."""
        term, k = self._entered(root, "")
        return self.pool.symbol(k) if k else term

    def _entered(self, target: Schema, target_path: str) -> tuple[int, int]:
        """``target`` compiled while it counts as entered (a ``$ref`` to it inside recursion),
        and the automaton allocated for it by that recursion (0: none, it did not recurse)."""
        self._ref_active[target_path] = None
        try:
            term = self.inline(target, target_path, (target_path,))
        finally:
            k = self._ref_active.pop(target_path)
        if k is not None:
            self.callees[k - 1] = term
        return term, k or 0

    def flat(self, term: int) -> int:
        """``term`` with every call replaced by the callee's own term (for the automata algebra,
        which needs one finite automaton). A call of a recursive ``$ref`` target is unrolled by
        substitution: ``max_recursion_depth + 1`` copies of the target's term along any path, and
        a call below the last copy is ``NOTHING``, as compiling with calls off drops recursion past
        the depth. So the flat term holds a subset of ``term``'s language: the algebra's positive
        operands may be smaller (what it subtracts are over-approximations, never a flat term)."""
        return self._flat_at(term, self.depth + 1)

    def flat_of_called(self, term: int) -> Optional[int]:
        """:meth:`flat` of ``term`` (a term compiled with calls) for a compile with calls off
        inside a flat twin, where the same sub-schema was compiled with calls already: the same
        language, unrolled by substitution instead of compiled again. ``None`` where some callee
        it reaches has no term yet (its flat twin is the one being compiled), where flattening it
        is refused (a unique array's), or where nothing is left (calls off would raise
        :class:`~.ops.TooDeep` there, which callers read)."""
        if not self._all_known(term):
            return None
        try:
            got = self.flat(term)
        except (SchemaNotSupported, CompileBudgetExceeded):
            return None
        return None if got == NOTHING else got

    def _all_known(self, term: int) -> bool:
        """Whether every callee ``term`` reaches, through callees' terms, has its term."""
        n = len(self.callees)
        todo = [k for k in self.pool.symbols_in(term) if 1 <= k <= n and k not in self._known]
        seen = set(todo)
        while todo:
            k = todo.pop()
            callee = self.callees[k - 1]
            if callee is None:
                return False
            for j in self.pool.symbols_in(callee):
                if 1 <= j <= n and j not in seen and j not in self._known:
                    seen.add(j)
                    todo.append(j)
        self._known.update(seen)  # (a known term never changes: nor does what it reaches)
        return True

    def _flat_at(self, term: int, level: int) -> int:
        """``term`` flat, with ``level`` more copies of recursive targets allowed below it."""
        n = len(self.callees)
        if not n or term == NOTHING:
            return term
        called = [k for k in self.pool.symbols_in(term) if 1 <= k <= n]
        if not called:
            return term
        key = (term, level)
        got = self._flat_terms.get(key)
        if got is None:  # (a callee's flat term at a level never changes once made: one mapping, one memo per level)
            mapping = self._flat_mapping.setdefault(level, {})
            for k in called:
                symbol = self.pool.symbol(k)
                if symbol not in mapping:
                    mapping[symbol] = self._flat_callee(k, level)
            memo = self._flat_done.get(level)
            if memo is None:
                memo = self._flat_done[level] = SubstitutionMemo()
            got = self._flat_terms[key] = substitute(self.pool, term, mapping, memo, symbols=True)
        return got

    def _flat_callee(self, k: int, level: int) -> int:
        """What a call of ``k`` becomes in a flat term at ``level``."""
        if k in self._callee_source:  # a recursive target: one copy fewer below this one
            if level == 0:
                return NOTHING
            level -= 1
        key = (k, level)
        got = self._flat.get(key)
        if got is None:
            term = self.callees[k - 1]
            if k in self._flat_builders:
                built = self._built.get(k)
                if built is None:
                    built = self._built[k] = self._flat_builders[k]()
                got = self._flat_at(built, level)
            elif k == self.any_callee or term is None:  # (a recursive target's term is unknown while it is compiled)
                source = self._callee_source.get(k)
                was, self.on, flattening = self.on, False, self.flattening
                self.flattening = True
                try:
                    got = self.any_value() if source is None else self.inline(source[0], source[1], (source[1],))
                finally:
                    self.on, self.flattening = was, flattening
            else:
                got = self._flat_at(term, level)
            self._flat[key] = got
        return got
