"""structgen as a vLLM plugin (structgen.integrations.vllm), skipped when vLLM is not installed.

The processor alone first (no engine: a stand-in config, batches driven by hand through
``update_state`` / ``apply`` exactly as vLLM's V1 runner drives them), then vLLM itself, end to
end on SmolLM2 (marked ``slow``; each engine start takes about a minute on 2 cores): an offline
``LLM`` batch, and the OpenAI-compatible server (HTTP 400 for a bad constraint, streaming).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tomllib
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import jsonschema
import numpy as np
import pytest

pytest.importorskip(
    "vllm", reason="vLLM is not installed (pip install 'structgen[vllm]', then uninstall the CUDA torchvision, "
    "torchaudio and torchcodec it pulls: see the README's 'Serving with vLLM')")

import torch  # noqa: E402
from vllm import SamplingParams  # noqa: E402
from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.sampling_params import StructuredOutputsParams  # noqa: E402
from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality  # noqa: E402

import structgen  # noqa: E402
from structgen.formats import JsonSchema, Regex  # noqa: E402
from structgen.integrations.vllm import StructgenLogitsProcessor  # noqa: E402

from ..support.serving import free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TARGET = "structgen.integrations.vllm:StructgenLogitsProcessor"
DATE = r"\d{4}-\d{2}-\d{2}"
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 30}, "born": {"type": "integer", "minimum": 1000, "maximum": 2100},
                   "fields": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 3}},
    "required": ["name", "born", "fields"],
}
WIDTH_PAD = 64  # logits wider than the vocabulary, as padded embedding matrices make them


# ------------------------------------------------------------------ the processor alone


class _Processor(StructgenLogitsProcessor):
    """The plugin with the vocabulary handed in (no vLLM ModelConfig to read a tokenizer from)."""

    @staticmethod
    def _load_vocabulary(model_config: Any) -> Any:
        return model_config.vocabulary


def _config(vocab: structgen.Vocabulary, rows: int = 8) -> Any:
    model = SimpleNamespace(vocabulary=vocab, get_vocab_size=lambda: vocab.size + WIDTH_PAD)
    return SimpleNamespace(model_config=model, scheduler_config=SimpleNamespace(max_num_seqs=rows))


def _update(proc: StructgenLogitsProcessor, size: int, *, added: Any = (), removed: Any = (), moved: Any = ()) -> None:
    proc.update_state(BatchUpdate(batch_size=size, removed=list(removed), added=list(added), moved=list(moved)))


def _params(max_tokens: int = 40, **extra: str) -> SamplingParams:
    return SamplingParams(max_tokens=max_tokens, temperature=0, extra_args=extra or None)


@pytest.fixture()
def errors() -> Iterator[list[str]]:
    """The messages the plugin logs at ERROR."""
    got: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR:
                got.append(record.getMessage())

    handler = Keep()
    log = logging.getLogger("vllm.structgen")
    log.addHandler(handler)
    yield got
    log.removeHandler(handler)


def test_steps_mask_constrained_rows_and_leave_the_rest(smollm2_vocabulary: Any, smollm2_tokenizer: Any) -> None:
    vocab = smollm2_vocabulary
    structgen.clear_cache()  # (so that both compiles are new and reported)
    proc = _Processor(_config(vocab), torch.device("cpu"), False)
    assert proc.is_argmax_invariant() is False
    outputs: list[list[int]] = [[], [], []]
    person = json.dumps(PERSON)
    params = [_params(16, structgen_regex=DATE), _params(40), _params(60, structgen_json_schema=person)]
    _update(proc, 3, added=[(i, params[i], [1, 2], outputs[i]) for i in range(3)])
    guides: dict[int, Any] = {}
    states = {0: 0, 2: 0}
    live = {0, 1, 2}
    gen = torch.Generator().manual_seed(0)
    for _ in range(60):
        logits = torch.randn(3, vocab.size + WIDTH_PAD, generator=gen)
        before = logits.clone()
        assert proc.apply(logits) is logits
        if not guides:  # (after the processor's own compiles, which the first step waits for: a
            # compile here first would make them cache hits, not reported)
            guides = {0: structgen.compile_regex(DATE, vocab), 2: structgen.compile_json_schema(person, vocab)}
        assert torch.equal(logits[1], before[1])  # unconstrained: untouched
        for row in sorted(live & {0, 2}):
            left = params[row].max_tokens - len(outputs[row])
            allowed = np.zeros(vocab.size + WIDTH_PAD, dtype=bool)
            allowed[: vocab.size] = guides[row].token_mask(states[row], budget=left)
            assert np.array_equal(torch.isfinite(logits[row]).numpy(), allowed)
            assert torch.equal(logits[row][torch.from_numpy(allowed)], before[row][torch.from_numpy(allowed)])
        finished = []
        for row in sorted(live):
            t = int(torch.argmax(logits[row]))
            outputs[row].append(t)
            if row in states:
                states[row] = guides[row].next_state(states[row], t)
            if t in vocab.eos_token_ids or len(outputs[row]) >= params[row].max_tokens:
                finished.append(row)
        live -= set(finished)
        if finished:  # vLLM removes finished requests; rows keep their indices (nothing moved here)
            _update(proc, len(live), removed=finished)
        if not live & {0, 2}:
            break
    date = bytes(b for t in outputs[0] for b in (vocab.tokens[t] or b"")).decode()
    assert re.fullmatch(DATE, date), date
    text = smollm2_tokenizer.decode(outputs[2], skip_special_tokens=True)
    jsonschema.validate(json.loads(text), PERSON)  # complete within max_tokens (budget-aware)
    assert [c[0] for c in proc.compiles] == [Regex(DATE).describe(), JsonSchema(PERSON).describe()]


def test_moves_swaps_and_reused_indices(smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    proc = _Processor(_config(vocab), torch.device("cpu"), False)
    width = vocab.size + WIDTH_PAD

    def expected(pattern: str | None) -> np.ndarray:
        allowed = np.ones(width, dtype=bool)
        if pattern is not None:
            allowed[vocab.size:] = False
            allowed[: vocab.size] = structgen.compile_regex(pattern, vocab).token_mask(0)
        return allowed

    def masks(rows: int) -> list[np.ndarray]:
        logits = torch.zeros(rows, width)
        proc.apply(logits)
        return [torch.isfinite(logits[r]).numpy() for r in range(rows)]

    yes, num = _params(structgen_regex="yes|no"), _params(structgen_regex="[0-9]+")
    _update(proc, 3, added=[(0, yes, None, []), (1, _params(), None, []), (2, num, None, [])])
    got = masks(3)
    assert [np.array_equal(g, expected(p)) for g, p in zip(got, ["yes|no", None, "[0-9]+"])] == [True] * 3
    _update(proc, 3, moved=[(0, 2, MoveDirectionality.SWAP)])
    got = masks(3)
    assert [np.array_equal(g, expected(p)) for g, p in zip(got, ["[0-9]+", None, "yes|no"])] == [True] * 3
    _update(proc, 2, removed=[2], moved=[(0, 1, MoveDirectionality.UNIDIRECTIONAL)])  # row 0 moves into 1
    _update(proc, 2, added=[(0, _params(), None, [])])  # index 0 reused by an unconstrained request
    got = masks(2)
    assert [np.array_equal(g, expected(p)) for g, p in zip(got, [None, "[0-9]+"])] == [True] * 2


def test_a_refused_token_or_a_failed_compile_ends_the_row_closed(smollm2_vocabulary: Any, errors: list[str]) -> None:
    """Fail closed: a row whose constraint cannot be used is logged and allowed only the tokens
    it stops on (EOS) from then on; never left unconstrained. The other rows go on."""
    vocab = smollm2_vocabulary
    proc = _Processor(_config(vocab), torch.device("cpu"), False)
    eos = sorted(vocab.eos_token_ids)
    out: list[int] = []
    unsatisfiable = '{"type": "array", "minItems": 2, "maxItems": 1}'
    _update(proc, 3, added=[(0, _params(structgen_regex="[0-9]+"), None, out),
                            (1, _params(structgen_json_schema=unsatisfiable), None, []),
                            (2, _params(structgen_regex="[a-z]+"), None, [])])
    logits = torch.zeros(3, vocab.size + WIDTH_PAD)
    proc.apply(logits)
    assert torch.isfinite(logits[1]).nonzero().flatten().tolist() == eos  # (admission would refuse it)
    assert any("does not compile over the model's vocabulary" in e and "unsatisfiable" in e.lower() for e in errors)
    a = vocab.tokens.index(b"a")
    out.append(a)  # something overrode the mask
    logits = torch.zeros(3, vocab.size + WIDTH_PAD)
    proc.apply(logits)
    assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == eos
    assert torch.isfinite(logits[1]).nonzero().flatten().tolist() == eos
    assert torch.isfinite(logits[2]).sum() > 1 and bool(torch.isfinite(logits[2, a]))  # the others go on
    assert any(f"token {a} (b'a') is not allowed" in e and "is ended" in e for e in errors)
    out.append(a)  # more tokens after the failure change nothing and log nothing more
    n = len(errors)
    proc.apply(torch.zeros(3, vocab.size + WIDTH_PAD))
    assert len(errors) == n


def test_one_batch_fill_per_step_and_a_mask_that_fails_there_ends_its_row(
        smollm2_vocabulary: Any, errors: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A step fills every constrained row in one :func:`fill_next_token_bitmasks` call (its cold
    work on native threads); a row whose mask raises inside it is logged and closed to EOS, and
    the rows beside it keep their own masks."""
    import structgen.integrations.vllm as plugin

    vocab = smollm2_vocabulary
    proc = _Processor(_config(vocab), torch.device("cpu"), False)
    calls: list[tuple[int, list[int]]] = []
    real = plugin.fill_next_token_bitmasks

    def spy(cursors: Any, bitmask: Any, indices: Any = None, **kw: Any) -> None:
        calls.append((len(cursors), list(indices)))
        real(cursors, bitmask, indices, **kw)

    monkeypatch.setattr(plugin, "fill_next_token_bitmasks", spy)
    schema = json.dumps(PERSON)
    _update(proc, 4, added=[(0, _params(structgen_json_schema=schema), None, []), (1, _params(), None, []),
                            (2, _params(structgen_regex=DATE), None, []),
                            (3, _params(structgen_json_schema=schema), None, [])])
    logits = torch.zeros(4, vocab.size + WIDTH_PAD)
    proc.apply(logits)
    assert calls == [(3, [0, 1, 2])]  # rows 0, 2, 3 sit in bitmask rows 0, 1, 2
    person = structgen.compile_json_schema(schema, vocab)
    for row, guide in [(0, person), (2, structgen.compile_regex(DATE, vocab)), (3, person)]:
        want = np.zeros(vocab.size + WIDTH_PAD, dtype=bool)
        want[: vocab.size] = guide.token_mask(0, budget=40)
        assert np.array_equal(torch.isfinite(logits[row]).numpy(), want), row
    broken = proc._rows[3].cursor
    assert broken is not None

    def boom(state: int, budget: int | None = None) -> np.ndarray:
        raise RuntimeError("a mask that cannot be made")

    monkeypatch.setattr(broken, "matcher", SimpleNamespace(**{**{k: getattr(broken.matcher, k) for k in (
        "guide", "words", "vocab_size", "eos_only", "prefetch_work", "initial_state")}, "packed_mask": boom}))
    logits = torch.zeros(4, vocab.size + WIDTH_PAD)
    proc.apply(logits)
    assert torch.isfinite(logits[3]).nonzero().flatten().tolist() == sorted(vocab.eos_token_ids)
    assert any("a mask that cannot be made" in e and "is ended" in e for e in errors)
    assert torch.isfinite(logits[0]).sum() > 1 and torch.isfinite(logits[1]).all()
    n = len(errors)
    proc.apply(torch.zeros(4, vocab.size + WIDTH_PAD))  # closed from now on, logged once
    assert len(errors) == n and calls[-1] == (2, [0, 1])


