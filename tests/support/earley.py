"""A reference for GBNF grammars, independent of structgen's: its own small reader of the syntax
(llama.cpp's, with XGrammar's leniencies that structgen accepts), a rewrite into plain BNF (groups,
alternatives and repetitions become fresh rules) and an Earley recognizer over code points.

Slow and obviously correct on purpose: no recursion elimination, no automata. Repetition bounds
are unrolled (keep them small in tests). The Earley recognizer handles empty rules the way
Aycock and Horspool do (a predicted nullable symbol is also stepped over at once).

>>> ref = GbnfReference('root ::= ("a" root "b")? | [0-9]{2}')
>>> [ref.accepts(s) for s in ("", "ab", "aabb", "aab", "12", "a12b")]
[True, True, True, False, True, True]
"""

from __future__ import annotations

import re
from typing import Union

Symbol = Union[str, tuple]  # a rule name, or ("chars", ranges, negated)
Rule = tuple[str, tuple]  # (head, body symbols)

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "[": "[", "]": "]", "-": "-",
            "^": "^", "/": "/", "?": "?", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "e": "\x1b"}
_TOKEN = re.compile(r"""
    (?P<space>[ \t]+|\#[^\r\n]*)
  | (?P<newline>\r?\n|\r)
  | (?P<define>::=)
  | (?P<name>[A-Za-z0-9_-]+)
  | (?P<literal>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<cls>\[(?:\\.|[^\]\\])*\])
  | (?P<op>[|()*+?.])
  | (?P<braces>\{\s*\d*\s*(?:,\s*\d*\s*)?\})
""", re.X | re.S)


