"""A tokenizer's vocabulary as raw byte strings: the alphabet the token index walks.

Two token conventions are normalised here, once per tokenizer:

* byte-level BPE (GPT-2, Llama-3, SmolLM2): each byte is spelled by a printable unicode
  character (``Ġ`` is a space); the inverse map recovers the bytes.
* SentencePiece with byte fallback (Llama-2, Mistral): ``▁`` is a space and ``<0x0A>`` is the
  raw byte 0x0A.

Special tokens (BOS, chat markers, ...) are kept out of the walk; EOS ids are remembered so that
the guide can allow them exactly in final states.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Sequence

from ..errors import VocabularyError

__all__ = ["Vocabulary"]

#: Token texts that end a generation in the common chat formats; used when a tokenizer does not
#: name its EOS token (the raw Llama-3 ``tokenizer.json`` does not).
KNOWN_EOS_TOKENS = ("<|eot_id|>", "<|end_of_text|>", "<|im_end|>", "<|endoftext|>", "</s>", "<|end|>", "<eos>")

_SP_BYTE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def _gpt2_unicode_to_bytes() -> dict[str, int]:
    """The inverse of GPT-2's ``bytes_to_unicode`` table (printable stand-ins for each byte)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    mapping = {chr(b): b for b in printable}
    n = 0
    for b in range(256):
        if b not in printable:
            mapping[chr(256 + n)] = b
            n += 1
    return mapping


