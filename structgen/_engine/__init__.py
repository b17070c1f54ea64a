"""structgen's native engine (C++, built by scikit-build-core): the expression pool, its
derivatives, byte classes and liveness search, and lazy automata. The Python faces are
:mod:`structgen.automata.expr` (``ExprPool``) and :mod:`structgen.automata.lazy`
(``LazyAutomaton``); nothing else imports this module. See ``docs/engine.md``.
"""

from ._core import (  # noqa: F401
    EPSILON, INF, NOTHING, UNBUILT, EmbeddedDfa, ExprsView, FinalsView, FlatView, LazyAutomaton, MinLength, Pool,
)

__all__ = [
    "EPSILON", "INF", "NOTHING", "UNBUILT", "EmbeddedDfa", "ExprsView", "FinalsView", "FlatView", "LazyAutomaton",
    "MinLength", "Pool",
]
