"""The structgen error tree. Every error says what is wrong and how to fix it.

```
StructgenError(Exception)
├── ConstraintError(StructgenError, ValueError)   the user's constraint is wrong or unsupported
│   ├── RegexSyntaxError                          not a regex (.pattern, .position)
│   ├── RegexNotSupported                         a construct we cannot enforce exactly (.construct, .position)
│   ├── SchemaError                               not a valid JSON Schema (.path, a JSON pointer)
│   ├── SchemaNotSupported                        a keyword we do not enforce exactly (.keyword, .path)
│   ├── GrammarSyntaxError                        not a grammar in its syntax (.syntax, .line, .column, .rule)
│   ├── GrammarNotSupported                       a grammar construct we cannot enforce exactly
│   │                                             (.construct, .syntax, .line, .rule)
│   └── UnsatisfiableConstraint                   nothing can match (minItems > maxItems, ...)
├── VocabularyError(StructgenError, ValueError)   a token's bytes cannot be recovered, no EOS, a guide
│                                                 built for another tokenizer than the model's
├── CompileBudgetExceeded(StructgenError)         states / recursion over the configured budget (.limit, .path)
├── PayloadTooLarge(StructgenError, ValueError)   a request over the server's size limits (answered with 413)
├── TokenRejected(StructgenError)                 a generated token the guide does not allow (.token_id, .state)
└── IncompleteGeneration(StructgenError)          generation stopped before the output was complete
                                                  (.text, .max_new_tokens)

AnnotationWarning(UserWarning)                    a keyword read as an annotation only (an unknown format)
└── UnknownKeywordWarning                         an unknown keyword one edit from one that constrains
                                                  ("propertes": did you mean "properties"?)
```

Outside the tree, only Python's own errors for a programmer's mistake: ``TypeError`` and
``ValueError`` for an argument of the wrong type or value, ``AssertionError`` for a broken
internal invariant (a bug).
"""

from __future__ import annotations

__all__ = [
    "AnnotationWarning",
    "CompileBudgetExceeded",
    "ConstraintError",
    "GrammarNotSupported",
    "GrammarSyntaxError",
    "IncompleteGeneration",
    "PayloadTooLarge",
    "RegexNotSupported",
    "RegexSyntaxError",
    "SchemaError",
    "SchemaNotSupported",
    "StructgenError",
    "TokenRejected",
    "UnknownKeywordWarning",
    "UnsatisfiableConstraint",
    "VocabularyError",
]


class StructgenError(Exception):
    """Base class of every error structgen raises."""


class ConstraintError(StructgenError, ValueError):
    """The constraint (regex, schema) is malformed, unsupported or unsatisfiable.

    ``region`` names the part of a composed constraint the error is in (a tool's schema:
    ``"tool 'get_weather'"``), ``None`` for a constraint given alone; the message starts with it.

    >>> err = SchemaError("'type' is not valid", "/type").in_region("tool 'add'")
    >>> err.region, err.path, str(err)
    ("tool 'add'", '/type', "tool 'add': invalid JSON Schema at /type: 'type' is not valid")
    """

    region: str | None = None

    def in_region(self, region: str) -> "ConstraintError":
        """This error, of the same class and with the same attributes, in ``region``."""
        err = type(self).__new__(type(self))
        err.__dict__.update(self.__dict__)
        err.args = self.args
        err.region = region
        return err

    def __str__(self) -> str:
        text = super().__str__()
        return f"{self.region}: {text}" if self.region else text


class RegexSyntaxError(ConstraintError):
    """The pattern is not a valid regular expression.

    >>> raise RegexSyntaxError("(ab", 0, "missing ), unterminated subpattern")
    Traceback (most recent call last):
    structgen.errors.RegexSyntaxError: invalid regex '(ab' at position 0: missing ), unterminated subpattern
    """

    def __init__(self, pattern: str, position: int | None, reason: str) -> None:
        self.pattern = pattern
        self.position = position
        self.reason = reason
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"invalid regex {pattern!r}{where}: {reason}")


