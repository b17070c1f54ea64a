"""Real-world schema benchmark (issue 14): structgen, llguidance and xgrammar on schemas from PyPI packages.

Run:  python benchmarks/realworld.py [--sample 20] [--sources kubernetes,cfn,check-jsonschema,corpus]
                                    [--engines structgen,llguidance,xgrammar] [--timeout 20] [--walks 3]
                                    [--gen-timeout 6] [--bundle-all] [--json OUT]

The corpus (``benchmarks/realworld_corpus.py``): Kubernetes resource schemas (kubernetes-validate, their
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

Each engine runs in its own worker process with one thread (see maskbench.py); a compile over ``--timeout``
or a worker that dies (out of memory, crash) costs that schema only: a fresh worker takes the next one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import maskbench  # noqa: E402
import realworld_corpus as rc  # noqa: E402

ENGINES = ("structgen", "llguidance", "xgrammar")
CLOSERS = frozenset(b'"}],')


# ------------------------------------------------------------------ error reasons


def normalise(msg: str) -> str:
    """A message with its particulars (quoted names, numbers, JSON pointers, long tails) blanked out."""
    msg = msg.strip().splitlines()[0] if msg.strip() else ""
    msg = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", msg)
    msg = re.sub(r"(?<![\w])(#?/[\w$~.:\-/{}]*)", "PATH", msg)
    msg = re.sub(r"\d+(\.\d+)?", "N", msg)
    return msg[:90]


def reason_of(e: BaseException) -> str:
    name = type(e).__name__
    for attr in ("keyword", "construct"):
        v = getattr(e, attr, None)
        if isinstance(v, str) and v:
            return f"{name}: {v}"
    return f"{name}: {normalise(str(e))}"


# ------------------------------------------------------------------ engines (inside a worker)


class StructgenEngine(maskbench.StructgenEngine):
    def __init__(self, tok: Any) -> None:
        super().__init__(tok)
        toks = self.vocab.tokens
        # the walk's bias: tokens that close a string / container or end a value, and one-byte tokens
        self.closers = np.array([t is not None and len(t) > 0 and all(b in CLOSERS for b in t) for t in toks], dtype=bool)
        self.single = np.array([t is not None and len(t) == 1 for t in toks], dtype=bool)
        self.eos = np.array(sorted(self.vocab.eos_token_ids), dtype=np.int64)

    def compile(self, schema: Any) -> Any:
        g = self.sg.compile_json_schema(schema, self.vocab, key_order="any", extra_properties=True)
        g.token_mask(g.initial_state)
        return g

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


class XgrammarEngine(maskbench.XgrammarEngine):
    def compile(self, schema: Any) -> Any:
        cg = self.compiler.compile_json_schema(json.dumps(schema), strict_mode=False, any_order=True)
        self.xgr.GrammarMatcher(cg).fill_next_token_bitmask(self.bitmask)
        return cg


ADAPTERS: dict[str, Callable[[Any], Any]] = {
    "structgen": StructgenEngine,
    "llguidance": maskbench.LlguidanceEngine,
    "xgrammar": XgrammarEngine,
}


def _ascii_pattern(v: Any, pattern: str, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if v.is_type(instance, "string") and not re.search(pattern, instance, re.ASCII):
        yield ValidationError(f"{instance!r} does not match {pattern!r} (ASCII \\d \\w \\s, as in ECMA-262)")


def validator(schema: Any) -> Any:
    """jsonschema's validator for ``schema``'s draft, with its format checker, and ``pattern`` read with ASCII
    classes: Python's ``\\d`` also matches ``২`` or ``𝟲``, ECMA-262's (JSON Schema's, every engine's) does not."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    cls = jsonschema.validators.extend(cls, {"pattern": _ascii_pattern})
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check(v: Any, value: Any) -> str | None:
    """None when valid, else the first error (keyword at path: message)."""
    err = next(iter(v.iter_errors(value)), None)
    if err is None:
        return None
    return f"{err.validator} at /{'/'.join(map(str, err.absolute_path))}: {err.message[:200]}"


