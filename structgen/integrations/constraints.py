"""A request's constraint, as serving engines pass it: string keys of a request's extra arguments
(vLLM's ``vllm_xargs`` / ``SamplingParams.extra_args``), parsed into a format value
(:mod:`structgen.formats`) and compiled through the door (:func:`structgen.compile`, whose cache
every request shares).

No torch here: the vLLM plugin (:mod:`.vllm`) and any other engine's adapter share it.

========================  ========================================================================
key                       value (a string; ``structgen_extract`` may also be a list of strings)
========================  ========================================================================
``structgen_json_schema`` a JSON Schema, as JSON text
``structgen_regex``       a regular expression (Python syntax, full match)
``structgen_grammar``     a Lark or GBNF grammar (its text), or the name of a ready-made constraint
                          in ``grammars/`` (``structgen grammars``: regexes, schemas, grammars)
``structgen_extract``     source text: string values (or, alone, the whole output) are verbatim spans
                          of it; with ``structgen_regex`` the span must also match the regex
``structgen_options``     a JSON object of options: the options of the constraint's format
                          (:func:`structgen.formats.option_names`: those of ``SchemaOptions`` for a
                          schema, ``max_states`` for a regex, ``min_length``, ``max_length`` and
                          ``max_states`` for spans, ``syntax``, ``start``, ``max_states`` and
                          ``max_terms`` for a grammar) and ``budget_aware`` (default ``true``)
========================  ========================================================================

At most one of ``structgen_json_schema``, ``structgen_regex``, ``structgen_grammar``. A request
with none of the keys is not constrained. Anything else is refused with a
:class:`ConstraintError` (a ``ValueError``: engines answer HTTP 400) whose message names the key.

Example:
    >>> c = parse_request({"structgen_regex": "[0-9]{4}", "structgen_options": '{"budget_aware": false}'})
    >>> c.format, c.budget_aware
    (Regex(pattern='[0-9]{4}', max_states=200000), False)
    >>> parse_request({"temperature_boost": 1}) is None
    True
    >>> parse_request({"structgen_regex": "a", "structgen_grammar": "date"})
    Traceback (most recent call last):
    structgen.errors.ConstraintError: give at most one of structgen_grammar, structgen_regex (got both)
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping

from ..compiler import compile, is_cached, warm_up
from ..errors import ConstraintError, PayloadTooLarge
from ..formats import Extract, Format, Grammar, JsonSchema, Regex
from ..guides.base import Guide
from ..named_grammars import named_format
from ..vocab.vocabulary import Vocabulary

__all__ = ["KEYS", "RequestConstraint", "byte_vocabulary", "check_request", "parse_request", "warm_up"]

PREFIX = "structgen_"
#: A ``structgen_grammar`` value that names a ready-made constraint (anything else is grammar text).
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
KEYS = ("structgen_json_schema", "structgen_regex", "structgen_grammar", "structgen_extract", "structgen_options")
#: The largest constraint accepted (schema, pattern and documents together), in bytes.
DEFAULT_MAX_CONSTRAINT_BYTES = 1 << 20


@dataclass(frozen=True, eq=False)
class RequestConstraint:
    """One request's constraint, parsed (:func:`parse_request`): its ``format`` (compiled by
    :meth:`compile`), whether the request is ``budget_aware``, and where it came from (``source``:
    a named grammar)."""

    format: Format
    budget_aware: bool = True
    source: str = ""

    @property
    def key(self) -> Hashable:
        """What identifies the compiled guide (``budget_aware`` is a per-request setting)."""
        return self.format.key()

    def describe(self) -> str:
        """A short name for messages and logs."""
        return self.source or self.format.describe()

    def compile(self, vocabulary: Vocabulary, *, warm: bool = False) -> Guide:
        """The guide over ``vocabulary``, through the door (:func:`structgen.compile`). Raises the
        constraint's :class:`ConstraintError`, :class:`CompileBudgetExceeded`."""
        return compile(self.format, vocabulary, warm=warm)


