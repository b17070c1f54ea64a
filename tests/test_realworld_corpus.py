"""The corpus loaders of benchmarks/realworld.py (issue 14): schemas from PyPI packages' data files."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import realworld_corpus as rc  # noqa: E402


def needs(module: str, pip_name: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(importlib.util.find_spec(module) is None,
                              reason=f"{pip_name} is not installed (it comes with the 'bench' extra)")


def assert_refs_resolve(case: rc.Case) -> None:
    for ref in rc.local_refs(case.schema):
        assert ref.startswith("#/"), (case.name, ref)
        rc.resolve_pointer(case.schema, ref)  # raises KeyError when it does not resolve


@needs("kubernetes_validate", "kubernetes-validate")
def test_kubernetes_bundles_only_reachable_definitions_and_every_ref_resolves() -> None:
    cases = rc.load_kubernetes()
    assert len(cases) >= 500
    assert all(isinstance(c.schema, dict) for c in cases)
    for c in rc.sample(cases, 60):
        assert_refs_resolve(c)
        assert "$id" not in c.schema
    deployment = next(c for c in cases if c.name == "deployment-apps-v1")
    assert_refs_resolve(deployment)
    defs = deployment.schema["$defs"]
    assert "io.k8s.api.core.v1.PodSpec" in defs
    assert "io.k8s.api.batch.v1.JobSpec" not in defs  # not reachable from a Deployment
    # nothing unused is bundled: every definition is the target of some $ref
    referenced = {r.split("/")[-1] for r in rc.local_refs(deployment.schema)}
    assert set(defs) == referenced


@needs("kubernetes_validate", "kubernetes-validate")
def test_kubernetes_bundle_all_flag() -> None:
    folder = rc.kubernetes_dir()
    definitions = rc._load(os.path.join(folder, "_definitions.json"))["$defs"]
    schema = rc._load(os.path.join(folder, "secret-v1.json"))
    small = rc.bundle_kubernetes(schema, definitions)
    full = rc.bundle_kubernetes(schema, definitions, bundle_all=True)
    assert len(small["$defs"]) < 10 < len(full["$defs"]) == len(definitions)
    assert_refs_resolve(rc.Case("secret-v1", "kubernetes", full))


@needs("cfnlint", "cfn-lint")
def test_cfn_resource_schemas_load_deduplicated() -> None:
    cases = rc.load_cfn()
    assert len(cases) >= 500
    assert all(isinstance(c.schema, dict) for c in cases)
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    assert "AWS::S3::Bucket" in names
    assert all("handlers" not in c.schema and c.schema["type"] == "object" for c in cases)
    for c in rc.sample(cases, 60):
        assert_refs_resolve(c)


@needs("check_jsonschema", "check-jsonschema")
def test_check_jsonschema_vendored_schemas_load() -> None:
    cases = rc.load_check_jsonschema()
    assert len(cases) >= 15
    assert all(isinstance(c.schema, dict) for c in cases)
    assert "github-workflows" in [c.name for c in cases]


def test_local_corpus_loads_with_instances() -> None:
    cases = rc.load_corpus()
    assert len(cases) >= 50
    assert all(isinstance(c.schema, dict) and c.instances for c in cases)


def test_sample_is_deterministic_and_bounded() -> None:
    cases = rc.load_corpus()
    a, b = rc.sample(cases, 10), rc.sample(list(reversed(cases)), 10)
    assert [c.name for c in a] == [c.name for c in b] and len(a) == 10
    assert len(rc.sample(cases, None)) == len(cases) == len(rc.sample(cases, 10_000))


def test_missing_package_is_a_clear_error() -> None:
    with pytest.raises(rc.SourceMissing, match="pip install no-such-package"):
        rc.package_dir("no_such_module_for_structgen_tests", "no-such-package")
