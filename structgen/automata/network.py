"""A network of byte automata that call one another: the compile-time picture of a pushdown guide.

A flat automaton copies a sub-schema at every place it is used and unrolls recursion; a
:class:`Network` keeps one automaton per shared piece (a ``$ref`` target, a large repeated
sub-schema, "any JSON value") and lets an automaton *call* another. Each automaton is an
expression of one shared :class:`~.expr.ExprPool`: a call of automaton ``k`` is the symbol ``k``
of the pool, a guard the symbol ``GUARD_FIRST + i`` (:mod:`.markers`). Its states are built
lazily by the runtime, :class:`structgen.guides.pushdown.PushdownGuide`. The JSON Schema front
end builds the expressions directly (:meth:`Network.from_exprs`); a network may also be written
as regexes with call markers (:func:`~structgen.automata.markers.call_marker`).
"""

from __future__ import annotations

from typing import Sequence

from .dfa import DEFAULT_MAX_STATES, ByteDFA
from .expr import NOTHING, ExprPool
from .markers import GUARD_FIRST
from .regex import regex_to_expr

__all__ = ["Network"]


class Network:
    """The automata of a pushdown guide: ``exprs[k]`` is automaton ``k``'s expression in ``pool``.

    Built from expressions (:meth:`from_exprs`: ``exprs[0]`` is the root, the symbol ``k`` calls
    ``exprs[k]``) or from regexes (:meth:`__init__`: ``regexes[0]`` is the root; a
    :func:`.markers.call_marker` ``(k)`` in a regex calls ``regexes[k]``, and
    :func:`.markers.slot_marker` ``(i)`` embeds ``slots[i]``; ``regexes`` is empty otherwise). Every called automaton must accept only
    non-empty strings. Everything that can fail (a look-around over its state budget) fails here,
    at compile time; the automata themselves are built lazily.

    Example:
        >>> from structgen.automata.markers import call_marker
        >>> net = Network([f"a{call_marker(1)}?b", f"x{call_marker(1)}?y"], [])
        >>> len(net), sorted(net.callees(0))
        (2, [1])
    """

    def __init__(
        self, regexes: Sequence[str], slots: Sequence[ByteDFA], *, max_states: int = DEFAULT_MAX_STATES,
        required: dict[int, int] | None = None, unique_items: dict[int, tuple[int, ...]] | None = None,
    ) -> None:
        pool = ExprPool()
        exprs = [regex_to_expr(r, pool, slots=slots, max_states=max_states) for r in regexes]
        self._init(pool, exprs, required, unique_items)
        self.regexes = tuple(regexes)

    @classmethod
    def from_exprs(
        cls, pool: ExprPool, exprs: Sequence[int], *, required: dict[int, int] | None = None,
        unique_items: dict[int, tuple[int, ...]] | None = None,
    ) -> "Network":
        """A network of expressions already built in ``pool`` (``exprs[0]`` is the root)."""
        net = cls.__new__(cls)
        net._init(pool, list(exprs), required, unique_items)
        net.regexes = ()
        return net

    def _init(
        self, pool: ExprPool, exprs: list[int], required: dict[int, int] | None, unique_items: dict[int, tuple[int, ...]] | None,
    ) -> None:
        self.pool = pool
        self.exprs = tuple(exprs)
        #: per automaton with guards: the bit set of the keys its close guard requires
        self.required = dict(required or {})
        #: per array whose items must be unique (``uniqueItems`` over infinitely many values): the
        #: automata of its items (``prefixItems``, then ``items``), which call nothing but the
        #: unique arrays nested in them (see :mod:`structgen.guides.unique_items`)
        self.unique_items = {k: tuple(v) for k, v in (unique_items or {}).items()}
        for k, items in self.unique_items.items():
            for i in items:
                if not (0 < i < len(self.exprs) and 0 <= k < len(self.exprs)) or not pool.symbols_in(self.exprs[i]) <= self.unique_items.keys():
                    raise AssertionError(f"unique array {k}: its item automaton {i} must exist and call nothing but unique arrays")
        for k, e in enumerate(self.exprs):
            if k and pool.nullable(e):
                raise AssertionError(f"called automaton {k} accepts the empty string")

    def __len__(self) -> int:
        return len(self.exprs)

    def __repr__(self) -> str:
        return f"<Network of {len(self.exprs)} automata>"

    def callees(self, k: int) -> frozenset[int]:
        """The automata automaton ``k`` calls (anywhere in it)."""
        return frozenset(s for s in self.pool.symbols_in(self.exprs[k]) if s < GUARD_FIRST)

    @property
    def is_empty(self) -> bool:
        return self.exprs[0] == NOTHING

    @property
    def memory_bytes(self) -> int:
        return self.pool.memory_bytes
