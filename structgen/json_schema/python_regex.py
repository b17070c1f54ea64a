"""Regexes read with Python's own parser (``re._parser``): the parsed items that
:mod:`.ecma_pattern` translates, how many characters they match, and which characters a
``whitespace=`` regex may produce.

>>> width(parse_items("[0-9]{2,4}")), width(parse_items("a+"))
((2, 4), (1, None))
>>> matches_only("[ \\t]{0,2}", " \\t\\n\\r"), matches_only(r"\\s", " ")
(True, False)
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import warnings
from typing import Any, Iterable, Optional

__all__ = ["ONE_CHAR_OPS", "Item", "fill_placeholders", "matches_only", "parse_items", "sre", "width"]

# Python's regex parser and its opcodes: public in ``sre_parse`` / ``sre_constants`` until 3.10,
# private modules of ``re`` since 3.11 (the old names warn).
_NEW = sys.version_info >= (3, 11)
#: The opcodes (``LITERAL``, ``IN``, ``BRANCH``, ...) of parsed items.
sre: Any = importlib.import_module("re._constants" if _NEW else "sre_constants")
_sre_parse: Any = importlib.import_module("re._parser" if _NEW else "sre_parse")

#: A parsed item, ``(opcode, argument)``: what the argument is depends on the opcode (an int for
#: ``LITERAL``, the items of each alternative for ``BRANCH``, ...), and the parser is untyped.
Item = tuple[Any, Any]

#: Opcodes of items that match exactly one character.
ONE_CHAR_OPS = (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN)


def parse_items(regex: str) -> Any:
    """``regex`` parsed into ``(opcode, argument)`` items (``re.error`` when it is not one);
    the result also carries ``.state.flags``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _sre_parse.parse(regex)


def fill_placeholders(parsed: Any, sets: list[tuple[tuple[int, int], ...]], first: int) -> None:
    """Put each property's set where its placeholder stands in ``parsed`` (in place): code point
    ``first + k`` is set ``sets[k]`` (see :func:`structgen.automata.unicode_props.expand_properties`).
    The items come out as Python's parser makes them of the set spelled out (each range a
    ``RANGE``, or a ``LITERAL`` where one code point; a class's items without repeats; a class of
    one code point a ``LITERAL``, negated a ``NOT_LITERAL``), so the reading is the same.

    >>> items = parse_items("[a\\U000f0000]+")
    >>> fill_placeholders(items, [((48, 57),)], 0xF0000)
    >>> items[0][1][2][0]
    (IN, [(LITERAL, 97), (RANGE, (48, 57))])
    """
    last = first + len(sets)

    def spelled(cp: int) -> list[Item]:
        return [(sre.LITERAL, a) if a == b else (sre.RANGE, (a, b)) for a, b in sets[cp - first]]

    def one_class(items: list[Item]) -> Item:
        items = list(dict.fromkeys(items))  # (the parser's own _uniq)
        negated = items[:1] == [(sre.NEGATE, None)]
        rest = items[1:] if negated else items
        if len(rest) == 1 and rest[0][0] is sre.LITERAL:
            return (sre.NOT_LITERAL if negated else sre.LITERAL, rest[0][1])
        return (sre.IN, items)

    def fill(value: Any) -> Any:
        if isinstance(value, _sre_parse.SubPattern):
            fill_list(value.data)
            return value
        if isinstance(value, list):
            fill_list(value)
            return value
        if isinstance(value, tuple):
            return tuple(fill(v) for v in value)
        return value

    def fill_list(items: list[Any]) -> None:
        for i, item in enumerate(items):
            if not isinstance(item, tuple) or len(item) != 2:
                fill(item)
                continue
            op, av = item
            if op is sre.IN:
                if any(iop is sre.LITERAL and first <= iav < last for iop, iav in av):
                    out: list[Item] = []
                    for iop, iav in av:
                        out += spelled(iav) if iop is sre.LITERAL and first <= iav < last else [(iop, iav)]
                    items[i] = one_class(out)
            elif op is sre.LITERAL or op is sre.NOT_LITERAL:
                if first <= av < last:
                    items[i] = one_class(([(sre.NEGATE, None)] if op is sre.NOT_LITERAL else []) + spelled(av))
            else:
                items[i] = (op, fill(av))

    fill(parsed)


def width(items: Iterable[Item]) -> tuple[int, Optional[int]]:
    """Fewest and most characters (None: unbounded) the parsed items match."""
    lo: int = 0
    hi: Optional[int] = 0
    for op, av in items:
        a: int
        b: Optional[int]
        if op in ONE_CHAR_OPS:
            a, b = 1, 1
        elif op is sre.BRANCH:
            widths = [width(sub) for sub in av[1]]
            a = min(w[0] for w in widths)
            tops = [w[1] for w in widths]
            b = None if None in tops else max(t for t in tops if t is not None)
        elif op is sre.SUBPATTERN:
            a, b = width(av[3])
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            ia, ib = width(av[2])
            a = ia * av[0]
            if ib == 0:
                b = 0
            elif ib is None or av[1] == sre.MAXREPEAT:
                b = None
            else:
                b = ib * av[1]
        else:
            a, b = 0, 0
        lo += a
        hi = None if hi is None or b is None else hi + b
    return lo, hi


@functools.lru_cache(maxsize=64)
def matches_only(regex: str, allowed: str) -> bool:
    """Whether every string ``regex`` (Python syntax) matches is made of characters in ``allowed``.

    Conservative: shorthands (``\\s``), negated classes, ``.`` and anything but plain
    characters, classes, groups, alternations and repetitions count as "no". (Cached: every
    compile's options ask it of their whitespace.)"""
    try:
        items = list(parse_items(regex))
    except re.error:
        return False
    allowed_set = {ord(c) for c in allowed}

    def within(lo: int, hi: int) -> bool:
        return all(c in allowed_set for c in range(lo, hi + 1)) if hi - lo <= len(allowed_set) else False

    def ok(items: Iterable[Item]) -> bool:
        for op, av in items:
            if op is sre.LITERAL:
                good = within(av, av)
            elif op is sre.IN:
                good = all(
                    (iop is sre.LITERAL and within(iav, iav)) or (iop is sre.RANGE and within(*iav))
                    for iop, iav in av
                )
            elif op is sre.BRANCH:
                good = all(ok(sub) for sub in av[1])
            elif op is sre.SUBPATTERN:
                good = ok(av[3])
            elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
                good = ok(av[2])
            else:
                good = False
            if not good:
                return False
        return True

    return ok(items)
