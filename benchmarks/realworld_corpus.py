"""Real-world JSON Schemas for the benchmark of issue 14, loaded from packages on PyPI (nothing copied here).

Sources (``SOURCES``), each a function returning ``[Case]`` sorted by name:

- ``kubernetes``: every resource schema of the newest ``kubernetes-json-schema/<v>-local-strict/`` folder
  of ``kubernetes-validate``. Their ``$ref``s point into ``_definitions.json`` of the same folder; a case
  bundles them as local ``$defs`` (refs rewritten to ``#/$defs/...``), only the definitions transitively
  reachable from the schema unless ``bundle_all=True``. ``all.json`` (a ``oneOf`` over every definition,
  not a resource) is left out.
- ``cfn``: the CloudFormation resource provider schemas of ``cfn-lint`` (``cfnlint/data/schemas/resources/``,
  walked recursively: older releases keep one folder per region; deduplicated by file name). Named by
  their ``typeName``. The top-level ``handlers`` (permissions and list-handler schemas, not a JSON Schema
  keyword, whose ``$ref``s point into a ``resource-schema.json`` that does not exist) is dropped, and
  ``"type": "object"`` is added where the root has no ``type``: these schemas describe a resource's
  ``Properties``, always an object, but say so only through ``properties`` (without it ``[]`` and ``-161``
  validate, and instances say nothing about the resource).
- ``check-jsonschema``: the vendored schemas of ``check-jsonschema`` (``builtin_schemas/vendor/*.json``).
- ``corpus``: ``benchmarks/corpus/`` (54 hand-written schemas), with their valid instances.

``sample(cases, n)`` takes a deterministic sample by a hash of the case name.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))


class SourceMissing(RuntimeError):
    """The package a source reads its schemas from is not installed."""


@dataclass
class Case:
    name: str
    source: str
    schema: dict[str, Any]
    instances: list[Any] = field(default_factory=list)  # known-valid instances (corpus only)


def package_dir(module: str, pip_name: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SourceMissing(f"{pip_name} is not installed (pip install {pip_name}, or the 'bench' extra)")
    return list(spec.submodule_search_locations)[0]


def _load(path: str) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


# ------------------------------------------------------------------ kubernetes


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", name.split("-")[0]))


def kubernetes_dir() -> str:
    root = os.path.join(package_dir("kubernetes_validate", "kubernetes-validate"), "kubernetes-json-schema")
    folders = [d for d in os.listdir(root) if d.endswith("-local-strict") and re.match(r"v\d", d)]
    if not folders:
        raise SourceMissing(f"no <v>-local-strict folder in {root}")
    return os.path.join(root, max(folders, key=_version_key))


_K8S_REF = re.compile(r"^(?:[^#]*_definitions\.json)?#/(?:\$defs|definitions)/(.+)$")


def _rewrite_refs(node: Any, found: set[str]) -> Any:
    """A copy of ``node`` with every ``_definitions.json`` / local ref as ``#/$defs/<name>``; names into ``found``."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                m = _K8S_REF.match(v)
                if m is None:
                    raise ValueError(f"unexpected $ref {v!r}")
                found.add(m.group(1))
                out[k] = "#/$defs/" + m.group(1)
            else:
                out[k] = _rewrite_refs(v, found)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, found) for v in node]
    return node


def bundle_kubernetes(schema: dict[str, Any], definitions: dict[str, Any], *, bundle_all: bool = False) -> dict[str, Any]:
    """``schema`` with its ``_definitions.json`` refs bundled as local ``$defs``.

    Only the definitions transitively reachable from ``schema`` are included, unless ``bundle_all``.
    ``$id`` is dropped so every ``#/$defs/...`` resolves against the bundled document itself.
    """
    refs: set[str] = set()
    out = _rewrite_refs({k: v for k, v in schema.items() if k != "$id"}, refs)
    names = set(definitions) if bundle_all else set()
    todo = list(refs)
    defs: dict[str, Any] = {}
    seen = set(refs)
    while todo:
        name = todo.pop()
        found: set[str] = set()
        defs[name] = _rewrite_refs(definitions[name], found)
        for n in found - seen:
            seen.add(n)
            todo.append(n)
    for name in names - set(defs):
        defs[name] = _rewrite_refs(definitions[name], set())
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out


def load_kubernetes(*, bundle_all: bool = False) -> list[Case]:
    folder = kubernetes_dir()
    definitions = _load(os.path.join(folder, "_definitions.json"))
    definitions = definitions.get("$defs", definitions.get("definitions", {}))
    cases = []
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".json") or f in ("_definitions.json", "all.json"):
            continue
        schema = bundle_kubernetes(_load(os.path.join(folder, f)), definitions, bundle_all=bundle_all)
        cases.append(Case(f[:-5], "kubernetes", schema))
    return cases


# ------------------------------------------------------------------ cloudformation


def load_cfn() -> list[Case]:
    root = os.path.join(package_dir("cfnlint", "cfn-lint"), "data", "schemas", "resources")
    by_file: dict[str, str] = {}
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f.endswith(".json"):
                by_file.setdefault(f, os.path.join(dirpath, f))
    cases = []
    names: set[str] = set()
    for f, path in sorted(by_file.items()):
        schema = _load(path)
        if not isinstance(schema, dict):
            continue
        schema.pop("handlers", None)
        schema.setdefault("type", "object")
        name = str(schema.get("typeName") or f[:-5])
        if name in names:  # same resource type under two file names: keep the first
            continue
        names.add(name)
        cases.append(Case(name, "cfn", schema))
    return sorted(cases, key=lambda c: c.name)


# ------------------------------------------------------------------ check-jsonschema


def load_check_jsonschema() -> list[Case]:
    root = os.path.join(package_dir("check_jsonschema", "check-jsonschema"), "builtin_schemas", "vendor")
    cases = []
    for f in sorted(os.listdir(root)):
        path = os.path.join(root, f)
        if f.endswith(".json") and os.path.isfile(path):
            schema = _load(path)
            if isinstance(schema, dict):
                cases.append(Case(f[:-5], "check-jsonschema", schema))
    return cases


# ------------------------------------------------------------------ benchmarks/corpus


def load_corpus(folder: str = os.path.join(HERE, "corpus")) -> list[Case]:
    cases = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".json"):
            case = _load(os.path.join(folder, f))
            cases.append(Case(f[:-5], "corpus", case["schema"], list(case.get("valid", []))))
    return cases


SOURCES: dict[str, Callable[..., list[Case]]] = {
    "kubernetes": load_kubernetes,
    "cfn": load_cfn,
    "check-jsonschema": load_check_jsonschema,
    "corpus": load_corpus,
}


def sample(cases: list[Case], n: int | None) -> list[Case]:
    """A deterministic sample of ``n`` cases (all when ``n`` is None or ≥ len): the ``n`` smallest hashes of the names."""
    if n is None or n >= len(cases):
        return list(cases)
    chosen = sorted(cases, key=lambda c: hashlib.sha256(c.name.encode()).hexdigest())[:n]
    return sorted(chosen, key=lambda c: c.name)


def local_refs(node: Any) -> list[str]:
    """Every ``$ref`` string in ``node``."""
    out: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.append(v)
            else:
                out.extend(local_refs(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(local_refs(v))
    return out


def resolve_pointer(root: Any, ref: str) -> Any:
    """The node ``ref`` (``#/a/b``) points to in ``root``; KeyError/IndexError when it does not resolve."""
    if not ref.startswith("#"):
        raise KeyError(ref)
    node = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def deepcopy_case(case: Case) -> Case:
    return Case(case.name, case.source, copy.deepcopy(case.schema), list(case.instances))
