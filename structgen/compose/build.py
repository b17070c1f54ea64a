"""A composed format (:mod:`structgen.formats`) as ONE network of automata.

Everything is an expression of one :class:`~structgen.automata.expr.ExprPool`: literals and regexes
are built in it directly; a JSON Schema or a grammar region is compiled by the door's cached front
end (the ``region`` callback :func:`structgen.compiler.compile` passes, so a schema compiles once
whether it arrives alone or as a region) and its automata copied in (a region that calls automata
of its own keeps them as automata of the composed network, their calls renumbered; a JSON value is
called, a grammar's root inlined, since it may derive the empty string); spans of documents are
embedded automata.

Free text is an *automaton of its own* that the root calls: "text up to the first ``end``" is
``both(Σ*·end, negate(Σ*·end·Σ⁺))`` (ends with ``end``, and no earlier occurrence of it ends
before), "text without the strings X" is ``negate(Σ*·X·Σ*)``, minus the empty string (a called
automaton accepts only non-empty strings; the root makes it optional). Intersections and
complements are thereby symbol-free terms whose liveness the pool decides exactly (a witness
search over bytes), and the root, which calls everything, holds no algebra. A token whose bytes
end the text and start what follows is walked across the return like any other token.

Example:
    >>> import structgen
    >>> from structgen.formats import Regex, Tag, Text, Sequence
    >>> vocab = structgen.Vocabulary.from_bytes([b"<t>", b"</t>", b"a", b"1", b"</t>1", b""], eos_token_ids=[5])
    >>> guide = structgen.compile(Sequence(Tag("<t>", Text(), "</t>"), Regex("[0-9]")), vocab)
    >>> s = guide.advance(guide.initial_state, [0, 2, 2])
    >>> guide.allowed_token_ids(s).tolist()      # more text, the end tag, or the end tag and the digit
    [0, 1, 2, 3, 4]
    >>> guide.is_final(guide.next_state(s, 4))
    True
"""

from __future__ import annotations

from typing import Callable, Hashable, Union

from ..automata.dfa import ByteDFA
from ..automata.expr import ALL_BYTES, NOTHING, ExprPool
from ..automata.expr_rewrite import copy_term
from ..automata.network import Network
from ..automata.regex import regex_to_expr
from ..automata.spans import extract_dfa
from ..errors import ConstraintError, UnsatisfiableConstraint
from ..formats import (Choice, Extract, Format, Grammar, JsonSchema, Literal, Regex, Repeat, Sequence, Tag, Text,
                       Triggered)

__all__ = ["Automata", "build_network"]

#: What a constraint compiles to before it meets a vocabulary: an eager automaton, a network of
#: automata, or an expression of a pool (its automaton is built lazily, per guide).
Automata = Union[ByteDFA, Network, tuple[ExprPool, int]]


