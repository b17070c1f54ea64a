"""Real public grammars (``corpus/``, sources in its README): each compiles or is refused by name,
and the ones that compile agree with their reference on random derivations and mutations."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from structgen.cfg import grammar_network
from structgen.errors import GrammarNotSupported, GrammarSyntaxError

from ..support.derive import gbnf_derivations, lark_derivations
from ..support.earley import GbnfReference
from .helpers import accepts, guide, lark_reference

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.glob("*/*") if p.suffix in (".gbnf", ".lark"))

#: file -> (the error it is refused with, a phrase of the message); every other file compiles
REFUSED = {
    "lark/datetime_iso_8601.lark": (GrammarSyntaxError, "no rule named 'start'"),  # (a library of terminals)
    "lark/lark.lark": (GrammarNotSupported, "a look-ahead at its end"),  # (OP: /[+*]|[?](?![a-z_])/)
    "lark/python.lark": (GrammarNotSupported, "%declare _INDENT, _DEDENT"),  # (a postlexer's indentation)
    "lark/storage.lark": (GrammarNotSupported, "a relative %import"),
    "lark/template_lark.lark": (GrammarNotSupported, "a look-ahead at its end"),
}


def _syntax(name: str) -> str:
    return "lark" if name.endswith(".lark") else "gbnf"


def test_the_corpus_is_there() -> None:
    assert len(FILES) >= 17 and set(REFUSED) <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_compiles_or_is_refused_by_name(name: str) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    if name in REFUSED:
        error, phrase = REFUSED[name]
        with pytest.raises(error) as info:
            grammar_network(text, syntax=_syntax(name))
        assert phrase in str(info.value)
    else:
        assert len(grammar_network(text, syntax=_syntax(name))) >= 1


def _mutations(s: str, rng: random.Random, alphabet: str) -> list[str]:
    out = []
    for _ in range(4):
        i = rng.randrange(len(s) + 1)
        c = rng.choice(alphabet)
        out += [s[:i] + c + s[i:], s[:i] + s[i + 1 :]]
    return out


@pytest.mark.parametrize("name", [f for f in FILES if f not in REFUSED])
def test_derivations_and_mutations_agree_with_the_reference(name: str) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    syntax = _syntax(name)
    g = guide(text, syntax=syntax)
    if syntax == "gbnf":
        ref = GbnfReference(text).accepts
        derived = gbnf_derivations(text, 6, seed=3, depth=5)
    else:
        ref = lark_reference(text)
        derived = lark_derivations(text, 6, seed=3, depth=5)
    assert derived
    rng = random.Random(name)
    alphabet = "".join(sorted(set("".join(derived)))) or "a"
    for s in derived:
        assert accepts(g, s), s
        for m in _mutations(s, rng, alphabet):
            assert accepts(g, m) == ref(m), m
