"""Real-world schema benchmark (issues 14 and 20): structgen, llguidance and xgrammar on schemas from PyPI packages.

Run:  python -m benchmarks.realworld [--sample 20] [--sources kubernetes,cfn,check-jsonschema,corpus]
                                     [--engines structgen,llguidance,xgrammar] [--timeout 20] [--walks 3]
                                     [--structgen-options defaults|validator] [--gen-timeout 6]
                                     [--bundle-all] [--json OUT]
      python -m benchmarks.realworld --profile SCHEMA_NAME [--sources ...] [--walks 3] [--structgen-options ...]
      python -m benchmarks.realworld --census [--every 10] [--timeout 20] [--details]
      python -m benchmarks.realworld --check

The corpus (:mod:`benchmarks.corpora`): Kubernetes resource schemas (kubernetes-validate, their
``_definitions.json`` refs bundled as local ``$defs``), CloudFormation resource schemas (cfn-lint), the
schemas check-jsonschema vendors, and ``benchmarks/corpus/``; ``--sample N`` per source, deterministic.

Instances, per schema (at most ``--walks`` of each kind), made before anything is timed:
  (a) ``hypothesis-jsonschema`` instances (``from_schema``, derandomised, bounded by ``--gen-timeout`` in a
      worker process; for ``corpus``, the valid instances of its files), kept only when ``jsonschema``
      (with its format checker, ``pattern`` with ASCII classes as in ECMA-262) says valid; serialised with ``json.dumps`` (default separators,
      ``ensure_ascii=False``: raw UTF-8 rather than escapes) with object keys in schema order, tokenised with the Llama-3 tokenizer;
  (b) structgen's own random walks, in a worker of their own that ends before the timed runs (so no engine
      starts with warm masks): from the initial state, sample a token allowed by ``token_mask`` (30%:
      among tokens made of ``"}],`` only, so values end; 40%: among one-byte tokens; else uniformly) until a final state or
      ``--walk-tokens``; the output is checked with ``jsonschema``. An output that is not valid JSON or not
      valid under the schema is a SOUNDNESS BUG (printed loudly, with the schema and the output). Valid
      walk outputs become instances for every engine. The slowest step of the walks (a mask, as the
      bool array they sample from, and a next state) is reported with its schema: the walks reach what
      no timed instance does (a schema without instances, an unfinished walk, a long string).

Then each engine, in a fresh worker process with one thread, compiles each schema (timed: the compile call,
then the first mask) and walks every instance token by token (timed: mask + commit, per token). Per source,
over all sources, over the schemas every engine compiled (where some engine refused others: compile times
on one set, not one engine's largest schemas against another's refusals) and over the schemas every engine
compiled and accepted every instance of (like with like), :mod:`benchmarks.realworld_report` reports:
compile and compile + first mask p50/p90/p99/max (a timeout counts as ``--timeout``) and the schemas over
1 s; the whole cost of a schema (compile + every mask + commit of its instances) p50/p90 and summed; mask +
commit p50/p90/p99/p99.9/max; the steps over 1 ms and their share of all mask time; errors raised after
compile returned (must be 0); valid instances rejected; structgen's guide memory (``Guide.memory_bytes``
after the walks); each time's ratio to llguidance's.
structgen compiles with ``--structgen-options``: ``defaults`` (``compile_json_schema(schema, vocab)``, as
issue 20's held-out table) or ``validator`` (``key_order="any", extra_properties=True``); xgrammar with
``strict_mode=False, any_order=True``, llguidance with its defaults.

A compile over ``--timeout`` or a worker that dies (out of memory, crash) costs that schema only: a fresh
worker takes the next one.

``--profile NAME`` (structgen only): cProfile of compile + first mask + every mask of that schema's instances
(made as above; NAME is ``name`` or ``source/name``), the 25 functions with the most time of their own.
``--census`` is the quick census of refusals (:mod:`benchmarks.census`). ``--check`` checks the corpus
loaders (:func:`benchmarks.corpora.self_check`) and runs the examples of the report's docstrings.
"""

