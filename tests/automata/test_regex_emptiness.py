"""A regex that no string full-matches: compile_regex says so and why (structgen.automata.regex_emptiness),
instead of blaming the vocabulary."""

from __future__ import annotations

import pytest

import structgen

_BYTES = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b""], eos_token_ids=[256])


@pytest.mark.parametrize(
    "pattern, why",
    [
        (r"(?<=a)b", "needs text before the output (a look-behind or \\b at its start"),
        (r"^(?<!x)(?<=a)b$", "needs text before the output"),
        (r"(?i)\b-x", "needs text before the output"),
        (r"b(?=c)", "needs text after the output (a look-ahead or \\b at its end"),
        (r"-\b", "needs text after the output"),
        (r"(?<=a)b(?=c)", "needs text both before and after the output"),
        (r"a(?=b)c", "its parts exclude one another"),
        (r"[^\s\S]+", "its parts exclude one another"),
    ],
)
def test_unsatisfiable_regexes_say_why(pattern: str, why: str) -> None:
    with pytest.raises(structgen.UnsatisfiableConstraint) as info:
        structgen.compile_regex(pattern, _BYTES)
    message = str(info.value)
    assert f"no string matches regex {pattern!r}: " in message and why in message, message
    assert "no token" not in message
    from structgen.automata.regex_emptiness import why_no_match

    assert why in why_no_match(pattern)


def test_missing_bytes_still_blame_the_vocabulary() -> None:
    # (a language that is not empty, but needs a byte the vocabulary lacks)
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b""], eos_token_ids=[2])
    with pytest.raises(structgen.UnsatisfiableConstraint, match="needs bytes that no token of .* contains"):
        structgen.compile_regex("c+", vocab)


def test_satisfiable_look_arounds_compile() -> None:
    guide = structgen.compile_regex(r"(?<![a-z])ab(?![a-z])|\bc\b", _BYTES)
    assert guide.is_final(guide.advance(guide.initial_state, list(b"ab")))
