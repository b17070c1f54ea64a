"""The walk of a schema's sub-schemas (:func:`structgen.json_schema.ops.walk`, native), against a
walk written here as the specification: every dict under the keywords that hold schemas, depth
first, a schema before its sub-schemas, the keywords in the order of ``SCHEMA_VALUED``,
``SCHEMA_MAPS``, ``SCHEMA_LISTS``, a map's and a list's schemas in their order."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.json_schema.ops import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUED, walk

_ORDER = [*SCHEMA_VALUED, *SCHEMA_MAPS, *SCHEMA_LISTS]


def _reference(schema: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    if not isinstance(schema, dict):
        return
    yield schema, at
    for key in sorted((k for k in schema if k in _ORDER), key=_ORDER.index):
        value = schema[key]
        if key in SCHEMA_MAPS:
            if isinstance(value, dict):
                for name, v in value.items():
                    yield from _reference(v, at + (key, name))
        elif key in SCHEMA_LISTS:
            if isinstance(value, list):
                for i, v in enumerate(value):
                    yield from _reference(v, at + (key, i))
        else:
            yield from _reference(value, at + (key,))


_KEYS = st.sampled_from([*_ORDER, "type", "enum", "const", "title", "x-items"])
_LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.lists(st.integers(), max_size=2)
_SCHEMAS = st.recursive(
    st.dictionaries(_KEYS, _LEAF, max_size=3),
    lambda inner: (
        st.dictionaries(_KEYS, inner | st.lists(inner | _LEAF, max_size=3) | st.dictionaries(st.text(max_size=2), inner | _LEAF, max_size=3), max_size=5)
        | st.lists(inner, max_size=2)
    ),
    max_leaves=25,
)


@settings(max_examples=500, deadline=None)
@given(_SCHEMAS, st.sampled_from([(), ("$defs", "a"), ("items", 0)]))
def test_the_walk_is_the_reference_walk(schema: Any, tokens: tuple[Any, ...]) -> None:
    got = [(id(s), at) for s, at in walk(schema, tokens)]
    assert got == [(id(s), at) for s, at in _reference(schema, tokens)]


def test_the_walk_reads_dict_subclasses_by_their_own_order() -> None:
    props: OrderedDict[str, Any] = OrderedDict(a={"type": "string"}, b={"type": "integer"})
    props.move_to_end("a")  # (its order is no longer the order of its storage)
    schema = OrderedDict(properties=props, items={"not": {}})
    assert [at for _, at in walk(schema)] == [(), ("items",), ("items", "not"), ("properties", "b"), ("properties", "a")]


def test_a_map_whose_items_are_not_pairs_is_a_type_error() -> None:
    class Odd(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            return [("a",)]

    with pytest.raises((TypeError, ValueError)):
        list(walk({"properties": Odd(a={})}))
