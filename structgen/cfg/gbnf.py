"""GBNF / EBNF grammars as llama.cpp and XGrammar write them, read into a :class:`~.grammar.Grammar`.

The syntax (llama.cpp's ``grammars/README.md``; XGrammar's EBNF is the same core):

- a rule is ``name ::= alternatives``; names are letters, digits, ``-`` and ``_``; ``root`` is the
  start (another with ``start=``); a rule ends at the end of its line, except that a newline is
  allowed after ``::=``, after ``|`` and anywhere inside parentheses;
- ``"literal"`` (also ``'literal'``) with the escapes ``\\n \\r \\t \\\\ \\" \\' \\[ \\] \\- \\^ \\/
  \\? \\a \\b \\f \\v \\0 \\e``, ``\\xHH``, ``\\uHHHH``, ``\\UHHHHHHHH`` (code points, written as UTF-8);
- ``[...]`` and ``[^...]`` character classes with ranges ``a-z``; ``.`` any character;
- ``( ... )`` groups, ``|`` alternatives, and after any item ``*``, ``+``, ``?``, ``{m}``, ``{m,}``,
  ``{m,n}``, ``{,n}`` (exact at any bound: a repetition is a counter, never unrolled);
- ``#`` comments to the end of the line.

Terminals are characters (Unicode code points); the language is the set of strings the grammar
derives from the start rule (their UTF-8 bytes). Token references (``<[1000]>``, ``<think>``,
``!<...>``) and XGrammar's look-ahead assertions ``(= ...)`` and built-in macros raise
:class:`~structgen.errors.GrammarNotSupported`; anything else out of place,
:class:`~structgen.errors.GrammarSyntaxError` with its line and column.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> g = parse_gbnf('root ::= "a" item{2,3}  # two or three\\nitem ::= [0-9] | "x"', ExprPool())
    >>> sorted(g.rules), g.start
    (['item', 'root'], 'root')
"""

from __future__ import annotations

from ..automata.expr import ExprPool
from ..automata.utf8 import complement_intervals, merge_intervals
from ..errors import GrammarNotSupported, GrammarSyntaxError
from .grammar import Grammar, Node, alt, ref, rep, seq, term

