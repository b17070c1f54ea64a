"""Random derivations of grammars, for tests: strings a grammar derives, drawn without structgen.

- :func:`gbnf_derivations`: from the plain BNF of :class:`~tests.support.earley.GbnfReference`;
- :func:`lark_derivations`: from the rules and terminals Python Lark builds of a Lark grammar
  (each terminal's string drawn from its Python regex by :func:`regex_sample`, the ignored text
  between tokens drawn from the ``%ignore`` terminals); Lark's parser then confirms each string
  (a regex draw may miss a look-around), so only confirmed strings are returned.

A derivation picks alternatives at random until a depth, then the alternatives that finish
soonest (each nonterminal's least derivation height is computed first).
"""

from __future__ import annotations

import random
import re
from typing import Any, Callable, Iterable

from .earley import GbnfReference

try:
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

__all__ = ["gbnf_derivations", "lark_derivations", "regex_sample"]

#: Characters a negated class or "." draws from: printable ASCII mostly, some others.
_POOL = [chr(c) for c in range(32, 127)] * 4 + list("\t\néüß中文😀Ωж") + ["\u00a0", "\u212a"]


def _heights(rules: dict[str, list[tuple]], is_terminal: Callable[[Any], bool]) -> dict[str, int]:
    """The least derivation height of each nonterminal."""
    height: dict[str, int] = {}
    changed = True
    while changed:
        changed = False
        for head, bodies in rules.items():
            for body in bodies:
                if all(is_terminal(s) or s in height for s in body):
                    h = 1 + max((0 if is_terminal(s) else height[s] for s in body), default=0)
                    if h < height.get(head, 1 << 30):
                        height[head] = h
                        changed = True
    return height


def _derive(start: str, rules: dict[str, list[tuple]], is_terminal: Callable[[Any], bool], emit: Callable[[Any], str],
            rng: random.Random, depth: int, between: Callable[[], str] = lambda: "") -> str:
    height = _heights(rules, is_terminal)
    out: list[str] = []
    # an explicit stack of (symbol, depth): no recursion, however deep the derivation
    stack: list[tuple[Any, int]] = [(start, 0)]
    while stack:
        sym, d = stack.pop()
        if is_terminal(sym):
            out.append(emit(sym))
            out.append(between())
            continue
        bodies = [b for b in rules[sym] if all(is_terminal(s) or s in height for s in b)]
        if d >= depth:
            best = min(1 + max((0 if is_terminal(s) else height[s] for s in b), default=0) for b in bodies)
            bodies = [b for b in bodies if 1 + max((0 if is_terminal(s) else height[s] for s in b), default=0) == best]
        body = rng.choice(bodies)
        for s in reversed(body):
            stack.append((s, d + 1))
    return "".join(out)


def _pick_char(ranges: Iterable[tuple[int, int]], negated: bool, rng: random.Random) -> str:
    ranges = list(ranges)
    inside = lambda c: any(lo <= ord(c) <= hi for lo, hi in ranges)  # noqa: E731
    if not negated:
        lo, hi = rng.choice(ranges)
        if hi - lo > 200 and rng.random() < 0.8:  # (mostly the small end: ASCII where it is in)
            hi = lo + min(hi - lo, 94)
        return chr(rng.randint(lo, hi))
    for _ in range(100):
        c = rng.choice(_POOL)
        if not inside(c):
            return c
    raise ValueError("no character outside the class")


def gbnf_derivations(text: str, n: int, *, seed: int = 0, depth: int = 12, start: str = "root") -> list[str]:
    """``n`` random strings the GBNF grammar ``text`` derives."""
    ref = GbnfReference(text, start)
    rng = random.Random(seed)
    is_terminal = lambda s: not isinstance(s, str)  # noqa: E731
    emit = lambda s: _pick_char(s[1], s[2], rng)  # noqa: E731
    return [_derive(start, ref.by_head, is_terminal, emit, rng, depth) for _ in range(n)]


# -- Python regexes -------------------------------------------------------------------------------


def regex_sample(pattern: str, rng: random.Random, flags: int = 0, max_repeat: int = 4) -> str:
    """A random string ``pattern`` probably matches (look-arounds and anchors are not checked:
    callers confirm)."""
    out: list[str] = []
    _sample(_parser.parse(pattern, flags), rng, out, max_repeat, flags)
    return "".join(out)