def worker(engine: str) -> None:
    out = sys.stdout

    def send(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    sys.stdout = sys.stderr
    t0 = time.perf_counter()
    try:
        eng = ADAPTERS[engine](maskbench.load_tokenizer())
    except Exception as e:  # noqa: BLE001 - reported to the parent, which skips the engine
        send({"setup_error": f"{type(e).__name__}: {e}"})
        return
    send({"ready": time.perf_counter() - t0})
    for line in sys.stdin:
        job = json.loads(line)
        send({"compiling": job["name"]})
        a = time.perf_counter()
        try:
            handle = eng.compile(job["schema"])
        except Exception as e:  # noqa: BLE001 - an unsupported schema is a result, not a crash
            budget = type(e).__name__ == "CompileBudgetExceeded"
            send({"error": f"{type(e).__name__}: {str(e)[:300]}", "reason": reason_of(e), "budget": budget})
            continue
        send({"compiled": time.perf_counter() - a})
        walks: list[dict[str, Any]] = []
        instances = list(job["instances"])
        if job.get("walks") and hasattr(eng, "random_walk"):
            rng = random.Random(job["name"])
            try:
                v = validator(job["schema"])
            except Exception as e:  # noqa: BLE001
                v, verr = None, f"{type(e).__name__}: {e}"
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
                            w["invalid"] = check(v, value) if v is not None else None
                            w["unchecked"] = v is None and verr
                        except Exception as e:  # noqa: BLE001 - the validator itself failing (unresolvable ref, ...)
                            w["unchecked"] = f"{type(e).__name__}: {str(e)[:200]}"
                    if not w.get("invalid") and not w.get("unchecked"):
                        instances.append(w["ids"])
                walks.append(w)
        times: list[float] = []
        accepted = []
        for ids in instances:
            try:
                accepted.append(eng.walk(handle, ids, times))
            except Exception:  # noqa: BLE001 - an engine raising on a token = rejected
                accepted.append(False)
        mem = eng.memory(handle) if hasattr(eng, "memory") else None
        send({"done": job["name"], "tbm": times, "accepted": accepted, "walks": walks, "memory": mem})


# ------------------------------------------------------------------ hypothesis instances (inside a worker)


def gen_worker() -> None:
    import warnings

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis_jsonschema import from_schema

    warnings.simplefilter("ignore")
    out = sys.stdout
    sys.stdout = sys.stderr
    out.write(json.dumps({"ready": 0}) + "\n")
    out.flush()
    for line in sys.stdin:
        job = json.loads(line)
        schema, n = job["schema"], job["n"]
        found: list[Any] = []
        err = None
        try:
            strategy = from_schema(schema)

            @settings(database=None, max_examples=max(4 * n, 8), deadline=None, derandomize=True,
                      suppress_health_check=list(HealthCheck), phases=[Phase.generate])
            @given(strategy)
            def collect(value: Any) -> None:
                found.append(value)

            collect()
        except Exception as e:  # noqa: BLE001 - hypothesis-jsonschema cannot generate for every schema
            err = reason_of(e)
        keep: dict[str, Any] = {}
        try:
            v = validator(schema)
            for value in found:
                text = json.dumps(value, sort_keys=True)
                try:
                    json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates: not text a model writes
                except UnicodeEncodeError:
                    continue
                if text not in keep and check(v, value) is None:
                    keep[text] = value
        except Exception as e:  # noqa: BLE001
            err = err or reason_of(e)
        values = sorted(keep.values(), key=lambda x: len(json.dumps(x)))
        if len(values) > n:  # spread over sizes, largest included
            values = [values[round(i * (len(values) - 1) / max(n - 1, 1))] for i in range(n)] if n > 1 else values[-1:]
        out.write(json.dumps({"instances": values, "error": err, "generated": len(found)}) + "\n")
        out.flush()


# ------------------------------------------------------------------ parent


MEMORY_LIMIT = [0]  # bytes of address space per worker (0: none); set by --memory-gb


def _limit_memory() -> None:
    if MEMORY_LIMIT[0]:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT[0], MEMORY_LIMIT[0]))


class Worker(maskbench.Worker):
    def __init__(self, mode: str, engine: str = "") -> None:  # noqa: D107 - maskbench.Worker with this script
        env = dict(os.environ, **maskbench.THREAD_ENV)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(HERE), env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), mode, *([engine] if engine else [])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1, preexec_fn=_limit_memory,
        )
        self.buf = ""


