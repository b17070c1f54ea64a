"""Recursive ``$ref`` targets inside the automata algebra (``allOf``, ``not``, overlapping
``oneOf``): the algebra needs one finite automaton, so a call of a recursive target is unrolled
(:meth:`structgen.json_schema.calls.CallGraph.flat`) to the same depth as compiling with calls off
drops recursion at, and a sub-schema already compiled with calls is flattened there, not compiled
again (:meth:`~structgen.json_schema.calls.CallGraph.flat_of_called`)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

import structgen
from structgen.json_schema import schema_to_dfa
from structgen.json_schema.calls import CallGraph

BYTES = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b""], eos_token_ids=[256])


def _text(instance: Any) -> bytes:
    return json.dumps(instance, separators=(",", ":")).encode()


def test_a_recursive_call_in_the_algebra_is_unrolled_as_deep_as_without_calls() -> None:
    """``node ∩ not(v = 0)``: the intersection reads ``node``'s call unrolled by substitution. The
    guide (with calls) keeps exactly as many levels as the automaton compiled without calls (the
    root's copy of ``node`` aside), never accepts an invalid instance, and ``max_recursion_depth``
    moves both alike."""
    node = {"type": "object", "properties": {"v": {"type": "integer"}, "k": {"$ref": "#/$defs/node"}},
            "additionalProperties": False}
    schema = {"$defs": {"node": node},
              "allOf": [{"$ref": "#/$defs/node"}, {"not": {"properties": {"v": {"const": 0}}, "required": ["v"]}}]}
    validator = jsonschema.Draft202012Validator(schema)

    def nested(depth: int, v: int) -> dict:
        x: dict = {"v": v}
        for _ in range(depth):
            x = {"v": v, "k": x}
        return x

    for max_depth in (1, 3):
        guide = structgen.compile_json_schema(schema, BYTES, max_recursion_depth=max_depth)
        dfa = schema_to_dfa(schema, max_recursion_depth=max_depth)
        for depth in range(max_depth + 4):
            for v in (0, 1):
                instance = nested(depth, v)
                assert not guide.accepts_bytes(_text(instance)) or validator.is_valid(instance), (max_depth, instance)
        # (the root is node's own copy, compiled before the recursion is a call: one level more)
        assert [d for d in range(max_depth + 4) if guide.accepts_bytes(_text(nested(d, 1)))] == list(range(max_depth + 2))
        assert [d for d in range(max_depth + 4) if dfa.accepts(_text(nested(d, 1)))] == list(range(max_depth + 1))


STEP = {"type": "object", "additionalProperties": False,
        "properties": {"run": {"type": "string"}, "when": {"type": "array", "items": {"$ref": "#/$defs/step"}}}}
ORB = {"oneOf": [  # (two string branches that overlap: exclusive, so the algebra runs while orb compiles)
    {"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"},
    {"type": "object", "additionalProperties": False,
     "properties": {"steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
                    "orbs": {"type": "object", "additionalProperties": {"$ref": "#/$defs/orb"}}}},
]}
ORBS = {"$defs": {"step": STEP, "orb": ORB}, "type": "object",
        "properties": {"orbs": {"type": "object", "additionalProperties": {"$ref": "#/$defs/orb"}}}}


def _steps(depth: int) -> list:
    x: dict = {"run": "x"}
    for _ in range(depth):
        x = {"when": [x, {"run": "y"}]}
    return [x]


def test_a_target_in_its_own_algebra_flattens_what_was_compiled_with_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """``orb``'s overlapping ``oneOf`` needs the flat twin of its object branch while ``orb`` is
    still being compiled (its term is not known yet): that twin is compiled with calls off, and
    the ``steps`` array inside it, compiled with calls already (a call of the recursive ``step``),
    is flattened instead of compiled again. The guide agrees with ``jsonschema`` on instances
    within the depth, and never accepts an invalid one (CircleCI's orbs and steps)."""
    flattened: list[bool] = []
    original = CallGraph.flat_of_called

    def spy(self: CallGraph, term: int) -> Any:
        got = original(self, term)
        flattened.append(got is not None)
        return got

    monkeypatch.setattr(CallGraph, "flat_of_called", spy)
    guide = structgen.compile_json_schema(ORBS, BYTES)
    assert any(flattened), flattened  # (and the sub-schemas that lead back to orb were compiled: their term is not known)
    assert not all(flattened), flattened
    validator = jsonschema.Draft202012Validator(ORBS)
    shallow = [{}, {"orbs": {"a": "ab"}}, {"orbs": {"a": "axb"}}, {"orbs": {"a": "ax"}}, {"orbs": {"a": {}}},
               {"orbs": {"o": {"steps": _steps(0)}}}, {"orbs": {"o": {"steps": _steps(1)}}},
               {"orbs": {"o": {"orbs": {"p": {"steps": _steps(0)}}}}}, {"orbs": {"o": {"orbs": {"p": "zb", "q": "ab"}}}},
               {"orbs": {"o": {"orbs": {"p": "ab"}}}}, {"orbs": {"o": {"steps": _steps(1), "x": 1}}}, {"orbs": {"o": {"steps": [1]}}}]
    for instance in shallow:
        assert guide.accepts_bytes(_text(instance)) == validator.is_valid(instance), instance
    for depth in range(5):
        for instance in ({"orbs": {"o": {"orbs": {"p": {"orbs": {"q": "ab", "r": {"steps": _steps(depth)}}}}}}},
                         {"orbs": {"o": {"orbs": {"p": {"orbs": {"q": "zb", "r": {"steps": _steps(depth), "x": 1}}}}}}}):
            assert not guide.accepts_bytes(_text(instance)) or validator.is_valid(instance), instance