_GPT2_MAP = _gpt2_unicode_to_bytes()


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """The vocabulary of a tokenizer, as the byte strings its tokens stand for.

    ``tokens[i]`` is the bytes token ``i`` decodes to, or ``None`` for a token that generation under
    a guide never emits (special and control tokens). ``size`` is the length of the masks the
    guide produces (a model's logits may be wider; the extra columns are masked).

    Example:
        >>> vocab = Vocabulary.from_bytes([b"a", b"b", b"ab", None], eos_token_ids=[3])
        >>> vocab.size, sorted(vocab.eos_token_ids)
        (4, [3])
    """

    tokens: tuple[bytes | None, ...]
    eos_token_ids: frozenset[int]
    special_token_ids: frozenset[int] = frozenset()
    name: str = ""
    fingerprint: str = field(default="", compare=False)
    #: the guides compiled over this vocabulary (:mod:`structgen.compiler`'s cache; not pickled)
    _guide_cache: Any = field(default=None, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_guide_cache"] = None  # (its guides pickle as what they were built from, with this vocabulary)
        return state

    def __post_init__(self) -> None:
        if not self.eos_token_ids:
            raise VocabularyError("the vocabulary has no EOS token; pass eos_token_ids=[...]")
        for i in self.eos_token_ids:
            if not 0 <= i < len(self.tokens):
                raise VocabularyError(f"EOS id {i} is outside the vocabulary of {len(self.tokens)} tokens")
        if not self.fingerprint:
            h = hashlib.blake2b(digest_size=16)
            for tok in self.tokens:
                h.update(b"\xff" if tok is None else len(tok).to_bytes(4, "little") + tok)
            h.update(repr(sorted(self.eos_token_ids)).encode())
            object.__setattr__(self, "fingerprint", h.hexdigest())

    @property
    def size(self) -> int:
        """Number of token ids (the length of every mask)."""
        return len(self.tokens)

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return (
            f"Vocabulary({self.name or 'unnamed'!s}, size={self.size}, "
            f"eos={sorted(self.eos_token_ids)}, fingerprint={self.fingerprint[:12]})"
        )

    @cached_property
    def missing_bytes(self) -> frozenset[int]:
        """Bytes that no token contains: output can never hold them (computed once)."""
        present: set[int] = set()
        for tok in self.tokens:
            if tok:
                present.update(tok)
        return frozenset(range(256)) - present

    def decode(self, token_ids: Iterable[int]) -> bytes:
        """The bytes a sequence of token ids spells (special tokens and EOS spell nothing)."""
        toks = self.tokens
        return b"".join(toks[i] or b"" for i in token_ids)

    @classmethod
    def from_bytes(
        cls,
        tokens: Sequence[bytes | None],
        *,
        eos_token_ids: Iterable[int],
        special_token_ids: Iterable[int] = (),
        name: str = "",
    ) -> "Vocabulary":
        """Build a vocabulary from explicit byte strings (tests, custom tokenizers)."""
        eos = frozenset(int(i) for i in eos_token_ids)
        special = frozenset(int(i) for i in special_token_ids) | eos
        toks = tuple(None if (i in special or t is None) else bytes(t) for i, t in enumerate(tokens))
        return cls(toks, eos, special, name)

    @classmethod
    def from_tokenizer(
        cls, tokenizer: Any, *, eos_token_ids: Iterable[int] | None = None
    ) -> "Vocabulary":
        """Read any Hugging Face tokenizer (fast or slow, byte-level BPE or SentencePiece).

        ``eos_token_ids`` defaults to the tokenizer's EOS token, and otherwise to the known
        end-of-turn tokens it contains (``<|eot_id|>``, ``<|im_end|>``, ``</s>``, ...).

        Example:
            >>> vocab = Vocabulary.from_tokenizer(tokenizer)   # doctest: +SKIP
        """
        size = len(tokenizer)
        try:
            raw: list[str | None] = list(tokenizer.convert_ids_to_tokens(list(range(size))))
        except Exception as e:  # noqa: BLE001 - any tokenizer failure is a vocabulary problem
            raise VocabularyError(f"cannot list the tokens of {type(tokenizer).__name__}: {e}") from e

        special: set[int] = set(getattr(tokenizer, "all_special_ids", []) or [])
        added_text: dict[int, str] = {}
        for i, tok in (getattr(tokenizer, "added_tokens_decoder", None) or {}).items():
            if getattr(tok, "special", True):
                special.add(int(i))
            else:
                added_text[int(i)] = str(tok.content if hasattr(tok, "content") else tok)

        convention = _token_convention(tokenizer, raw)
        tokens: list[bytes | None] = []
        for i, text in enumerate(raw):
            if i in special or text is None:
                tokens.append(None)
            elif i in added_text:
                tokens.append(added_text[i].encode("utf-8"))
            else:
                tokens.append(_token_bytes(text, convention, tokenizer, i))

        eos = set(int(i) for i in eos_token_ids) if eos_token_ids is not None else _find_eos(tokenizer, raw)
        if not eos:
            raise VocabularyError(
                f"{type(tokenizer).__name__} names no EOS token and none of {KNOWN_EOS_TOKENS} is in its "
                "vocabulary; pass eos_token_ids=[...]"
            )
        name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
        return cls.from_bytes(tokens, eos_token_ids=eos, special_token_ids=special, name=name)


def _token_convention(tokenizer: Any, raw: list[str | None]) -> str:
    """'byte-level', 'sentencepiece' or 'text' (fall back to the tokenizer's own decoding)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    decoder = getattr(backend, "decoder", None) if backend is not None else None
    if decoder is not None:
        desc = str(decoder.__getstate__() if hasattr(decoder, "__getstate__") else decoder)
        if "ByteLevel" in desc:
            return "byte-level"
        if "ByteFallback" in desc or "\u2581" in desc or "Metaspace" in desc:
            return "sentencepiece"
    if getattr(tokenizer, "sp_model", None) is not None:
        return "sentencepiece"
    present = [t for t in raw if t]
    if present and sum(t.startswith("\u2581") for t in present) > len(present) // 10:
        return "sentencepiece"
    if present and all(all(c in _GPT2_MAP for c in t) for t in present[: min(len(present), 5000)]):
        return "byte-level"
    return "text"


def _token_bytes(text: str, convention: str, tokenizer: Any, token_id: int) -> bytes | None:
    if convention == "byte-level":
        try:
            return bytes(_GPT2_MAP[c] for c in text)
        except KeyError:
            return text.encode("utf-8")  # an added token spelled as plain text
    if convention == "sentencepiece":
        m = _SP_BYTE.match(text)
        if m:
            return bytes([int(m.group(1), 16)])
        return text.replace("\u2581", " ").encode("utf-8")
    decoded: str = tokenizer.convert_tokens_to_string([text])  # (a duck-typed HF tokenizer)
    if "\ufffd" in decoded and "\ufffd" not in text:
        raise VocabularyError(
            f"token {token_id} ({text!r}) of {type(tokenizer).__name__} does not decode to text; "
            "structgen supports byte-level BPE and SentencePiece tokenizers"
        )
    return decoded.encode("utf-8")


def _find_eos(tokenizer: Any, raw: list[str | None]) -> set[int]:
    eos: set[int] = set()
    tid = getattr(tokenizer, "eos_token_id", None)
    if isinstance(tid, int):
        eos.add(tid)
    elif isinstance(tid, (list, tuple)):
        eos.update(int(t) for t in tid)
    if not eos:
        index = {t: i for i, t in enumerate(raw) if t in KNOWN_EOS_TOKENS}
        eos.update(index.values())
    return eos
