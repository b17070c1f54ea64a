"""The ``structgen`` command line: in-process through ``main([...])`` and as a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from structgen.cli import list_grammars, main, named_format
from structgen.formats import Grammar, JsonSchema, Regex

GRAMMARS = Path(__file__).resolve().parent.parent / "grammars"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "structgen.cli", *args], capture_output=True, text=True, timeout=300
    )


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("structgen: error: ") and "Traceback" not in err
    return lines[0]


def test_grammars_lists_the_repository_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grammars"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in out]
    suffixes = (".regex", ".schema.json", ".lark", ".gbnf")
    expected = sorted(next(p.name[: -len(s)] for s in suffixes if p.name.endswith(s))
                      for p in GRAMMARS.iterdir() if p.name.endswith(suffixes))
    assert names == expected and "date" in names and "city" in names and "arithmetic" in names
    assert any(line.split()[:2] == ["city", "schema"] for line in out)
    assert any(line.split()[:2] == ["date", "regex"] for line in out)
    assert any(line.split()[:2] == ["sql-select", "lark"] for line in out)
    assert any(line.split()[:2] == ["arithmetic", "gbnf"] for line in out)


def test_named_grammars_are_formats() -> None:
    assert named_format("date") == Regex((GRAMMARS / "date.regex").read_text().strip())
    city = named_format("city")
    assert isinstance(city, JsonSchema) and city.schema["title"] == "City"
    sql = named_format("sql-select")
    assert isinstance(sql, Grammar) and sql.syntax == "lark" and sql.text == (GRAMMARS / "sql-select.lark").read_text()
    assert set(list_grammars()) >= {"date", "city", "yes-no", "arithmetic", "json"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--regex", "(ab"], r"invalid regex '\(ab' at position \d+: missing \)"),
        (["--regex", "(a)\\1"], "uses a back-reference"),
        (["--grammar", "no-such-grammar"], "no grammar named 'no-such-grammar' .*known: .*date"),
        (["--schema", "does-not-exist.json"], "no such file"),
        (["--schema", "{not json"], "--schema is not valid JSON"),
        (["--lark", "no-such.lark"], "--lark 'no-such.lark': no such file"),
        (["--gbnf", str(GRAMMARS / "sql-select.lark")], r"invalid gbnf grammar at line \d+"),
        (["--regex", "a", "--seed", "3"], "--seed only matters with --sample"),
        (["--regex", "a", "--max-new-tokens", "0"], "at least 1"),
        (["--regex", "a", "--model", "/no/such/model"], "--model '/no/such/model': no such folder or file"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main(["generate", "prompt", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert re.search(message, _one_line_error(captured.err))


def test_unsupported_schema_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("structgen.json_schema.dispatch", reason="JSON Schema compiler not available")
    schema = json.dumps({"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}, "uniqueItems": True})
    assert main(["generate", "prompt", "--schema", schema]) == 2
    assert "uniqueItems" in _one_line_error(capsys.readouterr().err)


def test_bad_regex_as_a_subprocess_is_fast_and_has_no_traceback() -> None:
    result = _run("generate", "prompt", "--regex", "(ab")
    assert result.returncode == 2, result
    assert result.stdout == ""
    _one_line_error(result.stderr)


def test_usage_errors_come_from_argparse() -> None:
    result = _run("generate", "prompt", "--regex", "a", "--grammar", "date")
    assert result.returncode == 2 and "not allowed with argument" in result.stderr
    result = _run("generate", "prompt")
    assert result.returncode == 2 and "one of the arguments --regex --schema --lark --gbnf --grammar is required" in result.stderr


def test_cli_module_does_not_import_torch() -> None:
    code = "import sys, structgen, structgen.cli; assert 'torch' not in sys.modules, 'torch'; " \
           "assert 'transformers' not in sys.modules; assert 'pydantic' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.model
def test_generate_regex_in_process(smollm2: Any, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    assert main(["generate", "When was Bob Marley born?", "--regex", pattern, "--max-new-tokens", "16"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(pattern + "\n", out)


@pytest.mark.model
def test_generate_grammar_as_a_subprocess(smollm2: Any) -> None:
    from structgen.hf.models import default_model_dir

    pattern = (GRAMMARS / "yes-no.regex").read_text().strip()
    result = _run(
        "generate", "Is Paris in France?", "--grammar", "yes-no", "--model", str(default_model_dir()),
        "--sample", "--seed", "1",
    )
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(pattern, result.stdout.rstrip("\n"))


@pytest.mark.model
def test_generate_from_a_grammar_file(smollm2: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import lark

    path = tmp_path / "sum.lark"
    path.write_text('start: NUMBER ("+" NUMBER)*\nNUMBER: /[0-9]{1,3}/\n%ignore " "\n')
    assert main(["generate", "What is 2 plus 3? Write it as a sum.", "--lark", str(path), "--max-new-tokens", "12"]) == 0
    out = capsys.readouterr().out.rstrip("\n")
    lark.Lark(path.read_text(), parser="earley", lexer="dynamic_complete").parse(out)
    assert main(["generate", "1+1?", "--grammar", "arithmetic", "--max-new-tokens", "12"]) == 0


@pytest.mark.model
def test_budget_below_the_minimum_exits_2(smollm2: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # Budget-aware generation refuses a budget the shortest output cannot fit, before generating.
    assert main(["generate", "Write.", "--regex", "[a-z ]{200}", "--max-new-tokens", "2"]) == 2
    err = _one_line_error(capsys.readouterr().err)
    assert "max_new_tokens=2" in err and "at least" in err


@pytest.mark.model
def test_no_budget_aware_lets_the_budget_cut_and_says_so(smollm2: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # Without budget-awareness the same request runs, hits the budget and exits 1 (never prints a
    # cut-off answer as if it were complete).
    assert main(["generate", "Write.", "--regex", "[a-z ]{200}", "--max-new-tokens", "2", "--no-budget-aware"]) == 1
    err = capsys.readouterr().err
    assert "max_new_tokens=2" in err


# -- a missing extra, and the budget checked before the model loads (issue 25) -----------------------


def _run_without(modules: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess where ``modules`` cannot be imported (as with only the core installed)."""
    code = ("import sys\n"
            f"for name in {modules!r}: sys.modules[name] = None\n"
            "from structgen.cli import main\n"
            f"sys.exit(main({list(args)!r}))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("modules", "args", "message"),
    [
        (["transformers", "torch"], ["generate", "When?", "--grammar", "date"],
         "structgen generate needs the 'transformers' extra (transformers is not installed): "
         "pip install 'structgen[transformers]'"),
        (["fastapi"], ["serve", "--port", "0"],
         "structgen serve needs the 'server' extra (fastapi is not installed): pip install 'structgen[server]'"),
        (["uvicorn"], ["serve"],
         "structgen serve needs the 'server' extra (uvicorn is not installed): pip install 'structgen[server]'"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(modules: list[str], args: list[str], message: str) -> None:
    result = _run_without(modules, *args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert _one_line_error(result.stderr) == f"structgen: error: {message}"


def test_a_budget_below_the_minimum_fails_before_the_model_loads(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")
    import structgen.hf.models as models

    def no_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the model was loaded before the budget was checked")

    monkeypatch.setattr(models, "load_default_model", no_model)
    monkeypatch.setattr(models, "load_model", no_model)
    assert main(["generate", "Write.", "--regex", "[a-z ]{200}", "--max-new-tokens", "2"]) == 2
    err = _one_line_error(capsys.readouterr().err)
    assert "max_new_tokens=2" in err and "raise the token budget to at least" in err
    # with --no-budget-aware there is no such check: the model loads (here: the stand-in refuses)
    with pytest.raises(AssertionError, match="the model was loaded"):
        main(["generate", "Write.", "--regex", "[a-z ]{200}", "--max-new-tokens", "2", "--no-budget-aware"])


def test_serve_refuses_an_empty_api_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--api-key", " "]) == 2
    assert "--api-key must not be empty" in _one_line_error(capsys.readouterr().err)
