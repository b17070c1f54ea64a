"""The official JSON Schema Test Suite (draft 2020-12) as a ratchet.

Fails on any invalid instance accepted, and on any case that passed in the committed baseline
(`tests/conformance_baseline.json`) and no longer does. Regenerate the baseline and the README
table with `python benchmarks/conformance.py --update`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conformance_runner import SUITE, run_suite, summary

BASELINE = Path(__file__).with_name("conformance_baseline.json")


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