class RegexNotSupported(ConstraintError):
    """The pattern uses a construct that no finite automaton can enforce exactly
    (back-references, possessive quantifiers, a look-behind inside a look-ahead, ...)."""

    def __init__(self, pattern: str, construct: str, position: int | None = None) -> None:
        self.pattern = pattern
        self.construct = construct
        self.position = position
        where = f" at position {position}" if position is not None else ""
        super().__init__(
            f"regex {pattern!r} uses {construct}{where}, which structgen cannot enforce exactly; "
            "rewrite the pattern without it"
        )


class SchemaError(ConstraintError):
    """The schema is not a valid JSON Schema (or not JSON at all)."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"invalid JSON Schema at {path or '/'}: {message}")


class SchemaNotSupported(ConstraintError):
    """The schema uses a keyword (or keyword value) that structgen does not enforce exactly.

    Raised at compile time so that invalid output can never slip through."""

    def __init__(self, keyword: str, path: str = "", detail: str = "") -> None:
        self.keyword = keyword
        self.path = path
        extra = f": {detail}" if detail else ""
        super().__init__(
            f"JSON Schema keyword {keyword!r} at {path or '/'} is not supported{extra}; "
            "structgen refuses rather than ignore a constraint"
        )


def _where(line: int | None, column: int | None, rule: str | None) -> str:
    parts = []
    if line is not None:
        parts.append(f"line {line}" + (f", column {column}" if column is not None else ""))
    if rule is not None:
        parts.append(f"rule {rule!r}")
    return f" at {' in '.join(parts)}" if parts else ""


class GrammarSyntaxError(ConstraintError):
    """The text is not a grammar in its syntax (``.syntax``: ``"gbnf"`` or ``"lark"``): a token
    out of place, a rule used but never defined, a rule defined twice. ``.line`` and ``.column``
    (1-based) say where, ``.rule`` in which rule (``None`` where unknown), ``.reason`` what.

    >>> raise GrammarSyntaxError("gbnf", "expected '::='", line=3, column=6, rule="value")
    Traceback (most recent call last):
    structgen.errors.GrammarSyntaxError: invalid gbnf grammar at line 3, column 6 in rule 'value': expected '::='
    """

    def __init__(self, syntax: str, reason: str, *, line: int | None = None, column: int | None = None,
                 rule: str | None = None) -> None:
        self.syntax = syntax
        self.reason = reason
        self.line = line
        self.column = column
        self.rule = rule
        super().__init__(f"invalid {syntax} grammar{_where(line, column, rule)}: {reason}")


class GrammarNotSupported(ConstraintError):
    """The grammar uses a construct that structgen does not enforce exactly (``.construct``), so
    it refuses the grammar rather than ignore it: Lark's ``%declare`` (terminals a postlexer
    makes), token references (``<[128000]>``, ``<|eot_id|>``), XGrammar's look-ahead assertions,
    a terminal mixing lazy and greedy repetitions, ... ``.syntax``, ``.line``, ``.rule`` as in
    :class:`GrammarSyntaxError`; ``.hint`` how to do without it.

    >>> raise GrammarNotSupported("lark", "%declare", line=2, hint="define the terminal instead")
    Traceback (most recent call last):
    structgen.errors.GrammarNotSupported: lark grammar uses %declare at line 2, which structgen cannot enforce exactly; define the terminal instead
    """

    def __init__(self, syntax: str, construct: str, *, line: int | None = None, rule: str | None = None,
                 hint: str = "rewrite the grammar without it") -> None:
        self.syntax = syntax
        self.construct = construct
        self.line = line
        self.column = None
        self.rule = rule
        self.hint = hint
        super().__init__(f"{syntax} grammar uses {construct}{_where(line, None, rule)}, which structgen cannot "
                         f"enforce exactly; {hint}")


class UnsatisfiableConstraint(ConstraintError):
    """No output can satisfy the constraint (e.g. ``minItems`` > ``maxItems``)."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        where = f" at {path}" if path else ""
        super().__init__(f"unsatisfiable constraint{where}: {message}")


class VocabularyError(StructgenError, ValueError):
    """The tokenizer cannot be turned into a byte-level vocabulary, or a guide does not fit the
    model it is used with (built over another tokenizer)."""