def _text(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConstraintError(f"{key} must be a string, not {type(value).__name__}")
    return value


def _options(raw: str | None) -> tuple[dict[str, Any], bool]:
    if raw is None:
        return {}, True
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ConstraintError(f"structgen_options is not valid JSON: {e}") from e
    if not isinstance(value, dict):
        raise ConstraintError(f"structgen_options must be a JSON object, not {type(value).__name__}")
    budget_aware = value.pop("budget_aware", True)
    if not isinstance(budget_aware, bool):
        raise ConstraintError(f"structgen_options: budget_aware must be true or false, not {budget_aware!r}")
    return value, budget_aware


def parse_request(extra_args: Mapping[str, Any] | None, *,
                  max_bytes: int = DEFAULT_MAX_CONSTRAINT_BYTES) -> RequestConstraint | None:
    """The constraint a request's extra arguments ask for, or ``None`` when they name none.

    Raises :class:`ConstraintError` for a malformed value, an unknown ``structgen_*`` key or
    option (``budget_aware`` and the options of the constraint's format), two constraints, or a
    grammar name that does not exist; :class:`PayloadTooLarge` when the constraint is over
    ``max_bytes``. The constraint itself is checked by compiling it (:func:`check_request`).
    """
    if not extra_args:
        return None
    ours = {k for k in extra_args if isinstance(k, str) and k.startswith(PREFIX)}
    if not ours:
        return None
    unknown = sorted(ours - set(KEYS))
    if unknown:
        raise ConstraintError(f"unknown key {unknown[0]!r} (structgen reads {', '.join(KEYS)})")
    schema = _text(extra_args, "structgen_json_schema")
    regex = _text(extra_args, "structgen_regex")
    grammar = _text(extra_args, "structgen_grammar")
    named = sorted(k for k, v in (("structgen_json_schema", schema), ("structgen_regex", regex),
                                  ("structgen_grammar", grammar)) if v is not None)
    if len(named) > 1:
        raise ConstraintError(f"give at most one of {', '.join(named)} (got {'both' if len(named) == 2 else 'all three'})")
    documents = _documents(extra_args.get("structgen_extract"))
    if not named and documents is None:
        raise ConstraintError(f"structgen_options alone constrains nothing: add one of {', '.join(KEYS[:4])}")
    source = ""
    schema_value: Any = schema
    grammar_text: str | None = None
    grammar_syntax: str | None = None  # (a named grammar's: its file's)
    if grammar is not None:
        if _NAME.fullmatch(grammar):  # a name: of a ready-made regex, schema or grammar
            ready = named_format(grammar)
            source = f"grammar {grammar!r}"
            if isinstance(ready, Regex):
                regex = ready.pattern
            elif isinstance(ready, JsonSchema):
                schema_value = ready.schema
            else:
                assert isinstance(ready, Grammar)
                grammar_text, grammar_syntax = ready.text, ready.syntax
        else:
            grammar_text = grammar
    if grammar_text is not None and documents is not None:
        raise ConstraintError("structgen_extract goes with structgen_json_schema or structgen_regex, not a grammar")
    size = sum(len(d.encode("utf-8", "surrogatepass")) for d in documents or ())
    size += len((schema if schema is not None else grammar_text if grammar_text is not None else regex or "")
                .encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise PayloadTooLarge(f"the structgen constraint is {size} bytes, over the limit of {max_bytes}")
    options, budget_aware = _options(_text(extra_args, "structgen_options"))
    try:
        fmt: Format
        if grammar_text is not None:
            if grammar_syntax is not None and "syntax" not in options:
                options = {**options, "syntax": grammar_syntax}
            fmt = Grammar.from_options(grammar_text, options)
        elif schema_value is not None:
            if isinstance(schema_value, str):
                try:
                    schema_value = json.loads(schema_value)
                except json.JSONDecodeError:
                    pass  # (the compile says what is wrong with it: SchemaError)
            fmt = JsonSchema.from_options(schema_value, options, extract_from=documents)
        elif documents is not None:
            fmt = Extract.from_options(documents, regex, options)
        else:
            assert regex is not None
            fmt = Regex.from_options(regex, options)
    except ConstraintError as e:
        raise ConstraintError(f"structgen_options: {e}") from e
    return RequestConstraint(fmt, budget_aware, source)


def _documents(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    docs = [value] if isinstance(value, str) else value
    if not isinstance(docs, list) or not docs or not all(isinstance(d, str) for d in docs):
        raise ConstraintError("structgen_extract must be a string or a non-empty list of strings")
    return tuple(docs)


_BYTE_VOCABULARY: list[Vocabulary] = []


def byte_vocabulary() -> Vocabulary:
    """The 256 single bytes and an EOS: compiling over it checks a constraint without a tokenizer
    (what an engine's front end can do before the request reaches the model's process)."""
    if not _BYTE_VOCABULARY:
        _BYTE_VOCABULARY.append(Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256]))
    return _BYTE_VOCABULARY[0]


def check_request(extra_args: Mapping[str, Any] | None, *, max_bytes: int = DEFAULT_MAX_CONSTRAINT_BYTES,
                  on_checked: Callable[[RequestConstraint, float], None] | None = None) -> RequestConstraint | None:
    """:func:`parse_request`, then compile the constraint over :func:`byte_vocabulary`: what an
    engine's front end can check without the tokenizer. The door's cache keeps what passed, so
    a repeated constraint costs a lookup; ``on_checked(constraint, seconds)`` is called after
    each compile that was not in the cache. Raises as :func:`parse_request` and
    :meth:`RequestConstraint.compile` do."""
    constraint = parse_request(extra_args, max_bytes=max_bytes)
    if constraint is None:
        return None
    vocab = byte_vocabulary()
    if is_cached(constraint.format, vocab):
        return constraint
    start = time.perf_counter()
    constraint.compile(vocab)
    if on_checked is not None:
        on_checked(constraint, time.perf_counter() - start)
    return constraint
