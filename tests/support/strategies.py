"""Hypothesis strategies shared by several test modules."""

from __future__ import annotations

from hypothesis import strategies as st

# ---------------------------------------------------------------------------------------------
# A grammar of the regex syntax we support, for random patterns.

_LITERALS = list("abc01 -") + [r"\.", r"\*", r"\(", r"\\", r"\?", "é", "中", "😀", r"\n", r"\t"]
_CLASSES = [
    "[abc]", "[^ab]", "[a-c0-1]", "[^a-zé]", r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", ".", "[😀-😂]",
    r"[\]\-]", "[.]", r"[^\n]",
]
_ALPHABET = "abc01 -.*(\\?é中😀😁\n\tAZ_xÿ€"


def _atom() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(_LITERALS), st.sampled_from(_CLASSES))


def _quantified(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    quant = st.sampled_from(["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "*?", "+?", "??"])
    return st.tuples(inner, quant).map(lambda t: t[0] + t[1])


patterns = st.recursive(
    _quantified(_atom()),
    lambda children: st.one_of(
        st.lists(children, min_size=2, max_size=4).map("".join),
        st.lists(children, min_size=2, max_size=3).map("|".join),
        _quantified(children.map(lambda p: f"({p})")),
        _quantified(children.map(lambda p: f"(?:{p})")),
    ),
    max_leaves=8,
)
