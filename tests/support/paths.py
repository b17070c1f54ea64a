"""Folders of the repository the tests read."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GRAMMARS = ROOT / "grammars"
EXAMPLES = ROOT / "examples"
CORPUS = ROOT / "benchmarks" / "corpus"
#: The official JSON Schema Test Suite, beside the checkout (../shared/conformance/).
SUITES = ROOT.parent / "shared" / "conformance" / "json-schema-test-suite" / "tests"
