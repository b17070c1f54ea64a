"""Old module paths of the flat package, kept importable for one release (0.2 drops them).

The package was one flat folder up to 0.1 (``structgen.guide``, ``structgen.json_schema`` as a
module, ...); it is now subpackages by layer. ``import structgen.guide`` still works: it returns
the module that holds that code now and warns with a ``DeprecationWarning`` naming the new path.
The public API, ``structgen.*``, never moved.

Example:
    >>> import sys, warnings
    >>> _ = sys.modules.pop("structgen.fsm", None)  # (as in a fresh process)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     from structgen.fsm import ByteDFA
    >>> ByteDFA.__module__, caught[0].category.__name__
    ('structgen.automata.dfa', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Sequence

__all__ = ["MOVED", "install"]

#: old module -> the module that holds its code now
MOVED = {
    "structgen.fsm": "structgen.automata.dfa",
    "structgen.utf8": "structgen.automata.utf8",
    "structgen.nfa": "structgen.automata.nfa",
    "structgen.lookaround": "structgen.automata.lookaround",
    "structgen.regex": "structgen.automata.regex",
    "structgen.algebra": "structgen.automata.algebra",
    "structgen.spans": "structgen.automata.spans",
    "structgen.unicode_props": "structgen.automata.unicode_props",
    "structgen.vocabulary": "structgen.vocab.vocabulary",
    "structgen.index": "structgen.vocab.trie",
    "structgen.slices": "structgen.vocab.slices",
    "structgen.guide": "structgen.guides.dfa_guide",
    "structgen.distance": "structgen.guides.distances",
    "structgen.pushdown": "structgen.guides.pushdown",
    "structgen.json_algebra": "structgen.json_schema.universe",
    "structgen.json_keywords": "structgen.json_schema.keywords",
    "structgen.json_objects": "structgen.json_schema.objects",
    "structgen.json_numbers": "structgen.json_schema.numbers",
    "structgen.json_formats": "structgen.json_schema.formats",
    "structgen.json_dialects": "structgen.json_schema.dialects",
    "structgen.spans_json": "structgen.json_schema.spans",
    "structgen.logits_processor": "structgen.hf.logits_processor",
    "structgen.decoding": "structgen.hf.decoding",
    "structgen.generation": "structgen.hf.generation",
    "structgen.models": "structgen.hf.models",
}


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module name and loads it as the new module (the same module object)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new} (the old path goes in structgen 0.2); "
            "public names are importable from structgen itself",
            DeprecationWarning,
            stacklevel=3,
        )
        return importlib.import_module(new)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module is the new one, already imported."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once; ``structgen/__init__.py`` calls it)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
