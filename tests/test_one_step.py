"""One step everywhere: the same constraints driven through all four integrations (the
LogitsProcessor, decode(), the server's engine, the vLLM processor where vLLM is installed) allow
the same tokens at every step of the same output.

decode() runs first, greedy, on a tiny random model, and its masks are recorded at every step;
the LogitsProcessor and the vLLM processor are then fed the same tokens one by one, and the
engine generates the same output (the same model, greedy), its masks recorded too.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any, Callable

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import structgen  # noqa: E402
from structgen.compose import Reasoning, tool_calls_format  # noqa: E402
from structgen.formats import Format, JsonSchema, Regex  # noqa: E402
from structgen.hf import bitmask as hf_bitmask  # noqa: E402
from structgen.hf.decoding import decode  # noqa: E402
from structgen.hf.generation import model_vocabulary  # noqa: E402

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                           "tags": {"type": "array", "items": {"enum": ["a", "bc"]}, "maxItems": 2}},
          "required": ["name", "tags"]}
TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}]
CONSTRAINTS: dict[str, Callable[[], Format]] = {
    "regex": lambda: Regex(r"(19|20)\d{2}-[01]\d-[0-3]\d"),
    "schema": lambda: JsonSchema(SCHEMA),
    "tools+reasoning": lambda: Reasoning(max_tokens=6).format(tool_calls_format(
        [structgen.compose.Tool.of(t) for t in TOOLS], "required")),
}
#: Tokens beyond the shortest output: few enough that the budget narrows the last masks.
SLACK = 6
PROMPT = [1, 504, 3456, 28, 2]


def allowed(scores: Any) -> list[frozenset[int]]:
    return [frozenset(torch.isfinite(row).nonzero().flatten().tolist()) for row in scores]


class Recorder:
    """Wraps ``masked_scores`` where a module calls it and records the allowed tokens of each row."""

    def __init__(self) -> None:
        self.masks: list[frozenset[int]] = []

    def __call__(self, scores: Any, bitmask: Any) -> Any:
        out = hf_bitmask.masked_scores(scores, bitmask)
        self.masks.extend(allowed(out))
        return out


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_every_integration_allows_the_same_tokens_at_every_step(
        name: str, tiny_llama: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    model, tokenizer = tiny_llama
    vocab = model_vocabulary(model, tokenizer)
    fmt = CONSTRAINTS[name]()
    guide = structgen.compile(fmt, vocab)
    budget = Reasoning(max_tokens=6).budget() if name == "tools+reasoning" else None
    width = model.config.vocab_size
    MAX_TOKENS = guide.min_length() + SLACK  # noqa: N806

    # 1. decode(): the path and its masks
    rec = Recorder()
    monkeypatch.setattr("structgen.hf.decoding.masked_scores", rec)
    path = decode(model, tokenizer, guide, torch.tensor([PROMPT]), max_new_tokens=MAX_TOKENS, fast_forward=False,
                  text_budget=budget)
    reference = rec.masks
    assert len(reference) >= len(path) >= 4 and all(reference)

    # 2. the LogitsProcessor, fed the same tokens
    processor = structgen.LogitsProcessor(guide, max_new_tokens=MAX_TOKENS, text_budget=budget)
    got = [allowed(processor(torch.tensor([PROMPT + path[:i]]), torch.zeros(1, width)))[0]
           for i in range(len(reference))]
    assert got == reference

    # 3. the server's engine, generating the same output
    from structgen.server.engine import Engine, SamplingParams

    rec = Recorder()
    monkeypatch.setattr("structgen.server.engine.masked_scores", rec)
    engine = Engine(model, vocab, max_batch_size=1, tokenizer=tokenizer, fast_forward=False)
    engine.start()

    async def run() -> None:
        async for ev in engine.submit(PROMPT, guide, SamplingParams(max_tokens=MAX_TOKENS, text_budget=budget)):
            assert ev.error is None, ev.error

    try:
        asyncio.run(run())
    finally:
        engine.stop()
    assert rec.masks == reference

    # 4. the vLLM processor, fed the same tokens (where vLLM is installed)
    vllm = pytest.importorskip("vllm")
    del vllm
    from vllm import SamplingParams as VllmParams
    from vllm.v1.sample.logits_processor import BatchUpdate

    from structgen.integrations.vllm import StructgenLogitsProcessor

    class Processor(StructgenLogitsProcessor):
        @staticmethod
        def _load_vocabulary(model_config: Any) -> Any:
            return model_config.vocabulary

    if name == "tools+reasoning":
        return  # (vLLM's keys name a regex, a schema, a grammar or spans: composed formats do not reach it)
    config = SimpleNamespace(model_config=SimpleNamespace(vocabulary=vocab, get_vocab_size=lambda: width),
                             scheduler_config=SimpleNamespace(max_num_seqs=1))
    proc = Processor(config, torch.device("cpu"), False)
    output: list[int] = []
    key = "structgen_regex" if isinstance(fmt, Regex) else "structgen_json_schema"
    value = fmt.pattern if isinstance(fmt, Regex) else json.dumps(SCHEMA)
    params = VllmParams(max_tokens=MAX_TOKENS, temperature=0, extra_args={key: value})
    proc.update_state(BatchUpdate(batch_size=1, removed=[], added=[(0, params, PROMPT, output)], moved=[]))
    got = []
    for i in range(len(reference)):
        output[:] = path[:i]
        got.append(allowed(proc.apply(torch.zeros(1, width)))[0])
    assert got == reference