def generate_instances(cases: list[rc.Case], n: int, timeout: float, log: Callable[[str], None]) -> dict[str, Any]:
    """name -> {"instances": [...], "error": reason or None}; hypothesis in a worker, ``timeout`` s per schema."""
    out: dict[str, Any] = {}
    w: Worker | None = None
    for c in cases:
        if c.source == "corpus":
            out[f"{c.source}/{c.name}"] = {"instances": c.instances[:n], "error": None}
            continue
        if w is None:
            w = Worker("--gen-worker")
            if not (w.recv(300) or {}).get("ready") == 0:
                raise RuntimeError("the instance generator did not start")
        w.send({"schema": c.schema, "n": n})
        msg = w.recv(timeout)
        key = f"{c.source}/{c.name}"
        if msg is None or "dead" in msg:
            out[key] = {"instances": [], "error": "timeout" if msg is None else "generator died"}
            w.kill()
            w = None
        else:
            out[key] = msg
        log(f"hypothesis {key}: {len(out[key]['instances'])} instances"
            + (f" ({out[key]['error']})" if out[key].get("error") else ""))
    if w is not None:
        w.kill()
    return out


def new_stats() -> dict[str, Any]:
    return {"schemas": 0, "compiled": 0, "refused": {}, "budget": 0, "timeout": 0, "died": 0, "walk_timeout": 0,
            "ttfm": [], "tbm": [], "instances": 0, "rejected": [], "memory": [], "walks": {}, "soundness": [],
            "unchecked": 0, "per_schema": {}}


def run_engine(engine: str, jobs: list[dict[str, Any]], timeout: float, log: Callable[[str], None],
               extra: dict[str, list[list[int]]]) -> dict[str, dict[str, Any]] | None:
    """Per source: the engine's stats. ``extra`` (name -> token ids) is filled by structgen's valid walks."""
    by_source: dict[str, dict[str, Any]] = {}
    w: Worker | None = None
    for job in jobs:
        st = by_source.setdefault(job["source"], new_stats())
        st["schemas"] += 1
        rec: dict[str, Any] = {}
        st["per_schema"][job["name"]] = rec
        if w is None:
            w = Worker("--worker", engine)
            msg = w.recv(600)
            if not msg or "ready" not in msg:
                log(f"{engine}: skipped ({msg})")
                w.kill()
                return None
        payload = dict(job, instances=job["instances"] + extra.get(job["key"], []),
                       walks=job["walks"] if engine == "structgen" else 0)
        w.send(payload)
        msg = w.recv(60)
        msg = w.recv(timeout) if msg and "compiling" in msg else msg
        if msg is None or "dead" in msg:
            key = "timeout" if msg is None else "died"
            st[key] += 1
            rec["outcome"] = key
            log(f"{engine} {job['key']}: {key}")
            w.kill()
            w = None
            continue
        if "error" in msg:
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
        done = w.recv(max(10 * timeout, 120))
        if not done or "done" not in done:
            st["walk_timeout"] += 1
            rec["walk"] = "timed out / worker died"
            log(f"{engine} {job['key']}: walks timed out / worker died")
            w.kill()
            w = None
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
    if w is not None:
        w.kill()
    return by_source


# ------------------------------------------------------------------ tables


def _pct(xs: list[float], q: float) -> float | None:
    return float(np.percentile(np.array(xs), q)) if xs else None


def _ms(x: float | None) -> str:
    return "—" if x is None else maskbench._fmt_ms(1e3 * x)