def _unescape(body: str) -> list[int]:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(ord(c))
            i += 1
            continue
        e = body[i + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(e)
        if width:
            out.append(int(body[i + 2 : i + 2 + width], 16))
            i += 2 + width
        else:
            out.append(ord(_ESCAPES[e]))
            i += 2
    return out


class GbnfReference:
    """Whether a string belongs to the language of a GBNF grammar (start rule ``start``)."""

    def __init__(self, text: str, start: str = "root") -> None:
        self.rules: list[Rule] = []
        self._fresh = 0
        tokens, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            assert m is not None, f"the reference cannot read {text[pos:pos + 20]!r}"
            if m.lastgroup != "space":
                tokens.append((m.lastgroup, m.group()))
            pos = m.end()
        self._tokens, self._i = tokens, 0
        while self._peek()[0] == "newline":
            self._i += 1
        while self._i < len(tokens):
            kind, name = tokens[self._i]
            assert kind == "name" and tokens[self._i + 1][0] == "define", tokens[self._i : self._i + 2]
            self._i += 2
            self._skip_newlines()
            for body in self._alternatives(top=True):
                self.rules.append((name, body))
            while self._peek()[0] == "newline":
                self._i += 1
        self.start = start
        self.by_head: dict[str, list[tuple]] = {}
        for head, body in self.rules:
            self.by_head.setdefault(head, []).append(body)
        self.nullable = self._nullable()

    # -- reading -------------------------------------------------------------------------------

    def _peek(self) -> tuple[str, str]:
        return self._tokens[self._i] if self._i < len(self._tokens) else ("end", "")

    def _skip_newlines(self) -> None:
        while self._peek()[0] == "newline":
            self._i += 1

    def _new_rule(self, bodies: list[tuple]) -> str:
        self._fresh += 1
        name = f" g{self._fresh}"
        for body in bodies:
            self.rules.append((name, body))
        return name

    def _alternatives(self, top: bool) -> list[tuple]:
        options = [self._sequence(top)]
        while True:
            if top:  # (a line starting with "|" continues the rule)
                j = self._i
                while j < len(self._tokens) and self._tokens[j][0] == "newline":
                    j += 1
                if j < len(self._tokens) and self._tokens[j] == ("op", "|"):
                    self._i = j
            if self._peek() != ("op", "|"):
                return options
            self._i += 1
            self._skip_newlines()
            options.append(self._sequence(top))

    def _sequence(self, top: bool) -> tuple:
        items: list[Symbol] = []
        while True:
            kind, tok = self._peek()
            if kind == "newline" and not top:
                self._i += 1
                continue
            if kind == "literal":
                self._i += 1
                items.append(self._new_rule([tuple(("chars", ((c, c),), False) for c in _unescape(tok[1:-1]))]))
            elif kind == "cls":
                self._i += 1
                items.append(self._char_class(tok))
            elif kind == "op" and tok == ".":
                self._i += 1
                items.append(("chars", ((0, 0x10FFFF),), False))
            elif kind == "name" and self._tokens[self._i + 1 : self._i + 2] != [("define", "::=")]:
                self._i += 1
                items.append(tok)
            elif kind == "op" and tok == "(":
                self._i += 1
                self._skip_newlines()
                inner = self._alternatives(top=False)
                assert self._peek() == ("op", ")")
                self._i += 1
                items.append(self._new_rule(inner))
            elif (kind == "op" and tok in "*+?") or kind == "braces":
                self._i += 1
                items[-1] = self._repeat(items[-1], tok)
            else:
                return tuple(items)

    def _char_class(self, tok: str) -> tuple:
        body = tok[1:-1]
        negated = body.startswith("^")
        chars = _unescape(body[1:] if negated else body)
        # ranges: re-read with the positions of unescaped "-" (escaped ones became "-" too, so
        # walk the raw text to tell them apart)
        raw = body[1:] if negated else body
        units, i = [], 0
        while i < len(raw):
            if raw[i] == "\\":
                width = {"x": 2, "u": 4, "U": 8}.get(raw[i + 1], 0)
                units.append((raw[i : i + 2 + width], False))
                i += 2 + width
            else:
                units.append((raw[i], raw[i] == "-"))
                i += 1
        assert len(units) == len(chars)
        ranges, k = [], 0
        while k < len(units):
            if k + 2 < len(units) and units[k + 1][1]:
                ranges.append((chars[k], chars[k + 2]))
                k += 3
            else:
                ranges.append((chars[k], chars[k]))
                k += 1
        return ("chars", tuple(ranges), negated)

    def _repeat(self, item: Symbol, op: str) -> str:
        if op == "*":
            lo, hi = 0, None
        elif op == "+":
            lo, hi = 1, None
        elif op == "?":
            lo, hi = 0, 1
        else:
            inner = op[1:-1].replace(" ", "")
            if "," in inner:
                a, b = inner.split(",")
                lo, hi = int(a or 0), (int(b) if b else None)
            else:
                lo = hi = int(inner)
        if hi is None:  # item{lo} then a right-recursive star
            star = self._new_rule([()])
            self.rules.append((star, (item, star)))
            return self._new_rule([tuple([item] * lo) + (star,)])
        tail = self._new_rule([()])  # up to hi - lo more, nested
        for _ in range(hi - lo):
            tail = self._new_rule([(), (item, tail)])
        return self._new_rule([tuple([item] * lo) + (tail,)])

    # -- recognising ---------------------------------------------------------------------------

    def _nullable(self) -> set[str]:
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for head, body in self.rules:
                if head not in found and all(isinstance(s, str) and s in found for s in body):
                    found.add(head)
                    changed = True
        return found

    @staticmethod
    def _matches(sym: tuple, cp: int) -> bool:
        inside = any(lo <= cp <= hi for lo, hi in sym[1])
        return inside != sym[2]

    def accepts(self, text: str) -> bool:
        """Earley recognition of ``text`` from the start rule."""
        start_item = (" start", (self.start,), 0, 0)
        sets: list[set] = [set() for _ in range(len(text) + 1)]
        sets[0].add(start_item)
        for i in range(len(text) + 1):
            todo = list(sets[i])
            while todo:
                head, body, dot, origin = todo.pop()
                if dot < len(body):
                    sym = body[dot]
                    if isinstance(sym, str):
                        for b in self.by_head.get(sym, ()):
                            item = (sym, b, 0, i)
                            if item not in sets[i]:
                                sets[i].add(item)
                                todo.append(item)
                        if sym in self.nullable:
                            item = (head, body, dot + 1, origin)
                            if item not in sets[i]:
                                sets[i].add(item)
                                todo.append(item)
                    elif i < len(text) and self._matches(sym, ord(text[i])):
                        sets[i + 1].add((head, body, dot + 1, origin))
                else:
                    for h2, b2, d2, o2 in list(sets[origin]):
                        if d2 < len(b2) and b2[d2] == head:
                            item = (h2, b2, d2 + 1, o2)
                            if item not in sets[i]:
                                sets[i].add(item)
                                todo.append(item)
        return (" start", (self.start,), 1, 0) in sets[len(text)]
