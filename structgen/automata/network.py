"""A network of byte automata that call one another: the compile-time picture of a pushdown guide.

A flat automaton copies a sub-schema at every place it is used and unrolls recursion; a
:class:`Network` keeps one automaton per shared piece (a ``$ref`` target, a large repeated
sub-schema, "any JSON value") and lets an automaton *call* another
(:func:`~structgen.automata.markers.call_marker`). The runtime over it is
:class:`structgen.guides.pushdown.PushdownGuide`.
"""

from __future__ import annotations

import threading
from typing import Sequence

from .dfa import DEFAULT_MAX_STATES, ByteDFA
from .regex import slotted_regex_to_dfa

__all__ = ["Network"]


class Network:
    """The automata of a pushdown guide, as regexes (built into DFAs on first use).

    ``regexes[0]`` is the root; a :func:`.nfa.call_marker` ``(k)`` in a regex calls
    ``regexes[k]``, and :func:`.nfa.slot_marker` ``(i)`` embeds ``slots[i]``. Every called
    automaton must accept only non-empty strings.

    Example:
        >>> from structgen.automata.markers import call_marker
        >>> net = Network([f"a{call_marker(1)}?b", f"x{call_marker(1)}?y"], [])
        >>> net.dfa(1).num_states > 0
        True
    """

    def __init__(
        self, regexes: Sequence[str], slots: Sequence[ByteDFA], *, max_states: int = DEFAULT_MAX_STATES,
        required: dict[int, int] | None = None,
    ) -> None:
        self.regexes = tuple(regexes)
        self.slots = tuple(slots)
        self.max_states = max_states
        #: per automaton with guards: the bit set of the keys its close guard requires
        self.required = dict(required or {})
        self._dfas: list[ByteDFA | None] = [None] * len(self.regexes)
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[object, ...]:
        return (_network, (self.regexes, self.slots, self.max_states, self.required))

    def __len__(self) -> int:
        return len(self.regexes)

    def dfa(self, k: int) -> ByteDFA:
        """Automaton ``k`` (built from its regex on first use)."""
        d = self._dfas[k]
        if d is None:
            d = slotted_regex_to_dfa(self.regexes[k], self.slots, max_states=self.max_states)
            if k and d.finals[0]:
                raise AssertionError(f"called automaton {k} accepts the empty string")
            self._dfas[k] = d
        return d

    @property
    def memory_bytes(self) -> int:
        built = [d for d in self._dfas if d is not None]
        return sum(len(r) for r in self.regexes) + sum(d.transitions.nbytes + 2048 for d in built)


def _network(regexes: tuple[str, ...], slots: tuple[ByteDFA, ...], max_states: int, required: dict[int, int]) -> Network:
    return Network(regexes, slots, max_states=max_states, required=required)
