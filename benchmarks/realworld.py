"""Real-world schema benchmark (issue 14): structgen, llguidance and xgrammar on schemas from PyPI packages.

Run:  python -m benchmarks.realworld [--sample 20] [--sources kubernetes,cfn,check-jsonschema,corpus]
                                     [--engines structgen,llguidance,xgrammar] [--timeout 20] [--walks 3]
                                     [--gen-timeout 6] [--bundle-all] [--json OUT]
      python -m benchmarks.realworld --census [--every 10] [--timeout 20] [--details]
      python -m benchmarks.realworld --check

The corpus (:mod:`benchmarks.corpora`): Kubernetes resource schemas (kubernetes-validate, their
``_definitions.json`` refs bundled as local ``$defs``), CloudFormation resource schemas (cfn-lint), the
schemas check-jsonschema vendors, and ``benchmarks/corpus/``; ``--sample N`` per source, deterministic.

Instances, per schema (at most ``--walks`` of each kind):
  (a) ``hypothesis-jsonschema`` instances (``from_schema``, derandomised, bounded by ``--gen-timeout`` in a
      worker process; for ``corpus``, the valid instances of its files), kept only when ``jsonschema``
      (with its format checker, ``pattern`` with ASCII classes as in ECMA-262) says valid; serialised with ``json.dumps`` (default separators,
      ``ensure_ascii=False``: raw UTF-8 rather than escapes) with object keys in schema order, tokenised with the Llama-3 tokenizer;
  (b) structgen's own random walks: from the initial state, sample a token allowed by ``token_mask`` (30%:
      among tokens made of ``"}],`` only, so values end; 40%: among one-byte tokens; else uniformly) until a final state or
      ``--walk-tokens``; the output is checked with ``jsonschema``. An output that is not valid JSON or not
      valid under the schema is a SOUNDNESS BUG (printed loudly, with the schema and the output). Valid
      walk outputs become instances for every engine.

Per source and engine: compiled / refused (grouped into reasons: exception class + keyword or normalised
message) / budget errors (``CompileBudgetExceeded``) / timeouts; TTFM (schema → first mask, compile
included) p50/p90/p99/max over compiled schemas; TBM (next-token mask + advance, per token) p50/p99/p99.9/max
over the instance walks; valid instances rejected; structgen's guide memory (``Guide.memory_bytes`` after the
walks). structgen is compiled validator-grade: ``key_order="any", extra_properties=True``; xgrammar with
``strict_mode=False`` (extra properties allowed where the schema allows them), llguidance with its defaults.

Each engine runs in its own worker process with one thread (:mod:`benchmarks.harness`); a compile over
``--timeout`` or a worker that dies (out of memory, crash) costs that schema only: a fresh worker takes the
next one.

``--census`` is the quick census of refusals: no peers, no tokenizer, no walks. Every ``--every``-th
Kubernetes and CloudFormation schema (sorted by name) and every vendored one is compiled as
``compile_json_schema`` compiles it (``schema_to_network``), each under ``--timeout`` (an alarm in this
process), and a table counts the outcomes: compiled, or the error class with the keyword refused.
``--details`` lists every schema that did not compile.

``--check`` checks the corpus loaders (:func:`benchmarks.corpora.self_check`).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import signal
import sys
import time
from typing import Any, Callable, Iterator

import numpy as np

from benchmarks import corpora
from benchmarks.harness import (
    EngineUnavailable, StructgenEngine, Worker, fmt_ms, fmt_us, in_schema_order, llama3_tokenizer, make_engine,
    markdown_table, percentile, reason_of, run_jobs, serve_jobs,
)
from benchmarks.instances import first_error, generate_instances, validator
from structgen.errors import CompileBudgetExceeded, SchemaNotSupported, StructgenError
from structgen.json_schema import schema_to_network

ENGINES = ("structgen", "llguidance", "xgrammar")
CLOSERS = frozenset(b'"}],')


# ------------------------------------------------------------------ engines (inside a worker)


class WalkingStructgen(StructgenEngine):
    """structgen compiled validator-grade, which also samples random walks of its own guides."""

    def __init__(self, tok: Any) -> None:
        super().__init__(tok, validator_grade=True)
        toks = self.vocab.tokens
        # the walk's bias: tokens that close a string / container or end a value, and one-byte tokens
        self.closers = np.array([t is not None and len(t) > 0 and all(b in CLOSERS for b in t) for t in toks], dtype=bool)
        self.single = np.array([t is not None and len(t) == 1 for t in toks], dtype=bool)
        self.eos = np.array(sorted(self.vocab.eos_token_ids), dtype=np.int64)

    def random_walk(self, g: Any, rng: random.Random, max_tokens: int) -> dict[str, Any]:
        """Sample allowed tokens until a final state; ``status``: final / unfinished / dead-end."""
        s, ids = g.initial_state, []
        while not g.is_final(s):
            if len(ids) >= max_tokens:
                return {"ids": ids, "status": "unfinished"}
            mask = g.token_mask(s).copy()
            mask[self.eos] = False
            r = rng.random()
            allowed = np.flatnonzero(mask & self.closers) if r < 0.3 else np.flatnonzero(mask & self.single) if r < 0.7 else []
            if not len(allowed):
                allowed = np.flatnonzero(mask)
            if not len(allowed):
                return {"ids": ids, "status": "dead-end"}
            t = int(allowed[rng.randrange(len(allowed))])
            s = g.next_state(s, t)
            ids.append(t)
            if s < 0:
                return {"ids": ids, "status": "next_state -1 on a masked-in token"}
        return {"ids": ids, "status": "final"}

    def text(self, ids: list[int]) -> str:
        return b"".join(self.vocab.tokens[t] for t in ids).decode("utf-8", errors="replace")

    def memory(self, g: Any) -> int:
        return int(g.memory_bytes)


def setup_engine(engine: str) -> Any:
    tok = llama3_tokenizer()
    return WalkingStructgen(tok) if engine == "structgen" else make_engine(engine, tok, validator_grade=True)


def describe_error(e: Exception) -> dict[str, Any]:
    """A refusal as the tables group it: the message, its reason, and whether it is a budget error."""
    return {"error": f"{type(e).__name__}: {str(e)[:300]}", "reason": reason_of(e),
            "budget": isinstance(e, CompileBudgetExceeded)}


def random_walks(eng: WalkingStructgen, handle: Any, job: dict[str, Any]) -> list[dict[str, Any]]:
    """``job["walks"]`` random walks, each checked with ``jsonschema`` when it ends in a final state."""
    rng = random.Random(job["name"])
    verr = ""
    try:
        v = validator(job["schema"])
    except Exception as e:  # noqa: BLE001 - the validator cannot be built: the walks go unchecked
        v, verr = None, f"{type(e).__name__}: {e}"
    walks = []
    for _ in range(job["walks"]):
        w = eng.random_walk(handle, rng, job["walk_tokens"])
        w["text"] = eng.text(w["ids"])
        if w["status"] == "final":
            try:
                value = json.loads(w["text"])
            except ValueError as e:
                w["invalid"] = f"not JSON: {e}"
            else:
                try:
                    w["invalid"] = first_error(v, value) if v is not None else None
                    w["unchecked"] = v is None and verr
                except Exception as e:  # noqa: BLE001 - the validator itself failing (unresolvable ref, ...)
                    w["unchecked"] = f"{type(e).__name__}: {str(e)[:200]}"
        walks.append(w)
    return walks


def walk_instances(eng: Any, handle: Any, job: dict[str, Any]) -> dict[str, Any]:
    """structgen's random walks first (the valid ones join the instances), then every instance walked."""
    walks = random_walks(eng, handle, job) if job.get("walks") and isinstance(eng, WalkingStructgen) else []
    instances = list(job["instances"])
    instances += [w["ids"] for w in walks if w["status"] == "final" and not w.get("invalid") and not w.get("unchecked")]
    times: list[float] = []
    accepted = []
    for ids in instances:
        try:
            accepted.append(eng.walk(handle, ids, times))
        except Exception:  # noqa: BLE001 - an engine raising on a token = rejected
            accepted.append(False)
    mem = eng.memory(handle) if isinstance(eng, WalkingStructgen) else None
    return {"tbm": times, "accepted": accepted, "walks": walks, "memory": mem}