from __future__ import annotations

import argparse
import cProfile
import difflib
import doctest
import json
import pstats
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks import census as census_mod
from benchmarks import corpora, realworld_report
from benchmarks.harness import (
    STRUCTGEN_OPTIONS, EngineUnavailable, StructgenEngine, Worker, fmt_ms, fmt_us, in_schema_order, llama3_tokenizer,
    make_engine, reason_of, run_jobs, serve_jobs,
)
from benchmarks.instances import first_error, generate_instances, validator
from benchmarks.realworld_report import common_keys, engine_table, notes, summarise, summary_table
from structgen.errors import CompileBudgetExceeded

ENGINES = ("structgen", "llguidance", "xgrammar")
WALKER = "structgen-walks"  # the worker that samples structgen's random walks (not timed)
CLOSERS = frozenset(b'"}],')
MODULE = "benchmarks.realworld"  # the engines' workers run this script again, with --worker ENGINE


# ------------------------------------------------------------------ engines (inside a worker)


class WalkingStructgen(StructgenEngine):
    """structgen, which also samples random walks of its own guides."""

    def __init__(self, tok: Any, options: dict[str, Any]) -> None:
        super().__init__(tok, options=options)
        toks = self.vocab.tokens
        # the walk's bias: tokens that close a string / container or end a value, and one-byte tokens
        self.closers = np.array([t is not None and len(t) > 0 and all(b in CLOSERS for b in t) for t in toks], dtype=bool)
        self.single = np.array([t is not None and len(t) == 1 for t in toks], dtype=bool)
        self.eos = np.array(sorted(self.vocab.eos_token_ids), dtype=np.int64)

    def random_walk(self, g: Any, rng: random.Random, max_tokens: int) -> dict[str, Any]:
        """Sample allowed tokens until a final state; ``status``: final / unfinished / dead-end / raised;
        ``slowest``: the slowest step's mask and next state, in seconds (the walks reach what no
        instance does: a schema without instances, a long string)."""
        s, ids = g.initial_state, []
        slowest = 0.0
        pc = time.perf_counter
        try:
            while not g.is_final(s):
                if len(ids) >= max_tokens:
                    return {"ids": ids, "status": "unfinished", "slowest": slowest}
                start = pc()
                mask = g.token_mask(s).copy()
                masked = pc() - start
                mask[self.eos] = False
                r = rng.random()
                allowed = np.flatnonzero(mask & self.closers) if r < 0.3 else np.flatnonzero(mask & self.single) if r < 0.7 else []
                if not len(allowed):
                    allowed = np.flatnonzero(mask)
                if not len(allowed):
                    return {"ids": ids, "status": "dead-end", "slowest": slowest}
                t = int(allowed[rng.randrange(len(allowed))])
                start = pc()
                s = g.next_state(s, t)
                slowest = max(slowest, masked + pc() - start)
                ids.append(t)
                if s < 0:
                    return {"ids": ids, "status": "next_state -1 on a masked-in token", "slowest": slowest}
        except Exception as e:  # noqa: BLE001 - an error after compile: counted, never hidden
            return {"ids": ids, "status": "raised", "error": f"{type(e).__name__}: {str(e)[:300]}", "slowest": slowest}
        return {"ids": ids, "status": "final", "slowest": slowest}

    def text(self, ids: list[int]) -> str:
        return b"".join(self.vocab.tokens[t] for t in ids).decode("utf-8", errors="replace")


def setup_engine(engine: str, options: str) -> Any:
    tok = llama3_tokenizer()
    if engine == WALKER:
        return WalkingStructgen(tok, STRUCTGEN_OPTIONS[options])
    if engine == "structgen":
        return StructgenEngine(tok, options=STRUCTGEN_OPTIONS[options])
    return make_engine(engine, tok, validator_grade=True)


