"""Lark grammars read into a :class:`~.grammar.Grammar`, with Lark's meaning (Earley parser,
``lexer="dynamic_complete"``): the strings derivable from the start rule, where each terminal
reads a string of its regular language and the ``%ignore``d terminals may come any number of
times before, between and after terminals.

Terminals are compiled as Lark compiles them: a terminal built of strings, regexes, ranges and
other terminals becomes ONE Python regex (strings escaped, flags as ``(?i:...)`` groups,
alternatives longest first: ``TerminalTreeToPattern``), read with Python's meaning by
:mod:`.pyregex`, so a look-behind in a piece sees the pieces before it, as in Lark. A terminal
whose repetitions are all lazy (``/.*?/``, Lark's ``ESCAPED_STRING``, ``C_COMMENT``) reads, as
Python's ``re.match`` does, its *shortest* match: its strings are those of its language with no
proper prefix in it (one string can never hold two comments). A terminal mixing lazy and greedy
repetitions of variable count has no such reading and raises
:class:`~structgen.errors.GrammarNotSupported`.

Each use of a terminal in a rule is the terminal then the ignored text (``W = (I1 | I2 | ...)*``),
and the start rule is preceded by ``W``. ``%import common.X`` and ``unicode.X`` import Lark's
terminal libraries (:mod:`.lark_common`), each terminal with the ones it uses (renamed
``COMMON__Y`` so they never clash with the grammar's). Templates are expanded per distinct
arguments. ``%override`` replaces a definition, ``%extend`` adds alternatives to one. Priorities,
aliases, ``?``, ``!`` and ``_`` change the parse tree, not the language, and are read and dropped.
llguidance's ``%json { schema }`` is a value of that JSON Schema, and ``%llguidance {}`` is
accepted with no options (or ``no_forcing``, which changes nothing here).

Refused by name (:class:`~structgen.errors.GrammarNotSupported`): ``%declare`` (terminals only a
postlexer makes, such as Python's ``_INDENT``), imports of other grammars, llguidance's token
references and rule attributes, ``%llguidance`` options that change the language.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> g = parse_lark('start: NAME ("," NAME)*\\n%import common.CNAME -> NAME\\n%import common.WS\\n%ignore WS', ExprPool())
    >>> g.start, sorted(g.rules)
    ('start', ['start'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

from ..automata.dfa import DEFAULT_MAX_STATES
from ..automata.expr import ALL_BYTES, ExprPool
from ..errors import CompileBudgetExceeded, GrammarNotSupported, GrammarSyntaxError, RegexNotSupported, RegexSyntaxError
from .grammar import Grammar, Node, alt, json_value, ref, rep, seq, term
from .lark_common import LIBRARIES
from .lark_syntax import Statement, parse_lark_syntax
from .pyregex import _parser, python_regex

__all__ = ["MAX_TEMPLATE_INSTANCES", "MAX_TEMPLATE_NESTING", "parse_lark"]

#: The most distinct template instances one grammar may make (a template that instantiates
#: itself with growing arguments would make them forever).
MAX_TEMPLATE_INSTANCES = 10_000
#: The deepest template uses may nest in one another's arguments.
MAX_TEMPLATE_NESTING = 64
#: ``%llguidance`` options that change nothing structgen enforces.
_NEUTRAL_OPTIONS = frozenset({"no_forcing"})


def parse_lark(text: str, pool: ExprPool, *, start: str = "start", max_states: int = DEFAULT_MAX_STATES) -> Grammar:
    """The :class:`Grammar` of Lark grammar ``text`` (leaves built as terms of ``pool``)."""
    return _LarkReader(text, pool, start, max_states).run()


def is_terminal(name: str) -> bool:
    """Lark's rule: a name whose first letter (past underscores) is upper case is a terminal."""
    return name.lstrip("_")[:1].isupper()


@dataclass(frozen=True)
class _Pattern:
    """A terminal as Lark holds it (``PatternStr`` / ``PatternRE``)."""

    kind: str  # "str", "re", or "term" (llguidance's & and ~: no regex text, a term of the pool)
    value: str
    flags: frozenset = frozenset()
    term: int = -1

    def to_regexp(self) -> str:
        assert self.kind != "term", "a terminal built with & or ~ has no regex text"
        value = re.escape(self.value) if self.kind == "str" else self.value
        for f in sorted(self.flags):
            value = f"(?{f}:{value})"
        return value

    @property
    def widths(self) -> tuple[int, int]:
        if self.kind == "str":
            return len(self.value), len(self.value)
        return _widths(self.to_regexp())