def worker(engine: str) -> None:
    serve_jobs(lambda: setup_engine(engine), walk_instances, describe_error)


# ------------------------------------------------------------------ parent


MODULE = "benchmarks.realworld"  # the engines' workers run this script again, with --worker ENGINE


def new_stats() -> dict[str, Any]:
    return {"schemas": 0, "compiled": 0, "refused": {}, "budget": 0, "timeout": 0, "died": 0, "walk_timeout": 0,
            "ttfm": [], "tbm": [], "instances": 0, "rejected": [], "memory": [], "walks": {}, "soundness": [],
            "unchecked": 0, "per_schema": {}}


def run_engine(engine: str, jobs: list[dict[str, Any]], timeout: float, log: Callable[[str], None],
               extra: dict[str, list[list[int]]], memory_bytes: int = 0) -> dict[str, dict[str, Any]] | None:
    """Per source: the engine's stats. ``extra`` (name -> token ids) is filled by structgen's valid walks."""
    by_source: dict[str, dict[str, Any]] = {}
    # structgen runs first: its valid walks, in ``extra``, are every later engine's instances too
    payloads = [dict(job, instances=job["instances"] + extra.get(job["key"], []),
                     walks=job["walks"] if engine == "structgen" else 0) for job in jobs]

    def start() -> Worker:
        return Worker(MODULE, "--worker", engine, memory_bytes=memory_bytes)

    try:
        for r in run_jobs(start, payloads, timeout, walk_timeout=max(10 * timeout, 120)):
            job = r.job
            st = by_source.setdefault(job["source"], new_stats())
            st["schemas"] += 1
            rec: dict[str, Any] = {}
            st["per_schema"][job["name"]] = rec
            if r.status in ("timeout", "died"):
                st[r.status] += 1
                rec["outcome"] = r.status
                log(f"{engine} {job['key']}: {r.status}")
                continue
            msg = r.message
            assert msg is not None
            if r.status == "error":
                rec.update(outcome="budget" if msg["budget"] else "refused", error=msg["error"], reason=msg["reason"])
                if msg["budget"]:
                    st["budget"] += 1
                else:
                    st["refused"].setdefault(msg["reason"], []).append(job["name"])
                log(f"{engine} {job['key']}: {msg['error'][:150]}")
                continue
            st["compiled"] += 1
            st["ttfm"].append(msg["compiled"])
            rec.update(outcome="compiled", ttfm=msg["compiled"])
            done = r.done
            if done is None:  # walk_timeout
                st["walk_timeout"] += 1
                rec["walk"] = "timed out / worker died"
                log(f"{engine} {job['key']}: walks timed out / worker died")
                continue
            st["tbm"].extend(done["tbm"])
            st["instances"] += len(done["accepted"])
            rej = [i for i, a in enumerate(done["accepted"]) if not a]
            if rej:
                st["rejected"].append((job["name"], rej))
            if done["memory"] is not None:
                st["memory"].append(done["memory"])
            rec.update(tokens=len(done["tbm"]), instances=len(done["accepted"]), rejected=rej, memory=done["memory"],
                       tbm_max=max(done["tbm"], default=0.0))
            for wk in done["walks"]:
                status = wk["status"]
                if status == "final":
                    status = "invalid" if wk.get("invalid") else "unchecked" if wk.get("unchecked") else "valid"
                st["walks"][status] = st["walks"].get(status, 0) + 1
                if status == "valid":
                    extra.setdefault(job["key"], []).append(wk["ids"])
                if status not in ("valid", "unfinished", "unchecked"):
                    st["soundness"].append({"schema": job["key"], "status": status, "error": wk.get("invalid"), "output": wk["text"]})
                    log(f"!!! SOUNDNESS BUG {engine} {job['key']}: {status} {wk.get('invalid')} output={wk['text'][:300]!r}")
            rec["walks"] = [{k: v for k, v in wk.items() if k != "ids"} for wk in done["walks"]]
            log(f"{engine} {job['key']}: TTFM {1e3 * msg['compiled']:.1f} ms, {len(done['tbm'])} tokens"
                + (f", rejected {rej}" if rej else ""))
    except EngineUnavailable as e:
        log(f"{engine}: skipped ({e})")
        return None
    return by_source


