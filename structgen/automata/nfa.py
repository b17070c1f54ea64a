"""Python's parse of a regex → byte-level Thompson NFA → byte DFA (subset construction), or → an
expression of the pool.

The parse is the one Python's ``re`` makes (``re._parser``: the reader the regex front end checks
a pattern with). The construction goes straight to bytes:

1. **Resolve** the parse: flags are applied and every class becomes a set of code-point intervals
   (``\\d \\w \\s`` are the ASCII classes; case-insensitively a character stands for its
   ``lower()`` and ``upper()``: see :mod:`.regex_classes`).
2. **Templates**: each distinct set is lowered once to UTF-8 byte paths (:mod:`.utf8`). All byte
   edges come from templates, so 0..255 is partitioned into *byte classes* by their labels.
3. **Thompson NFA**, built back to front ("then go to ``nxt``"): a set is a copy of its template,
   ``x{m,n}`` is ``m`` copies then nested optionals ``(x(x(x)?)?)?`` so epsilon closures stay small.
4. **Subset construction** over byte classes, epsilon closures cached, ``max_states`` enforced.

The result goes through the same trim / minimise / canonical numbering as every :class:`ByteDFA`.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from ..errors import CompileBudgetExceeded
from .dfa import ByteDFA, minimal_dfa
from .expr import ExprPool
from .markers import MAX_CALLS, SLOT_FIRST, call_index, call_marker, call_path
from .lookaround import ANY_BYTES, Look, determinise_with_looks
from .regex_classes import class_set
from .utf8 import MAX_CODE_POINT, Utf8Writer, complement_intervals, intervals_of

try:  # Python >= 3.11
    from re import _constants as _C  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _C

__all__ = ["Parsed", "Unsupported", "pattern_to_dfa", "pattern_to_expr"]

#: The NFA may hold this many states per allowed DFA state before compilation stops.
NFA_STATES_PER_DFA_STATE = 4
#: The subset construction may hold this many NFA states in all its sets (DFA states and cached
#: closures), per allowed DFA state: a bound on its memory.
SUBSET_ENTRIES_PER_DFA_STATE = 16

Intervals = tuple[tuple[int, int], ...]
#: Python's parse of a regex (``re._parser.SubPattern``: a sequence of (op, argument) items).
Parsed = Any


class Unsupported(Exception):
    """A construct the construction cannot enforce exactly (the caller names the pattern)."""


class _Set(NamedTuple):
    """One character of the set ``sets[set_id]`` (resolved AST node)."""

    set_id: int


class _Cat(NamedTuple):
    parts: tuple[Node, ...]


class _Alt(NamedTuple):
    options: tuple[Node, ...]


class _Embed(NamedTuple):
    """A whole automaton, ``slots[k]``."""

    k: int


class _Rep(NamedTuple):
    x: Node
    lo: int
    hi: int | None  # None: unbounded


class _Look(NamedTuple):
    """A look-around assertion, ``looks[k]`` (it reads nothing)."""

    k: int


class _Sym(NamedTuple):
    """A call of automaton ``k`` (or a guard), as one symbol (expressions only, see :func:`pattern_to_expr`)."""

    k: int


Node = Union[_Set, _Cat, _Alt, _Rep, _Embed, _Look, _Sym]
_EMPTY = _Cat(())
_ALL_BUT_NEWLINE: Intervals = ((0, 9), (11, MAX_CODE_POINT))
_ALL: Intervals = ((0, MAX_CODE_POINT),)
#: The characters markers are (slots, then calls: surrogates, which no pattern of a user's holds).
_MARKERS, _MARKERS_END = SLOT_FIRST, ord(call_marker(0)) + MAX_CALLS


def pattern_to_expr(pattern: Parsed, pool: ExprPool, *, max_states: int, slots: Sequence[ByteDFA] = ()) -> int:
    """The expression (in ``pool``) of Python's parse of a regex: built straight
    from the parse tree, in time linear in the pattern (no NFA, no determinisation). Calls of a
    network are symbols. A pattern with look-arounds is compiled eagerly instead
    (:func:`pattern_to_dfa`, within ``max_states``) and embedded whole.
    """
    resolver = _Resolver({}, len(slots), slots, max_states, symbols=True)
    root = resolver.resolve(pattern, pattern.state.flags)
    if _looks_in(root, set()):
        if _has_symbols(root):
            raise Unsupported("a look-around next to a call of another automaton")
        return pool.embed(resolver.compile(root))
    sets = {i: ivs for ivs, i in resolver.sets.items()}
    memo: dict[int, int] = {}

    def convert(node: Node) -> int:
        got = memo.get(id(node))
        if got is not None:
            return got
        if isinstance(node, _Set):
            ivs = sets[node.set_id]
            got = pool.bytes_of(1 << ivs[0][1]) if ivs and ivs[0][0] == -1 else pool.code_points(ivs)
        elif isinstance(node, _Cat):
            got = pool.concat([convert(x) for x in node.parts])
        elif isinstance(node, _Alt):
            got = pool.alt([convert(x) for x in node.options])
        elif isinstance(node, _Rep):
            got = pool.repeat(convert(node.x), node.lo, node.hi)
        elif isinstance(node, _Embed):
            got = pool.embed(resolver.slots[node.k])
        elif isinstance(node, _Sym):
            got = pool.symbol(node.k)
        else:  # pragma: no cover - looks are handled above
            raise Unsupported("a look-around")
        memo[id(node)] = got
        return got

    return convert(root)


def _has_symbols(node: Node) -> bool:
    if isinstance(node, _Sym):
        return True
    if isinstance(node, _Cat):
        return any(_has_symbols(x) for x in node.parts)
    if isinstance(node, _Alt):
        return any(_has_symbols(x) for x in node.options)
    if isinstance(node, _Rep):
        return _has_symbols(node.x)
    return False


def pattern_to_dfa(pattern: Parsed, *, max_states: int, slots: Sequence[ByteDFA] = ()) -> ByteDFA:
    """The minimal canonical :class:`ByteDFA` of Python's parse of a regex.

    Look-arounds are exact (see :mod:`.lookaround`). Raises :class:`Unsupported` for what it
    cannot enforce exactly (a look-behind inside a look-ahead or the reverse) and :class:`CompileBudgetExceeded`
    when the NFA grows past ``NFA_STATES_PER_DFA_STATE * max_states`` states or the DFA past
    ``max_states``. ``slots[k]`` is the automaton that :func:`slot_marker` ``(k)`` stands for.
    """
    resolver = _Resolver({}, len(slots), slots, max_states)
    root = resolver.resolve(pattern, pattern.state.flags)
    return resolver.compile(root)


class _Resolver:
    """Flags applied, character groups turned into interned code-point interval sets."""

    def __init__(
        self, sets: dict[Intervals, int], num_slots: int = 0, slots: Sequence[ByteDFA] = (), max_states: int = 0,
        *, symbols: bool = False,
    ) -> None:
        self.sets = sets
        self.symbols = symbols  # calls as _Sym nodes (expressions), not paths of reserved bytes (NFA)
        self.num_slots = num_slots
        self._memo: dict[tuple[tuple[Any, ...], bool], _Set] = {}
        # Automata the NFA embeds: the caller's slots, then ours (Σ* for look-around bodies).
        self.slots: list[ByteDFA] = list(slots)
        self.max_states = max_states
        self.templates: list[list[dict[int, int]]] = []
        # looks[k]: (ahead, negative, automaton of the body: X·Σ* ahead, Σ*·X behind).
        self.looks: list[Look] = []
        self.scope: str | None = None  # inside the body of a look-"ahead" / look-"behind"
        self._anything: _Embed | None = None

    def compile(self, root: Node) -> ByteDFA:
        """The minimal DFA of a resolved node (its look-arounds' automata already built)."""
        max_states = self.max_states
        if len(self.templates) < len(self.sets):  # sets only grow: template the new ones
            for ivs in itertools.islice(self.sets, len(self.templates), None):
                self.templates.append(_template(ivs, max_states))
        templates = self.templates
        used = sorted(_looks_in(root, set()))
        class_of, num_classes = _byte_classes(templates, [*self.slots, *(self.looks[k].dfa for k in used)])
        limit = NFA_STATES_PER_DFA_STATE * max_states
        slot_sizes = [d.num_states + int(d.finals.sum()) for d in self.slots]
        size = _nfa_size(root, [len(t) - 1 for t in templates], {}, slot_sizes)
        if size > limit:
            raise CompileBudgetExceeded(f"an NFA of {size} states", limit)
        nfa = _Nfa(
            [_class_moves(t, class_of, num_classes) for t in templates],
            [(_dfa_moves(d, class_of, num_classes), d.finals.tolist()) for d in self.slots],
        )
        start = nfa.build(root, _Nfa.ACCEPT)
        if used:
            looks = {k: self.looks[k] for k in used}
            table, finals = determinise_with_looks(
                nfa.moves, nfa.eps, nfa.conds, start, class_of, num_classes, max_states, looks
            )
        else:
            table, finals = _determinise(nfa, start, num_classes, max_states)
        return minimal_dfa(table, finals, class_of)

    def _look(self, ahead: bool, negative: bool, inner: Any, flags: int) -> _Look:
        """A look-around: its body compiled now, in its own scope, to the automaton
        ``X·Σ*`` (ahead: the rest of the input from here) or ``Σ*·X`` (behind: all of it up
        to here). Look-arounds nested in the body in the same direction see the same input as
        they would in place; the other direction would need what the body's automaton does not
        read, so it is refused."""
        direction = "ahead" if ahead else "behind"
        if self.scope is not None and self.scope != direction:
            raise Unsupported(
                f"a look-{direction} (or \\b, ^, $) inside a look-{self.scope}: the look-{self.scope}'s "
                f"automaton reads only the input {'after' if self.scope == 'ahead' else 'before'} its position"
            )
        saved, self.scope = self.scope, direction
        try:
            body = self.resolve(inner, flags)
        finally:
            self.scope = saved
        if self._anything is None:
            self._anything = _Embed(len(self.slots))
            self.slots.append(ANY_BYTES)
        whole = _Cat((body, self._anything) if ahead else (self._anything, body))
        self.looks.append(Look(ahead, negative, self.compile(whole)))
        return _Look(len(self.looks) - 1)

    def resolve(self, parsed: Any, flags: int) -> Node:
        """The node of a sequence of Python's parse (a ``SubPattern`` or its list of items) under
        ``flags`` (``re`` flags: only ``IGNORECASE`` and ``DOTALL`` change what it matches)."""
        parts = [x for x in (self._item(op, av, flags) for op, av in parsed) if x != _EMPTY]
        return parts[0] if len(parts) == 1 else _Cat(tuple(parts))

    def _item(self, op: Any, av: Any, flags: int) -> Node:
        if op is _C.LITERAL:
            return self._marked(av) or self._class(((_C.LITERAL, av),), flags)
        if op is _C.IN:
            # (Python's parser reads "x|<marker>" as a class [x<marker>]: a marker there is its own option)
            if av[0][0] is not _C.NEGATE and any(o is _C.LITERAL and _MARKERS <= v < _MARKERS_END for o, v in av):
                options: list[Node] = []
                rest = []
                for item in av:
                    node = self._marked(item[1]) if item[0] is _C.LITERAL else None
                    if node is None:
                        rest.append(item)
                    else:
                        options.append(node)
                return _Alt((*options, self._class(rest, flags)) if rest else tuple(options))
            return self._class(av, flags)
        if op is _C.NOT_LITERAL:
            return self._class(((_C.NEGATE, None), (_C.LITERAL, av)), flags)
        if op is _C.ANY:
            return self._set(_ALL if flags & re.DOTALL else _ALL_BUT_NEWLINE)
        if op is _C.SUBPATTERN:
            _group, add, remove, inner = av
            return self.resolve(inner, (flags | add) & ~remove)
        if op is _C.BRANCH:
            return _Alt(tuple(self.resolve(option, flags) for option in av[1]))
        if op is _C.MAX_REPEAT or op is _C.MIN_REPEAT:  # (lazy or greedy: the same language)
            lo, hi, inner = av
            hi = None if hi is _C.MAXREPEAT else hi
            base = self.resolve(inner, flags)
            if hi == 0:  # x{0,0} matches only the empty string
                return _EMPTY
            if isinstance(base, _Rep) and base.lo == 0:
                # (y{0,b}){m,n} is y{0,b*n}: a chain of nullable copies makes closures quadratic.
                return _Rep(base.x, 0, None if base.hi is None or hi is None else base.hi * hi)
            return _Rep(base, lo, hi)
        if op is _C.ASSERT or op is _C.ASSERT_NOT:
            direction, inner = av
            return self._look(direction > 0, op is _C.ASSERT_NOT, inner, flags)
        raise Unsupported(f"the regex construct {str(op).lower()}")  # (the reader's checks refuse these first)

    def _marked(self, code: int) -> Node | None:
        """What a marker character stands for (a slot's automaton, a call), else None."""
        if not _MARKERS <= code < _MARKERS_END:
            return None
        k = code - SLOT_FIRST
        if 0 <= k < self.num_slots:
            return _Embed(k)
        callee = call_index(chr(code))
        if callee is None:
            return None
        if self.symbols:
            return _Sym(callee)
        return _Cat(tuple(self._set(((-1, b),)) for b in call_path(callee)))

    def _class(self, items: Any, flags: int) -> _Set:
        """One character of a class of Python's parse (its items: literals, ranges, categories,
        a leading negation); case-insensitively, as :func:`.regex_classes.class_set` reads it."""
        key = (tuple(items), bool(flags & re.IGNORECASE))
        node = self._memo.get(key)
        if node is None:
            ivs = class_set(key[0], key[1])
            if ivs is None:  # (Python's parser makes no other item)
                raise Unsupported(f"a class item among {[str(op).lower() for op, _ in items]}")
            node = self._memo[key] = self._set(ivs)
        return node

    def _set(self, ivs: Intervals) -> _Set:
        return _Set(self.sets.setdefault(ivs, len(self.sets)))


def _looks_in(node: Node, out: set[int]) -> set[int]:
    """The look-arounds of a resolved node (not those nested in their bodies)."""
    if isinstance(node, _Look):
        out.add(node.k)
    elif isinstance(node, _Cat):
        for x in node.parts:
            _looks_in(x, out)
    elif isinstance(node, _Alt):
        for x in node.options:
            _looks_in(x, out)
    elif isinstance(node, _Rep):
        _looks_in(node.x, out)
    return out


def _template(ivs: Intervals, max_states: int) -> list[dict[int, int]]:
    """Byte rows of one character set: state 0 reads it, state 1 is "done" (no row of its own)."""
    rows: list[dict[int, int]] = [{}, {}]
    if ivs and ivs[0][0] == -1:  # a raw byte of a call path (see call_marker)
        rows[0][ivs[0][1]] = 1
    elif ivs:
        Utf8Writer(rows, limit=max(max_states, 2)).write(0, [(a, b, 1) for a, b in ivs])
    return rows


def _byte_classes(templates: list[list[dict[int, int]]], slots: Sequence[ByteDFA] = ()) -> tuple[np.ndarray, int]:
    """Partition 0..255 so that every edge label (bytes of one row to one target) is a union of
    classes, and every byte class of an embedded automaton too."""
    labels: set[frozenset[int]] = set()
    for dfa in slots:
        classes = dfa.byte_classes.tolist()
        for c in range(dfa.num_classes):
            labels.add(frozenset(b for b in range(256) if classes[b] == c))
    for rows in templates:
        for row in rows:
            by_target: dict[int, list[int]] = {}
            for b, t in row.items():
                by_target.setdefault(t, []).append(b)
            labels.update(frozenset(bs) for bs in by_target.values())
    signature: list[list[int]] = [[] for _ in range(256)]
    for i, label in enumerate(labels):
        for b in label:
            signature[b].append(i)
    ids: dict[tuple[int, ...], int] = {}
    class_of = np.array([ids.setdefault(tuple(sig), len(ids)) for sig in signature], dtype=np.int64)
    return class_of, len(ids)


def _nfa_size(node: Node, template_sizes: list[int], memo: dict[int, int], slot_sizes: Sequence[int] = ()) -> int:
    """The number of states :meth:`_Nfa.build` will add for ``node`` (checked before building)."""
    got = memo.get(id(node))
    if got is not None:
        return got
    if isinstance(node, _Set):
        size = template_sizes[node.set_id]
    elif isinstance(node, _Embed):
        size = slot_sizes[node.k]
    elif isinstance(node, _Look):
        size = 1
    elif isinstance(node, _Cat):
        size = sum(_nfa_size(x, template_sizes, memo, slot_sizes) for x in node.parts)
    elif isinstance(node, _Alt):
        size = 1 + sum(_nfa_size(x, template_sizes, memo, slot_sizes) for x in node.options)
    elif isinstance(node, _Rep):
        s = _nfa_size(node.x, template_sizes, memo, slot_sizes)
        size = 1 + (node.lo + 1) * s if node.hi is None else node.lo * s + (node.hi - node.lo) * (1 + s)
    else:  # pragma: no cover - symbols are made for expressions only (pattern_to_expr)
        raise Unsupported("a call of another automaton inside an NFA")
    memo[id(node)] = size
    return size


# A state's byte edges, by target: ((target, (class, ...)), ...).
Moves = tuple[tuple[int, tuple[int, ...]], ...]


def _class_moves(rows: list[dict[int, int]], class_of: np.ndarray, num_classes: int) -> list[Moves]:
    """A template's rows as class-level moves, grouped by target."""
    first_byte = np.full(num_classes, -1)
    first_byte[class_of[::-1]] = np.arange(255, -1, -1)
    out = []
    for row in rows:
        by_target: dict[int, list[int]] = {}
        for c, b in enumerate(first_byte.tolist()):
            t = row.get(b)
            if t is not None:
                by_target.setdefault(t, []).append(c)
        out.append(tuple((t, tuple(cs)) for t, cs in by_target.items()))
    return out


def _dfa_moves(dfa: ByteDFA, class_of: np.ndarray, num_classes: int) -> list[Moves]:
    """An embedded automaton's rows as class-level moves to its own states, grouped by target."""
    first_byte = np.full(num_classes, -1)
    first_byte[class_of[::-1]] = np.arange(255, -1, -1)
    cols = dfa.transitions[:, dfa.byte_classes[first_byte]]  # [state, our class]
    out = []
    for row in cols.tolist():
        by_target: dict[int, list[int]] = {}
        for c, t in enumerate(row):
            if t >= 0:
                by_target.setdefault(t, []).append(c)
        out.append(tuple((t, tuple(cs)) for t, cs in by_target.items()))
    return out


class _Nfa:
    """Thompson NFA: each state has byte moves (class-level) or epsilon edges, not both.

    Its size is known before it is built (:func:`_nfa_size`), so the budget is checked there."""

    ACCEPT = 0  # the one final state: no edges

    def __init__(self, templates: list[list[Moves]], embedded: Sequence[tuple[list[Moves], list[bool]]] = ()) -> None:
        self.templates = templates
        self.embedded = embedded  # (moves per state, finals) of each slot
        self.moves: list[Moves] = [()]
        self.eps: list[tuple[int, ...]] = [()]
        self.conds: dict[int, tuple[int, int]] = {}  # state -> (look k, next): passes if looks[k] holds

    def _hub(self, targets: tuple[int, ...]) -> int:
        self.moves.append(())
        self.eps.append(targets)
        return len(self.moves) - 1

    def _copy(self, k: int, nxt: int) -> int:
        """A fresh copy of template ``k`` whose "done" state is ``nxt``; returns its start."""
        tpl = self.templates[k]
        base = len(self.moves) - 1  # local state j >= 2 becomes base + j; local 0 becomes base + 1

        def where(j: int) -> int:
            return nxt if j == 1 else base + (j or 1)

        for j, moves in enumerate(tpl):
            if j != 1:
                self.moves.append(tuple((where(t), cs) for t, cs in moves))
                self.eps.append(())
        return base + 1

    def _embed(self, k: int, nxt: int) -> int:
        """A fresh copy of embedded automaton ``k``: a state per DFA state, and before each final
        one a hub that may also leave for ``nxt``; returns the entry of its start state."""
        rows, finals = self.embedded[k]
        base = len(self.moves)
        self.moves.extend([()] * len(rows))
        self.eps.extend([()] * len(rows))
        entry = list(range(base, base + len(rows)))
        for i, final in enumerate(finals):
            if final:
                entry[i] = self._hub((base + i, nxt))
        for i, row in enumerate(rows):
            self.moves[base + i] = tuple((entry[t], cs) for t, cs in row)
        return entry[0]

    def build(self, node: Node, nxt: int) -> int:
        """Add the states of ``node`` followed by ``nxt``; returns its start state."""
        if isinstance(node, _Set):
            return self._copy(node.set_id, nxt)
        if isinstance(node, _Embed):
            return self._embed(node.k, nxt)
        if isinstance(node, _Look):
            self.moves.append(())
            self.eps.append(())
            self.conds[len(self.moves) - 1] = (node.k, nxt)
            return len(self.moves) - 1
        if isinstance(node, _Cat):
            for part in reversed(node.parts):
                nxt = self.build(part, nxt)
            return nxt
        if isinstance(node, _Alt):
            return self._hub(tuple(self.build(o, nxt) for o in node.options))
        if isinstance(node, _Sym):  # pragma: no cover - symbols are made for expressions only (pattern_to_expr)
            raise Unsupported("a call of another automaton inside an NFA")
        if node.hi is None:
            loop = self._hub(())
            self.eps[loop] = (self.build(node.x, loop), nxt)
            nxt = loop
        else:
            end = nxt
            for _ in range(node.hi - node.lo):  # x{0,k}: (x(x(...)?)?)?, each skip straight to the end
                nxt = self._hub((self.build(node.x, nxt), end))
        for _ in range(node.lo):
            nxt = self.build(node.x, nxt)
        return nxt


StateSet = frozenset[int]


def _determinise(nfa: _Nfa, start: int, num_classes: int, max_states: int) -> tuple[np.ndarray, np.ndarray]:
    """Subset construction over byte classes. A DFA state is the set of NFA states with moves
    (plus ``ACCEPT``) in an epsilon closure; state 0 is the start."""
    moves, eps = nfa.moves, nfa.eps
    work, work_limit = 0, SUBSET_ENTRIES_PER_DFA_STATE * max_states
    closures: dict[int, StateSet] = {}

    def closure(q: int) -> StateSet:
        nonlocal work
        got = closures.get(q)
        if got is not None:
            return got
        out: set[int] = set()
        seen = {q}
        stack = [q]
        while stack:
            s = stack.pop()
            done = closures.get(s)
            if done is not None:  # complete already: no need to walk on
                out |= done
            elif eps[s]:
                for t in eps[s]:
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
            elif moves[s] or s == _Nfa.ACCEPT:
                out.add(s)
        closures[q] = result = frozenset(out)
        work += len(result)
        return result

    first = closure(start)
    ids: dict[StateSet, int] = {first: 0}
    order: list[StateSet] = [first]
    target_ids: dict[tuple[int, ...], int] = {}  # NFA targets of a move -> DFA state
    rows: list[list[int]] = []
    for S in order:  # grows while we walk it
        row = [-1] * num_classes
        movers = [moves[q] for q in S if moves[q]]
        groups: Sequence[tuple[tuple[int, ...], Sequence[int]]]
        if len(movers) == 1:
            groups = [((t,), cs) for t, cs in movers[0]]
        else:  # the targets of each class, then the classes of each target list
            per_class: dict[int, list[int]] = {}
            for mv in movers:
                for target, classes in mv:
                    for c in classes:
                        per_class.setdefault(c, []).append(target)
            by_targets: dict[tuple[int, ...], list[int]] = {}
            for c, targets in per_class.items():
                by_targets.setdefault(tuple(targets), []).append(c)
            groups = list(by_targets.items())
        for ts, cs in groups:
            i = target_ids.get(ts)
            if i is None:
                T = closure(ts[0]) if len(ts) == 1 else frozenset().union(*map(closure, ts))
                i = ids.get(T)
                if i is None:
                    i = ids[T] = len(order)
                    if i >= max_states:
                        raise CompileBudgetExceeded("automaton states (before minimisation)", max_states)
                    work += len(T)
                    if work > work_limit:  # e.g. (a|b?){5000}: every set holds thousands
                        raise CompileBudgetExceeded("NFA states held by the subset construction", work_limit)
                    order.append(T)
                target_ids[ts] = i
            for c in cs:
                row[c] = i
        rows.append(row)
    table = np.array(rows, dtype=np.int32).reshape(len(rows), num_classes)
    finals = np.array([_Nfa.ACCEPT in S for S in order], dtype=bool)
    return table, finals