def test_a_budget_below_the_minimum_drops_budget_awareness(smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    proc = _Processor(_config(vocab), torch.device("cpu"), False)
    _update(proc, 1, added=[(0, _params(2, structgen_regex="[0-9]{10}"), None, [])])
    logits = torch.zeros(1, vocab.size + WIDTH_PAD)
    proc.apply(logits)
    guide = structgen.compile_regex("[0-9]{10}", vocab)
    assert np.array_equal(torch.isfinite(logits[0, : vocab.size]).numpy(), guide.token_mask(0))


def test_budget_aware_rows_measure_distances_off_the_step(smollm2_vocabulary: Any) -> None:
    """A budget-aware row's token distances are measured in the compile thread, and counted in the
    compile time the processor reports; a second request with the constraint finds it all in the
    door's cache."""
    vocab = smollm2_vocabulary
    structgen.clear_cache()
    proc = _Processor(_config(vocab), torch.device("cpu"), False)
    added = [(i, _params(40, structgen_json_schema=json.dumps(PERSON)), None, []) for i in range(2)]
    _update(proc, 2, added=added)
    first, second = proc._rows[0].future.result(60), proc._rows[1].future.result(60)
    assert first.min_length == second.min_length == first.matcher.guide.min_length() > 0
    assert first.matcher is second.matcher and first.seconds is not None and second.seconds is None
    proc.apply(torch.zeros(2, vocab.size + WIDTH_PAD))
    assert len(proc.compiles) == 1 and proc.compiles[0][1] == first.seconds


def test_the_compile_thread_leaves_the_model_cores() -> None:
    from structgen.integrations.vllm import _off_the_model_cores

    before = os.sched_getaffinity(0)
    got: list[set[int]] = []

    def run() -> None:
        _off_the_model_cores()
        got.append(os.sched_getaffinity(0))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert os.sched_getaffinity(0) == before  # the caller's thread is untouched
    assert got[0] == before or not (got[0] & before)  # unchanged, or only cores the caller is not bound to


def test_a_second_instance_for_the_same_engine_stands_aside(smollm2_vocabulary: Any) -> None:
    config = _config(smollm2_vocabulary)
    first = _Processor(config, torch.device("cpu"), False)
    second = _Processor(config, torch.device("cpu"), False)
    _update(second, 1, added=[(0, _params(structgen_regex="x"), None, [])])
    logits = torch.zeros(1, smollm2_vocabulary.size + WIDTH_PAD)
    assert torch.isfinite(second.apply(logits)).all()
    _update(first, 1, added=[(0, _params(structgen_regex="x"), None, [])])
    assert int(torch.isfinite(first.apply(logits)).sum()) == 1


@pytest.mark.parametrize(("params", "message"), [
    (_params(structgen_json_schema='{"type": "nope"}'), "structgen: invalid JSON Schema at /type"),
    (_params(structgen_regex="(a"), "structgen: "),
    (_params(structgen_grammar="nope"), "structgen: no grammar named 'nope'"),
    (SamplingParams(max_tokens=8, min_tokens=2, extra_args={"structgen_regex": "a+"}), "min_tokens=2 cannot be combined"),
    (SamplingParams(max_tokens=8, structured_outputs=StructuredOutputsParams(regex="a"),
                    extra_args={"structgen_regex": "a+"}), "either a structgen_* constraint or vLLM's structured outputs"),
])
def test_admission_refuses_with_a_message(params: SamplingParams, message: str) -> None:
    with pytest.raises(ValueError) as info:
        StructgenLogitsProcessor.validate_params(params)
    assert message in str(info.value)


def test_admission_accepts_good_constraints() -> None:
    for extra in ({"structgen_grammar": "date"}, {"structgen_json_schema": json.dumps(PERSON)}, None, {"x": 1}):
        StructgenLogitsProcessor.validate_params(SamplingParams(max_tokens=8, extra_args=extra))


def test_entry_point_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = project["project"]["entry-points"]["vllm.logits_processors"]
    assert declared == {"structgen": TARGET}
    module, name = TARGET.split(":")
    assert getattr(__import__(module, fromlist=[name]), name) is StructgenLogitsProcessor


# ------------------------------------------------------------------ vLLM end to end


def _plugin_installed() -> bool:
    return any(ep.value == TARGET for ep in entry_points(group="vllm.logits_processors"))


def _model_dir() -> str:
    from structgen.hf.models import default_model_dir

    structgen.load_default_model()  # converts the embedded GGUF once, if not cached yet
    return str(default_model_dir())


# float32 (the model's own; vLLM would run bfloat16): a row's greedy output does not depend on its batch
ENGINE_ARGS = {"max_model_len": 2048, "kv_cache_memory_bytes": 1 << 30, "enforce_eager": True, "seed": 0,
               "dtype": "float32"}


def _chat(tokenizer: Any, question: str) -> str:
    return tokenizer.apply_chat_template([{"role": "user", "content": question}], tokenize=False,
                                         add_generation_prompt=True)


@pytest.mark.model
def test_offline_batch_of_four(smollm2_tokenizer: Any) -> None:
    """Two regexes, one schema and one free prompt in one batch: every constrained output is
    complete and valid, the free one is what the model writes without any constraint."""
    from vllm import LLM

    extra = {} if _plugin_installed() else {"logits_processors": [StructgenLogitsProcessor]}
    llm = LLM(model=_model_dir(), **ENGINE_ARGS, **extra)
    try:
        questions = ["When was Bob Marley born? Answer with the date.", "What is Ada Lovelace's email address?",
                     "Describe Ada Lovelace.", "Say hello in French."]
        prompts = [_chat(smollm2_tokenizer, q) for q in questions]
        params = [_params(16, structgen_regex=DATE), _params(32, structgen_grammar="email"),
                  _params(80, structgen_json_schema=json.dumps(PERSON)), _params(24)]
        outs = [o.outputs[0] for o in llm.generate(prompts, params)]
        assert re.fullmatch(DATE, outs[0].text), outs[0].text
        email = (ROOT / "grammars" / "email.regex").read_text().strip()
        assert structgen.compile_regex(email, structgen.Vocabulary.from_tokenizer(smollm2_tokenizer)).accepts_bytes(
            outs[1].text.encode()), outs[1].text
        jsonschema.validate(json.loads(outs[2].text), PERSON)
        alone = llm.generate(prompts[3:], params[3:])[0].outputs[0]
        assert outs[3].text == alone.text and outs[3].token_ids == alone.token_ids
        with pytest.raises(VLLMValidationError, match="structgen: invalid JSON Schema at /type"):
            llm.generate(prompts[:1], [_params(8, structgen_json_schema='{"type": "nope"}')])
    finally:
        del llm


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import httpx

    port = free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", _model_dir(),
           "--served-model-name", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--max-model-len", "2048",
           "--kv-cache-memory-bytes", str(1 << 30), "--enforce-eager", "--seed", "0"]
    if not _plugin_installed():
        cmd += ["--logits-processors", TARGET]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    with log.open("w") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the vLLM server exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the vLLM server did not start in 600 s:\n{log.read_text()[-4000:]}")
            time.sleep(1)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.model