@lru_cache(maxsize=1024)
def _widths(regexp: str) -> tuple[int, int]:
    lo, hi = _parser.parse(regexp).getwidth()
    return int(lo), int(hi)


@lru_cache(maxsize=None)
def _library(name: str) -> dict[str, Statement]:
    return {s.name: s for s in parse_lark_syntax(LIBRARIES[name]) if s.kind == "term"}


def _names_in(tree: Any) -> list[str]:
    out = []
    stack = [tree]
    while stack:
        t = stack.pop()
        kind = t[0]
        if kind == "name":
            out.append(t[1])
        elif kind in ("alt", "seq"):
            stack.extend(t[1])
        elif kind in ("rep", "not"):
            stack.append(t[1])
        elif kind == "template":
            stack.extend(t[2])
        elif kind == "and":
            stack.extend(t[1])
    return out


def _renamed(tree: Any, mapping: dict[str, Any]) -> Any:
    """``tree`` with each ``("name", n, line)`` whose ``n`` is a key of ``mapping`` replaced by
    ``mapping[n]`` (a name, or a whole tree for a template parameter)."""
    kind = tree[0]
    if kind == "name":
        got = mapping.get(tree[1])
        if got is None:
            return tree
        return ("name", got, tree[2]) if isinstance(got, str) else got
    if kind in ("alt", "seq"):
        return (kind, tuple(_renamed(t, mapping) for t in tree[1]))
    if kind == "rep":
        return ("rep", _renamed(tree[1], mapping), tree[2], tree[3])
    if kind == "template":
        return ("template", tree[1], tuple(_renamed(t, mapping) for t in tree[2]), tree[3])
    if kind == "and":
        return ("and", tuple(_renamed(t, mapping) for t in tree[1]), tree[2])
    if kind == "not":
        return ("not", _renamed(tree[1], mapping), tree[2])
    return tree


def _nesting(tree: Any) -> int:
    """How deep template uses nest in ``tree``'s arguments (without recursion)."""
    deepest = 0
    stack = [(tree, 0)]
    while stack:
        t, d = stack.pop()
        if t[0] == "template":
            deepest = max(deepest, d + 1)
            stack.extend((a, d + 1) for a in t[2])
    return deepest


def _describe(tree: Any) -> str:
    kind = tree[0]
    if kind == "name":
        return str(tree[1])
    if kind == "str":
        return repr(tree[1]) + tree[2]
    if kind == "re":
        return f"/{tree[1]}/{tree[2]}"
    if kind == "range":
        return f"{tree[1]!r}..{tree[2]!r}"
    if kind == "template":
        return f"{tree[1]}{{{', '.join(_describe(a) for a in tree[2])}}}"
    return kind