# ------------------------------------------------------------------ tables


def _ms(x: float | None) -> str:
    return "—" if x is None else fmt_ms(1e3 * x)


def _us(x: float | None) -> str:
    return "—" if x is None else fmt_us(1e6 * x)


def _mib(x: float | None) -> str:
    return "—" if x is None else f"{x / 2**20:,.1f} MiB"


def source_table(src: str, res: dict[str, dict[str, dict[str, Any]]]) -> str:
    engines = [e for e in res if src in res[e]]
    st = {e: res[e][src] for e in engines}
    n = next(iter(st.values()))["schemas"] if st else 0
    rows: list[tuple[str, list[str]]] = [
        ("compiled", [f"{s['compiled']}/{n}" for s in st.values()]),
        ("refused", [str(sum(len(v) for v in s["refused"].values())) for s in st.values()]),
        ("budget errors", [str(s["budget"]) for s in st.values()]),
        ("timeouts (worker died)", [f"{s['timeout']} ({s['died']})" for s in st.values()]),
    ]
    for q in (50, 90, 99, 100):
        rows.append((f"TTFM {'max' if q == 100 else f'p{q}'}", [_ms(percentile(s["ttfm"], q)) for s in st.values()]))
    for q in (50, 99, 99.9, 100):
        rows.append((f"TBM {'max' if q == 100 else f'p{q}'}", [_us(percentile(s["tbm"], q)) for s in st.values()]))
    rows.append(("tokens timed", [f"{len(s['tbm']):,}" for s in st.values()]))
    rows.append(("valid instances rejected", [f"{sum(len(r) for _, r in s['rejected'])}/{s['instances']}" for s in st.values()]))
    rows.append(("walks timed out", [str(s["walk_timeout"]) for s in st.values()]))
    if "structgen" in st:
        s = st["structgen"]
        rows.append(("guide memory p50 / max", [f"{_mib(percentile(s['memory'], 50))} / {_mib(percentile(s['memory'], 100))}" if e == "structgen" else "—" for e in engines]))
        wk = s["walks"]
        rows.append(("random walks valid / invalid / unfinished", [
            f"{wk.get('valid', 0)} / {sum(v for k, v in wk.items() if k not in ('valid', 'unfinished', 'unchecked'))}"
            f" / {wk.get('unfinished', 0)}" + (f" (+{wk['unchecked']} unchecked)" if wk.get("unchecked") else "")
            if e == "structgen" else "—" for e in engines]))
    table = markdown_table(["", *engines], ([label, *cells] for label, cells in rows), "l" + "r" * len(engines))
    notes = []
    for e, s in st.items():
        for reason, names in sorted(s["refused"].items(), key=lambda kv: -len(kv[1])):
            notes.append(f"- {e} refused {len(names)}: `{reason}` ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})")
        for name, rej in s["rejected"][:8]:
            notes.append(f"- {e} rejected valid instance(s) {rej} of {name}")
        if len(s["rejected"]) > 8:
            notes.append(f"- {e}: {len(s['rejected']) - 8} more schemas with rejected valid instances")
    return f"### {src} ({n} schemas)\n\n" + table + ("\n\n" + "\n".join(notes) if notes else "")


