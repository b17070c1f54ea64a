"""The examples in the docstrings of every module below the transformers integration run as shown."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import structgen

#: Modules above the core (torch, transformers, the web stack): their examples need a model.
NEEDS_A_MODEL = ("structgen.hf", "structgen.server", "structgen.integrations", "structgen.cli")
#: (walked from the package's own folder: an editable install's ``__path__`` may also name the
#: checkout's root, whose tests/ are no modules of structgen)
CORE = ["structgen"] + sorted(
    m.name for m in pkgutil.walk_packages([str(Path(structgen.__file__).parent)], "structgen.")
    if not m.name.startswith(NEEDS_A_MODEL)
)


@pytest.mark.parametrize("name", CORE)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