class _Builder:
    """Builds the root expression and the called automata of one composed network."""

    def __init__(self, region: Callable[[Format], Automata]) -> None:
        self.pool = ExprPool()
        self.compile_region = region
        self.exprs: list[int] = [NOTHING]  # automaton 0 (the root) is set last
        self.required: dict[int, int] = {}
        self.unique_items: dict[int, tuple[int, ...]] = {}
        self._callees: dict[Hashable, int] = {}
        self.anything = self.pool.anything

    def call(self, key: Hashable, make: Callable[[], int]) -> int:
        """A call of the automaton ``make()`` builds (one automaton per ``key``)."""
        k = self._callees.get(key)
        if k is None:
            e = make()
            if e == NOTHING or not self.pool.is_live(e):
                raise UnsatisfiableConstraint(f"no text matches {key!r}")
            k = self._callees[key] = len(self.exprs)
            self.exprs.append(e)
        return self.pool.symbol(k)

    # -- free text --------------------------------------------------------------------------------

    def _contains(self, strings: tuple[str, ...]) -> int:
        pool = self.pool
        any_of = pool.alt([pool.literal(s.encode("utf-8")) for s in strings])
        return pool.concat([self.anything, any_of, self.anything])

    def text(self, exclude: tuple[str, ...]) -> int:
        """Any text without the strings of ``exclude`` (possibly empty), inline."""
        if not exclude:
            return self.anything
        return self.pool.negate(self._contains(exclude))

    def text_up_to(self, ends: tuple[str, ...], last: str, exclude: tuple[str, ...] = ()) -> int:
        """Text whose first occurrence of any of ``ends`` is ``last``, at its very end (and
        without ``exclude`` before it), as one call."""
        pool = self.pool

        def make() -> int:
            any_end = pool.alt([pool.literal(s.encode("utf-8")) for s in ends])
            ends_here = pool.seq(self.anything, pool.literal(last.encode("utf-8")))
            earlier = pool.concat([self.anything, any_end, pool.repeat(pool.bytes_of(ALL_BYTES), 1, None)])
            parts = [ends_here, pool.negate(earlier)]
            if exclude:
                parts.append(pool.seq(pool.negate(self._contains(exclude)), pool.literal(last.encode("utf-8"))))
            return pool.both(parts)

        return self.call(("up-to", ends, last, exclude), make)

    # -- the formats -------------------------------------------------------------------------------

    def build(self, fmt: Format) -> int:
        pool = self.pool
        if isinstance(fmt, Literal):
            return pool.literal(fmt.text.encode("utf-8"))
        if isinstance(fmt, Text):
            return self.text(fmt.exclude)
        if isinstance(fmt, Regex):
            return regex_to_expr(fmt.pattern, pool, max_states=fmt.max_states)
        if isinstance(fmt, JsonSchema):  # (a call: a witness search passes it in one step)
            return self.call(fmt.key(), lambda: self.region(fmt))
        if isinstance(fmt, Grammar):  # (inline: a grammar may derive the empty string)
            return self.region(fmt)
        if isinstance(fmt, Extract):
            dfa = extract_dfa(fmt.documents, min_length=fmt.min_length, max_length=fmt.max_length,
                              pattern=fmt.pattern, max_states=fmt.max_states)
            return pool.embed(dfa)
        if isinstance(fmt, Sequence):
            return pool.concat([self.build(p) for p in fmt.parts])
        if isinstance(fmt, Choice):
            return pool.alt([self.build(p) for p in fmt.parts])
        if isinstance(fmt, Repeat):
            return self.repeat(self.build(fmt.part), fmt.min, fmt.max, fmt.separator)
        if isinstance(fmt, Tag):
            return self.tag(fmt)
        if isinstance(fmt, Triggered):
            return self.triggered(fmt)
        raise ConstraintError(f"not a format: {fmt!r}")

    def repeat(self, x: int, lo: int, hi: int | None, separator: str) -> int:
        pool = self.pool
        if not separator:
            return pool.repeat(x, lo, hi)
        more = pool.repeat(pool.seq(pool.literal(separator.encode("utf-8")), x), max(lo - 1, 0),
                           None if hi is None else hi - 1)
        some = pool.seq(x, more)
        return some if lo >= 1 else pool.optional(some)

    def triggered(self, fmt: Triggered) -> int:
        """Tags, each after the text up to its trigger (one call per trigger), then text without
        any trigger."""
        pool = self.pool
        options = []
        for trigger in fmt.triggers:
            rests = [self.tag(t, len(trigger)) for t in fmt.tags if t.begin.startswith(trigger)]
            if rests:
                options.append(pool.seq(self.text_up_to(fmt.triggers, trigger), pool.alt(rests)))
        return pool.seq(pool.repeat(pool.alt(options), fmt.min, fmt.max), self.text(fmt.triggers))

    def tag(self, tag: Tag, skip: int = 0) -> int:
        """``tag`` without the first ``skip`` characters of its begin (a trigger already read)."""
        pool = self.pool
        begin = pool.literal(tag.begin[skip:].encode("utf-8"))
        if isinstance(tag.content, Text):  # (the call reads the text and the end string)
            return pool.seq(begin, self.text_up_to((tag.end,), tag.end, tag.content.exclude))
        return pool.concat([begin, self.build(tag.content), pool.literal(tag.end.encode("utf-8"))])

    # -- regions compiled by the door: JSON Schemas, grammars ---------------------------------------

    def region(self, fmt: Format) -> int:
        compiled = self.compile_region(fmt)
        pool = self.pool
        if isinstance(compiled, ByteDFA):
            return pool.embed(compiled)
        if isinstance(compiled, Network):
            shift = len(self.exprs) - 1  # automaton k > 0 of the schema becomes k + shift here
            memo: dict[int, int] = {}
            root = copy_term(pool, compiled.pool, compiled.exprs[0], shift, memo)
            for k in range(1, len(compiled.exprs)):
                self.exprs.append(copy_term(pool, compiled.pool, compiled.exprs[k], shift, memo))
            for k, bits in compiled.required.items():
                self.required[k + shift] = bits
            for k, items in compiled.unique_items.items():
                self.unique_items[k + shift] = tuple(i + shift for i in items)
            return root
        src, e = compiled
        return copy_term(pool, src, e)


def build_network(fmt: Format, region: Callable[[Format], Automata]) -> Network:
    """The network of ``fmt``: automaton 0 (the root) calls the others. ``region`` compiles a
    JSON Schema or a grammar region (:func:`structgen.compiler.compile` passes its cached front end)."""
    if not isinstance(fmt, Format):
        raise TypeError(f"a composed constraint is a format (structgen.formats.Text, Tag, ...), not {type(fmt).__name__}")
    b = _Builder(region)
    root = b.build(fmt)
    if root == NOTHING:
        raise UnsatisfiableConstraint(f"no output matches {fmt.describe()}")
    b.exprs[0] = root
    return Network.from_exprs(b.pool, b.exprs, required=b.required, unique_items=b.unique_items)
