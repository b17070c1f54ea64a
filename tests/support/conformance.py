"""Run the official JSON Schema Test Suite through structgen guides over a real tokenizer.

For every case: compile the schema; a "not supported" error (or a compile budget) makes the case
*unsupported*, never a pass. Otherwise each test instance is serialised (``json.dumps`` with the
default separators and compact, ``ensure_ascii=False``), tokenized by the real tokenizer and walked
token by token through the guide; the instance is *accepted* if either serialisation ends in a
final state.

* an invalid instance accepted is a soundness bug (must be zero);
* a valid instance rejected is a completeness gap (counted).

A case *passes* when every instance is classified right. A schema that compiles to
`UnsatisfiableConstraint` passes exactly when all its instances are invalid.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from .paths import SUITES
from typing import Any

import structgen

#: The suite's valid instances often list keys in another order than the schema, or add keys
#: that additionalProperties allows: the run lets the model do both.
OPTIONS = {"key_order": "any", "extra_properties": True}

SUITES_DIR = SUITES
SUITE = SUITES_DIR / "draft2020-12"
#: The draft-07 folder, run with ``dialect="draft-07"`` (a second ratchet).
SUITE_DRAFT7 = SUITES_DIR / "draft7"


@dataclass
class CaseResult:
    file: str
    description: str
    outcome: str  # "pass" | "unsupported" | "fail"
    error: str = ""
    invalid_accepted: list[str] = field(default_factory=list)
    valid_rejected: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.file}::{self.description}"


def suite_files(suite: Path = SUITE) -> list[Path]:
    return sorted(p for p in suite.glob("*.json"))


def _accepted(guide: structgen.Guide, tokenizer: Any, data: Any) -> bool:
    texts = {json.dumps(data, ensure_ascii=False), json.dumps(data, ensure_ascii=False, separators=(",", ":"))}
    for text in texts:
        ids = tokenizer.encode(text, add_special_tokens=False)
        state = guide.advance(guide.initial_state, ids)
        if state >= 0 and guide.is_final(state):
            return True
    return False


def run_case(
    file: str, case: dict[str, Any], vocab: structgen.Vocabulary, tokenizer: Any, dialect: str | None = None
) -> CaseResult:
    result = CaseResult(file, case["description"], "pass")
    start = time.perf_counter()
    try:
        guide = structgen.compile_json_schema(case["schema"], vocab, dialect=dialect, **OPTIONS)
    except structgen.UnsatisfiableConstraint as e:
        result.outcome = "pass" if not any(t["valid"] for t in case["tests"]) else "unsupported"
        result.error = f"UnsatisfiableConstraint: {e}"
        result.seconds = time.perf_counter() - start
        return result
    except (structgen.SchemaNotSupported, structgen.CompileBudgetExceeded, structgen.SchemaError) as e:
        result.outcome = "unsupported"
        result.error = f"{type(e).__name__}: {e}"
        result.seconds = time.perf_counter() - start
        return result
    for test in case["tests"]:
        ok = _accepted(guide, tokenizer, test["data"])
        if ok and not test["valid"]:
            result.invalid_accepted.append(test["description"])
        elif not ok and test["valid"]:
            result.valid_rejected.append(test["description"])
    if result.invalid_accepted or result.valid_rejected:
        result.outcome = "fail"
    result.seconds = time.perf_counter() - start
    return result


def run_suite(
    vocab: structgen.Vocabulary, tokenizer: Any, files: list[Path] | None = None, dialect: str | None = None
) -> list[CaseResult]:
    """Every case of ``files`` (default: the 2020-12 folder), compiled with ``dialect=dialect``."""
    results = []
    for path in files or suite_files():
        for case in json.loads(path.read_text()):
            results.append(run_case(path.stem, case, vocab, tokenizer, dialect))
    return results


def summary(results: list[CaseResult]) -> dict[str, int]:
    return {
        "cases": len(results),
        "pass": sum(r.outcome == "pass" for r in results),
        "unsupported": sum(r.outcome == "unsupported" for r in results),
        "fail": sum(r.outcome == "fail" for r in results),
        "invalid_accepted": sum(len(r.invalid_accepted) for r in results),
        "valid_rejected": sum(len(r.valid_rejected) for r in results),
    }


def coverage(s: dict[str, int]) -> str:
    """A keyword file's status from its summary: every case passes, none does (all refused), or some."""
    if s["pass"] == s["cases"]:
        return "supported"
    if s["pass"] == 0 and s["fail"] == 0:
        return "not supported"
    return "with limits"


def table(results: list[CaseResult], before: dict[str, str] | None = None) -> str:
    """A Markdown table, one row per keyword file (its coverage, pass rate and counts), and a
    total row; ``before`` (a baseline's case outcomes) adds the pass count it had."""
    extra = " pass before |" if before is not None else ""
    rows = [f"| keyword file | coverage | cases |{extra} pass | pass rate | unsupported | valid rejected (instances) | invalid accepted |",
            "|---|---|--:|" + ("--:|" if before is not None else "") + "--:|--:|--:|--:|--:|"]
    by_file: dict[str, list[CaseResult]] = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)

    def old(rs: list[CaseResult]) -> str:
        return "" if before is None else f" {sum(before.get(r.key) == 'pass' for r in rs)} |"

    for name, rs in sorted(by_file.items()):
        s = summary(rs)
        rate = 100.0 * s["pass"] / max(1, s["cases"])
        rows.append(f"| {name} | {coverage(s)} | {s['cases']} |{old(rs)} {s['pass']} | {rate:.0f}% | {s['unsupported']} | {s['valid_rejected']} | {s['invalid_accepted']} |")
    s = summary(results)
    pct = 100.0 * s["pass"] / max(1, s["cases"])
    rows.append(f"| **total** | | {s['cases']} |{old(results)} {s['pass']} | {pct:.0f}% | {s['unsupported']} | {s['valid_rejected']} | {s['invalid_accepted']} |")
    return "\n".join(rows)
