"""What the parts of the schema compiler share: one :class:`Context` per compile.

The schema compiler (:class:`.dispatch.SchemaCompiler`) is made of parts, one per idea
(:mod:`.values`, :mod:`.strings`, :mod:`.numbers`, :mod:`.arrays`, :mod:`.objects`,
:mod:`.keywords`, :mod:`.universe`). Each receives the context: the options, the expression pool
every part builds its terms in (with the JSON pieces, :class:`.terms.JsonTerms`), the references
(:class:`.refs.RefResolver`), the call graph (:class:`.calls.CallGraph`), the validator, the
documents' spans, and the automata algebra. A part reaches the others through
:attr:`Context.compiler` (the :class:`Compiler` protocol), never by importing them.

What a part returns is a :data:`Term`: an expression id of :attr:`Context.pool` (``NOTHING``, 0,
is the empty language). An automaton built eagerly (an algebra result, a span automaton) is a term
too, embedded in the pool (:meth:`Context.embed`).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterable, Iterator, Optional, Protocol

import referencing

from ..automata.dfa import ByteDFA, minimal_dfa
from ..automata.expr import NOTHING, ExprPool
from ..automata.expr_dfa import lazy_to_dfa
from ..automata.regex import regex_to_expr
from ..errors import CompileBudgetExceeded
from .calls import CallGraph
from .loading import validator_class
from .ops import Refs, Schema
from .options import SchemaOptions
from .refs import RefResolver
from .spans import SpanStrings
from .terms import TEMPLATE, JsonTerms

__all__ = ["ALGEBRA_SEARCH_LIMIT", "MAX_REGEX_SIZE", "Compiler", "Context", "Term"]

#: Enumerations spelled out, and regexes printed (:func:`.api.schema_to_regex`), longer than this
#: many characters raise :class:`CompileBudgetExceeded`.
MAX_REGEX_SIZE = 1_000_000

#: How many terms the algebra's emptiness check (:meth:`Context.inter`, :meth:`Context.minus`)
#: searches before it gives up with :class:`CompileBudgetExceeded`.
ALGEBRA_SEARCH_LIMIT = 200_000

#: An expression id of the compile's pool; ``NOTHING`` (0) is the empty language.
Term = int


class Compiler(Protocol):
    """What the parts ask of the schema compiler (and, through it, of each other)."""

    def compile(self, s: Schema, path: str, refs: Refs) -> Term:
        """The term of ``s`` at JSON pointer ``path`` (in a network, maybe a call)."""

    def compile_node(self, s: Schema, path: str, refs: Refs) -> Term:
        """The term of ``s`` itself, never a call of it."""

    def any_value(self) -> Term:
        """Any JSON value."""

    def string(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """The JSON strings of ``s``."""

    def array(self, s: dict[str, Any], path: str, refs: Refs) -> Term:
        """The JSON arrays of ``s``."""

    def over(self, s: Any, path: str, refs: Refs) -> Term:
        """An over-approximation of ``s`` within the canonical universe (see :mod:`.universe`)."""

    def positive_in_universe(self, term: Term, path: str) -> Term:
        """``term`` restricted to the canonical universe, the side a subtraction starts from."""

    def without_unevaluated(self, s: dict[str, Any], path: str) -> dict[str, Any]:
        """``s`` with ``unevaluated*`` rewritten over what is evaluated in place."""


class Context:
    """The shared state of one compile of ``root`` (a 2020-12 schema) under ``options``.

    ``network``: sub-schemas may become called automata (no documents).
    """

    def __init__(
        self, root: Schema, options: SchemaOptions, spans: Optional[SpanStrings], compiler: Compiler, *,
        network: bool = False,
    ) -> None:
        self.root = root
        self.options = options
        self.compiler = compiler
        self.spans = spans  # extract_from: string values restricted to spans of documents
        self._documents = spans  # (kept while ``spans`` is set aside: its placeholders are resolved by it)
        # a guide's pool starts as a fork of the shared JSON pieces and formats (not copied one by
        # one); a regex printed from a fresh pool orders its choices the same in every process
        self.pool = ExprPool.forked(TEMPLATE.pool) if network else ExprPool()
        self.t = JsonTerms(self.pool, options.whitespace)
        # the output's style: the options', widened for a while by widened()
        self.key_order = options.key_order
        self.extra_properties = options.extra_properties
        self.refs = RefResolver(root)
        self.calls = CallGraph(
            self.pool, on=network and spans is None, inline=compiler.compile_node, any_value=compiler.any_value,
            depth=options.max_recursion_depth,
        )
        self._dfas: dict[Term, ByteDFA] = {}  # term -> its automaton (embedded or built for algebra)
        self._bodies: dict[str, Term] = {}  # translated pattern -> its term

    @functools.cached_property
    def validator(self) -> Any:
        """``jsonschema``'s validator of the root (no remote retrieval), made on first use: a few
        keywords ask it (``propertyNames``, ``enum`` against the rest, empty ``oneOf`` branches)."""
        return validator_class(self.options)(self.root, registry=referencing.Registry())

    # -- automata inside terms -----------------------------------------------------------------

    def embed(self, dfa: ByteDFA) -> Term:
        """The term of an automaton built eagerly (``NOTHING`` when it accepts nothing)."""
        term = self.pool.embed(dfa)
        if term != NOTHING:
            self._dfas.setdefault(term, dfa)
        return term

    def to_dfa(self, term: Term, path: str = "", *, minimal: bool = False) -> ByteDFA:
        """The automaton of ``term``, for algebra: calls inlined (:meth:`.CallGraph.flat`), span
        placeholders resolved; ``minimal``: minimised and numbered canonically (for a result
        returned to the user; the algebra minimises its products anyway). A blown state budget
        names ``path``, the schema whose automaton grew too big."""
        cached = self._dfas.get(term)
        if cached is not None:
            return minimal_dfa(cached.transitions, cached.finals, cached.byte_classes) if minimal else cached
        try:
            flat = self.calls.flat(term)
            if self._documents is not None:
                flat = self._documents.resolve(self.pool, flat)
            dfa = lazy_to_dfa(self.pool, flat, max_states=self.options.max_states, minimise=minimal)
        except CompileBudgetExceeded as e:
            if e.path:
                raise
            raise CompileBudgetExceeded(e.what, e.limit, path or "/") from None
        self._dfas[term] = dfa
        return dfa

    def body(self, regex: str, path: str) -> Term:
        """The term of the contents of JSON strings that ``regex`` (a translated ``pattern`` or
        custom format, see :mod:`.ecma_pattern`) matches. Its look-arounds and ``\\A``/``\\Z`` read
        the string's contents only: such a body is an automaton of its own."""
        got = self._bodies.get(regex)
        if got is None:
            try:
                got = regex_to_expr(regex, self.pool, max_states=self.options.max_states)
            except CompileBudgetExceeded as e:
                if e.path:
                    raise
                raise CompileBudgetExceeded(e.what, e.limit, path or "/") from None
            self._bodies[regex] = got
        return got

    def quoted(self, regex: str, path: str) -> Term:
        """The JSON strings whose contents ``regex`` (a translated ``pattern``) matches."""
        return self.t.quoted(self.body(regex, path))

    # -- the algebra (NOTHING: the empty language) ----------------------------------------------

    def inter(self, a: Term, b: Term, path: str) -> Term:
        """The strings of both ``a`` and ``b``: a lazy intersection (its states are built as
        generation reaches them; no product automaton, no state budget), ``NOTHING`` when no
        string is in both."""
        if a == NOTHING or b == NOTHING:
            return NOTHING
        if a == b:
            return a
        return self.live(self.pool.both((self.operand(a), self.operand(b))), path)

    def minus(self, a: Term, b: Term, path: str) -> Term:
        """The strings of ``a`` that ``b`` does not match: a lazy difference (see :meth:`inter`)."""
        if a == NOTHING or b == NOTHING:
            return a
        return self.live(self.pool.minus(self.operand(a), self.operand(b)), path)

    def inter_all(self, parts: Iterable[Term], path: str, without: Iterable[Term] = (), checked: bool = True) -> Term:
        """The strings of every one of ``parts`` and of none of ``without``: the same term as
        :meth:`inter` and :meth:`minus` applied one at a time (the pool flattens nested
        intersections), searched for a string once at the end (``NOTHING`` when none is left)
        instead of after each step. ``checked=False`` leaves out that search too: for a term
        whose user searches its own term anyway (an over-approximation is only subtracted or
        intersected), where an empty term is still exact, only larger than ``NOTHING``.

        Example: ``ctx.inter_all([objects, having_a, having_b], path, without=[having_c])``."""
        unique = list(dict.fromkeys(parts))
        if NOTHING in unique:
            return NOTHING
        negated = [self.pool.negate(self.operand(term)) for term in dict.fromkeys(without) if term != NOTHING]
        if len(unique) == 1 and not negated:
            return unique[0]
        term = self.pool.both([*map(self.operand, unique), *negated])
        return self.live(term, path) if checked else term

    def operand(self, term: Term) -> Term:
        """``term`` as an operand of the algebra: calls inlined (:meth:`.CallGraph.flat`), span
        placeholders resolved (intersections and complements read bytes, not symbols)."""
        flat = self.calls.flat(term)
        if self._documents is not None:
            flat = self._documents.resolve(self.pool, flat)
        return flat

    def live(self, term: Term, path: str) -> Term:
        """``term``, or ``NOTHING`` when no string matches it. Deciding that searches the term's
        derivatives for a shortest string (:meth:`.ExprPool.liveness`); a search that runs past
        :data:`ALGEBRA_SEARCH_LIMIT` terms raises :class:`CompileBudgetExceeded` naming ``path``."""
        live = self.pool.liveness(term, ALGEBRA_SEARCH_LIMIT)
        if live is None:
            raise CompileBudgetExceeded("terms searched for a string of an intersection or a complement", ALGEBRA_SEARCH_LIMIT, path or "/")
        return term if live else NOTHING

    def unite(self, parts: Iterable[Term]) -> Term:
        return self.pool.alt(parts)

    # -- retries where an under-approximation came out empty ------------------------------------

    @contextlib.contextmanager
    def widened(self) -> Iterator[None]:
        """Objects in any key order and with extra keys while inside: both only add valid
        strings, so whatever is compiled here is still sound (the options are otherwise the
        user's choice of output style)."""
        saved = self.key_order, self.extra_properties
        self.key_order, self.extra_properties = "any", True
        try:
            yield
        finally:
            self.key_order, self.extra_properties = saved

    @property
    def is_wide(self) -> bool:
        """Whether the output style is already the widest (any key order, extra keys)."""
        return self.key_order == "any" and self.extra_properties

    def retry_widened(self, attempt: Callable[[], Term]) -> Term:
        """``attempt()``; when it finds nothing (an intersection or a subtraction of our
        under-approximated languages came out empty), once more :meth:`widened`."""
        got = attempt()
        if got == NOTHING and not self.is_wide:
            with self.widened():
                got = attempt()
        return got
