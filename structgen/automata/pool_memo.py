"""The memo tables that Python modules keep beside a pool's terms, typed: one field per table,
each named by what it maps (the untyped ``facts`` bag they replace). The native engine keeps its
own (derivatives, byte classes, liveness, string lengths, shortest lengths); these are the
rewrites that still build terms in Python (:mod:`.expr_rewrite`: restrict, concatenations; the
clamps, the slices' successors and the bytes a term reads are native)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PoolMemo"]


@dataclass(slots=True)
class PoolMemo:
    """Per pool: what each rewrite made of each term (keys are term ids and the rewrite's arguments)."""

    #: (term, allowed bytes, dead symbols) -> the term read only through those (:func:`.expr_rewrite.restrict`)
    restricted: dict[tuple[int, int, frozenset[int]], int] = field(default_factory=dict)
    #: (embedded automaton, allowed bytes, dead symbols) -> the index of its restriction
    restricted_dfa: dict[tuple[int, int, frozenset[int]], int] = field(default_factory=dict)
    #: parts -> their concatenation (:func:`.expr_rewrite.concat_all`)
    concatenated: dict[tuple[int, ...], int] = field(default_factory=dict)

    @property
    def entries(self) -> int:
        """How many entries the tables hold (for memory estimates)."""
        return sum(len(getattr(self, f)) for f in self.__slots__)
