"""The peers' own grammar test vectors (llguidance's ``test_lark.rs``, XGrammar's
``test_grammar_matcher_ebnf.py``; transcribed by ``peers/make_vectors.py``), run through
structgen. Where structgen's outcome differs from the peer's expectation, the difference is
listed here with its reason; any other difference fails. ``peers/run_peers.py`` runs the peers
themselves on the same vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .peers.run_peers import agrees, run_structgen

PEERS = Path(__file__).parent / "peers"
VECTORS = [(name, i, v) for name in ("llguidance", "xgrammar")
           for i, v in enumerate(json.loads((PEERS / f"{name}.json").read_text(encoding="utf-8")))]

#: (peer, index) -> why structgen's outcome differs from the peer's expectation
DIFFERENCES = {
    ("llguidance", 27): "token references (<[...]>): structgen constrains text, and refuses them by name",
    ("llguidance", 28): "token references (<[*]>): refused by name",
    ("llguidance", 29): "token references (<[^...]>): refused by name",
    ("llguidance", 37): "structgen's JSON Schema compiler enforces if/then/else; llguidance refuses the schema",
    ("llguidance", 39): "llguidance's %regex substring lexemes: refused by name",
    ("llguidance", 40): "llguidance's rule attributes (stop=, capture): refused by name",
    ("llguidance", 41): "llguidance's rule attributes: refused by name",
    ("llguidance", 54): "llguidance's nested %lark grammars: refused by name",
    ("llguidance", 69): "llguidance's parametric rules: refused by name",
}


@pytest.mark.parametrize(("peer", "index", "vector"), VECTORS, ids=[f"{n}-{i}" for n, i, _ in VECTORS])
def test_peer_vector(peer: str, index: int, vector: dict) -> None:
    out = run_structgen(vector)
    if (peer, index) in DIFFERENCES:
        assert not agrees(vector, out), f"now agrees: drop it from DIFFERENCES ({DIFFERENCES[peer, index]})"
        if vector.get("ok") or "accept" in vector:  # (a refusal, by name, never a wrong language)
            assert not out["compiled"] or (peer, index) == ("llguidance", 37)
            if not out["compiled"]:
                assert out["error"].startswith(("GrammarNotSupported", "GrammarSyntaxError")), out["error"]
        return
    assert agrees(vector, out), out


def test_agreement_count() -> None:
    agreeing = sum(bool(agrees(v, run_structgen(v))) for _, _, v in VECTORS)
    assert agreeing == len(VECTORS) - len(DIFFERENCES) == 66  # (llguidance 61 of 70, XGrammar 5 of 5)
