"""The structgen error tree. Every error says what is wrong and how to fix it.

```
StructgenError(Exception)
├── ConstraintError(StructgenError, ValueError)   the user's constraint is wrong or unsupported
│   ├── RegexSyntaxError                          not a regex (.pattern, .position)
│   ├── RegexNotSupported                         a construct we cannot enforce exactly (.construct, .position)
│   ├── SchemaError                               not a valid JSON Schema (.path, a JSON pointer)
│   ├── SchemaNotSupported                        a keyword we do not enforce exactly (.keyword, .path)
│   └── UnsatisfiableConstraint                   nothing can match (minItems > maxItems, ...)
├── VocabularyError(StructgenError, ValueError)   a token's bytes cannot be recovered, no EOS
└── CompileBudgetExceeded(StructgenError)         states / recursion over the configured budget (.limit, .path)

AnnotationWarning(UserWarning)                    a keyword read as an annotation only (an unknown format)
```
"""

from __future__ import annotations

__all__ = [
    "AnnotationWarning",
    "CompileBudgetExceeded",
    "ConstraintError",
    "RegexNotSupported",
    "RegexSyntaxError",
    "SchemaError",
    "SchemaNotSupported",
    "StructgenError",
    "UnsatisfiableConstraint",
    "VocabularyError",
]


class StructgenError(Exception):
    """Base class of every error structgen raises."""


class ConstraintError(StructgenError, ValueError):
    """The constraint (regex, schema) is malformed, unsupported or unsatisfiable."""


class RegexSyntaxError(ConstraintError):
    """The pattern is not a valid regular expression.

    >>> raise RegexSyntaxError("a{", 2, "missing }")
    Traceback (most recent call last):
    structgen.errors.RegexSyntaxError: invalid regex 'a{' at position 2: missing }
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


class UnsatisfiableConstraint(ConstraintError):
    """No output can satisfy the constraint (e.g. ``minItems`` > ``maxItems``)."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        where = f" at {path}" if path else ""
        super().__init__(f"unsatisfiable constraint{where}: {message}")


class VocabularyError(StructgenError, ValueError):
    """The tokenizer cannot be turned into a byte-level vocabulary."""


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
