"""vLLM's constraint fields on ``/v1/chat/completions`` and ``/v1/completions``, as format values.

Clients written for vLLM's server send their constraint in the body (``extra_body``), in one of
two spellings:

- ``structured_outputs``: ``{"json": schema}``, ``{"regex": pattern}``, ``{"choice": [...]}``,
  ``{"grammar": text}``, ``{"json_object": true}``, with the JSON options
  ``whitespace_pattern`` and ``disable_any_whitespace`` (and ``disable_additional_properties``,
  which structgen always honours: it never writes an undeclared key);
- the older ``guided_json``, ``guided_regex``, ``guided_choice``, ``guided_grammar`` and
  ``guided_whitespace_pattern``.

:func:`requested_answer` maps them, and ``response_format``, onto the formats of
:mod:`structgen.formats` (``JsonSchema``, ``Regex``, a ``Choice`` of ``Literal`` strings, a
``Grammar`` whose syntax is detected as vLLM does: GBNF when a line holds ``::=``, else Lark;
:func:`~structgen.server.grammar_formats.grammar_format`), which go through the door like any
other; a constraint that fails to compile is a 400 naming its field (``guided_grammar``,
``response_format.grammar``). A request names one constraint: two at once (two keys of
``structured_outputs``, a ``guided_*`` field beside it, or either beside a ``response_format``
that constrains) is a 400 that names both. ``structural_tag`` is refused with a named 400.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Union

from ..errors import ConstraintError
from ..formats import Choice, Format, JsonSchema, Literal, Regex
from .grammar_formats import grammar_format
from .protocol import GrammarFormat, HTTPProblem, JsonObjectFormat, JsonSchemaFormat, TextFormat
from .response_format import ANY_OBJECT_SCHEMA, Answer

__all__ = ["requested_answer"]


def _schema(value: Any, field: str) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise HTTPProblem(400, f"{field}: not valid JSON ({e})", param=field) from e
    if not isinstance(value, (dict, bool)):
        raise HTTPProblem(400, f"{field}: a JSON Schema is an object or a boolean, not {type(value).__name__}",
                          param=field)
    return value


def _choice(value: list[str], field: str) -> Format:
    if not value:
        raise HTTPProblem(400, f"{field}: give at least one string to choose from", param=field)
    return Choice(*(Literal(v) for v in dict.fromkeys(value)))


def _structural_tag(_: Any, field: str) -> Format:
    raise HTTPProblem(400, f"{field}: structural tags are not supported by this server; send tools with "
                           "tool_choice (enforced calls) or a JSON Schema", param=field, code="unsupported_parameter")


def _grammar(value: Any, field: str) -> Format:
    return grammar_format(value, field=field)


#: (field, kind, read): kind "json" takes the whitespace options
_Found = tuple[str, str, Callable[[], Union[Format, Any]]]


def requested_answer(req: Any) -> tuple[str, Answer]:
    """The one constraint of a chat or completions request and the field that gave it
    (``None``: free text): its ``response_format``, or what its vLLM fields ask for, as a
    format. 400s name the fields."""
    found: list[_Found] = []
    fmt = req.response_format
    if fmt is not None and not isinstance(fmt, TextFormat):
        field = "response_format.grammar" if isinstance(fmt, GrammarFormat) else "response_format"
        found.append((field, "response_format", lambda: fmt))
    so = req.structured_outputs
    if so is not None:
        sources = (("json", so.json_, "json", _schema), ("regex", so.regex, "regex", None),
                   ("choice", so.choice, "choice", _choice), ("grammar", so.grammar, "grammar", _grammar),
                   ("json_object", so.json_object or None, "json", None),
                   ("structural_tag", so.structural_tag, "tag", _structural_tag))
        before = len(found)
        for key, value, kind, read in sources:
            if value is not None:
                found.append(_entry(f"structured_outputs.{key}", kind, value, read))
        if len(found) == before:
            raise HTTPProblem(400, "structured_outputs: give one constraint: json, regex, choice, grammar or "
                                   "json_object", param="structured_outputs")
    for key, kind, read in (("guided_json", "json", _schema), ("guided_regex", "regex", None),
                            ("guided_choice", "choice", _choice), ("guided_grammar", "grammar", _grammar)):
        value = getattr(req, key)
        if value is not None:
            found.append(_entry(key, kind, value, read))
    if len(found) > 1:
        names = " and ".join(f for f, _, _ in found[:2])
        raise HTTPProblem(400, f"{names} are two constraints; a request takes one", param=found[1][0])
    whitespace, ws_field = _whitespace(req)
    if not found:
        return "response_format", None
    field, kind, make = found[0]
    return field, _with_whitespace(make(), kind, whitespace, ws_field)


def _with_whitespace(answer: Answer, kind: str, whitespace: str | None, ws_field: str) -> Answer:
    if whitespace is None:
        return answer
    if kind == "response_format":  # (a JSON response_format with vLLM's whitespace option)
        if not isinstance(answer, (JsonSchemaFormat, JsonObjectFormat)):
            return answer
        schema = answer.json_schema.schema_ if isinstance(answer, JsonSchemaFormat) else answer.schema_
        answer = JsonSchema(ANY_OBJECT_SCHEMA if schema is None else schema, extract_from=answer.extract_from)
    if not isinstance(answer, JsonSchema):
        return answer
    try:
        return JsonSchema(answer.schema, answer.options, extract_from=answer.extract_from, whitespace=whitespace)
    except (ConstraintError, ValueError, TypeError) as e:
        raise HTTPProblem(400, f"{ws_field}: {e}", param=ws_field) from e


def _entry(field: str, kind: str, value: Any, read: Callable[[Any, str], Any] | None) -> _Found:
    def make() -> Any:
        if kind == "json":
            schema = ANY_OBJECT_SCHEMA if value is True and field.endswith("json_object") else value
            return JsonSchema(schema if read is None else read(schema, field))
        if kind == "regex":
            return Regex(value)
        assert read is not None
        return read(value, field)

    return field, kind, make


def _whitespace(req: Any) -> tuple[str | None, str]:
    """vLLM's JSON whitespace option, if any: ``""`` for ``disable_any_whitespace``."""
    so = req.structured_outputs
    given: list[tuple[str, str]] = []
    if so is not None and so.whitespace_pattern is not None:
        given.append(("structured_outputs.whitespace_pattern", so.whitespace_pattern))
    if so is not None and so.disable_any_whitespace:
        given.append(("structured_outputs.disable_any_whitespace", ""))
    if req.guided_whitespace_pattern is not None:
        given.append(("guided_whitespace_pattern", req.guided_whitespace_pattern))
    if len(given) > 1 and len({w for _, w in given}) > 1:
        names = " and ".join(f for f, _ in given[:2])
        raise HTTPProblem(400, f"{names} ask for different whitespace; send one", param=given[1][0])
    return (given[0][1], given[0][0]) if given else (None, "")
