"""The peers' grammar test vectors run through structgen, llguidance and XGrammar, side by side.

``python -m tests.cfg.peers.run_peers`` prints, per vector, each engine's outcome against the
vector's expectation (from the peer's own test) and the totals. Byte-level tokenizers are used
for the peers (one token per byte), so the outcome is the grammar's, not a tokenizer's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Optional

HERE = Path(__file__).parent

import structgen
from structgen.cfg import compile_grammar
from structgen.errors import ConstraintError, StructgenError

BYTES = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b""], eos_token_ids=[256])
Outcome = dict  # {"compiled": bool, "error": str, "accept": [bool], "reject": [bool]}


def expected_ok(v: dict) -> bool:
    return "error" not in v


def strings(v: dict) -> tuple[list[str], list[tuple[str, bool]]]:
    """(accepted strings, [(rejected string, is a viable prefix)])."""
    rejects = []
    for s in v.get("reject", []):
        prefix = s.startswith("FINAL_REJECT:")
        rejects.append((s[len("FINAL_REJECT:"):] if prefix else s, prefix))
    return v.get("accept", []), rejects


def run_structgen(v: dict) -> Outcome:
    try:
        g = compile_grammar(v["grammar"], BYTES, syntax=v["syntax"], start=v.get("start"))
    except (ConstraintError, StructgenError) as e:
        return {"compiled": False, "error": f"{type(e).__name__}: {e}"}
    accept, reject = strings(v)

    def state_after(s: str) -> int:
        st = g.initial_state
        for b in s.encode():
            st = g.next_state(st, b)
            if st < 0:
                return -1
        return st

    out = {"compiled": True, "accept": [], "reject": []}
    for s in accept:
        st = state_after(s)
        out["accept"].append(st >= 0 and g.is_final(st))
    for s, prefix in reject:
        st = state_after(s)
        ok = st < 0 or not g.is_final(st)
        if prefix:
            ok = ok and st >= 0
        out["reject"].append(ok)
    return out


class _ByteTok:
    tokens = [bytes([b]) for b in range(256)] + [b"<eos>"]
    eos_token_id = 256
    bos_token_id = None

    def __call__(self, s: bytes) -> list[int]:
        return list(s)


def run_llguidance(v: dict) -> Optional[Outcome]:
    if v["syntax"] != "lark":
        return None
    import llguidance

    tok = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTok()))
    grammar = llguidance.LLMatcher.grammar_from_lark(v["grammar"])
    try:
        err = llguidance.LLMatcher.validate_grammar(grammar, tok)
    except BaseException as e:  # noqa: BLE001 - a Rust panic (special tokens a byte tokenizer lacks)
        err = f"panic: {e}"
    if err:
        return {"compiled": False, "error": err}
    accept, reject = strings(v)

    def run(s: str) -> tuple[bool, bool]:
        m = llguidance.LLMatcher(tok, grammar, log_level=0)
        ok = m.consume_tokens(list(s.encode())) if s else True
        return ok and not m.is_error(), ok and m.is_accepting()

    out = {"compiled": True, "accept": [], "reject": []}
    for s in accept:
        out["accept"].append(run(s)[1])
    for s, prefix in reject:
        alive, final = run(s)
        out["reject"].append((not final) and (alive if prefix else True))
    return out


def run_xgrammar(v: dict) -> Optional[Outcome]:
    if v["syntax"] != "gbnf":
        return None
    import xgrammar as xgr
    from xgrammar.testing import _is_grammar_accept_string

    try:
        grammar = xgr.Grammar.from_ebnf(v["grammar"], root_rule_name=v.get("start") or "root")
    except Exception as e:  # noqa: BLE001 - XGrammar raises several kinds
        return {"compiled": False, "error": str(e)}
    accept, reject = strings(v)
    return {"compiled": True, "accept": [_is_grammar_accept_string(grammar, s) for s in accept],
            "reject": [not _is_grammar_accept_string(grammar, s) for s, _ in reject]}


def agrees(v: dict, out: Optional[Outcome]) -> Optional[bool]:
    if out is None:
        return None
    if not expected_ok(v):
        return not out["compiled"]
    if not out["compiled"]:
        return False
    return all(out.get("accept", [])) and all(out.get("reject", []))


def main() -> None:
    totals: dict[str, list[int]] = {}
    for name in ("llguidance", "xgrammar"):
        vectors = json.loads((HERE / f"{name}.json").read_text(encoding="utf-8"))
        for i, v in enumerate(vectors):
            row = []
            for engine, run in (("structgen", run_structgen), ("llguidance", run_llguidance), ("xgrammar", run_xgrammar)):
                out = run(v)
                a = agrees(v, out)
                if a is None:
                    row.append(f"{engine}: -")
                    continue
                t = totals.setdefault(f"{name} vectors / {engine}", [0, 0])
                t[0] += int(a)
                t[1] += 1
                detail = "" if a else f" ({(out or {}).get('error', '')[:100] or out})"
                row.append(f"{engine}: {'agree' if a else 'DIFFER'}{detail}")
            print(f"{name}[{i}] {v['source'].split('::')[-1]}: " + "; ".join(row))
    for k, (a, n) in totals.items():
        print(f"{k}: {a}/{n} agree with the vectors' expectations")


if __name__ == "__main__":
    main()
