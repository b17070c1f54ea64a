"""The public surface: small, sorted, and light to import."""

from __future__ import annotations

import subprocess
import sys

import structgen


def test_all_is_sorted_and_resolves() -> None:
    assert structgen.__all__ == sorted(structgen.__all__)
    for name in structgen.__all__:
        assert getattr(structgen, name) is not None, name


def test_import_does_not_pull_torch_or_web_stack() -> None:
    code = (
        "import sys, structgen\n"
        "heavy = [m for m in ('torch', 'transformers', 'pydantic', 'fastapi', 'starlette', 'uvicorn') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import structgen imported {out}"


def test_error_tree() -> None:
    e = structgen
    for cls in (e.RegexSyntaxError, e.RegexNotSupported, e.SchemaError, e.SchemaNotSupported, e.UnsatisfiableConstraint):
        assert issubclass(cls, e.ConstraintError) and issubclass(cls, ValueError)
    assert issubclass(e.VocabularyError, e.StructgenError) and issubclass(e.VocabularyError, ValueError)
    assert issubclass(e.CompileBudgetExceeded, e.StructgenError)
    err = e.SchemaNotSupported("not", "/properties/a")
    assert err.keyword == "not" and err.path == "/properties/a" and "/properties/a" in str(err)


def test_unknown_attribute() -> None:
    try:
        structgen.does_not_exist  # noqa: B018
    except AttributeError as e:
        assert "does_not_exist" in str(e)
    else:
        raise AssertionError("expected AttributeError")


def test_old_module_paths_still_import_for_one_release() -> None:
    import importlib
    import sys
    import warnings

    from structgen._moved import MOVED

    for old, new in MOVED.items():
        sys.modules.pop(old, None)  # (as in a fresh process)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert module is importlib.import_module(new)
        assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught), old
