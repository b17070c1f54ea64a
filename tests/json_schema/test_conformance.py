"""The official JSON Schema Test Suite (draft 2020-12, and draft 7 read as draft-07) as a ratchet.

Fails on any invalid instance accepted, and on any case that passed in the committed baseline
(`tests/conformance_baseline.json`) and no longer does. Regenerate the baseline and the README
table with `python -m benchmarks.conformance --update` (`--draft7 --update` for
`tests/conformance_baseline_draft7.json`). The draft 7 test runs the keyword files in
`DRAFT7_FILES` (those the dialect rewrite touches, a few minutes of CI); the benchmark runs them all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..support.conformance import SUITE, SUITE_DRAFT7, run_suite, summary

BASELINE = Path(__file__).with_name("conformance_baseline.json")
BASELINE_DRAFT7 = Path(__file__).with_name("conformance_baseline_draft7.json")
#: The draft7 files whose schemas the dialect rewrite changes (and a few cheap controls).
DRAFT7_FILES = ("additionalItems", "boolean_schema", "const", "definitions", "dependencies", "enum", "exclusiveMaximum",
                "exclusiveMinimum", "format", "infinite-loop-detection", "items", "ref", "required", "type")


@pytest.mark.slow
@pytest.mark.skipif(not SUITE.is_dir(), reason="the shared conformance suite is not beside the checkout")
def test_json_schema_test_suite(smollm2_vocabulary: Any, smollm2_tokenizer: Any) -> None:
    results = run_suite(smollm2_vocabulary, smollm2_tokenizer)
    s = summary(results)
    print(json.dumps(s))
    unsound = [(r.key, r.invalid_accepted) for r in results if r.invalid_accepted]
    assert not unsound, f"invalid instances accepted: {unsound}"
    baseline = json.loads(BASELINE.read_text())
    passing_before = {k for k, v in baseline["cases"].items() if v == "pass"}
    now = {r.key: r.outcome for r in results}
    regressed = sorted(k for k in passing_before if now.get(k) != "pass")
    assert not regressed, f"cases that passed in the baseline and no longer do: {regressed}"
    assert s["pass"] >= baseline["summary"]["pass"]


@pytest.mark.slow
@pytest.mark.skipif(not SUITE_DRAFT7.is_dir(), reason="the shared conformance suite is not beside the checkout")
def test_json_schema_test_suite_draft7(smollm2_vocabulary: Any, smollm2_tokenizer: Any) -> None:
    files = [SUITE_DRAFT7 / f"{name}.json" for name in DRAFT7_FILES]
    results = run_suite(smollm2_vocabulary, smollm2_tokenizer, files, dialect="draft-07")
    print(json.dumps(summary(results)))
    unsound = [(r.key, r.invalid_accepted) for r in results if r.invalid_accepted]
    assert not unsound, f"invalid instances accepted: {unsound}"
    baseline = json.loads(BASELINE_DRAFT7.read_text())["cases"]
    now = {r.key: r.outcome for r in results}
    regressed = sorted(k for k in now if baseline.get(k) == "pass" and now[k] != "pass")
    assert not regressed, f"cases that passed in the baseline and no longer do: {regressed}"
    assert sum(v == "pass" for v in now.values()) >= sum(baseline.get(k) == "pass" for k in now)
