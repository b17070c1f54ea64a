"""What the parts of the schema compiler share: one :class:`Context` per compile.

The schema compiler (:class:`.dispatch.SchemaCompiler`) is made of parts, one per idea
(:mod:`.values`, :mod:`.strings`, :mod:`.numbers`, :mod:`.arrays`, :mod:`.objects`,
:mod:`.keywords`, :mod:`.universe`). Each receives the context: the options, the references
(:class:`.refs.RefResolver`), the call graph (:class:`.calls.CallGraph`), the validator, the
documents' spans, and the automata embedded in the regex so far (``slots``) with the algebra on
them. A part reaches the others through :attr:`Context.compiler` (the :class:`Compiler` protocol),
never by importing them.

Regexes written here may hold *slot markers*: one character standing for an automaton (a result of
the algebra: ``inter``, ``minus``), see :func:`structgen.automata.markers.slot_marker`. ``None``
stands for the empty language.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional, Protocol, Sequence

import referencing

from ..automata.algebra import difference, intersect
from ..automata.dfa import ByteDFA
from ..automata.markers import slot_marker
from ..automata.regex import slotted_regex_to_dfa
from ..errors import CompileBudgetExceeded
from .calls import CallGraph
from .ecma_pattern import has_assertions
from .loading import validator_class
from .ops import Schema
from .options import SchemaOptions
from .refs import RefResolver
from .spans import SpanStrings

__all__ = ["MAX_REGEX_SIZE", "Compiler", "Context", "Regex"]

#: Regexes longer than this many characters raise :class:`CompileBudgetExceeded`.
MAX_REGEX_SIZE = 1_000_000

Regex = Optional[str]  # None: the empty language


class Compiler(Protocol):
    """What the parts ask of the schema compiler (and, through it, of each other)."""

    def compile(self, s: Schema, path: str, refs: tuple) -> str:
        """The regex of ``s`` at JSON pointer ``path`` (in a network, maybe a call)."""

    def compile_node(self, s: Schema, path: str, refs: tuple) -> str:
        """The regex of ``s`` itself, never a call of it."""

    def any_value(self) -> str:
        """Any JSON value."""

    def string(self, s: dict, path: str, refs: tuple) -> str:
        """The JSON strings of ``s``."""

    def array(self, s: dict, path: str, refs: tuple) -> str:
        """The JSON arrays of ``s``."""

    def over(self, s: Any, path: str, refs: tuple) -> Regex:
        """An over-approximation of ``s`` within the canonical universe (see :mod:`.universe`)."""

    def positive_in_universe(self, regex: str, path: str) -> str:
        """``regex`` restricted to the canonical universe, the side a subtraction starts from."""

    def without_unevaluated(self, s: dict, path: str) -> Schema:
        """``s`` with ``unevaluated*`` rewritten over what is evaluated in place."""


class Context:
    """The shared state of one compile of ``root`` (a 2020-12 schema) under ``options``.

    ``network``: sub-schemas may become called automata (no documents); ``regex_only``: no
    automaton is spliced in where a regex will do (:func:`.api.schema_to_regex`).
    """

    def __init__(
        self, root: Schema, options: SchemaOptions, spans: Optional[SpanStrings], compiler: Compiler, *,
        network: bool = False, regex_only: bool = False,
    ) -> None:
        self.root = root
        self.options = options
        self.compiler = compiler
        self.spans = spans  # extract_from: string values restricted to spans of documents
        self.regex_only = regex_only
        self.ws = options.between_tokens
        # the output's style: the options', widened for a while by widened()
        self.key_order = options.key_order
        self.extra_properties = options.extra_properties
        self.validator = validator_class(options)(root, registry=referencing.Registry())  # (no remote retrieval)
        self.refs = RefResolver(root)
        # Automata the regex refers to by a slot marker (FSM algebra results).
        self.slots: list[ByteDFA] = []
        self.calls = CallGraph(
            self.slots, on=network and spans is None, inline=compiler.compile_node, any_value=compiler.any_value
        )
        self._dfas: dict[str, ByteDFA] = {}
        self._quoted: dict[str, str] = {}  # pattern translation with assertions -> its slot marker

    # -- automata inside the regex -------------------------------------------------------------

    def embed(self, dfa: ByteDFA) -> str:
        """A one-character regex that stands for ``dfa`` (an FSM-algebra result) in the output."""
        self.slots.append(dfa)
        return slot_marker(len(self.slots) - 1)

    def embed_calling(self, build: Callable[[Callable[[str], str]], ByteDFA]) -> str:
        """:meth:`embed` of ``build(convert)``, an automaton made from regexes that pass through
        ``convert``: given the identity first, so calls stay calls; the automata algebra, which
        needs calls inlined, gets ``build(calls.flat)`` in its place (see :meth:`.CallGraph.flat`)."""
        marker = self.embed(build(lambda r: r))
        if self.calls.on:
            self.calls.flat_twin(marker, lambda: self.embed(build(self.calls.flat)))
        return marker

    def to_dfa(self, regex: str, path: str = "") -> ByteDFA:
        """The automaton of a regex written by this compiler (its slots included), for algebra.

        A blown state budget names ``path``, the schema whose automaton grew too big."""
        cached = self._dfas.get(regex)
        if cached is not None:
            return cached
        try:
            slots = self.slots if self.spans is None else self.spans.resolve(self.slots)  # (no placeholders)
            dfa = slotted_regex_to_dfa(self.budget(self.calls.flat(regex), path), slots, max_states=self.options.max_states)
        except CompileBudgetExceeded as e:
            if e.path:
                raise
            raise CompileBudgetExceeded(e.what, e.limit, path or "/") from None
        self._dfas[regex] = dfa
        return dfa

    def quoted(self, body: str, path: str) -> str:
        """The JSON strings whose contents ``body`` (a translated ``pattern``) matches. Its
        look-arounds and ``\\A``/``\\Z`` read the string's contents only, so a body that has them is
        compiled on its own and spliced in as an automaton."""
        if has_assertions(body):
            marker = self._quoted.get(body)
            if marker is None:
                marker = self._quoted[body] = self.embed(self.to_dfa(body, path))
            body = marker
        return f'"{body}"'

    def budget(self, regex: str, path: str) -> str:
        """``regex``, or :class:`CompileBudgetExceeded` when it is longer than :data:`MAX_REGEX_SIZE`."""
        if len(regex) > MAX_REGEX_SIZE:
            raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE, path or "/")
        return regex

    # -- the algebra (None: the empty language) ------------------------------------------------

    def as_regex(self, dfa: ByteDFA) -> Regex:
        return None if dfa.is_empty else self.embed(dfa)

    def inter(self, a: Regex, b: Regex, path: str) -> Regex:
        if a is None or b is None:
            return None
        if a == b:
            return a
        return self.as_regex(intersect(self.to_dfa(a, path), self.to_dfa(b, path), max_states=self.options.max_states))

    def minus(self, a: Regex, b: Regex, path: str) -> Regex:
        if a is None or b is None:
            return a
        return self.as_regex(difference(self.to_dfa(a, path), self.to_dfa(b, path), max_states=self.options.max_states))

    @staticmethod
    def unite(parts: Sequence[Regex], path: str = "") -> Regex:
        kept = [p for p in dict.fromkeys(parts) if p is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else "(?:" + "|".join(kept) + ")"

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

    def retry_widened(self, attempt: Callable[[], Regex]) -> Regex:
        """``attempt()``; when it finds nothing (an intersection or a subtraction of our
        under-approximated languages came out empty), once more :meth:`widened`."""
        got = attempt()
        if got is None and not self.is_wide:
            with self.widened():
                got = attempt()
        return got