def test_server_refuses_a_bad_schema_with_400_and_keeps_serving(vllm_server: str) -> None:
    import httpx

    body = {"model": "smollm2", "max_tokens": 16, "temperature": 0,
            "messages": [{"role": "user", "content": "When was Bob Marley born?"}]}
    r = httpx.post(vllm_server + "/v1/chat/completions", timeout=120,
                   json={**body, "vllm_xargs": {"structgen_json_schema": '{"type": "object", "properties": {"a": {"type": 5}}}'}})
    assert r.status_code == 400, r.text
    assert "structgen: invalid JSON Schema at /properties/a/type" in r.json()["error"]["message"]
    r = httpx.post(vllm_server + "/v1/chat/completions", timeout=120,
                   json={**body, "vllm_xargs": {"structgen_regex": "a", "structgen_grammar": "date"}})
    assert r.status_code == 400 and "give at most one of" in r.json()["error"]["message"]
    r = httpx.post(vllm_server + "/v1/chat/completions", timeout=300, json={**body, "vllm_xargs": {"structgen_grammar": "date"}})
    assert r.status_code == 200, r.text
    assert re.fullmatch(DATE, r.json()["choices"][0]["message"]["content"])


@pytest.mark.model
def test_server_streams_a_constrained_answer(vllm_server: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=vllm_server + "/v1", api_key="unused", timeout=300)
    stream = client.chat.completions.create(
        model="smollm2", messages=[{"role": "user", "content": "Describe Ada Lovelace."}], max_tokens=80,
        temperature=0, stream=True, extra_body={"vllm_xargs": {"structgen_json_schema": json.dumps(PERSON)}})
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert len([p for p in pieces if p]) > 3  # streamed in pieces
    jsonschema.validate(json.loads("".join(pieces)), PERSON)


def test_a_process_that_imports_the_plugin_and_exits_at_once_leaks_no_native_object() -> None:
    """Importing the plugin warms the compiler up on a background thread; a process that exits
    before that ends waits for it, so no native object is alive when the extension goes (nanobind
    printed "leaked 1 instances!" of the warm-up schema's texts before)."""
    got = subprocess.run([sys.executable, "-c", "import vllm, structgen.integrations.vllm"], capture_output=True,
                         text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-2000:]
    assert "leaked" not in got.stderr, got.stderr[-2000:]