def summary_table(res: dict[str, dict[str, dict[str, Any]]], sources: list[str]) -> str:
    rows = []
    for src in sources:
        for e, by_source in res.items():
            s = by_source.get(src)
            if s is None:
                continue
            rows.append([src, e, f"{s['compiled']}/{s['schemas']}", str(sum(len(v) for v in s["refused"].values())),
                         str(s["budget"]), str(s["timeout"]), _ms(percentile(s["ttfm"], 50)), _ms(percentile(s["ttfm"], 99)),
                         _us(percentile(s["tbm"], 50)), _us(percentile(s["tbm"], 99.9)),
                         f"{sum(len(r) for _, r in s['rejected'])}/{s['instances']}",
                         str(len(s["soundness"])) if e == "structgen" else "—"])
    head = ["source", "engine", "compiled", "refused", "budget", "timeouts", "TTFM p50", "TTFM p99", "TBM p50",
            "TBM p99.9", "valid rejected", "unsound walks"]
    return "### Summary\n\n" + markdown_table(head, rows, "ll" + "r" * 10)


# ------------------------------------------------------------------ census (--census)

CENSUS_SOURCES = ("kubernetes", "cfn", "check-jsonschema")
CENSUS_LABELS = {"cfn": "cloudformation"}  # (the census' tables have always said so)


