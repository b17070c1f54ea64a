"""JSON Schema Test Suite (draft 2020-12, or draft 7) through structgen, over the SmolLM2 tokenizer.

Run: python benchmarks/conformance.py [--draft7] [--update] [--details]
Prints a Markdown table, one row per keyword file (coverage: supported / with limits / not
supported, cases, pass, pass rate, unsupported, valid instances rejected, invalid instances
accepted); the README quotes it. --before adds the pass count of the committed baseline;
--update rewrites tests/conformance_baseline.json (the test ratchet). --draft7 runs the draft7
folder with ``dialect="draft-07"`` (every file; the test runs the ones in
tests/test_conformance.py's DRAFT7_FILES) and its baseline is tests/conformance_baseline_draft7.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conformance_runner import SUITE_DRAFT7, run_suite, suite_files, summary, table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--update", action="store_true", help="rewrite tests/conformance_baseline.json")
    parser.add_argument("--details", action="store_true", help="list every non-passing case")
    parser.add_argument("--before", action="store_true", help="add the committed baseline's pass count")
    parser.add_argument("--draft7", action="store_true", help="the draft7 folder, read as draft-07")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    import structgen
    from structgen.hf.models import default_model_dir

    structgen.load_default_model()  # makes sure the converted tokenizer is cached on disk
    tokenizer = AutoTokenizer.from_pretrained(default_model_dir(), local_files_only=True)
    vocab = structgen.Vocabulary.from_tokenizer(tokenizer)
    start = time.perf_counter()
    if args.draft7:
        results = run_suite(vocab, tokenizer, suite_files(SUITE_DRAFT7), dialect="draft-07")
    else:
        results = run_suite(vocab, tokenizer)
    elapsed = time.perf_counter() - start
    baseline_path = ROOT / "tests" / ("conformance_baseline_draft7.json" if args.draft7 else "conformance_baseline.json")
    before = json.loads(baseline_path.read_text())["cases"] if baseline_path.exists() else None
    print(table(results, before if args.before else None))
    print(f"\n{json.dumps(summary(results))}  ({elapsed:.0f} s)")
    if args.details:
        for r in results:
            if r.outcome != "pass":
                print(f"- {r.key}: {r.outcome} {r.error[:150]} {r.valid_rejected} {r.invalid_accepted}")
    if args.update:
        baseline = {"summary": summary(results), "cases": {r.key: r.outcome for r in results}}
        baseline_path.write_text(json.dumps(baseline, indent=1, sort_keys=True) + "\n")
        print("baseline written")


if __name__ == "__main__":
    main()
