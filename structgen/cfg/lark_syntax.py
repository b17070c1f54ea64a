"""The syntax of Lark grammars (Lark 1.x, with llguidance's extensions), read into statements.

Lark's own grammar of grammars (``lark/load_grammar.py``) is followed token for token:

- ``rule: expansions`` (modifiers ``?`` and ``!``, a leading ``_``, template parameters
  ``rule{a, b}``, a priority ``rule.2``), ``TERMINAL: expansions`` (priority ``TERM.2``);
- alternatives ``|`` (also at the start of a following line), aliases ``-> name``;
- items: ``"string"`` and ``"string"i``, ``/regex/flags``, ``"a".."z"``, names, template uses
  ``name{x, y}``, ``( ... )``, ``[ ... ]``; after an item ``?``, ``*``, ``+``, ``~ n``, ``~ n..m``,
  and llguidance's ``{n}``, ``{m,}``, ``{,n}``, ``{m,n}``;
- directives ``%ignore``, ``%import``, ``%override``, ``%extend``, ``%declare``, and llguidance's
  ``%json { schema }`` (an item) and ``%llguidance { options }``, and in terminals ``A & B``
  (both) and ``~A`` (anything but ``A``);
- comments ``//`` and ``#``; a backslash at the end of a line continues it.

A newline inside parentheses or brackets is read as a space (Lark refuses it). What structgen
cannot enforce is refused by :mod:`.lark` (``%declare``, llguidance's token references and rule
attributes); this module raises :class:`~structgen.errors.GrammarSyntaxError` for text that is not
Lark, and :class:`~structgen.errors.GrammarNotSupported` for the llguidance syntax it does not read
(``<special tokens>``, ``@grammar`` references, ``%regex``, ``%lark``, ``rule[attributes]``,
parametric rules).

Trees are tuples: ``("alt", items)``, ``("seq", items)``, ``("rep", x, lo, hi)``, ``("name", name,
line)``, ``("str", text, flags)``, ``("re", pattern, flags)``, ``("range", a, b)``,
``("template", name, args, line)``, ``("json", schema, line)``, ``("and", items, line)``,
``("not", item, line)``.

Example:
    >>> stmts = parse_lark_syntax('start: item+ -> items\\n?item: "a"i | /[0-9]+/\\n%ignore " "')
    >>> [s.kind for s in stmts]
    ['rule', 'rule', 'ignore']
    >>> stmts[1].body
    ('alt', (('str', 'a', 'i'), ('re', '[0-9]+', '')))
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import GrammarNotSupported, GrammarSyntaxError

__all__ = ["Statement", "parse_lark_syntax"]

_TOKENS = re.compile(r"""
    (?P<cont>\\[ \t]*\r?\n)
  | (?P<nl>(?:[ \t]*(?:(?://|\#)[^\n]*)?\r?\n)+)
  | (?P<ws>[ \t]+)
  | (?P<comment>(?://|\#)[^\n]*)
  | (?P<directive>%[a-z_]+)
  | (?P<to>->)
  | (?P<dcolon>::)
  | (?P<dotdot>\.\.)
  | (?P<dot>\.)
  | (?P<colon>:)
  | (?P<comma>,)
  | (?P<bar>\|)
  | (?P<lpar>\() | (?P<rpar>\))
  | (?P<lsqb>\[) | (?P<rsqb>\])
  | (?P<lbrace>\{) | (?P<rbrace>\})
  | (?P<tilde>~)
  | (?P<op>[+*?!])
  | (?P<string>"(?:\\"|\\\\|[^"\n])*?"i?)
  | (?P<regexp>/(?!/)(?:\\/|\\\\|[^/])*?/[imslux]*)
  | (?P<number>[+-]?\d+)
  | (?P<rule>_?[a-z][_a-z0-9]*(?:-[_a-z0-9]+)*)
  | (?P<terminal>_?[A-Z][_A-Z0-9]*(?:-[_A-Z0-9]+)*)
  | (?P<special><[^<>\s]*>|@[A-Za-z0-9_]+)
  | (?P<amp>&)
  | (?P<eq>=)
  | (?P<underscore>_)
""", re.X)


@dataclass
class Statement:
    """One statement of a Lark grammar: ``kind`` is ``rule``, ``term``, ``ignore``, ``import``,
    ``override``, ``extend``, ``declare`` or ``llguidance``."""

    kind: str
    line: int
    name: str = ""
    body: Any = None
    params: tuple[str, ...] = ()
    #: %import: the dotted path, and (name, alias) pairs
    path: tuple[str, ...] = ()
    names: tuple[tuple[str, str], ...] = ()
    #: %override / %extend: the definition they carry
    inner: Optional["Statement"] = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Token:
    kind: str
    text: str
    pos: int
    line: int
    value: Any = None  # (%json / %llguidance: the JSON read after it)


def parse_lark_syntax(text: str) -> list[Statement]:
    """The statements of Lark grammar ``text``."""
    return _Parser(text).run()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = self.tokenize(text)
        self.i = 0
        self.depth = 0  # (parentheses and brackets open: newlines are spaces there)
        self.rule: Optional[str] = None

    # -- errors ----------------------------------------------------------------------------------

    def column(self, pos: int) -> int:
        return pos - (self.text.rfind("\n", 0, pos) + 1) + 1

    def error(self, reason: str, tok: Optional[_Token] = None) -> GrammarSyntaxError:
        tok = tok or self.peek()
        return GrammarSyntaxError("lark", reason, line=tok.line, column=self.column(tok.pos), rule=self.rule)

    def refuse(self, construct: str, hint: str, tok: Optional[_Token] = None) -> GrammarNotSupported:
        tok = tok or self.peek()
        return GrammarNotSupported("lark", construct, line=tok.line, rule=self.rule, hint=hint)

    # -- tokens ----------------------------------------------------------------------------------

    def tokenize(self, text: str) -> list[_Token]:
        out: list[_Token] = []
        pos, line = 0, 1
        decoder = json.JSONDecoder()
        while pos < len(text):
            m = _TOKENS.match(text, pos)
            if m is None:
                col = self.column(pos)
                raise GrammarSyntaxError("lark", f"unexpected character {text[pos]!r}", line=line, column=col)
            kind = m.lastgroup or ""
            tok = _Token(kind, m.group(), pos, line)
            end = m.end()
            if kind == "directive" and tok.text in ("%lark", "%if"):
                what = "nested grammars (%lark {...})" if tok.text == "%lark" else "parametric rules (%if)"
                raise GrammarNotSupported("lark", f"llguidance's {what}", line=line,
                                          hint="write the grammar without llguidance's extensions")
            if kind == "directive" and tok.text in ("%json", "%llguidance", "%regex"):
                start = end
                while start < len(text) and text[start] in " \t\r\n":
                    start += 1
                try:
                    tok.value, end = decoder.raw_decode(text, start)
                except json.JSONDecodeError as e:
                    raise GrammarSyntaxError("lark", f"{tok.text} needs a JSON value after it ({e.msg})", line=line,
                                             column=self.column(start)) from e
            if kind not in ("ws", "comment", "cont"):
                out.append(tok)
            line += text.count("\n", pos, end)
            pos = end
        out.append(_Token("end", "", len(text), line))
        return out

    def peek(self, k: int = 0) -> _Token:
        i = self.i
        while True:  # (newlines are spaces inside parentheses and brackets)
            tok = self.tokens[min(i, len(self.tokens) - 1)]
            if tok.kind == "nl" and self.depth:
                i += 1
                continue
            if k == 0:
                return tok
            k -= 1
            i += 1

    def next(self) -> _Token:
        while self.tokens[self.i].kind == "nl" and self.depth:
            self.i += 1
        tok = self.tokens[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def expect(self, kind: str, what: str) -> _Token:
        tok = self.peek()
        if tok.kind != kind:
            found = "the end of the grammar" if tok.kind == "end" else repr(tok.text)
            raise self.error(f"expected {what}, found {found}", tok)
        return self.next()

    def end_of_statement(self) -> None:
        tok = self.peek()
        if tok.kind == "nl":
            self.next()
        elif tok.kind != "end":
            raise self.error(f"expected the end of the line, found {tok.text!r}", tok)

    def continues_with_bar(self) -> bool:
        """A newline followed by ``|``: the alternatives go on (Lark's ``_NL_OR``)."""
        return self.peek().kind == "nl" and self.peek(1).kind == "bar"

    # -- statements ------------------------------------------------------------------------------

    def run(self) -> list[Statement]:
        out = []
        while True:
            tok = self.peek()
            if tok.kind == "end":
                return out
            if tok.kind == "nl":
                self.next()
                continue
            self.rule = None
            out.append(self.statement())

    def statement(self) -> Statement:
        tok = self.peek()
        if tok.kind == "directive":
            return self.directive()
        if tok.kind in ("rule", "terminal", "op"):
            return self.definition()
        raise self.error(f"expected a rule, a terminal or a directive, found {tok.text!r}", tok)

    def directive(self) -> Statement:
        tok = self.next()
        word = tok.text
        if word == "%ignore":
            body = self.expansions()
            self.end_of_statement()
            return Statement("ignore", tok.line, body=body)
        if word == "%import":
            return self.import_statement(tok)
        if word in ("%override", "%extend"):
            inner = self.definition()
            return Statement(word[1:], tok.line, name=inner.name, inner=inner)
        if word == "%declare":
            names = []
            while self.peek().kind in ("rule", "terminal"):
                names.append(self.next().text)
            self.end_of_statement()
            return Statement("declare", tok.line, names=tuple((n, n) for n in names))
        if word == "%llguidance":
            if not isinstance(tok.value, dict):
                raise self.error("%llguidance needs a JSON object of options", tok)
            self.end_of_statement()
            return Statement("llguidance", tok.line, options=tok.value)
        if word == "%regex":
            raise self.refuse("llguidance's %regex {...}", "write the terminal as a regex or a Lark terminal", tok)
        raise self.error(f"unknown directive {word}", tok)

    def import_statement(self, tok: _Token) -> Statement:
        relative = self.peek().kind == "dot"
        if relative:
            raise self.refuse("a relative %import", "paste the imported grammar's rules into this one", tok)
        path = [self.name_token().text]
        while self.peek().kind == "dot":
            self.next()
            path.append(self.name_token().text)
        names: list[tuple[str, str]]
        if self.peek().kind == "lpar":
            self.next()
            self.depth += 1
            names = [(self.name_token().text,) * 2]  # type: ignore[list-item]
            while self.peek().kind == "comma":
                self.next()
                names.append((self.name_token().text,) * 2)  # type: ignore[arg-type]
            self.depth -= 1
            self.expect("rpar", "')'")
        else:
            if len(path) < 2:
                raise self.error("%import needs a module and a name (%import common.WS)", tok)
            name = path.pop()
            alias = name
            if self.peek().kind == "to":
                self.next()
                alias = self.name_token().text
            names = [(name, alias)]
        self.end_of_statement()
        return Statement("import", tok.line, path=tuple(path), names=tuple(names))

    def name_token(self) -> _Token:
        tok = self.peek()
        if tok.kind not in ("rule", "terminal"):
            raise self.error(f"expected a name, found {tok.text!r}", tok)
        return self.next()

    def definition(self) -> Statement:
        modifiers = ""
        while self.peek().kind == "op" and self.peek().text in "?!":
            modifiers += self.next().text
        tok = self.peek()
        if tok.kind not in ("rule", "terminal") or (modifiers and tok.kind == "terminal"):
            raise self.error(f"expected a rule or terminal name, found {tok.text!r}", tok)
        self.next()
        self.rule = tok.text
        kind = "rule" if tok.kind == "rule" else "term"
        params: tuple[str, ...] = ()
        if kind == "rule" and self.peek().kind == "lbrace":
            self.next()
            names = [self.expect("rule", "a template parameter").text]
            while self.peek().kind == "comma":
                self.next()
                names.append(self.expect("rule", "a template parameter").text)
            self.expect("rbrace", "'}'")
            params = tuple(names)
        if self.peek().kind == "dcolon":
            raise self.refuse("llguidance's parametric rules (name::param)", "write the rules it stands for")
        if self.peek().kind == "dot":  # a priority: no effect on the language
            self.next()
            self.expect("number", "a priority number")
        if self.peek().kind == "lsqb":
            raise self.refuse("llguidance's rule attributes (name[...])",
                              "drop the attributes (lazy, stop, max_tokens, ... change what the rule accepts)")
        self.expect("colon", "':'")
        body = self.expansions()
        self.end_of_statement()
        return Statement(kind, tok.line, name=tok.text, body=body, params=params)

    # -- expansions ------------------------------------------------------------------------------

    def expansions(self) -> Any:
        options = [self.conjunction()]
        while True:
            if self.peek().kind == "bar":
                self.next()
            elif self.continues_with_bar():
                self.next()
                self.next()
            else:
                break
            options.append(self.conjunction())
        return options[0] if len(options) == 1 else ("alt", tuple(options))

    def conjunction(self) -> Any:
        """llguidance's ``A & B``: binds tighter than ``|``, looser than a sequence."""
        parts = [self.alias()]
        while self.peek().kind == "amp":
            self.next()
            parts.append(self.alias())
        return parts[0] if len(parts) == 1 else ("and", tuple(parts), self.peek().line)

    def alias(self) -> Any:
        items = []
        while True:
            item = self.expr()
            if item is None:
                break
            items.append(item)
        if self.peek().kind == "to":  # an alias names the tree node: no effect on the language
            self.next()
            self.expect("rule", "an alias name")
        return items[0] if len(items) == 1 else ("seq", tuple(items))

    def expr(self) -> Any:
        tok = self.peek()
        if tok.kind == "tilde":  # llguidance's ~A: the complement, binding tighter than + or *
            self.next()
            inner = self.atom()
            if inner is None:
                raise self.error("~ needs a terminal after it", tok)
            atom: Any = ("not", inner, tok.line)
        else:
            atom = self.atom()
        if atom is None:
            return None
        while True:
            tok = self.peek()
            if tok.kind == "op" and tok.text in "?*+":
                self.next()
                atom = ("rep", atom, 0 if tok.text != "+" else 1, 1 if tok.text == "?" else None)
            elif tok.kind == "tilde" and self.peek(1).kind == "number":
                self.next()
                lo = self.count()
                hi = lo
                if self.peek().kind == "dotdot":
                    self.next()
                    hi = self.count()
                if hi < lo:
                    raise self.error(f"the repetition ~ {lo}..{hi} has its maximum below its minimum", tok)
                atom = ("rep", atom, lo, hi)
            elif tok.kind == "lbrace" and self.peek(1).kind in ("number", "comma"):
                atom = ("rep", atom, *self.braces())
            else:
                return atom

    def count(self) -> int:
        tok = self.expect("number", "a number")
        value = int(tok.text)
        if value < 0:
            raise self.error("a repetition count cannot be negative", tok)
        return value

    def braces(self) -> tuple[int, Optional[int]]:
        """llguidance's ``{n}``, ``{m,}``, ``{,n}``, ``{m,n}``."""
        open_ = self.next()
        lo = self.count() if self.peek().kind == "number" else 0
        hi: Optional[int] = lo
        if self.peek().kind == "comma":
            self.next()
            hi = self.count() if self.peek().kind == "number" else None
        self.expect("rbrace", "'}'")
        if hi is not None and hi < lo:
            raise self.error(f"the repetition {{{lo},{hi}}} has its maximum below its minimum", open_)
        return lo, hi

    def atom(self) -> Any:
        tok = self.peek()
        kind = tok.kind
        if kind in ("lpar", "lsqb"):
            self.next()
            self.depth += 1
            inner = self.expansions()
            self.depth -= 1
            self.expect("rpar" if kind == "lpar" else "rsqb", "')'" if kind == "lpar" else "']'")
            return inner if kind == "lpar" else ("rep", inner, 0, 1)
        if kind == "string":
            self.next()
            text, flags = self.string_value(tok)
            if self.peek().kind == "dotdot":
                self.next()
                end_tok = self.expect("string", "the string that ends the range")
                end, _ = self.string_value(end_tok)
                if len(text) != 1 or len(end) != 1:
                    raise self.error("a range \"a\"..\"z\" joins two one-character strings", tok)
                if ord(end) < ord(text):
                    raise self.error(f"the range {tok.text}..{end_tok.text} is reversed", tok)
                return ("range", text, end)
            return ("str", text, flags)
        if kind == "regexp":
            self.next()
            return self.regexp_value(tok)
        if kind == "terminal":
            self.next()
            return ("name", tok.text, tok.line)
        if kind == "rule":
            if self.peek(1).kind == "colon" and not self.depth:
                return None  # (the next rule's definition, after a missing newline: reported by the caller)
            self.next()
            if self.peek().kind == "dcolon":
                raise self.refuse("llguidance's parametric rules (name::param)", "write the rules it stands for")
            if self.peek().kind == "lbrace" and self.peek(1).kind not in ("number", "comma"):
                self.next()
                args = [self.template_arg()]
                while self.peek().kind == "comma":
                    self.next()
                    args.append(self.template_arg())
                self.expect("rbrace", "'}'")
                return ("template", tok.text, tuple(args), tok.line)
            return ("name", tok.text, tok.line)
        if kind == "directive" and tok.text == "%json":
            self.next()
            return ("json", tok.value, tok.line)
        if kind == "directive" and tok.text == "%regex":
            raise self.refuse("llguidance's %regex {...}", "write the terminal as a regex or a Lark terminal", tok)
        if kind == "special":
            raise self.refuse(f"llguidance's token or grammar reference {tok.text}",
                              "structgen constrains text: write the token's text as a string", tok)
        return None

    def template_arg(self) -> Any:
        tok = self.peek()
        if tok.kind not in ("rule", "terminal", "string", "regexp"):
            raise self.error("a template argument is a name, a string, a regex or a template use", tok)
        return self.atom()

    def string_value(self, tok: _Token) -> tuple[str, str]:
        raw = tok.text
        flags = ""
        if raw.endswith("i"):
            raw, flags = raw[:-1], "i"
        text = _eval_escaping(raw[1:-1], lambda why: self.error(why, tok))
        text = text.replace("\\\\", "\\")
        if not text:
            raise self.error("an empty string is not a terminal (Lark refuses it)", tok)
        return text, flags

    def regexp_value(self, tok: _Token) -> tuple[str, str, str]:
        raw = tok.text
        end = raw.rfind("/")
        flags = raw[end + 1 :]
        if "\n" in raw and "x" not in flags:
            raise self.error("a regex may hold a newline only with the x (verbose) flag", tok)
        body = _eval_escaping(raw[1:end], lambda why: self.error(why, tok))
        if not body:
            raise self.error("an empty regex is not a terminal (Lark refuses it)", tok)
        return ("re", body, flags)


def _eval_escaping(s: str, fail: Any) -> str:
    """Lark's ``eval_escaping``: the escapes of Python string literals that Lark keeps
    (``\\n \\t \\f \\r \\xHH \\uHHHH \\UHHHHHHHH``) become characters; any other backslash
    stays with its character (for the regex engine), and ``\\"`` is a quote."""
    w = []
    i = 0
    while i < len(s):
        c = s[i]
        w.append(c)
        i += 1
        if c == "\\":
            if i >= len(s):
                raise fail(f"the literal ends with a lone backslash: {s!r}")
            n2 = s[i]
            i += 1
            if n2 == "\\":
                w.append("\\\\")
            elif n2 not in "Uuxnftr":
                w.append("\\")
            w.append(n2)
    text = "".join(w).replace('\\"', '"').replace("'", "\\'")
    try:
        return str(ast.literal_eval("u'''%s'''" % text))
    except (SyntaxError, ValueError) as e:
        raise fail(f"bad escape in {s!r}: {e}") from e
