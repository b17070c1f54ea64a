"""JSON Schema strings that are spans of documents (``extract_from``): the compiler's side.

:class:`SpanStrings` tells the schema compiler (:mod:`.strings`, :mod:`.values`) which string
values are spans and builds their terms. A plain span string is written as a *placeholder*: one
byte no UTF-8 text contains (0xFF, or 0xFE for a non-empty span). The schema's automaton then
stays small (it never sees the document), and :meth:`SpanStrings.splice` replaces each placeholder
edge ``p -> q`` by a copy of the span automaton whose accepting states continue as ``q`` does —
vectorised, without determinising again. Algebra never sees a placeholder:
:meth:`SpanStrings.resolve` gives the compiler's ``to_dfa`` the real automata (embedded in the
term), and a splice that would not stay deterministic (another string alternative right after
the same quote) falls back to the automaton of the resolved term.

Example:
    >>> from structgen.json_schema import schema_to_dfa
    >>> dfa = schema_to_dfa({"type": "array", "items": {"type": "string"}}, extract_from=["a b/c"])
    >>> dfa.accepts(b'["a", "b/c", "a b"]'), dfa.accepts(b'["ab"]')
    (True, False)
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..automata.algebra import intersect
from ..automata.dfa import DEFAULT_MAX_STATES, ByteDFA
from ..automata.expr import ExprPool
from ..automata.expr_dfa import lazy_to_dfa
from ..automata.expr_rewrite import concat_all, substitute
from ..automata.spans import json_span_dfa, without_empty
from ..errors import CompileBudgetExceeded, UnsatisfiableConstraint
from .ops import Refs
from .terms import JsonTerms

__all__ = ["SpanStrings"]

#: Placeholder bytes (never in UTF-8): a span, and a non-empty span.
_PLACEHOLDER = {False: 0xFF, True: 0xFE}


def _has_mark(schema: object) -> bool:
    """Whether ``"x-extract": true`` appears anywhere in ``schema`` (data included: erring on
    the side of marked mode only makes fewer strings free)."""
    if isinstance(schema, dict):
        return schema.get("x-extract") is True or any(_has_mark(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_mark(v) for v in schema)
    return False


def _strings(value: object) -> list[str]:
    """The string values inside a JSON value (object keys are not values)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class SpanStrings:
    """The schema compiler's view of ``extract_from``: which string values are spans, and how.

    Every string value is a span, unless some schema says ``"x-extract": true``: then only the
    strings of those schemas are. Used by :mod:`.strings` and :mod:`.values` (strings, ``enum``
    values, any value); object keys are never spans.

    >>> SpanStrings(("abc",), {"type": "string"}).applies({"type": "string"})
    True
    >>> SpanStrings(("abc",), {"properties": {"a": {"x-extract": True}}}).applies({"type": "string"})
    False
    """

    #: String keywords other than ``type`` that are intersected with the span automaton.
    KEYWORDS = ("minLength", "maxLength", "pattern", "format")

    def __init__(self, documents: tuple[str, ...], root: object, *, max_states: int = DEFAULT_MAX_STATES) -> None:
        self.documents = documents
        self.marked = _has_mark(root)
        self.max_states = max_states
        self._bodies: dict[bool, ByteDFA] = {}
        self._quoted: dict[bool, ByteDFA] = {}
        self._used: set[bool] = set()  # the placeholders written so far

    def applies(self, s: dict[str, Any]) -> bool:
        """Whether the string values of schema ``s`` must be spans."""
        return s.get("x-extract") is True or not self.marked

    def is_span(self, text: str) -> bool:
        return any(text in d for d in self.documents)

    def filter_values(self, values: list[Any], s: dict[str, Any]) -> list[Any]:
        """The ``enum``/``const`` values whose string values are spans where they must be (in
        marked mode, values with containers are checked throughout: sound, if strict)."""
        if self.marked and s.get("x-extract") is not True:
            return [v for v in values if isinstance(v, str) or all(map(self.is_span, _strings(v)))]
        return [v for v in values if all(map(self.is_span, _strings(v)))]

    def body(self, nonempty: bool) -> ByteDFA:
        """The span automaton of JSON string bodies (without the empty span if ``nonempty``)."""
        dfa = self._bodies.get(nonempty)
        if dfa is None:
            base = self._bodies.get(False)
            if base is None:
                base = self._bodies[False] = json_span_dfa(self.documents, max_states=self.max_states)
            dfa = self._bodies[True] = without_empty(base) if nonempty else base
        return dfa

    def quoted(self, nonempty: bool) -> ByteDFA:
        """The automaton of the whole JSON strings (quotes included) of :meth:`body`."""
        dfa = self._quoted.get(nonempty)
        if dfa is None:
            pool = ExprPool()
            quote = pool.literal(b'"')
            term = concat_all(pool, [quote, pool.embed(self.body(nonempty)), quote])
            dfa = self._quoted[nonempty] = lazy_to_dfa(pool, term, max_states=self.max_states)
        return dfa

    @staticmethod
    def placeholder(pool: ExprPool, nonempty: bool) -> int:
        """The one-byte term that stands for :meth:`body` until :meth:`splice` or :meth:`resolve`."""
        return pool.bytes_of(1 << _PLACEHOLDER[nonempty])

    def resolve(self, pool: ExprPool, term: int) -> int:
        """``term`` with every placeholder replaced by the automaton it stands for."""
        return substitute(pool, term, {self.placeholder(pool, k): pool.embed(self.body(k)) for k in self._used})

    def splice(self, dfa: ByteDFA) -> ByteDFA | None:
        """``dfa`` with each placeholder edge replaced by a copy of the span automaton, or
        ``None`` when the result would not be deterministic (the caller then compiles with
        :meth:`resolve`'d slots)."""
        used = [k for k, b in _PLACEHOLDER.items() if dfa.transitions[:, dfa.byte_classes[b]].max() >= 0]
        if not used:
            return dfa
        body = self.body(False)
        if body.transitions[:, body.byte_classes[0]].size and (body.transitions == 0).any():
            return None  # (span automata have no edge into their start; splicing relies on it)
        joint = dfa.byte_classes.astype(np.int64) * body.num_classes + body.byte_classes
        pairs, class_of = np.unique(joint, return_inverse=True)
        cd, cb = pairs // body.num_classes, pairs % body.num_classes
        td = dfa.transitions[:, cd]  # [outer state, joint class]
        tb = body.transitions[:, cb]  # [body state, joint class]
        holes = [int(class_of[_PLACEHOLDER[k]]) for k in used]
        out = td.copy()
        out[:, holes] = -1
        n, m = td.shape[0], tb.shape[0] - 1  # a copy keeps body states 1.. (state 0 is merged into p)
        edges = [(p, int(td[p, h]), k) for h, k in zip(holes, used) for p in np.flatnonzero(td[:, h] >= 0).tolist()]
        total = n + m * len(edges)
        if total > self.max_states:
            raise CompileBudgetExceeded(
                f"states after splicing {len(edges)} span automata of {m + 1} states (one per extracted string)",
                self.max_states,
            )
        copies, copy_finals = [], []
        finals = dfa.finals
        entered = np.zeros(n, dtype=bool)  # outer states entered by an edge (copies always are)
        entered[0] = True
        for i, (p, q, nonempty) in enumerate(edges):
            rows = tb.copy()
            rows[rows >= 0] += n + i * m - 1  # body state s >= 1 becomes n + i * m + s - 1
            fin = self.body(nonempty).finals
            for c in np.flatnonzero(out[q] >= 0).tolist():  # an accepting body state continues as q
                col = rows[:, c]
                if (fin & (col >= 0)).any():
                    return None
                col[fin] = out[q, c]
            start, p_row = rows[0], out[p]
            if ((start >= 0) & (p_row >= 0)).any():
                return None
            out[p] = np.where(p_row >= 0, p_row, start)
            copies.append(rows[1:])
            copy_finals.append(fin[1:] & finals[q])
            targets = out[q][out[q] >= 0]
            entered[targets[targets < n]] = True
        outer = out[out >= 0]
        entered[outer[outer < n]] = True
        table = np.vstack([out, *copies])
        all_finals = np.concatenate([finals, *copy_finals])
        if not entered.all():  # a state after a placeholder that nothing else enters: drop it
            keep = np.concatenate([entered, np.ones(total - n, dtype=bool)])
            new_id = (np.cumsum(keep) - 1).astype(np.int32)
            table = table[keep]
            live = table >= 0
            table[live] = new_id[table[live]]
            all_finals = all_finals[keep]
        return ByteDFA(np.ascontiguousarray(table), class_of.astype(np.int32), all_finals)

    def string(
        self, s: dict[str, Any], path: str, refs: Refs, plain: Callable[[dict[str, Any], str, Refs], int], t: JsonTerms, *,
        embed: Callable[[ByteDFA], int], to_dfa: Callable[[int, str], ByteDFA],
    ) -> int:
        """The term of the JSON strings of ``s`` in ``t.pool`` (``plain`` compiles it without
        spans; ``embed`` and ``to_dfa`` are the compile's, see
        :class:`structgen.json_schema.context.Context`)."""
        rest = {k: v for k, v in s.items() if k != "x-extract"}
        if not self.applies(s):
            return plain(rest, path, refs)
        lo = rest.get("minLength", 0)
        nonempty = isinstance(lo, int) and lo >= 1
        if not any(k in rest for k in self.KEYWORDS) or (set(rest) & set(self.KEYWORDS) == {"minLength"} and lo <= 1):
            if self.body(nonempty).is_empty:
                raise UnsatisfiableConstraint("no span of extract_from is a non-empty string", path or "/")
            self._used.add(nonempty)
            return t.quoted(self.placeholder(t.pool, nonempty))
        try:
            both = intersect(to_dfa(plain(rest, path, refs), path), self.quoted(nonempty), max_states=self.max_states)
        except CompileBudgetExceeded as e:
            if e.path:
                raise
            raise CompileBudgetExceeded(f"{e.what} (spans of extract_from ∩ string keywords)", e.limit, path or "/") from None
        if both.is_empty:
            raise UnsatisfiableConstraint(
                f"no span of extract_from satisfies {', '.join(k for k in self.KEYWORDS if k in rest)}", path or "/"
            )
        return embed(both)