__all__ = ["parse_gbnf"]

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_SIMPLE_ESCAPES = {
    "n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "[": "[", "]": "]", "-": "-", "^": "^",
    "/": "/", "?": "?", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "e": "\x1b",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
#: XGrammar's built-in functions, written like a call: not supported
_MACROS = ("TagDispatch", "Repeat")
#: The largest repetition bound accepted (a counter, so only a sanity limit on the number)
MAX_REPEAT = 1 << 30


def parse_gbnf(text: str, pool: ExprPool, *, start: str = "root") -> Grammar:
    """The :class:`Grammar` of GBNF ``text`` (its leaves built as terms of ``pool``)."""
    return _Parser(text, pool, start).run()


class _Parser:
    def __init__(self, text: str, pool: ExprPool, start: str) -> None:
        self.text = text
        self.pos = 0
        self.pool = pool
        self.grammar = Grammar("gbnf", pool, start=start)
        self.rule: str | None = None

    # -- positions and errors --------------------------------------------------------------------

    def where(self, pos: int | None = None) -> tuple[int, int]:
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - (self.text.rfind("\n", 0, pos) + 1) + 1

    def error(self, reason: str, pos: int | None = None) -> GrammarSyntaxError:
        line, column = self.where(pos)
        return GrammarSyntaxError("gbnf", reason, line=line, column=column, rule=self.rule)

    def refuse(self, construct: str, hint: str) -> GrammarNotSupported:
        return GrammarNotSupported("gbnf", construct, line=self.where()[0], rule=self.rule, hint=hint)

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.text[i] if i < len(self.text) else ""

    def space(self, newlines: bool) -> None:
        """Skip blanks and comments (and newlines when ``newlines``)."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in " \t" or (newlines and c in "\r\n"):
                self.pos += 1
            elif c == "#":
                while self.pos < n and text[self.pos] not in "\r\n":
                    self.pos += 1
            else:
                break

    # -- rules -----------------------------------------------------------------------------------

    def run(self) -> Grammar:
        self.space(True)
        while self.pos < len(self.text):
            self.parse_rule()
            self.space(True)
        if not self.grammar.rules:
            raise self.error("the grammar has no rule")
        if self.grammar.start not in self.grammar.rules:
            raise GrammarSyntaxError("gbnf", f"no rule named {self.grammar.start!r} (the start rule)")
        return self.grammar

    def name(self) -> str:
        begin = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _NAME_CHARS:
            self.pos += 1
        return self.text[begin : self.pos]

    def parse_rule(self) -> None:
        begin = self.pos
        self.rule = None
        name = self.name()
        if not name:
            raise self.error(f"expected a rule name, found {self.peek()!r}")
        line = self.where(begin)[0]
        self.rule = name
        self.space(False)
        if not self.text.startswith("::=", self.pos):
            raise self.error(f"expected '::=' after the rule name {name!r}")
        self.pos += 3
        self.space(True)
        body = self.alternatives(nested=False)
        if self.peek() in ("\r", "\n"):
            self.pos += 1
        elif self.pos < len(self.text) and not self.text[: self.pos].rstrip(" \t").endswith(("\n", "\r")):
            raise self.error(f"expected the end of the line, found {self.peek()!r}")
        self.grammar.add_rule(name, body, line=line)

    def alternatives(self, nested: bool) -> Node:
        options = [self.sequence(nested)]
        while True:
            if not nested:  # (a line that starts with "|" goes on with the rule above, as in XGrammar)
                back = self.pos
                self.space(True)
                if self.peek() != "|":
                    self.pos = back
            if self.peek() != "|":
                return alt(*options)
            self.pos += 1
            self.space(True)
            options.append(self.sequence(nested))

    def sequence(self, nested: bool) -> Node:
        items: list[Node] = []
        while True:
            c = self.peek()
            if c == '"' or c == "'":
                items.append(self.literal(c))
            elif c == "[":
                items.append(self.char_class())
            elif c == ".":
                self.pos += 1
                items.append(term(self.pool.code_points(((0, 0x10FFFF),))))
            elif c == "(":
                self.pos += 1
                self.space(True)
                if self.peek() == "=":
                    raise self.refuse("a look-ahead assertion (= ...)", "write the rule without the assertion")
                inner = self.alternatives(nested=True)
                if self.peek() != ")":
                    raise self.error(f"expected ')', found {self.peek() or 'the end of the text'!r}")
                self.pos += 1
                items.append(inner)
            elif c == "<" or (c == "!" and self.peek(1) == "<"):
                raise self.refuse("a token reference (<...>)", "structgen constrains text: write the token's text as a literal")
            elif c and c in _NAME_CHARS:
                begin = self.pos
                name = self.name()
                self.space(False)
                if self.text.startswith("::=", self.pos):  # (the next rule: this one ended, empty, at a newline)
                    self.pos = begin
                    break
                self.pos = begin + len(name)
                if name in _MACROS and self.peek() == "(":
                    raise self.refuse(f"XGrammar's built-in {name}(...)", "write the rules it stands for")
                items.append(ref(name, self.where(begin)[0]))
            elif c in ("*", "+", "?", "{"):
                if not items:
                    raise self.error(f"{c!r} repeats nothing")
                items[-1] = self.repetition(items[-1])
            else:
                break
            self.space(nested)
        return seq(*items)

    def repetition(self, item: Node) -> Node:
        c = self.peek()
        self.pos += 1
        if c == "*":
            return rep(item, 0, None)
        if c == "+":
            return rep(item, 1, None)
        if c == "?":
            return rep(item, 0, 1)
        self.space(False)
        lo = self.integer()
        hi: int | None
        self.space(False)
        if self.peek() == ",":
            self.pos += 1
            self.space(False)
            hi = self.integer() if self.peek().isdigit() else None
        else:
            if lo is None:
                raise self.error("expected a number in '{...}'")
            hi = lo
        self.space(False)
        if self.peek() != "}":
            raise self.error(f"expected '}}' to close the repetition, found {self.peek()!r}")
        self.pos += 1
        lo = lo or 0
        if hi is not None and hi < lo:
            raise self.error(f"the repetition {{{lo},{hi}}} has its maximum below its minimum")
        return rep(item, lo, hi)

    def integer(self) -> int | None:
        begin = self.pos
        while self.peek().isdigit() and self.peek().isascii():
            self.pos += 1
        if begin == self.pos:
            return None
        value = int(self.text[begin : self.pos])
        if value > MAX_REPEAT:
            raise self.error(f"the repetition bound {value} is over {MAX_REPEAT}", begin)
        return value

    # -- characters ------------------------------------------------------------------------------

    def char(self, end: str) -> int:
        """The code point at the position (an escape or a character), the position moved past it."""
        c = self.peek()
        if not c:
            raise self.error(f"unterminated {'literal' if end != ']' else 'character class'}")
        if c != "\\":
            self.pos += 1
            return ord(c)
        e = self.peek(1)
        if e in _SIMPLE_ESCAPES:
            self.pos += 2
            return ord(_SIMPLE_ESCAPES[e])
        if e in _HEX_ESCAPES:
            digits = self.text[self.pos + 2 : self.pos + 2 + _HEX_ESCAPES[e]]
            if len(digits) != _HEX_ESCAPES[e] or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.error(f"\\{e} needs {_HEX_ESCAPES[e]} hexadecimal digits")
            value = int(digits, 16)
            if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                raise self.error(f"\\{e}{digits} is not a character that UTF-8 can write")
            self.pos += 2 + len(digits)
            return value
        raise self.error(f"unknown escape \\{e}")

    def literal(self, quote: str) -> Node:
        self.pos += 1
        chars = []
        while self.peek() != quote:
            chars.append(self.char(quote))
        self.pos += 1
        text = "".join(map(chr, chars))
        return term(self.pool.literal(text.encode("utf-8")))

    def char_class(self) -> Node:
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges = []
        while self.peek() != "]":
            lo = self.char("]")
            hi = lo
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                hi = self.char("]")
                if hi < lo:
                    raise self.error(f"the range {chr(lo)!r}-{chr(hi)!r} is reversed")
            ranges.append((lo, hi))
        self.pos += 1
        merged = tuple(merge_intervals(ranges))
        if negated:
            merged = complement_intervals(merged)
        return term(self.pool.code_points(merged))
