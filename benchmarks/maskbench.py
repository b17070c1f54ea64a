"""Mask benchmark (issue 3): structgen against xgrammar, llguidance and outlines-core, side by side.

Run:  python -m benchmarks.maskbench [--engines structgen,xgrammar,llguidance,outlines_core]
                                     [--limit N] [--timeout 60] [--corpus benchmarks/corpus]

For every schema in the corpus (``benchmarks/corpus/*.json``: {"schema", "valid", "invalid"}) and every
engine: TTFM = schema → first mask (compile included), in ms; then each instance is walked token by
token over the Llama-3 tokenizer (128,256 tokens) and TBM = compute the next-token mask + advance by
the instance's token, per token, in µs. Instances are serialised with ``json.dumps`` (default
separators) after reordering object keys into schema order (structgen emits declared properties in
schema order); every engine gets the same token ids.

Counts per engine: schemas that pass (compiled, every valid instance accepted, every invalid one
rejected), compile errors (unsupported keyword, engine error, or over the ``--timeout`` budget),
wrong-accepts (an invalid instance accepted all the way to EOS: a soundness bug) and wrong-rejects
(a valid instance rejected). An instance "is accepted" when every token is allowed by the mask and
consumed, and the engine is in a final state at the end.

Each engine runs in its own worker process, one engine at a time, with one thread
(OMP/RAYON/tokenizers threads = 1, xgrammar ``max_threads=1``). A compile that exceeds the timeout
kills the worker (counted as a compile error) and a fresh worker goes on with the next schema.
Per-vocabulary setup (tokenizer info, token trie) is done once per worker and not counted in TTFM.
One compiled object per schema serves all its instances (as a server would): engines that cache
masks (structgen) are warmer on later instances of the same schema.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Callable

from benchmarks import corpora
from benchmarks.harness import (
    CORPUS_DIR, ENGINE_NAMES, EngineUnavailable, Worker, fmt_ms, fmt_us, instance_text, llama3_tokenizer,
    make_engine, markdown_table, percentile, run_jobs, serve_jobs,
)

ENGINES = ENGINE_NAMES


# ------------------------------------------------------------------ worker


def walk_instances(eng: Any, handle: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Walk the job's valid and invalid instances: per-token times, and which ones were accepted."""
    times: list[float] = []
    res: dict[str, list[bool]] = {"valid": [], "invalid": []}
    for kind in ("valid", "invalid"):
        for ids in job[kind]:
            try:
                res[kind].append(eng.walk(handle, ids, times))
            except Exception:  # noqa: BLE001 - an engine raising on a token = rejected
                res[kind].append(False)
    return {"tbm": times, **res}


def worker(engine: str) -> None:
    serve_jobs(lambda: make_engine(engine, llama3_tokenizer()), walk_instances)


# ------------------------------------------------------------------ parent


def run_engine(engine: str, jobs: list[dict[str, Any]], timeout: float, log: Callable[[str], None]) -> dict[str, Any] | None:
    stats: dict[str, Any] = {"ttfm": [], "tbm": [], "by_schema": {}, "pass": 0, "compile_error": 0, "timeout": 0,
                             "wrong_accept": 0, "wrong_reject": 0, "errors": {}, "wrong": []}

    def start() -> Worker:
        return Worker("benchmarks.maskbench", "--worker", engine)

    try:
        for r in run_jobs(start, jobs, timeout, walk_timeout=max(10 * timeout, 300)):
            name = r.job["name"]
            if r.status in ("timeout", "died"):
                why = "timeout" if r.message is None else f"worker died ({r.message['dead']})"
                stats["compile_error"] += 1
                stats["timeout"] += r.status == "timeout"
                stats["errors"][name] = why
                log(f"{engine} {name}: {why}")
                continue
            assert r.message is not None
            if r.status == "error":
                stats["compile_error"] += 1
                stats["errors"][name] = r.message["error"]
                log(f"{engine} {name}: compile error {r.message['error'][:120]}")
                continue
            stats["ttfm"].append(r.message["compiled"])
            if r.done is None:  # walk_timeout
                stats["compile_error"] += 1
                stats["errors"][name] = "walk timed out / worker died"
                log(f"{engine} {name}: walk timed out / worker died")
                continue
            done = r.done
            stats["tbm"].extend(done["tbm"])
            stats["by_schema"][name] = (r.message["compiled"], done["tbm"])
            wa = [i for i, acc in enumerate(done["invalid"]) if acc]
            wr = [i for i, acc in enumerate(done["valid"]) if not acc]
            stats["wrong_accept"] += len(wa)
            stats["wrong_reject"] += len(wr)
            stats["pass"] += not wa and not wr
            if wa or wr:
                stats["wrong"].append((name, wa, wr))
                log(f"{engine} {name}: wrong-accept invalid{wa} wrong-reject valid{wr}")
            log(f"{engine} {name}: TTFM {1e3 * r.message['compiled']:.1f} ms, {len(done['tbm'])} tokens")
    except EngineUnavailable as e:
        log(f"{engine}: skipped ({e})")
        return None
    return stats


