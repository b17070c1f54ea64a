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
    assert issubclass(e.PayloadTooLarge, e.StructgenError) and issubclass(e.PayloadTooLarge, ValueError)
    for cls in (e.TokenRejected, e.IncompleteGeneration):
        assert issubclass(cls, e.StructgenError) and not issubclass(cls, ValueError)
    rejected = e.TokenRejected("token 7 is not allowed", token_id=7, state=3)
    assert (rejected.token_id, rejected.state, str(rejected)) == (7, 3, "token 7 is not allowed")
    cut = e.IncompleteGeneration("19", 2, 2, "regex '[0-9]{4}'")
    assert cut.text == "19" and cut.max_new_tokens == 2
    assert str(cut) == ("generation hit max_new_tokens=2 before the output was complete under regex '[0-9]{4}' "
                        "(it stopped at '19'); raise max_new_tokens")
    assert "stopped after 1 tokens" in str(e.IncompleteGeneration("1", 1, 5))
    err = e.SchemaNotSupported("not", "/properties/a")
    assert err.keyword == "not" and err.path == "/properties/a" and "/properties/a" in str(err)


def test_unknown_attribute() -> None:
    try:
        structgen.does_not_exist  # noqa: B018
    except AttributeError as e:
        assert "does_not_exist" in str(e)
    else:
        raise AssertionError("expected AttributeError")
