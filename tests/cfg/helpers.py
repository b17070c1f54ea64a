"""Shared helpers of the grammar tests: a byte vocabulary, guides over it, Lark's reference."""

from __future__ import annotations

import functools
import signal
from typing import Callable, Optional

import structgen
from structgen.cfg import compile_grammar

#: Every byte is a token (and EOS): a guide over it accepts exactly the grammar's byte strings.
BYTES = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b""], eos_token_ids=[256])


def guide(text: str, **options: object) -> structgen.Guide:
    return compile_grammar(text, BYTES, **options)  # type: ignore[arg-type]


def accepts(g: structgen.Guide, text: str) -> bool:
    return g.accepts_bytes(text.encode("utf-8"))  # type: ignore[attr-defined, no-any-return]


@functools.lru_cache(maxsize=64)
def lark_reference(text: str, start: str = "start") -> Callable[[str], bool]:
    """Whether Python Lark (Earley, ``lexer="dynamic_complete"``) accepts a string."""
    import lark

    parser = lark.Lark(text, parser="earley", lexer="dynamic_complete", start=start)

    def accepted(s: str) -> bool:
        try:
            parser.parse(s)
        except lark.exceptions.LarkError:
            return False
        return True

    return accepted


class _Slow(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Slow


def within(seconds: float, check: Callable[[str], bool], s: str) -> Optional[bool]:
    """``check(s)``, or ``None`` when it takes longer than ``seconds`` (Lark's Earley parser takes
    minutes on some ambiguous grammars; main thread only)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return check(s)
    except _Slow:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
