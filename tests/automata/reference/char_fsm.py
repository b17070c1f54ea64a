"""interegular's character FSMs lowered to byte DFAs: the reference the NFA construction is tested against.

structgen reads a regex with Python's parser and builds automata with :mod:`structgen.automata.nfa`;
interegular's reader and its ``to_fsm()`` (character-level FSM algebra, slow on big patterns)
are an independent second reading, kept only so tests can compare the two.

Example:
    >>> dfa = char_fsm_to_dfa(regex_to_char_fsm(r"\\d{2}"))
    >>> dfa.accepts(b"42"), dfa.accepts(b"4")
    (True, False)
"""

from __future__ import annotations

import interegular
from interegular.fsm import FSM, anything_else
from interegular.patterns import InvalidSyntax, Unsupported

from structgen.automata.dfa import DEFAULT_MAX_STATES, ByteDFA
from structgen.automata.regex import prepared_regex
from structgen.automata.utf8 import MAX_CODE_POINT, Utf8Writer, intervals_of
from structgen.errors import CompileBudgetExceeded, RegexNotSupported

__all__ = ["char_fsm_to_dfa", "regex_to_char_fsm"]


def char_fsm_to_dfa(fsm: FSM, *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """Lower an interegular character FSM to a minimal, canonical byte DFA."""
    rows, finals = _lower_to_bytes(fsm, max_states)
    return ByteDFA.from_rows(rows, finals, max_states=max_states)


def regex_to_char_fsm(pattern: str) -> FSM:
    """Parse ``pattern`` into interegular's character-level FSM (``to_fsm()``).

    >>> fsm = regex_to_char_fsm(r"\\d{4}-\\d{2}")
    >>> fsm.accepts("2024-05"), fsm.accepts("2024-5")
    (True, False)
    """
    try:
        return interegular.parse_pattern(prepared_regex(pattern)).to_fsm()
    except (Unsupported, InvalidSyntax, RecursionError) as e:
        raise RegexNotSupported(pattern, f"interegular cannot read or build it ({e!r})") from e


def _char_intervals(fsm: FSM) -> dict[object, list[tuple[int, int]]]:
    """Code-point intervals (inclusive) of each transition key of the FSM's alphabet.

    Symbols of more than one character (case-insensitive ``str.upper("ß") == "SS"``) can never be
    read one character at a time, so they match nothing.
    """
    explicit: list[int] = []
    by_key: dict[object, list[int]] = {}
    other_key = None
    for symbol, key in fsm.alphabet._symbol_mapping.items():
        if symbol is anything_else:
            other_key = key
            continue
        if not isinstance(symbol, str) or len(symbol) != 1:
            continue
        cp = ord(symbol)
        explicit.append(cp)
        by_key.setdefault(key, []).append(cp)
    out = {key: intervals_of(cps) for key, cps in by_key.items()}
    if other_key is not None:
        ivs = []
        prev = 0
        for cp in sorted(set(explicit)):
            if cp > prev:
                ivs.append((prev, cp - 1))
            prev = cp + 1
        if prev <= MAX_CODE_POINT:
            ivs.append((prev, MAX_CODE_POINT))
        out.setdefault(other_key, []).extend(ivs)
    return out


def _lower_to_bytes(fsm: FSM, max_states: int) -> tuple[list[dict[int, int]], list[int]]:
    """UTF-8 lowering: each character transition becomes a path of bytes (see :mod:`.utf8`)."""
    keys = _char_intervals(fsm)
    order = [fsm.initial] + [s for s in fsm.states if s != fsm.initial]
    index = {s: i for i, s in enumerate(order)}
    rows: list[dict[int, int]] = [dict() for _ in order]
    if len(rows) > max_states:
        raise CompileBudgetExceeded(f"more than {max_states} byte-level states", max_states)
    writer = Utf8Writer(rows, limit=max_states)
    for q in order:
        intervals = [
            (a, b, index[target]) for key, target in fsm.map.get(q, {}).items() for a, b in keys.get(key, ())
        ]
        if intervals:
            writer.write(index[q], intervals)
    return rows, [index[s] for s in fsm.finals]
