"""JSON Schema Test Suite (draft 2020-12, or draft 7) through structgen, over the SmolLM2 tokenizer.

Run: python -m benchmarks.conformance [--draft7] [--update] [--details] [--before] [--files a,b]
                                      [--write-docs [PATH]]
Prints a Markdown table, one row per keyword file (coverage: supported / with limits / not
supported, cases, pass, pass rate, unsupported, valid instances rejected, invalid instances
accepted). --before adds the pass count of the committed baseline; --update rewrites
tests/json_schema/conformance_baseline.json (the test ratchet). --draft7 runs the draft7 folder
with ``dialect="draft-07"`` (every file; the test runs the ones in
tests/json_schema/test_conformance.py's DRAFT7_FILES) and its baseline is
tests/json_schema/conformance_baseline_draft7.json. --files runs only the keyword files named
(a quick look; not with --update). --write-docs rewrites the table of the draft run in
docs/json_schema.md (or PATH), between ``<!-- conformance:draft2020-12:start -->`` and
``<!-- conformance:draft2020-12:end -->`` (``draft7`` for --draft7).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import structgen
from benchmarks.harness import ROOT, smollm2_tokenizer
from tests.support.conformance import SUITE, SUITE_DRAFT7, run_suite, suite_files, summary, table

BASELINES = ROOT / "tests" / "json_schema"
DOCS = ROOT / "docs" / "json_schema.md"


def markers(name: str) -> tuple[str, str]:
    """The comments that enclose a generated block ``name`` (``draft2020-12``, ``draft7``) in a doc."""
    return f"<!-- conformance:{name}:start -->", f"<!-- conformance:{name}:end -->"


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with what lies between the markers of ``name`` replaced by ``body``, blank lines around it
    (so that Markdown reads a table in it as a table).

    >>> replace_block("a\\n<!-- conformance:draft7:start -->\\nold\\n<!-- conformance:draft7:end -->\\nb", "draft7", "new")
    'a\\n<!-- conformance:draft7:start -->\\n\\nnew\\n\\n<!-- conformance:draft7:end -->\\nb'
    """
    start, end = markers(name)
    i = text.find(start)
    j = text.find(end, i + len(start)) if i >= 0 else -1
    if i < 0 or j < 0:
        raise ValueError(f"no {start} ... {end} block")
    return text[: i + len(start)] + "\n\n" + body.strip("\n") + "\n\n" + text[j:]


def write_docs(path: Path, name: str, body: str) -> None:
    """Rewrite the block ``name`` of the file ``path`` (which must hold its markers) with ``body``."""
    try:
        text = replace_block(path.read_text(encoding="utf-8"), name, body)
    except ValueError as e:
        raise SystemExit(f"{path}: {e}") from e
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite the baseline (the test ratchet)")
    parser.add_argument("--details", action="store_true", help="list every non-passing case")
    parser.add_argument("--before", action="store_true", help="add the committed baseline's pass count")
    parser.add_argument("--draft7", action="store_true", help="the draft7 folder, read as draft-07")
    parser.add_argument("--files", default=None, help="only these keyword files, comma-separated (e.g. const,enum)")
    parser.add_argument("--write-docs", nargs="?", const=str(DOCS), default=None, metavar="PATH",
                        help="rewrite the table between the conformance markers of PATH (default docs/json_schema.md)")
    args = parser.parse_args(argv)
    if args.files and args.update:
        parser.error("--update needs the whole suite (without --files)")
    suite, dialect, name = (SUITE_DRAFT7, "draft-07", "draft7") if args.draft7 else (SUITE, None, "draft2020-12")
    files = suite_files(suite)
    if args.files:
        wanted = {f.strip() for f in args.files.split(",") if f.strip()}
        unknown = wanted - {p.stem for p in files}
        if unknown:
            parser.error(f"no keyword file {sorted(unknown)} in {suite}")
        files = [p for p in files if p.stem in wanted]
    tokenizer = smollm2_tokenizer()
    vocab = structgen.Vocabulary.from_tokenizer(tokenizer)
    start = time.perf_counter()
    results = run_suite(vocab, tokenizer, files, dialect=dialect)
    elapsed = time.perf_counter() - start
    baseline_path = BASELINES / ("conformance_baseline_draft7.json" if args.draft7 else "conformance_baseline.json")
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
    if args.write_docs:
        write_docs(Path(args.write_docs), name, table(results))
        print(f"{args.write_docs}: the {name} table rewritten")


if __name__ == "__main__":
    main()
