"""Real-world schemas through the compiler: how many compile, and the refusals by reason.

Run: python benchmarks/real_world.py [--every N] [--timeout S] [--details]
The corpus is what the installed packages ship, loaded by ``realworld_corpus`` (Kubernetes'
newest local-strict schemas with the definitions they reach, CloudFormation resource schemas,
the vendored schemas of ``check_jsonschema``). ``--every N`` takes every N-th Kubernetes and
CloudFormation schema (sorted by name), and every vendored one. Each schema is compiled as
``compile_json_schema`` compiles it (``schema_to_network``) with a time limit; the table counts
outcomes: compiled, or the error class with the keyword refused. (``realworld.py`` measures
masks and walks side by side with the peers; this is the quick census of refusals.)
"""

from __future__ import annotations

import argparse
import collections
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def corpus(every: int) -> Iterator[tuple[str, str, Any]]:
    """Every ``every``-th schema of each source of :mod:`realworld_corpus` (sorted by name)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import realworld_corpus as rc

    for source, load in (("kubernetes", rc.load_kubernetes), ("cloudformation", rc.load_cfn),
                         ("check-jsonschema", rc.load_check_jsonschema)):
        cases = sorted(load(), key=lambda c: c.name)
        for case in cases[:: every if source != "check-jsonschema" else 1]:
            yield source, case.name, case.schema


class _Timeout(Exception):
    pass


def outcome(schema: Any, timeout: int) -> str:
    from structgen.errors import CompileBudgetExceeded, SchemaNotSupported, StructgenError
    from structgen.json_schema import schema_to_network

    def alarm(*_: Any) -> None:
        raise _Timeout

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(timeout)
    try:
        schema_to_network(schema)  # (what compile_json_schema builds: a network, or one automaton)
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
    print("| **schemas** | " + " | ".join(str(sum(counts[s].values())) for s in sources) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
