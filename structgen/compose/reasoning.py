"""Reasoning, then an answer: ``<think>`` free text ``</think>``, then the constrained answer.

:class:`Reasoning` says how the model writes its thinking (the start and end strings,
configurable) and how many tokens it may spend there. :meth:`Reasoning.format` is the composed
format "think, then answer" (:mod:`.formats`): the thinking is free text that ends at the first
end string, and the answer follows whatever constraint it had.

A bound in *tokens* is not a property of the byte language, so it is not in the guide: it is a
:class:`~structgen.guides.text_budget.TextBudget` that the decoding step applies (the row's
:class:`~structgen.guides.cursor.Cursor`): once the row has spent ``max_tokens`` tokens inside the
thinking, the step allows only the tokens that write the end string (intersected with the guide's
mask), so the guide closes the thinking and the answer starts. Everything else (EOS only when
final, never-truncated ``max_tokens``) is the guide's as usual.

:func:`split_reasoning` and :class:`ReasoningSplitter` cut an output (whole or streamed) into the
thinking and the answer.

Example:
    >>> r = Reasoning(max_tokens=2)
    >>> cursor = r.budget().cursor()
    >>> for piece in (b"<think>", b"a", b" b"):
    ...     cursor.feed(piece)
    >>> cursor.remaining
    b'</think>'
    >>> split_reasoning("<think>hm</think>\\n{}", r)
    ('hm', '{}')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConstraintError
from ..formats import Format, Regex, Sequence, Tag, Text
from ..guides.text_budget import TextBudget

__all__ = ["Reasoning", "ReasoningSplitter", "split_reasoning"]

#: Between the end of the thinking and the answer: up to two whitespace characters.
DEFAULT_SEPARATOR = r"\s{0,2}"


@dataclass(frozen=True)
class Reasoning:
    """How the model thinks before it answers.

    Args:
        start: the string that opens the thinking (``""`` when the prompt already opened it, as
            chat templates of reasoning models do with ``add_generation_prompt``).
        end: the string that closes it (non-empty); the thinking never contains it.
        max_tokens: the most tokens the thinking may take (``None``: no bound of its own; the
            output's ``max_tokens`` still bounds everything). When they are spent the decoding
            step writes ``end``.
        separator: a regex between ``end`` and the answer (default: up to two whitespace characters).
    """

    start: str = "<think>"
    end: str = "</think>"
    max_tokens: int | None = None
    separator: str = DEFAULT_SEPARATOR

    def __post_init__(self) -> None:
        if not self.end:
            raise ConstraintError("Reasoning(end=''): the thinking needs a non-empty end string")
        if self.max_tokens is not None and self.max_tokens < 0:
            raise ConstraintError(f"Reasoning(max_tokens={self.max_tokens}): a number of tokens is >= 0")
        if self.max_tokens is not None and _overlaps_itself(self.end):
            raise ConstraintError(
                f"Reasoning(end={self.end!r}) with max_tokens: the end string overlaps itself, so writing it "
                "after any text may end the thinking earlier than where it is written; choose another end string")

    def format(self, answer: Format | None = None) -> Format:
        """Thinking, the separator, then ``answer`` (``None``: free text)."""
        return Sequence(Tag(self.start, Text(), self.end), Regex(self.separator), answer if answer is not None else Text())

    def budget(self) -> TextBudget | None:
        """The decoding step's budget for the thinking (``None`` without ``max_tokens``)."""
        if self.max_tokens is None:
            return None
        return TextBudget(self.start.encode("utf-8"), self.end.encode("utf-8"), self.max_tokens)


def _overlaps_itself(s: str) -> bool:
    return any(s[:k] == s[-k:] for k in range(1, len(s)))


def split_reasoning(text: str, reasoning: Reasoning) -> tuple[str | None, str]:
    """``(thinking, answer)`` of a whole output: the text between the start and the first end
    string, and what follows (leading whitespace stripped). ``(None, text)`` when the output does
    not open with the start string."""
    if not text.startswith(reasoning.start):
        return None, text
    body = text[len(reasoning.start):]
    at = body.find(reasoning.end)
    if at < 0:
        return body, ""
    return body[:at], body[at + len(reasoning.end):].lstrip()


class ReasoningSplitter:
    """:func:`split_reasoning` for a stream: :meth:`feed` each piece of text as it comes, get
    ``(thinking, answer)`` pieces to send now (text that may be the start of the end string is
    held back until the next piece tells)."""

    def __init__(self, reasoning: Reasoning) -> None:
        self.reasoning = reasoning
        self._buffer = ""
        self._phase = 0  # 0: before the start string, 1: thinking, 2: answering (leading space stripped), 3: answer
        if not reasoning.start:
            self._phase = 1

    def feed(self, text: str, *, final: bool = False) -> tuple[str, str]:
        """The thinking and the answer text that ``text`` completes (either may be empty);
        ``final`` flushes what was held back."""
        r = self.reasoning
        buf = self._buffer + text
        thinking = answer = ""
        if self._phase == 0:
            if len(buf) < len(r.start) and r.start.startswith(buf) and not final:
                self._buffer = buf
                return "", ""
            if buf.startswith(r.start):
                buf, self._phase = buf[len(r.start):], 1
            else:
                self._phase = 3
        if self._phase == 1:
            at = buf.find(r.end)
            if at >= 0:
                thinking, buf, self._phase = buf[:at], buf[at + len(r.end):], 2
            else:
                hold = 0 if final else next(
                    (k for k in range(min(len(r.end) - 1, len(buf)), 0, -1) if buf.endswith(r.end[:k])), 0)
                thinking, self._buffer = buf[: len(buf) - hold], buf[len(buf) - hold:]
                return thinking, ""
        if self._phase == 2:
            buf = buf.lstrip()
            if buf:
                self._phase = 3
        if self._phase == 3:
            answer, buf = buf, ""
        self._buffer = buf
        return thinking, answer
