"""The examples in the docstrings of every module below the transformers integration run as shown."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import structgen

#: Modules above the core (torch, transformers, the web stack): their examples need a model.
NEEDS_A_MODEL = ("structgen.hf", "structgen.server", "structgen.integrations", "structgen.cli")
CORE = ["structgen"] + sorted(
    m.name for m in pkgutil.walk_packages(structgen.__path__, "structgen.") if not m.name.startswith(NEEDS_A_MODEL)
)


@pytest.mark.parametrize("name", CORE)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
