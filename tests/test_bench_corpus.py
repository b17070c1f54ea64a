"""The mask-benchmark corpus is itself right: valid instances validate, invalid ones do not (no model).

It reads the corpus' data files only: no test imports the benchmarks' code, and neither the tests nor
the benchmarks edit the import path (both checked below). The loaders of the real-world corpora check
themselves: ``python -m benchmarks.corpora --check``.
"""

from __future__ import annotations

import ast
import datetime
import json
import re
from pathlib import Path

import jsonschema
import pytest

from .support.paths import CORPUS, ROOT

FILES = sorted(p.name for p in CORPUS.glob("*.json"))

# jsonschema checks date-time, uri and hostname only with optional packages, and email barely (an "@");
# check them here, strictly enough for the corpus: RFC 3339 date-time, an absolute URI, an RFC 1123
# hostname, local@domain.tld.
_DATE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})", re.ASCII)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+(/[^\s?#]*)?(\?[^\s#]*)?(#\S*)?", re.ASCII)
_EMAIL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+", re.ASCII)
_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*", re.ASCII)


def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    m = _DATE_TIME.fullmatch(value)
    if not m:
        return False
    datetime.date.fromisoformat(m.group(1))  # raises on 2026-02-30
    return int(m.group(2)) < 24 and int(m.group(3)) < 60 and int(m.group(4)) < 60


def _format_checker(cls: type) -> jsonschema.FormatChecker:
    checker = cls.FORMAT_CHECKER
    fc = jsonschema.FormatChecker(list(checker.checkers))
    fc.checkers = dict(checker.checkers)
    fc.checks("date-time", raises=ValueError)(_date_time)
    fc.checks("uri")(lambda v: not isinstance(v, str) or bool(_URI.fullmatch(v)))
    fc.checks("email")(lambda v: not isinstance(v, str) or bool(_EMAIL.fullmatch(v)))
    fc.checks("hostname")(lambda v: not isinstance(v, str) or bool(_HOST.fullmatch(v)))
    return fc


def test_corpus_size() -> None:
    assert 40 <= len(FILES) <= 60


@pytest.mark.parametrize("name", FILES)
def test_case(name: str) -> None:
    case = json.loads((CORPUS / name).read_text(encoding="utf-8"))
    assert set(case) == {"schema", "valid", "invalid"}
    assert len(case["valid"]) >= 3 and len(case["invalid"]) >= 3
    cls = jsonschema.validators.validator_for(case["schema"], default=jsonschema.Draft202012Validator)
    cls.check_schema(case["schema"])
    validator = cls(case["schema"], format_checker=_format_checker(cls))
    for i, inst in enumerate(case["valid"]):
        errors = [e.message for e in validator.iter_errors(inst)]
        assert not errors, f"valid[{i}] is rejected: {errors}"
    for i, inst in enumerate(case["invalid"]):
        assert not validator.is_valid(inst), f"invalid[{i}] is accepted: {inst!r}"
    assert len({json.dumps(v, sort_keys=True) for v in case["invalid"]}) == len(case["invalid"]), "duplicate invalid instances"


def _python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _python_files("tests"), ids=lambda p: str(p.relative_to(ROOT)))
def test_tests_never_import_benchmarks(path: Path) -> None:
    # the benchmarks may import tests.support (the conformance runner), never the reverse
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
    assert not [m for m in imported if m == "benchmarks" or m.startswith("benchmarks.")]


@pytest.mark.parametrize("path", _python_files("tests", "benchmarks"), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_path_edits(path: Path) -> None:
    # scripts run as `python -m benchmarks.NAME` from the root; tests import through packages
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert not [n.lineno for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and n.attr == "path" and isinstance(n.value, ast.Name) and n.value.id == "sys"]
