"""The examples in the core modules' docstrings run as shown."""

from __future__ import annotations

import doctest
import importlib

import pytest

CORE = ["structgen", "structgen.errors", "structgen.regex", "structgen.fsm", "structgen.utf8", "structgen.nfa",
        "structgen.vocabulary", "structgen.index", "structgen.guide", "structgen.compiler",
        "structgen.json_schema", "structgen.json_formats", "structgen.json_numbers", "structgen.json_algebra",
        "structgen.json_objects", "structgen.json_keywords", "structgen.algebra", "structgen.spans", "structgen.spans_json",
        "structgen.json_dialects", "structgen.unicode_props"]


@pytest.mark.parametrize("name", CORE)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
