"""The examples in the core modules' docstrings run as shown."""

from __future__ import annotations

import doctest
import importlib

import pytest

CORE = ["structgen", "structgen.errors", "structgen.automata.regex", "structgen.automata.dfa", "structgen.automata.utf8", "structgen.automata.nfa",
        "structgen.vocab.vocabulary", "structgen.vocab.trie", "structgen.guides.dfa_guide", "structgen.compiler",
        "structgen.json_schema.dispatch", "structgen.json_schema.formats", "structgen.json_schema.numbers", "structgen.json_schema.universe",
        "structgen.json_schema.objects", "structgen.json_schema.keywords", "structgen.automata.algebra", "structgen.automata.spans", "structgen.json_schema.spans",
        "structgen.json_schema.dialects", "structgen.automata.unicode_props"]


@pytest.mark.parametrize("name", CORE)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