def _class_chars(items: list, flags: int) -> tuple[list[tuple[int, int]], bool]:
    negated, ranges = False, []
    for op, av in items:
        if op == _c.NEGATE:
            negated = True
        elif op == _c.LITERAL:
            ranges.append((av, av))
        elif op == _c.RANGE:
            ranges.append(av)
        elif op == _c.CATEGORY:
            name = {_c.CATEGORY_DIGIT: "0-9", _c.CATEGORY_WORD: "a-zA-Z0-9_", _c.CATEGORY_SPACE: " \t\n"}.get(av)
            if name is None:  # (a negated category: a few characters outside it)
                neg = {_c.CATEGORY_NOT_DIGIT: r"\d", _c.CATEGORY_NOT_WORD: r"\w", _c.CATEGORY_NOT_SPACE: r"\s"}[av]
                ranges += [(ord(c), ord(c)) for c in _POOL if not re.fullmatch(neg, c)]
            else:
                for part in re.findall(r".-.|.", name, re.S):
                    ranges.append((ord(part[0]), ord(part[-1])))
    return ranges, negated


def _sample(sub: Any, rng: random.Random, out: list[str], max_repeat: int, flags: int) -> None:
    for op, av in sub:
        if op == _c.LITERAL:
            c = chr(av)
            out.append(c.upper() if flags & re.I and rng.random() < 0.3 else c)
        elif op == _c.NOT_LITERAL:
            out.append(_pick_char([(av, av)], True, rng))
        elif op == _c.ANY:
            out.append(_pick_char([(10, 10)], not flags & re.S, rng) if not flags & re.S else rng.choice(_POOL))
        elif op == _c.IN:
            ranges, negated = _class_chars(av, flags)
            out.append(_pick_char(ranges, negated, rng))
        elif op == _c.BRANCH:
            _sample(rng.choice(av[1]), rng, out, max_repeat, flags)
        elif op == _c.SUBPATTERN:
            _sample(av[3], rng, out, max_repeat, (flags | av[1]) & ~av[2])
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            lo, hi, p = av
            hi = min(hi, lo + max_repeat)
            for _ in range(rng.randint(lo, hi)):
                _sample(p, rng, out, max_repeat, flags)
        # AT, ASSERT, ASSERT_NOT: zero-width, left to the caller's check


# -- Lark ----------------------------------------------------------------------------------------


def lark_derivations(text: str, n: int, *, seed: int = 0, depth: int = 10, start: str = "start",
                     tries: int = 20) -> list[str]:
    """Up to ``n`` random strings the Lark grammar ``text`` derives, each confirmed by Lark's
    Earley parser (``lexer="dynamic_complete"``)."""
    import lark

    parser = lark.Lark(text, parser="earley", lexer="dynamic_complete", start=start)
    rules: dict[str, list[tuple]] = {}
    for r in parser.rules:
        rules.setdefault(r.origin.name, []).append(tuple(s.name if not s.is_term else ("T", s.name) for s in r.expansion))
    terminals = {t.name: t for t in parser.terminals}
    ignore = [terminals[name] for name in parser.ignore_tokens]
    rng = random.Random(seed)

    def emit(sym: tuple) -> str:
        return _terminal_sample(terminals[sym[1]], rng)

    def between() -> str:
        if not ignore or rng.random() < 0.5:
            return ""
        return _terminal_sample(rng.choice(ignore), rng)

    out: list[str] = []
    for _ in range(n * tries):
        if len(out) >= n:
            break
        s = between() + _derive(start, rules, lambda s: isinstance(s, tuple), emit, rng, depth, between)
        try:
            parser.parse(s)
        except lark.exceptions.LarkError:
            continue
        out.append(s)
    return out


def _terminal_sample(term: Any, rng: random.Random) -> str:
    pattern = term.pattern
    if pattern.type == "str" and not pattern.flags:
        return str(pattern.value)
    regexp = pattern.to_regexp()
    compiled = re.compile(regexp)
    for _ in range(50):
        s = regex_sample(regexp, rng)
        if s and compiled.fullmatch(s):
            return s
    raise ValueError(f"could not draw a string of terminal {term.name} ({regexp!r})")