def _us(x: float | None) -> str:
    return "—" if x is None else maskbench._fmt_us(1e6 * x)


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
        rows.append((f"TTFM {'max' if q == 100 else f'p{q}'}", [_ms(_pct(s["ttfm"], q)) for s in st.values()]))
    for q in (50, 99, 99.9, 100):
        rows.append((f"TBM {'max' if q == 100 else f'p{q}'}", [_us(_pct(s["tbm"], q)) for s in st.values()]))
    rows.append(("tokens timed", [f"{len(s['tbm']):,}" for s in st.values()]))
    rows.append(("valid instances rejected", [f"{sum(len(r) for _, r in s['rejected'])}/{s['instances']}" for s in st.values()]))
    rows.append(("walks timed out", [str(s["walk_timeout"]) for s in st.values()]))
    if "structgen" in st:
        s = st["structgen"]
        rows.append(("guide memory p50 / max", [f"{_mib(_pct(s['memory'], 50))} / {_mib(_pct(s['memory'], 100))}" if e == "structgen" else "—" for e in engines]))
        wk = s["walks"]
        rows.append(("random walks valid / invalid / unfinished", [
            f"{wk.get('valid', 0)} / {sum(v for k, v in wk.items() if k not in ('valid', 'unfinished', 'unchecked'))}"
            f" / {wk.get('unfinished', 0)}" + (f" (+{wk['unchecked']} unchecked)" if wk.get("unchecked") else "")
            if e == "structgen" else "—" for e in engines]))
    head = f"### {src} ({n} schemas)\n\n| | " + " | ".join(engines) + " |\n|---|" + "--:|" * len(engines) + "\n"
    body = "\n".join(f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows)
    notes = []
    for e, s in st.items():
        for reason, names in sorted(s["refused"].items(), key=lambda kv: -len(kv[1])):
            notes.append(f"- {e} refused {len(names)}: `{reason}` ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})")
        for name, rej in s["rejected"][:8]:
            notes.append(f"- {e} rejected valid instance(s) {rej} of {name}")
        if len(s["rejected"]) > 8:
            notes.append(f"- {e}: {len(s['rejected']) - 8} more schemas with rejected valid instances")
    return head + body + ("\n\n" + "\n".join(notes) if notes else "")


def summary_table(res: dict[str, dict[str, dict[str, Any]]], sources: list[str]) -> str:
    engines = list(res)
    rows = []
    for src in sources:
        for e in engines:
            s = res[e].get(src)
            if s is None:
                continue
            bad = len(s["soundness"])
            rows.append(f"| {src} | {e} | {s['compiled']}/{s['schemas']} | {sum(len(v) for v in s['refused'].values())} | "
                        f"{s['budget']} | {s['timeout']} | {_ms(_pct(s['ttfm'], 50))} | {_ms(_pct(s['ttfm'], 99))} | "
                        f"{_us(_pct(s['tbm'], 50))} | {_us(_pct(s['tbm'], 99.9))} | "
                        f"{sum(len(r) for _, r in s['rejected'])}/{s['instances']} | {bad if e == 'structgen' else '—'} |")
    head = ("| source | engine | compiled | refused | budget | timeouts | TTFM p50 | TTFM p99 | TBM p50 | TBM p99.9 | "
            "valid rejected | unsound walks |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
    return "### Summary\n\n" + head + "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sources", default=",".join(rc.SOURCES), help="comma-separated, from: " + ", ".join(rc.SOURCES))
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
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--gen-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return
    if args.gen_worker:
        gen_worker()
        return
    MEMORY_LIMIT[0] = int(args.memory_gb * 2**30)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    for bad, known in ((set(engines) - set(ENGINES), ENGINES), (set(sources) - set(rc.SOURCES), tuple(rc.SOURCES))):
        if bad:
            ap.error(f"unknown {sorted(bad)}; choose from {known}")
    if "structgen" in engines:  # its random walks become the peers' instances: it goes first
        engines.remove("structgen")
        engines.insert(0, "structgen")

    def log(s: str) -> None:
        if not args.quiet:
            print(s, file=sys.stderr, flush=True)

    t_start = time.perf_counter()
    cases: list[rc.Case] = []
    for src in sources:
        try:
            loaded = rc.SOURCES[src](bundle_all=True) if src == "kubernetes" and args.bundle_all else rc.SOURCES[src]()
        except rc.SourceMissing as e:
            log(f"source {src} skipped: {e}")
            continue
        chosen = rc.sample(loaded, args.sample or None)
        log(f"source {src}: {len(chosen)} of {len(loaded)} schemas")
        cases.extend(chosen)
    sources = [s for s in sources if any(c.source == s for c in cases)]
    gen = generate_instances(cases, args.walks, args.gen_timeout, log) if args.walks else {}
    tok = maskbench.load_tokenizer()
    jobs = []
    texts: dict[str, list[str]] = {}  # the hypothesis / corpus instances, for --json
    dropped = 0
    for c in cases:
        ids_list = []
        for value in gen.get(f"{c.source}/{c.name}", {}).get("instances", []):
            # raw UTF-8 (what a model writes), keys in schema order, default separators
            text = json.dumps(maskbench.in_schema_order(value, c.schema, c.schema), ensure_ascii=False)
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
        r = run_engine(e, jobs, args.timeout, log, extra)
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


if __name__ == "__main__":
    main()