class _Timeout(Exception):
    pass


def census_cases(every: int, sources: list[str]) -> Iterator[tuple[str, str, Any]]:
    """(source, name, schema): every ``every``-th schema of each source (sorted by name), every vendored one."""
    for source in sources:
        cases = sorted(corpora.SOURCES[source](), key=lambda c: c.name)
        for case in cases[:: every if source != "check-jsonschema" else 1]:
            yield CENSUS_LABELS.get(source, source), case.name, case.schema


def outcome(schema: Any, timeout: float) -> str:
    """How compiling ``schema`` ends: "compiled", "timeout", or the error class (and the keyword refused)."""

    def alarm(*_: Any) -> None:
        raise _Timeout

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        schema_to_network(schema)  # (what compile_json_schema builds: a network, or one automaton)
        return "compiled"
    except _Timeout:
        return "timeout"
    except SchemaNotSupported as e:
        return f"SchemaNotSupported {e.keyword}"
    except CompileBudgetExceeded as e:
        return "CompileBudgetExceeded " + re.sub(r"[0-9]+", "N", e.what)
    except StructgenError as e:
        return type(e).__name__
    except RecursionError:
        return "RecursionError"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def census(every: int, timeout: float, sources: list[str], details: bool) -> None:
    """Print the census table: per source, how many schemas ended in each outcome."""
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    start = time.perf_counter()
    for source, name, schema in census_cases(every, sources):
        got = outcome(schema, timeout)
        counts[source][got] += 1
        counts["all"][got] += 1
        if details and got != "compiled":
            print(f"  {source} {name}: {got}", flush=True)
    reasons = sorted(counts["all"], key=lambda r: (-counts["all"][r], r))
    columns = [s for s in counts if s != "all"] + ["all"]
    rows = [[r, *(str(counts[s][r]) for s in columns)] for r in reasons]
    rows.append(["**schemas**", *(str(sum(counts[s].values())) for s in columns)])
    print(markdown_table(["outcome", *columns], rows, "l" + "r" * len(columns)))
    print(f"\n({time.perf_counter() - start:.0f} s)")


# ------------------------------------------------------------------ main


