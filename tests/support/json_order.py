"""Helpers shared by the JSON tests."""

from __future__ import annotations

from typing import Any


def in_schema_order(value: Any, schema: Any) -> Any:
    """Reorder object keys the way the guide emits them: declared properties in schema order."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties", {})
        keys = [k for k in props if k in value] + [k for k in value if k not in props]
        return {k: in_schema_order(value[k], props.get(k, schema.get("additionalProperties"))) for k in keys}
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        return [in_schema_order(v, prefix[i] if i < len(prefix) else schema.get("items")) for i, v in enumerate(value)]
    return value
