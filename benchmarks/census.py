"""The census of refusals (``python -m benchmarks.realworld --census``): compile outcomes, structgen only.

No peers, no tokenizer, no walks. Every ``--every``-th Kubernetes and CloudFormation schema (sorted by
name) and every vendored one is compiled as ``compile_json_schema`` compiles it (:func:`compiled`: a
network, or where nothing is called one expression whose automaton is built lazily), each under
``--timeout`` (an alarm in this process), and a table counts the outcomes: compiled, or the error
class with the keyword refused. ``--details`` lists every schema that did not compile.
"""

from __future__ import annotations

import collections
import re
import signal
import time
from collections.abc import Iterator
from typing import Any

from benchmarks import corpora
from benchmarks.harness import markdown_table
from structgen.errors import CompileBudgetExceeded, SchemaNotSupported, StructgenError
from structgen.json_schema.api import compile_schema, prepare
from structgen.json_schema.loading import warn_annotations
from structgen.json_schema.options import SchemaOptions

CENSUS_SOURCES = ("kubernetes", "cfn", "check-jsonschema")
CENSUS_LABELS = {"cfn": "cloudformation"}  # (the census' tables have always said so)


class _Timeout(Exception):
    pass


def census_cases(every: int, sources: list[str]) -> Iterator[tuple[str, str, Any]]:
    """(source, name, schema): every ``every``-th schema of each source (sorted by name), every vendored one."""
    for source in sources:
        cases = sorted(corpora.SOURCES[source](), key=lambda c: c.name)
        for case in cases[:: every if source != "check-jsonschema" else 1]:
            yield CENSUS_LABELS.get(source, source), case.name, case.schema


def compiled(schema: Any) -> Any:
    """What ``compile_json_schema`` builds for ``schema`` before it meets a vocabulary, with the
    default options: a network, or an expression (``schema_to_network`` builds one eager automaton
    instead where nothing is called, which a guide never does: an unanchored pattern under a
    length of 1,224 takes 30 s there, and 1.4 s with its first mask as a guide)."""
    options = SchemaOptions()
    root = prepare(schema, options)
    warn_annotations(root, options)
    return compile_schema(root, options, network=True, lazy=True)


def outcome(schema: Any, timeout: float) -> str:
    """How compiling ``schema`` ends: "compiled", "timeout", or the error class (and the keyword refused)."""

    def alarm(*_: Any) -> None:
        raise _Timeout

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        compiled(schema)
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
        signal.setitimer(signal.ITIMER_REAL, 0)


def census(every: int, timeout: float, sources: list[str], details: bool) -> None:
    """Print the census table: per source, how many schemas ended in each outcome."""
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    start = time.perf_counter()
    for source, name, schema in census_cases(every, sources):
        got = outcome(schema, timeout)
        counts[source][got] += 1
        counts["all"][got] += 1
        if details and got != "compiled":
            print(f"  {source} {name}: {got}", flush=True)
    reasons = sorted(counts["all"], key=lambda r: (-counts["all"][r], r))
    columns = [s for s in counts if s != "all"] + ["all"]
    rows = [[r, *(str(counts[s][r]) for s in columns)] for r in reasons]
    rows.append(["**schemas**", *(str(sum(counts[s].values())) for s in columns)])
    print(markdown_table(["outcome", *columns], rows, "l" + "r" * len(columns)))
    print(f"\n({time.perf_counter() - start:.0f} s)")