class _LarkReader:
    def __init__(self, text: str, pool: ExprPool, start: str, max_states: int) -> None:
        self.pool = pool
        self.max_states = max_states
        self.grammar = Grammar("lark", pool, start=start)
        self.rules: dict[str, Statement] = {}
        self.terms: dict[str, Statement] = {}
        self.imported: dict[str, tuple[str, str]] = {}  # name -> (library, its name there)
        self.ignores: list[Statement] = []
        self.patterns: dict[str, _Pattern] = {}
        self._pending: set[str] = set()
        self.leaves: dict[Any, Node] = {}
        self.instances: dict[tuple, str] = {}
        self.converted: set[str] = set()
        self.rule: Optional[str] = None
        for st in parse_lark_syntax(text):
            self.add(st)

    # -- errors ----------------------------------------------------------------------------------

    def error(self, reason: str, line: Optional[int] = None) -> GrammarSyntaxError:
        return GrammarSyntaxError("lark", reason, line=line, rule=self.rule)

    def refuse(self, construct: str, hint: str, line: Optional[int] = None) -> GrammarNotSupported:
        return GrammarNotSupported("lark", construct, line=line, rule=self.rule, hint=hint)

    # -- statements ------------------------------------------------------------------------------

    def add(self, st: Statement) -> None:
        kind = st.kind
        if kind in ("rule", "term"):
            table = self.rules if kind == "rule" else self.terms
            if st.name in table:
                raise GrammarSyntaxError("lark", f"{'rule' if kind == 'rule' else 'terminal'} {st.name!r} is defined "
                                         f"twice (first at line {table[st.name].line})", line=st.line, rule=st.name)
            table[st.name] = st
        elif kind == "ignore":
            self.ignores.append(st)
        elif kind == "import":
            self.import_names(st)
        elif kind in ("override", "extend"):
            inner = st.inner
            assert inner is not None
            table = self.rules if inner.kind == "rule" else self.terms
            old = table.get(inner.name)
            if old is None:
                raise GrammarSyntaxError("lark", f"%{kind} of {inner.name!r}, which is not defined", line=st.line,
                                         rule=inner.name)
            if kind == "override":
                table[inner.name] = inner
            else:
                if old.params != inner.params:
                    raise GrammarSyntaxError("lark", f"%extend of {inner.name!r} with other template parameters",
                                             line=st.line, rule=inner.name)
                table[inner.name] = Statement(old.kind, old.line, name=old.name, params=old.params,
                                              body=("alt", (old.body, inner.body)))
        elif kind == "declare":
            names = ", ".join(n for n, _ in st.names)
            raise GrammarNotSupported("lark", f"%declare {names}", line=st.line,
                                      hint="a declared terminal comes from a postlexer (such as Python's indentation), "
                                           "which a grammar of text cannot enforce: define it as a terminal")
        elif kind == "llguidance":
            for key, value in st.options.items():
                if key in _NEUTRAL_OPTIONS and not isinstance(value, bool):
                    raise GrammarSyntaxError("lark", f"the %llguidance option {key!r} takes true or false, not {value!r}",
                                             line=st.line)
            unknown = sorted(set(st.options) - _NEUTRAL_OPTIONS)
            if unknown:
                raise GrammarNotSupported("lark", f"the %llguidance option {unknown[0]!r}", line=st.line,
                                          hint="drop it (only no_forcing is accepted: the others change the language)")
        else:  # pragma: no cover - the syntax reader makes no other kind
            raise AssertionError(kind)

    def import_names(self, st: Statement) -> None:
        library = ".".join(st.path)
        if library not in LIBRARIES:
            raise GrammarNotSupported("lark", f"%import {library}", line=st.line,
                                      hint=f"only {', '.join(sorted(LIBRARIES))} can be imported: paste the rules it "
                                           "provides into the grammar")
        defs = _library(library)
        for name, alias in st.names:
            if name not in defs:
                raise GrammarSyntaxError("lark", f"{library} has no terminal {name!r}", line=st.line)
            deps: list[str] = []
            todo = [name]
            while todo:  # (the terminals it uses, transitively)
                n = todo.pop()
                for d in _names_in(defs[n].body):
                    if d != name and d not in deps:
                        deps.append(d)
                        todo.append(d)
            mapping = {name: alias, **{d: f"{library.upper()}__{d}" for d in deps}}
            for n in [name, *deps]:
                new = mapping[n]
                if new in self.terms:
                    if self.imported.get(new) == (library, n):
                        continue  # (the same terminal, imported by an earlier %import)
                    raise GrammarSyntaxError("lark", f"terminal {new!r} is defined twice (%import of {library}.{n})",
                                             line=st.line)
                body = _renamed(defs[n].body, mapping)
                self.terms[new] = Statement("term", st.line, name=new, body=body)
                self.imported[new] = (library, n)

    # -- terminals -------------------------------------------------------------------------------

    def pattern_of(self, name: str, line: Optional[int]) -> _Pattern:
        got = self.patterns.get(name)
        if got is not None:
            return got
        st = self.terms.get(name)
        if st is None:
            raise self.error(f"terminal {name!r} is used but never defined", line)
        if name in self._pending:
            raise GrammarSyntaxError("lark", f"terminal {name!r} uses itself (terminals are regular: use a rule)",
                                     line=st.line, rule=name)
        self._pending.add(name)
        outer, self.rule = self.rule, name
        got = self.patterns[name] = self.tree_pattern(st.body)
        self.rule = outer
        self._pending.discard(name)
        return got

    def tree_pattern(self, tree: Any) -> _Pattern:
        """Lark's ``TerminalTreeToPattern``: a terminal's tree as one pattern."""
        kind = tree[0]
        if kind in ("str", "re") and "l" in tree[2]:
            raise self.refuse("the locale flag (l)", "drop it: Python refuses it on text patterns")
        if kind == "str":
            return _Pattern("str", tree[1], frozenset(tree[2]))
        if kind == "re":
            return _Pattern("re", tree[1], frozenset(tree[2]))
        if kind == "range":
            return _Pattern("re", "[\\U%08x-\\U%08x]" % (ord(tree[1]), ord(tree[2])))
        if kind == "name":
            if not is_terminal(tree[1]):
                raise self.error(f"rule {tree[1]!r} inside a terminal (terminals are regular: make this a rule)", tree[2])
            return self.pattern_of(tree[1], tree[2])
        if kind == "and" or kind == "not":
            pool = self.pool
            parts = [self.pattern_term(self.tree_pattern(t)) for t in (tree[1] if kind == "and" else (tree[1],))]
            e = pool.both(parts) if kind == "and" else pool.negate(parts[0])
            return _Pattern("term", f"#{e}", term=e)
        if kind == "seq":
            items = [self.tree_pattern(t) for t in tree[1]]
            if not items:
                return _Pattern("str", "")
            if len(items) == 1:
                return items[0]
            if any(p.kind == "term" for p in items):  # (joined as terms: look-behinds see their piece alone)
                e = self.pool.concat([self.pattern_term(p) for p in items])
                return _Pattern("term", f"#{e}", term=e)
            return _Pattern("re", "".join(p.to_regexp() for p in items))
        if kind == "alt":
            items = [self.tree_pattern(t) for t in tree[1]]
            if len(items) == 1:
                return items[0]
            if any(p.kind == "term" for p in items):
                e = self.pool.alt([self.pattern_term(p) for p in items])
                return _Pattern("term", f"#{e}", term=e)
            items.sort(key=lambda p: (-p.widths[1], -p.widths[0], -len(p.value)))  # (Lark: longest first)
            return _Pattern("re", "(?:%s)" % "|".join(p.to_regexp() for p in items))
        if kind == "rep":
            inner = self.tree_pattern(tree[1])
            lo, hi = tree[2], tree[3]
            if inner.kind == "term":
                e = self.pool.repeat(inner.term, lo, hi)
                return _Pattern("term", f"#{e}", term=e)
            op = {(0, 1): "?", (0, None): "*", (1, None): "+"}.get((lo, hi))
            if op is None:
                op = "{%d}" % lo if lo == hi else "{%d,}" % lo if hi is None else "{%d,%d}" % (lo, hi)
            return _Pattern("re", "(?:%s)%s" % (inner.to_regexp(), op), inner.flags)
        if kind == "template":
            raise self.error(f"template {tree[1]!r} inside a terminal (templates are rules)", tree[3])
        if kind == "json":
            raise self.error("%json inside a terminal (a JSON value is a rule)", tree[2])
        raise AssertionError(tree)

    def pattern_term(self, pattern: _Pattern, label: str = "") -> int:
        """The strings of a terminal's pattern, as a term (a lazy one: its shortest matches)."""
        pool = self.pool
        if pattern.kind == "term":
            return pattern.term
        if pattern.kind == "str" and not pattern.flags:
            return pool.literal(pattern.value.encode("utf-8"))
        label = label or self.rule or "?"
        source = pattern.to_regexp()
        try:
            e, lazy, greedy = python_regex(source, "", pool, max_states=self.max_states)
        except RegexSyntaxError as err:
            raise self.error(f"terminal {label}: {err}") from err
        except RegexNotSupported as err:
            raise self.refuse(f"{err.construct} in terminal {label}", "rewrite the terminal's regex without it") from err
        if lazy and greedy:
            raise self.refuse(f"terminal {label} mixing lazy and greedy repetitions ({source!r})",
                              "Lark reads it with Python's re.match, whose first match is neither the shortest nor the "
                              "longest: make every repetition lazy or every one greedy")
        if lazy:  # re.match stops at the shortest match: the strings with no proper prefix in the language
            e = pool.both((e, pool.negate(pool.seq(e, pool.repeat(pool.bytes_of(ALL_BYTES), 1, None)))))
        return e

    def leaf(self, pattern: _Pattern, label: str) -> Node:
        """The strings of a terminal: a term, or a rule of its own for one built with intersections
        or complements (a lazy one, llguidance's & and ~)."""
        got = self.leaves.get(pattern)
        if got is not None:
            return got
        e = self.pattern_term(pattern, label)
        if not self.pool.is_algebraic(e):
            got = term(e)
        else:
            name = f"<{label}>"
            while name in self.grammar.rules:
                name += "'"
            self.grammar.add_rule(name, term(e), line=None)
            self.grammar.opaque.add(name)
            got = ref(name, None)
        self.leaves[pattern] = got
        return got

    # -- rules -----------------------------------------------------------------------------------

    def run(self) -> Grammar:
        g = self.grammar
        ignored = []
        for st in self.ignores:
            self.rule = None
            body = st.body
            if body[0] == "name" and is_terminal(body[1]):
                ignored.append(self.leaf(self.pattern_of(body[1], st.line), body[1]))
            else:
                ignored.append(self.leaf(self.tree_pattern(body), "%ignore"))
        self.skip = rep(alt(*ignored), 0, None) if ignored else seq()
        g.prefix = self.skip
        start = self.rules.get(g.start)
        if start is None:
            raise GrammarSyntaxError("lark", f"no rule named {g.start!r} (the start rule)")
        self.convert(g.start)
        return g

    def convert(self, name: str) -> None:
        """Add rule ``name`` and every rule it uses to the grammar."""
        todo = [name]
        while todo:
            n = todo.pop()
            if n in self.converted:
                continue
            self.converted.add(n)
            st = self.rules[n]
            if st.params:
                raise GrammarSyntaxError("lark", f"template {n!r} used without arguments", line=st.line, rule=n)
            self.rule = n
            self._uses: list[str] = []
            body = self.node(st.body)
            self.grammar.add_rule(n, body, line=st.line)
            todo.extend(self._uses)
        self.rule = None

    def token(self, name: str, line: Optional[int]) -> Node:
        return seq(self.leaf(self.pattern_of(name, line), name), self.skip)

    def node(self, tree: Any) -> Node:
        kind = tree[0]
        if kind == "alt":
            return alt(*(self.node(t) for t in tree[1]))
        if kind == "seq":
            return seq(*(self.node(t) for t in tree[1]))
        if kind == "rep":
            return rep(self.node(tree[1]), tree[2], tree[3])
        if kind == "name":
            name, line = tree[1], tree[2]
            if is_terminal(name):
                return self.token(name, line)
            if name not in self.rules:
                raise self.error(f"rule {name!r} is used but never defined", line)
            self._uses.append(name)
            return ref(name, line)
        if kind in ("str", "re", "range"):
            return seq(self.leaf(self.tree_pattern(tree), _describe(tree)), self.skip)
        if kind == "template":
            return ref(self.instance(tree), tree[3])
        if kind == "and" or kind == "not":
            raise self.error("& and ~ combine terminals only (define a terminal: NAME: A & B)", tree[2])
        if kind == "json":
            self.grammar.schemas.append(tree[1])
            return seq(json_value(len(self.grammar.schemas) - 1, tree[2]), self.skip)
        raise AssertionError(tree)

    def instance(self, tree: Any) -> str:
        """The rule that template use ``tree`` stands for (made once per distinct arguments)."""
        _, name, args, line = tree
        key = (name, args)
        got = self.instances.get(key)
        if got is not None:
            self._uses.append(got)
            return got
        st = self.rules.get(name)
        if st is None:
            raise self.error(f"template {name!r} is used but never defined", line)
        if len(st.params) != len(args):
            raise self.error(f"template {name!r} takes {len(st.params)} arguments, given {len(args)}", line)
        if len(self.instances) >= MAX_TEMPLATE_INSTANCES:
            raise CompileBudgetExceeded("template instances", MAX_TEMPLATE_INSTANCES, name)
        if _nesting(tree) > MAX_TEMPLATE_NESTING:
            raise CompileBudgetExceeded("template uses nested in arguments", MAX_TEMPLATE_NESTING, name)
        got = f"{name}{{{', '.join(_describe(a) for a in args)}}}"
        while got in self.rules:
            got += "'"
        self.instances[key] = got
        self.rules[got] = Statement("rule", st.line, name=got, body=_renamed(st.body, dict(zip(st.params, args))))
        self._uses.append(got)
        return got
