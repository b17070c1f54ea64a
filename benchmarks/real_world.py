"""Real-world schemas through the compiler: how many compile, and the refusals by reason.

Run: python benchmarks/real_world.py [--every N] [--timeout S] [--details]
The corpus is what the installed packages ship: Kubernetes (``kubernetes_validate``, v1.29
local-strict: each schema bundled with its ``_definitions.json`` as an embedded resource),
CloudFormation resource schemas (``cfnlint``) and the vendored schemas of ``check_jsonschema``
(draft-07 and 2020-12). ``--every N`` takes every N-th file of the Kubernetes and CloudFormation
folders (sorted by name). Each schema is compiled to a byte automaton (``schema_to_dfa``) with a
time limit; the table counts outcomes: compiled, or the error class with the keyword refused.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _site(package: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None, package
    return os.path.dirname(spec.origin)


def corpus(every: int) -> Iterator[tuple[str, str, Any]]:
    k8s = os.path.join(_site("kubernetes_validate"), "kubernetes-json-schema", "v1.29.0-local-strict")
    defs = json.load(open(os.path.join(k8s, "_definitions.json")))
    for path in sorted(glob.glob(os.path.join(k8s, "*.json")))[::every]:
        name = os.path.basename(path)
        if name in ("_definitions.json", "all.json"):
            continue
        schema = json.load(open(path))
        if isinstance(schema, dict):  # ("/api/_definitions.json" resolves against the schema's $id)
            schema = {**schema, "$defs": {**schema.get("$defs", {}), "_definitions": {**defs, "$id": "/api/_definitions.json"}}}
        yield "kubernetes", name, schema
    cfn = os.path.join(_site("cfnlint"), "data", "schemas", "resources")
    for path in sorted(glob.glob(os.path.join(cfn, "*.json")))[::every]:
        yield "cloudformation", os.path.basename(path), json.load(open(path))
    vendor = os.path.join(_site("check_jsonschema"), "builtin_schemas", "vendor")
    for path in sorted(glob.glob(os.path.join(vendor, "*.json"))):
        yield "check-jsonschema", os.path.basename(path), json.load(open(path))


class _Timeout(Exception):
    pass


def outcome(schema: Any, timeout: int) -> str:
    from structgen.errors import CompileBudgetExceeded, SchemaNotSupported, StructgenError
    from structgen.json_schema import schema_to_dfa

    def alarm(*_: Any) -> None:
        raise _Timeout

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(timeout)
    try:
        schema_to_dfa(schema)
        return "compiled"
    except _Timeout:
        return "timeout"
    except SchemaNotSupported as e:
        return f"SchemaNotSupported {e.keyword}"
    except CompileBudgetExceeded as e:
        return "CompileBudgetExceeded " + re.sub(r"[0-9]+", "N", e.what)
    except StructgenError as e:
        return type(e).__name__
    except RecursionError:
        return "RecursionError"
    finally:
        signal.alarm(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--timeout", type=int, default=20)
    parser.add_argument("--details", action="store_true")
    args = parser.parse_args()
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    start = time.perf_counter()
    for source, name, schema in corpus(args.every):
        got = outcome(schema, args.timeout)
        counts[source][got] += 1
        counts["all"][got] += 1
        if args.details and got != "compiled":
            print(f"  {source} {name}: {got}", flush=True)
    reasons = sorted(counts["all"], key=lambda r: (-counts["all"][r], r))
    sources = [s for s in counts if s != "all"] + ["all"]
    print("| outcome | " + " | ".join(sources) + " |")
    print("|---|" + "--:|" * len(sources))
    for r in reasons:
        print(f"| {r} | " + " | ".join(str(counts[s][r]) for s in sources) + " |")
    print(f"| **schemas** | " + " | ".join(str(sum(counts[s].values())) for s in sources) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