def describe_error(e: Exception) -> dict[str, Any]:
    """A refusal as the tables group it: the message, its reason, and whether it is a budget error."""
    return {"error": f"{type(e).__name__}: {str(e)[:300]}", "reason": reason_of(e),
            "budget": isinstance(e, CompileBudgetExceeded)}


def random_walks(eng: WalkingStructgen, handle: Any, job: dict[str, Any]) -> dict[str, Any]:
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
    return {"walks": walks}


def walk_instances(eng: Any, handle: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Every instance walked, timing each mask + commit; an exception is an error after compile.

    >>> class Raises:  # an engine whose second step fails
    ...     def walk(self, handle, ids, times):
    ...         times.append(1e-6)
    ...         raise RuntimeError("over budget")
    >>> walk_instances(Raises(), None, {"instances": [[5, 6]]})["errors"]
    [{'instance': 0, 'token': 1, 'error': 'RuntimeError: over budget'}]
    """
    times: list[float] = []
    accepted, errors = [], []
    for i, ids in enumerate(job["instances"]):
        mine: list[float] = []
        try:
            accepted.append(eng.walk(handle, ids, mine))
        except Exception as e:  # noqa: BLE001 - counted (and listed) as an error after compile
            accepted.append(False)
            errors.append({"instance": i, "token": len(mine), "error": f"{type(e).__name__}: {str(e)[:300]}"})
        times.extend(mine)
    mem = int(handle.memory_bytes) if isinstance(eng, StructgenEngine) else None
    return {"tbm": times, "accepted": accepted, "errors": errors, "memory": mem}


def worker(engine: str, options: str) -> None:
    finish = random_walks if engine == WALKER else walk_instances
    serve_jobs(lambda: setup_engine(engine, options), finish, describe_error)


# ------------------------------------------------------------------ parent


def walk_status(w: dict[str, Any]) -> str:
    """valid / invalid / unchecked for a finished walk, else its own status."""
    if w["status"] != "final":
        return str(w["status"])
    return "invalid" if w.get("invalid") else "unchecked" if w.get("unchecked") else "valid"


def run_random_walks(jobs: list[dict[str, Any]], args: argparse.Namespace, log: Callable[[str], None],
                     memory_bytes: int) -> dict[str, list[dict[str, Any]]]:
    """structgen's random walks of every schema it compiles (key -> walks), in a worker that is then stopped."""
    payloads = [{k: v for k, v in job.items() if k != "instances"} | {"walks": args.walks, "walk_tokens": args.walk_tokens}
                for job in jobs]
    out: dict[str, list[dict[str, Any]]] = {}

    def start() -> Worker:
        return Worker(MODULE, "--worker", WALKER, "--structgen-options", args.structgen_options, memory_bytes=memory_bytes)

    for r in run_jobs(start, payloads, args.timeout, walk_timeout=max(10 * args.timeout, 120)):
        key = r.job["key"]
        if r.status == "walk_timeout":
            out[key] = [{"status": "timed out", "ids": [], "text": ""}]
        if r.done is None:  # not compiled: the timed run reports why
            log(f"random walks {key}: {r.status}")
            continue
        out[key] = r.done["walks"]
        for w in out[key]:
            status = walk_status(w)
            if status not in ("valid", "unfinished", "unchecked", "raised"):
                log(f"!!! SOUNDNESS BUG structgen {key}: {status} {w.get('invalid')} output={w['text'][:300]!r}")
            elif status == "raised":
                log(f"!!! structgen raised after compile in a random walk of {key}: {w['error']}")
        log(f"random walks {key}: " + ", ".join(walk_status(w) for w in out[key]))
    return out


def run_engine(engine: str, jobs: list[dict[str, Any]], args: argparse.Namespace, log: Callable[[str], None],
               memory_bytes: int) -> list[dict[str, Any]] | None:
    """The engine's records (see :mod:`benchmarks.realworld_report`), one per job; None if it is not installed."""
    recs: list[dict[str, Any]] = []

    def start() -> Worker:
        return Worker(MODULE, "--worker", engine, "--structgen-options", args.structgen_options, memory_bytes=memory_bytes)

    try:
        for r in run_jobs(start, jobs, args.timeout, walk_timeout=walk_limit(args)):
            job = r.job
            rec: dict[str, Any] = {"key": job["key"], "source": job["source"], "name": job["name"]}
            recs.append(rec)
            if r.status in ("timeout", "died"):
                rec["outcome"] = r.status
                log(f"{engine} {job['key']}: {r.status}")
                continue
            msg = r.message
            assert msg is not None
            if r.status == "error":
                rec.update(outcome="budget" if msg["budget"] else "refused", error=msg["error"], reason=msg["reason"],
                           stage=msg.get("stage", "compile"))
                log(f"{engine} {job['key']}: {rec['stage']}: {msg['error'][:150]}")
                continue
            rec.update(outcome="compiled", compile=msg["build"], ttfm=msg["compiled"], walked=r.done is not None,
                       tbm=[], instances=len(job["instances"]), rejected=[], errors=[], memory=None)
            if r.done is None:  # walk_timeout
                log(f"{engine} {job['key']}: walks timed out / worker died")
                continue
            done = r.done
            raised = {e["instance"] for e in done["errors"]}
            rec.update(tbm=done["tbm"], instances=len(done["accepted"]), errors=done["errors"], memory=done["memory"],
                       rejected=[i for i, a in enumerate(done["accepted"]) if not a and i not in raised])
            log(f"{engine} {job['key']}: compile {1e3 * rec['compile']:.1f} ms, + first mask {1e3 * rec['ttfm']:.1f} ms, "
                f"{len(done['tbm'])} steps" + (f", rejected {rec['rejected']}" if rec["rejected"] else "")
                + (f", RAISED {done['errors']}" if done["errors"] else ""))
    except EngineUnavailable as e:
        log(f"{engine}: skipped ({e})")
        return None
    return recs


def walk_limit(args: argparse.Namespace) -> float:
    """Seconds the walks of one schema may take (after that, the schema counts as walked for that long)."""
    return max(10 * args.timeout, 120)


def random_walk_cell(walks: dict[str, list[dict[str, Any]]], keys: set[str]) -> str:
    """The "valid / invalid / unfinished / raised" cell of structgen's random walks over the schemas ``keys``."""
    counts: dict[str, int] = {}
    for k in keys:
        for w in walks.get(k, []):
            counts[walk_status(w)] = counts.get(walk_status(w), 0) + 1
    bad = sum(v for s, v in counts.items() if s not in ("valid", "unfinished", "unchecked", "raised", "timed out"))
    cell = f"{counts.get('valid', 0)} / {bad} / {counts.get('unfinished', 0)} / {counts.get('raised', 0)}"
    extra = [f"+{counts[s]} {s}" for s in ("unchecked", "timed out") if counts.get(s)]
    return cell + (f" ({', '.join(extra)})" if extra else "")


def random_walk_slowest(walks: dict[str, list[dict[str, Any]]], keys: set[str]) -> str:
    """The cell of the slowest step of structgen's random walks over the schemas ``keys`` (its mask,
    as a bool array, and next state) and the schema it was in.

    >>> random_walk_slowest({"s/a": [{"slowest": 0.002}, {"slowest": 0.0004}], "s/b": [{"slowest": 0.012}],
    ...                      "s/c": [{"status": "timed out"}]}, {"s/a", "s/b", "s/c"})
    '12.0 ms (s/b)'
    >>> random_walk_slowest({}, {"s/a"})
    '—'
    """
    got = max(((w["slowest"], k) for k in keys for w in walks.get(k, []) if "slowest" in w), default=None)
    return "—" if got is None else f"{fmt_ms(1e3 * got[0])} ({got[1]})"


def summaries(records: dict[str, list[dict[str, Any]]], walks: dict[str, list[dict[str, Any]]], keys: set[str] | None,
              args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Each engine's numbers over the schemas in ``keys`` (None: all); structgen's include its random walks."""
    out = {}
    for e, recs in records.items():
        mine = [r for r in recs if keys is None or r["key"] in keys]
        chosen = {r["key"] for r in mine}
        walk_errors = [{"schema": k, "error": w["error"]} for k in sorted(chosen) for w in walks.get(k, [])
                       if w["status"] == "raised"] if e == "structgen" else []
        out[e] = summarise(mine, args.timeout, walk_limit(args), walk_errors)
        if e == "structgen":
            out[e]["random_walks"] = random_walk_cell(walks, chosen)
            out[e]["random_walk_slowest"] = random_walk_slowest(walks, chosen)
    return out


def prepare(args: argparse.Namespace, sources: list[str], log: Callable[[str], None], memory_bytes: int,
            only: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, list[str]], list[str]]:
    """Load and sample the corpus (or the schema ``only``), make the instances: (jobs, generated, texts, sources)."""
    cases: list[corpora.Case] = []
    known: list[str] = []
    for src in sources:
        try:
            load = corpora.SOURCES[src]
            loaded = load(bundle_all=True) if src == "kubernetes" and args.bundle_all else load()
        except corpora.SourceMissing as e:
            log(f"source {src} skipped: {e}")
            continue
        known += [f"{c.source}/{c.name}" for c in loaded]
        chosen = [c for c in loaded if only in (c.name, f"{c.source}/{c.name}")] if only else corpora.sample(loaded, args.sample or None)
        log(f"source {src}: {len(chosen)} of {len(loaded)} schemas")
        cases.extend(chosen)
    if only and len(cases) != 1:
        close = difflib.get_close_matches(only, known, n=5, cutoff=0.5)
        found = ", ".join(f"{c.source}/{c.name}" for c in cases)
        raise SystemExit(f"--profile {only!r}: " + (f"several schemas match ({found}); name one as source/name" if cases
                         else f"no schema of {', '.join(sources)} is named so" + (f" (close: {', '.join(close)})" if close else "")))
    gen = generate_instances(cases, args.walks, args.gen_timeout, log, memory_bytes) if args.walks else {}
    tok = llama3_tokenizer()
    jobs, texts, dropped = [], {}, 0
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
                     "instances": ids_list})
    walks = run_random_walks(jobs, args, log, memory_bytes) if args.walks else {}
    for job in jobs:  # structgen's valid walks are instances for every engine
        job["instances"] += [w["ids"] for w in walks.get(job["key"], []) if walk_status(w) == "valid"]
    log(f"instances ready ({sum(len(j['instances']) for j in jobs)}, {dropped} over --max-tokens dropped)")
    return jobs, {"generated": gen, "walks": walks}, texts, [s for s in sources if any(c.source == s for c in cases)]


def compare(args: argparse.Namespace, engines: list[str], sources: list[str], log: Callable[[str], None]) -> None:
    """The side-by-side run: instances first, then each engine on every schema; print the tables."""
    memory_bytes = int(args.memory_gb * 2**30)
    t_start = time.perf_counter()
    jobs, made, texts, sources = prepare(args, sources, log, memory_bytes)
    gen, walks = made["generated"], made["walks"]
    records: dict[str, list[dict[str, Any]]] = {}
    walls = {}
    for e in engines:
        t0 = time.perf_counter()
        r = run_engine(e, jobs, args, log, memory_bytes)
        walls[e] = time.perf_counter() - t0
        if r is not None:
            records[e] = r
        log(f"{e}: done in {walls[e]:.0f} s")
    numbers = {"all": summaries(records, walks, None, args),
               "by_source": {src: summaries(records, walks, {j["key"] for j in jobs if j["source"] == src}, args)
                             for src in sources}}
    common = common_keys(records) if len(records) > 1 else set()
    compiled = realworld_report.compiled_keys(records) if len(records) > 1 else set()
    print(f"## Real-world schemas: {', '.join(sources)} (sample {args.sample or 'all'} per source, "
          f"timeout {args.timeout:g} s, {args.walks} instances + {args.walks} walks per schema, "
          f"structgen {args.structgen_options})\n")
    print(f"### All sources ({len(jobs)} schemas)\n\n" + engine_table(numbers["all"]) + "\n")
    if compiled and len(compiled) < len(jobs):
        numbers["compiled_by_all"] = summaries(records, walks, compiled, args)
        print(f"### Compiled by every engine: the {len(compiled)} schemas every engine compiled (compile times on one set; "
              "the walks' rows count an engine's walks as far as it took them)\n\n"
              + engine_table(numbers["compiled_by_all"]) + "\n")
    if common:
        numbers["like_with_like"] = summaries(records, walks, common, args)
        print(f"### Like with like: the {len(common)} schemas every engine compiled and accepted every instance of\n\n"
              + engine_table(numbers["like_with_like"]) + "\n")
    elif len(records) > 1:
        print("### Like with like: no schema that every engine compiled and accepted every instance of\n")
    for src in sources:
        print(f"### {src} ({sum(j['source'] == src for j in jobs)} schemas)\n\n" + engine_table(numbers["by_source"][src]) + "\n")
    print("### Summary\n\n" + summary_table(numbers["by_source"] | {"all": numbers["all"]}) + "\n")
    lines = notes(records, numbers["all"])
    if lines:
        print("\n".join(lines) + "\n")
    unsound = [(k, w) for k, ws in walks.items() for w in ws
               if walk_status(w) not in ("valid", "unfinished", "unchecked", "raised", "timed out")]
    if unsound:
        print(f"### !!! {len(unsound)} SOUNDNESS BUG(S): random walks whose output is not valid\n")
        for k, w in unsound:
            print(f"- `{k}` ({walk_status(w)}): {w.get('invalid')}\n  output: `{w['text'][:500]}`")
        print()
    ngen = sum(1 for v in gen.values() if v.get("instances"))
    print(f"Times: a timeout counts as {args.timeout:g} s, walks over their limit as {walk_limit(args):g} s; "
          f"ratios (×) are engine / {realworld_report.BASELINE}. hypothesis-jsonschema instances for {ngen}/{len(jobs)} "
          f"schemas; wall time " + ", ".join(f"{e} {t:.0f} s" for e, t in walls.items())
          + f"; total {time.perf_counter() - t_start:.0f} s.")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "numbers": numbers, "records": records, "walls": walls,
                       "random_walks": {k: [{x: y for x, y in w.items() if x != "ids"} for w in ws] for k, ws in walks.items()},
                       "instance_texts": texts, "instances": {k: v.get("error") for k, v in gen.items()}},
                      fh, indent=1, default=str)


def profile(args: argparse.Namespace, sources: list[str], log: Callable[[str], None]) -> None:
    """cProfile of structgen's compile + first mask + every mask of one schema's instances (top 25 by own time)."""
    jobs, _, _, _ = prepare(args, sources, log, int(args.memory_gb * 2**30), only=args.profile)
    job = jobs[0]
    eng = StructgenEngine(llama3_tokenizer(), options=STRUCTGEN_OPTIONS[args.structgen_options])
    times: list[float] = []
    accepted: list[bool] = []
    prof, pc = cProfile.Profile(), time.perf_counter
    stamps = [pc()]
    prof.enable()
    try:  # compile, first mask, then every instance; an exception ends the run and is printed
        g = eng.build(job["schema"])
        stamps.append(pc())
        eng.first_mask(g)
        stamps.append(pc())
        for ids in job["instances"]:
            accepted.append(eng.walk(g, ids, times))
        error = ""
    except Exception as e:  # noqa: BLE001 - printed with the profile of what ran
        error = f"\n\n**{['compile', 'first mask', 'walk'][len(stamps) - 1]} raised** {type(e).__name__}: {e}"
    finally:
        prof.disable()
    memory = f"; guide memory {g.memory_bytes / 2**20:,.1f} MiB" if len(stamps) > 1 else ""
    stamps += [pc()] * (4 - len(stamps))
    a, b, c, d = stamps
    print(f"## Profile of structgen ({args.structgen_options}) on `{job['key']}`\n\n"
          f"Under the profiler (cProfile slows Python code down, often about 2×): compile {fmt_ms(1e3 * (b - a))}, "
          f"first mask {fmt_ms(1e3 * (c - b))}, {len(times):,} masks + commits of {len(accepted)}/{len(job['instances'])} "
          f"instances {fmt_ms(1e3 * sum(times))} (max {fmt_us(1e6 * max(times, default=0.0))}), in all "
          f"{fmt_ms(1e3 * (d - a))}; accepted {sum(accepted)}/{len(accepted)}{memory}" + error + "\n\n```")
    pstats.Stats(prof, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(25)
    print("```")


def self_check() -> int:
    """The corpus loaders' checks, then the examples in the docstrings of the report, the harness and the instances' validator."""
    failed = corpora.self_check()
    for module in (realworld_report, sys.modules[__name__], sys.modules["benchmarks.harness"], sys.modules["benchmarks.instances"]):
        r = doctest.testmod(module)
        name = MODULE if module.__name__ == "__main__" else module.__name__
        print(f"{'ok' if not r.failed else 'FAILED'} doctests of {name}: {r.attempted} examples, {r.failed} failed")
        failed += bool(r.failed)
    return failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n")[0])
    known = ", ".join(corpora.SOURCES)
    ap.add_argument("--sources", default=None,
                    help=f"comma-separated, from: {known} (default: all; --census: all but corpus)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, from: " + ", ".join(ENGINES))
    ap.add_argument("--structgen-options", default="defaults", choices=tuple(STRUCTGEN_OPTIONS),
                    help="structgen's compile options: defaults (none, as issue 20's held-out table) or validator "
                         "(key_order='any', extra_properties=True); the peers keep theirs (default: defaults)")
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
    ap.add_argument("--profile", default=None, metavar="SCHEMA_NAME",
                    help="structgen only: cProfile of compile + every mask of this schema (name or source/name)")
    ap.add_argument("--census", action="store_true", help="only count compile outcomes (structgen, no tokenizer, no walks)")
    ap.add_argument("--every", type=int, default=10, help="--census: every N-th Kubernetes and CloudFormation schema (default 10)")
    ap.add_argument("--details", action="store_true", help="--census: list every schema that did not compile")
    ap.add_argument("--check", action="store_true", help="check the corpus loaders and the report's examples, then exit (1 on a failure)")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.structgen_options)
        return 0
    if args.check:
        return 1 if self_check() else 0
    default_sources = census_mod.CENSUS_SOURCES if args.census else tuple(corpora.SOURCES)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()] if args.sources else list(default_sources)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for bad, choices in ((set(engines) - set(ENGINES), ENGINES), (set(sources) - set(corpora.SOURCES), tuple(corpora.SOURCES))):
        if bad:
            ap.error(f"unknown {sorted(bad)}; choose from {choices}")
    if args.census:
        census_mod.census(args.every, args.timeout, sources, args.details)
        return 0

    def log(s: str) -> None:
        if not args.quiet:
            print(s, file=sys.stderr, flush=True)

    if args.profile:
        profile(args, sources, log)
    else:
        compare(args, engines, sources, log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