def table(results: dict[str, dict[str, Any]], n_schemas: int, n_instances: int) -> str:
    engines = list(results)
    base = results.get("structgen")
    rows: list[list[str]] = []

    def pct(key: str, q: float, scale: float) -> dict[str, float | None]:
        return {e: percentile([scale * x for x in r[key]], q) for e, r in results.items()}

    def vs(v: dict[str, float], e: str) -> str:  # the ratio to structgen's value
        return f" ({v[e] / v['structgen']:.2g}×)" if base is not None and e != "structgen" else ""

    for label, key, q, scale, fmt in (
        ("TTFM p50", "ttfm", 50, 1e3, fmt_ms), ("TTFM p99", "ttfm", 99, 1e3, fmt_ms),
        ("TBM p50", "tbm", 50, 1e6, fmt_us), ("TBM p99", "tbm", 99, 1e6, fmt_us), ("TBM p99.9", "tbm", 99.9, 1e6, fmt_us),
    ):
        vals = pct(key, q, scale)
        cells = []
        for e in engines:
            v = vals[e]
            if v is None:
                cells.append("—")
                continue
            cell = fmt(v)
            if base is not None and e != "structgen" and vals["structgen"]:
                cell += f" ({v / vals['structgen']:.2g}×)"
            cells.append(cell)
        rows.append([label, *cells])
    common = set.intersection(*(set(r["by_schema"]) for r in results.values())) if results else set()
    if len(results) > 1 and common:
        for label, q in (("TTFM p50", 50), ("TTFM p99", 99)):
            v = {e: percentile([1e3 * r["by_schema"][n][0] for n in common], q) or 0.0 for e, r in results.items()}
            rows.append([f"{label}, {len(common)} schemas all compiled", *(fmt_ms(v[e]) + vs(v, e) for e in engines)])
        for label, q in (("TBM p50", 50), ("TBM p99", 99), ("TBM p99.9", 99.9)):
            v = {e: percentile([1e6 * x for n in common for x in r["by_schema"][n][1]], q) or 0.0 for e, r in results.items()}
            rows.append([f"{label}, {len(common)} schemas all compiled", *(fmt_us(v[e]) + vs(v, e) for e in engines)])
    rows.append(["schemas passed", *(f"{r['pass']}/{n_schemas}" for r in results.values())])
    rows.append(["compile errors (of which timeouts)", *(f"{r['compile_error']} ({r['timeout']})" for r in results.values())])
    rows.append(["wrong-accepts (invalid instances accepted)", *(str(r["wrong_accept"]) for r in results.values())])
    rows.append(["wrong-rejects (valid instances rejected)", *(str(r["wrong_reject"]) for r in results.values())])
    rows.append(["tokens timed", *(f"{len(r['tbm']):,}" for r in results.values())])
    return markdown_table(["", *engines], rows, "l" + "r" * len(engines)) + (
        f"\n\n{n_schemas} schemas, {n_instances} instances; ratios (×) are engine / structgen (below 1: the peer is faster)."
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.maskbench", description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, from: " + ", ".join(ENGINES))
    ap.add_argument("--limit", type=int, default=None, help="only the first N schemas (sorted by file name)")
    ap.add_argument("--timeout", type=float, default=60.0, help="per-compile budget in seconds (default 60)")
    ap.add_argument("--corpus", default=str(CORPUS_DIR), help="a folder of {schema, valid, invalid} files (default benchmarks/corpus)")
    ap.add_argument("--json", default=None, help="also write the raw per-engine results here")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        ap.error(f"unknown engine(s) {unknown}; choose from {ENGINES}")

    def log(s: str) -> None:
        if not args.quiet:
            print(s, file=sys.stderr, flush=True)

    tok = llama3_tokenizer()
    jobs = []
    for case in corpora.load_corpus(args.corpus)[: args.limit]:
        def encode(value: Any, schema: Any = case.schema) -> list[int]:
            return tok.encode(instance_text(value, schema), add_special_tokens=False)

        jobs.append({"name": case.name, "schema": case.schema,
                     "valid": [encode(v) for v in case.instances], "invalid": [encode(v) for v in case.invalid]})
    n_inst = sum(len(j["valid"]) + len(j["invalid"]) for j in jobs)
    results: dict[str, dict[str, Any]] = {}
    for e in engines:
        t0 = time.perf_counter()
        r = run_engine(e, jobs, args.timeout, log)
        if r is not None:
            r["wall_s"] = time.perf_counter() - t0
            results[e] = r
            log(f"{e}: done in {r['wall_s']:.0f} s")
    print(table(results, len(jobs), n_inst))
    for e, r in results.items():
        for name, why in r["errors"].items():
            print(f"- {e} could not compile {name}: {why}")
        for name, wa, wr in r["wrong"]:
            print(f"- {e} on {name}: wrong-accept invalid{wa}, wrong-reject valid{wr}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({e: {k: v for k, v in r.items() if k not in ("tbm", "by_schema")} | {"tbm_count": len(r["tbm"])} for e, r in results.items()}, fh, indent=1)


if __name__ == "__main__":
    main()