def compare(args: argparse.Namespace, engines: list[str], sources: list[str], log: Callable[[str], None]) -> None:
    """The side-by-side run: load and sample the corpus, generate instances, run each engine, print the tables."""
    memory_bytes = int(args.memory_gb * 2**30)
    t_start = time.perf_counter()
    cases: list[corpora.Case] = []
    for src in sources:
        try:
            load = corpora.SOURCES[src]
            loaded = load(bundle_all=True) if src == "kubernetes" and args.bundle_all else load()
        except corpora.SourceMissing as e:
            log(f"source {src} skipped: {e}")
            continue
        chosen = corpora.sample(loaded, args.sample or None)
        log(f"source {src}: {len(chosen)} of {len(loaded)} schemas")
        cases.extend(chosen)
    sources = [s for s in sources if any(c.source == s for c in cases)]
    gen = generate_instances(cases, args.walks, args.gen_timeout, log, memory_bytes) if args.walks else {}
    tok = llama3_tokenizer()
    jobs = []
    texts: dict[str, list[str]] = {}  # the hypothesis / corpus instances, for --json
    dropped = 0
    for c in cases:
        ids_list = []
        for value in gen.get(f"{c.source}/{c.name}", {}).get("instances", []):
            # raw UTF-8 (what a model writes), keys in schema order, default separators
            text = json.dumps(in_schema_order(value, c.schema, c.schema), ensure_ascii=False)
            ids = tok.encode(text, add_special_tokens=False)
            if len(ids) <= args.max_tokens:
                ids_list.append(ids)
            else:
                dropped += 1
        texts[f"{c.source}/{c.name}"] = [tok.decode(ids) for ids in ids_list]
        jobs.append({"key": f"{c.source}/{c.name}", "name": c.name, "source": c.source, "schema": c.schema,
                     "instances": ids_list, "walks": args.walks, "walk_tokens": args.walk_tokens})
    log(f"instances ready ({sum(len(j['instances']) for j in jobs)}, {dropped} over --max-tokens dropped) "
        f"after {time.perf_counter() - t_start:.0f} s")
    results: dict[str, dict[str, dict[str, Any]]] = {}
    extra: dict[str, list[list[int]]] = {}
    walls = {}
    for e in engines:
        t0 = time.perf_counter()
        r = run_engine(e, jobs, args.timeout, log, extra, memory_bytes)
        walls[e] = time.perf_counter() - t0
        if r is not None:
            results[e] = r
        log(f"{e}: done in {walls[e]:.0f} s")
    print(f"## Real-world schemas: {', '.join(sources)} (sample {args.sample or 'all'} per source, "
          f"timeout {args.timeout:g} s, {args.walks} instances + {args.walks} walks per schema)\n")
    for src in sources:
        print(source_table(src, results) + "\n")
    print(summary_table(results, sources) + "\n")
    unsound = [b for r in results.values() for s in r.values() for b in s["soundness"]]
    if unsound:
        print(f"### !!! {len(unsound)} SOUNDNESS BUG(S): random walks whose output is not valid\n")
        for b in unsound:
            print(f"- `{b['schema']}` ({b['status']}): {b['error']}\n  output: `{b['output'][:500]}`")
        print()
    ngen = sum(1 for c in cases if gen.get(f"{c.source}/{c.name}", {}).get("instances"))
    print(f"hypothesis-jsonschema instances for {ngen}/{len(cases)} schemas; wall time "
          + ", ".join(f"{e} {t:.0f} s" for e, t in walls.items()) + f"; total {time.perf_counter() - t_start:.0f} s.")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "results": results, "walls": walls, "instance_texts": texts,
                       "instances": {k: v.get("error") for k, v in gen.items()}},
                      fh, indent=1, default=str)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n")[0])
    known = ", ".join(corpora.SOURCES)
    ap.add_argument("--sources", default=None,
                    help=f"comma-separated, from: {known} (default: all; --census: all but corpus)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, from: " + ", ".join(ENGINES))
    ap.add_argument("--sample", type=int, default=20, help="schemas per source, a deterministic sample (default 20: about 20 min on 2 shared cores; 0: all)")
    ap.add_argument("--timeout", type=float, default=20.0, help="per-compile budget in seconds (default 20)")
    ap.add_argument("--walks", type=int, default=3, help="hypothesis instances and random walks per schema (default 3)")
    ap.add_argument("--walk-tokens", type=int, default=400, help="longest random walk, in tokens (default 400)")
    ap.add_argument("--max-tokens", type=int, default=3000, help="instances longer than this are dropped (default 3000)")
    ap.add_argument("--gen-timeout", type=float, default=6.0, help="hypothesis budget per schema in seconds (default 6)")
    ap.add_argument("--bundle-all", action="store_true", help="kubernetes: bundle every definition, not only reachable ones")
    ap.add_argument("--memory-gb", type=float, default=8.0,
                    help="address-space limit per worker process, GiB (default 8; 0: none): over it, the schema counts as died")
    ap.add_argument("--json", default=None, help="write the raw results here")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--census", action="store_true", help="only count compile outcomes (structgen, no tokenizer, no walks)")
    ap.add_argument("--every", type=int, default=10, help="--census: every N-th Kubernetes and CloudFormation schema (default 10)")
    ap.add_argument("--details", action="store_true", help="--census: list every schema that did not compile")
    ap.add_argument("--check", action="store_true", help="check the corpus loaders, then exit (1 on a failure)")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    if args.check:
        return 1 if corpora.self_check() else 0
    default_sources = CENSUS_SOURCES if args.census else tuple(corpora.SOURCES)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()] if args.sources else list(default_sources)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for bad, choices in ((set(engines) - set(ENGINES), ENGINES), (set(sources) - set(corpora.SOURCES), tuple(corpora.SOURCES))):
        if bad:
            ap.error(f"unknown {sorted(bad)}; choose from {choices}")
    if args.census:
        census(args.every, args.timeout, sources, args.details)
        return 0
    if "structgen" in engines:  # its random walks become the peers' instances: it goes first
        engines.remove("structgen")
        engines.insert(0, "structgen")

    def log(s: str) -> None:
        if not args.quiet:
            print(s, file=sys.stderr, flush=True)

    compare(args, engines, sources, log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
