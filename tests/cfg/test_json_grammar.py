"""``grammars/json.gbnf``, JSON as a context-free grammar: every string it derives is read by
``json.loads``, and whatever ``json.dumps`` writes is in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.derive import gbnf_derivations
from .helpers import accepts, guide

TEXT = (Path(__file__).resolve().parents[2] / "grammars" / "json.gbnf").read_text(encoding="utf-8")
GUIDE = guide(TEXT, syntax="gbnf")

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def test_derivations_are_json() -> None:
    texts = gbnf_derivations(TEXT, 300, seed=5, depth=8)
    assert len({t.strip() for t in texts}) > 100
    for text in texts:
        json.loads(text)  # (raises on anything that is not JSON)
        assert accepts(GUIDE, text)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 0, 2, "\t"]), st.booleans(), st.booleans())
def test_json_dumps_output_is_accepted(value: Any, indent: Any, ensure_ascii: bool, compact: bool) -> None:
    separators = (",", ":") if compact else None
    text = json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, separators=separators)
    assert accepts(GUIDE, text), text
    assert accepts(GUIDE, f"\n {text} \r\n")


def test_what_json_refuses_is_refused() -> None:
    assert not accepts(GUIDE, "NaN")  # (RFC 8259; Python's json.loads reads it)
    for text in ['{"a": 1,}', "[1 2]", "01", '"\\x41"', "'a'", '{"a"}', "[", '"\x01"', "tru"]:
        try:
            json.loads(text)
        except ValueError:
            assert not accepts(GUIDE, text), text
        else:  # pragma: no cover - every string above is invalid JSON
            raise AssertionError(text)