class CompileBudgetExceeded(StructgenError):
    """Compilation went over a configured budget (states, recursion depth)."""

    def __init__(self, what: str, limit: int, path: str = "") -> None:
        self.what = what
        self.limit = limit
        self.path = path
        where = f" at {path}" if path else ""
        super().__init__(
            f"compile budget exceeded{where}: {what} over the limit of {limit}; "
            "simplify the constraint or raise the budget"
        )


class PayloadTooLarge(StructgenError, ValueError):
    """A request the server refuses for its size (a schema, a pattern or documents over the
    configured limit); the HTTP API answers it with status 413."""


class TokenRejected(StructgenError):
    """A generated token that the guide does not allow in the state it was in (``.token_id``,
    ``.state``): something other than the guide's mask chose it (another logits processor, a
    generation option, an assistant model), or the guide was built for another tokenizer.

    >>> raise TokenRejected("token 7 is not allowed", token_id=7, state=3)
    Traceback (most recent call last):
    structgen.errors.TokenRejected: token 7 is not allowed
    """

    def __init__(self, message: str, *, token_id: int, state: int) -> None:
        self.token_id = token_id
        self.state = state
        super().__init__(message)


class IncompleteGeneration(StructgenError):
    """Generation stopped (``max_new_tokens``, a stopping criterion) before the output satisfied
    the constraint. ``.text`` is the cut-off output, ``.max_new_tokens`` the budget it ran into;
    ``constraint`` (a guide's description) names what it was generated under.

    >>> raise IncompleteGeneration("19", 2, 2, "regex '[0-9]{4}'")
    Traceback (most recent call last):
    structgen.errors.IncompleteGeneration: generation hit max_new_tokens=2 before the output was complete ...; raise max_new_tokens
    """

    def __init__(self, text: str, num_tokens: int, max_new_tokens: int, constraint: str | None = None) -> None:
        self.text = text
        self.max_new_tokens = max_new_tokens
        shown = text if len(text) <= 120 else text[:50] + " ... " + text[-50:]
        what = constraint or "the constraint"
        if num_tokens >= max_new_tokens:
            why = f"generation hit max_new_tokens={max_new_tokens} before the output was complete under {what}"
            fix = "raise max_new_tokens"
        else:
            why = f"generation stopped after {num_tokens} tokens before the output was complete under {what}"
            fix = "check the stopping criteria passed to generate"
        super().__init__(f"{why} (it stopped at {shown!r}); {fix}")


class AnnotationWarning(UserWarning):
    """A keyword that constrains nothing here: an unknown ``format`` is an annotation, as the
    specification reads it (pass ``formats={name: regex}`` to enforce it, or
    ``unknown_formats="error"`` to refuse it). ``.keyword``, ``.path`` (a JSON pointer), ``.value``."""

    def __init__(self, keyword: str, path: str, value: object) -> None:
        self.keyword = keyword
        self.path = path
        self.value = value
        super().__init__(
            f"{keyword} {value!r} at {path or '/'} is unknown: read as an annotation, the string is not "
            f"constrained by it (pass formats={{{value!r}: regex}} to enforce it)"
        )


class UnknownKeywordWarning(AnnotationWarning):
    """A schema keyword that no JSON Schema vocabulary defines, one edit away from a keyword that
    constrains: the specification reads it as an annotation, so it constrains nothing, and it is
    probably misspelt. ``.keyword`` (as written), ``.path`` (its JSON pointer), ``.value``,
    ``.suggestion`` (the keyword it is close to). ``unknown_keywords="error"`` refuses every
    unknown keyword instead.

    >>> print(UnknownKeywordWarning("propertes", "/propertes", {}, "properties"))
    unknown keyword 'propertes' at /propertes: did you mean 'properties'? It is read as an annotation and constrains nothing (pass unknown_keywords="error" to refuse unknown keywords)
    """

    def __init__(self, keyword: str, path: str, value: object, suggestion: str) -> None:
        UserWarning.__init__(
            self,
            f"unknown keyword {keyword!r} at {path or '/'}: did you mean {suggestion!r}? It is read as an "
            'annotation and constrains nothing (pass unknown_keywords="error" to refuse unknown keywords)',
        )
        self.keyword = keyword
        self.path = path
        self.value = value
        self.suggestion = suggestion
