"""Keywords no vocabulary defines: JSON Schema reads them as annotations (they constrain
nothing), so a misspelt keyword (``"propertes"``) silently stops constraining. This module finds
them; :func:`.loading.warn_annotations` warns about those one edit away from a keyword that
constrains (:class:`~structgen.errors.UnknownKeywordWarning`, "did you mean"), or refuses every
unknown keyword under ``unknown_keywords="error"``.

"One edit": one character inserted, deleted, replaced, or two neighbours swapped, ignoring case;
and the value must be of the kind the keyword takes (``"note": "..."`` is not a misspelt
``not``, whose value is a schema).

>>> [(path, key, near) for path, key, _, near in unknown_keywords({"type": "object", "propertes": {"a": {}}})]
[('/propertes', 'propertes', 'properties')]
>>> near_keyword("requried", ["a"]), near_keyword("note", "a comment"), near_keyword("x-vendor", 1)
('required', None, None)
"""

from __future__ import annotations

from typing import Any, Optional

from .ops import CONSTRAINT_KEYWORDS, Schema, pointer, walk

__all__ = ["KNOWN_KEYWORDS", "near_keyword", "unknown_keywords"]

#: Every keyword of a JSON Schema vocabulary (draft 2020-12 and older drafts, which are rewritten
#: into 2020-12 first), structgen's ``x-extract``, and OpenAPI's annotations (pydantic writes
#: ``discriminator``): never "unknown".
KNOWN_KEYWORDS = CONSTRAINT_KEYWORDS | frozenset({
    # core
    "$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    # meta-data, content and format annotations
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    "contentEncoding", "contentMediaType", "contentSchema",
    # older drafts
    "id", "definitions", "dependencies", "additionalItems", "$recursiveRef", "$recursiveAnchor",
    "divisibleBy", "extends", "disallow", "optional",
    # OpenAPI annotations
    "discriminator", "example", "externalDocs", "xml",
})

_SCHEMA = (dict, bool)
_NUMBER = (int, float)
#: The kinds of value each keyword that constrains takes (a misspelling has the same kind).
_VALUE_KINDS: dict[str, tuple[type, ...]] = {
    **{k: _SCHEMA for k in ("items", "additionalProperties", "not", "if", "then", "else", "contains",
                            "propertyNames", "unevaluatedItems", "unevaluatedProperties")},
    **{k: (dict,) for k in ("properties", "patternProperties", "dependentSchemas", "dependentRequired")},
    **{k: (list,) for k in ("prefixItems", "allOf", "anyOf", "oneOf", "required", "enum")},
    **{k: _NUMBER for k in ("multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
                            "maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains",
                            "maxProperties", "minProperties")},
    **{k: (str,) for k in ("pattern", "format", "$ref", "$dynamicRef")},
    "type": (str, list),
    "uniqueItems": (bool,),
    "x-extract": (bool,),
    "const": (object,),
}


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def near_keyword(name: str, value: Any) -> Optional[str]:
    """The keyword that constrains which ``name`` (not a keyword) is one edit away from, with a
    value of its kind; None when there is none."""
    key = (name, type(value))  # (the answer depends on the value's type only)
    try:
        return _NEAR[key]  # (one lookup: another thread may clear the memo between two)
    except KeyError:
        pass
    got = _near_keyword(name.lower(), value)
    if len(_NEAR) >= 4096:
        _NEAR.clear()
    _NEAR[key] = got
    return got


def _near_keyword(low: str, value: Any) -> Optional[str]:
    for keyword, low_keyword, kinds in _BY_NAME:
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds and object not in kinds):
            continue  # (True is an int to Python, not a number to JSON)
        if low == low_keyword or _one_edit(low, low_keyword):
            return keyword
    return None


#: The keywords that constrain, sorted, with their lower-case names and the kinds of their values.
_BY_NAME = tuple((k, k.lower(), _VALUE_KINDS.get(k, (object,))) for k in sorted(CONSTRAINT_KEYWORDS))
#: :func:`near_keyword`'s answers by (name, type of the value): schemas repeat their extra keys.
_NEAR: dict[tuple[str, type], Optional[str]] = {}


def unknown_keywords(schema: Schema) -> list[tuple[str, str, Any, Optional[str]]]:
    """``(JSON pointer, keyword, value, the keyword it is one edit from or None)`` of every
    keyword of a (2020-12) schema that no vocabulary defines, in document order."""
    out = []
    for sub, tokens in walk(schema):
        for key, value in sub.items():
            if key not in KNOWN_KEYWORDS:
                out.append((pointer(tokens + (key,)), key, value, near_keyword(key, value)))
    return out
