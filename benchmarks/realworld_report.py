"""The real-world benchmark's numbers and tables: per-schema records in, Markdown and a JSON summary out.

:mod:`benchmarks.realworld` runs the engines and keeps one **record** per (engine, schema)::

    {"key": "source/name", "source", "name",
     "outcome": "compiled" | "refused" | "budget" | "timeout" | "died",
     "stage": "compile" | "first mask"        (refused / budget: where the error was raised),
     "compile": s, "ttfm": s                  (compiled: the compile call; compile + first mask),
     "walked": bool                           (False: the walks went over their time limit),
     "tbm": [s, ...]                          (every mask + commit of every instance walk),
     "instances": n, "rejected": [i, ...], "errors": [{"instance", "token", "error"}, ...],
     "memory": bytes | None}                  (structgen: ``Guide.memory_bytes`` after the walks)

and, from structgen's random-walk phase, a list of **walk errors** (``{"schema", "error"}``: a random
walk that raised). :func:`summarise` turns the records of one engine into the numbers of the table;
:func:`engine_table` puts engines side by side, with each time's ratio to llguidance's.

What counts (``docs/benchmarks.md`` defines the columns the same way):

- a compile over the time limit counts as the limit in every time row (compile, compile + first
  mask, the whole cost of a schema); a worker that died (out of memory) counts in no time row;
- the **whole cost** of a schema is compile + first mask + every mask + commit of every instance
  walk; walks over their time limit count as compile + first mask + that limit (a lower bound);
- an **error after compile** is any exception raised once the compile call returned: in the first
  mask, in an instance walk, or (structgen) in a random walk. A token the engine rejects is not one.

>>> recs = [{"key": "s/a", "source": "s", "name": "a", "outcome": "compiled", "compile": 0.002, "ttfm": 0.003,
...          "walked": True, "tbm": [1e-6, 2e-3], "instances": 1, "rejected": [], "errors": [], "memory": None},
...         {"key": "s/b", "source": "s", "name": "b", "outcome": "timeout"}]
>>> n = summarise(recs, limit=20.0, walk_limit=200.0)
>>> n["compiled"], n["timeout"], n["ttfm_over_1s"], n["steps_over_1ms"], round(n["over_1ms_share"], 4)
(1, 1, 1, 1, 0.9995)
>>> round(n["whole_sum"], 6), n["ttfm_max"]
(20.005001, 20.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.harness import fmt_ms, fmt_us, markdown_table, percentile

BASELINE = "llguidance"  # the targets of issue 20 are ratios to its numbers
SLOW_STEP_S = 1e-3  # a step over 1 ms
SLOW_COMPILE_S = 1.0  # compile + first mask over 1 s


def fmt_ratio(r: float) -> str:
    """A ratio with two significant digits below 10, whole numbers from 10 on.

    >>> [fmt_ratio(x) for x in (0.0234, 1.5, 12.34, 1234.5)]
    ['0.023×', '1.5×', '12×', '1,234×']
    """
    if r >= 10:
        return f"{r:,.0f}×"
    return f"{r:.2g}×"


def _pcts(prefix: str, xs: Sequence[float], qs: Iterable[float]) -> dict[str, float | None]:
    return {f"{prefix}_{'max' if q == 100 else 'p' + format(q, 'g')}": percentile(xs, q) for q in qs}


def whole_cost(rec: dict[str, Any], limit: float, walk_limit: float) -> float | None:
    """A schema's whole cost in seconds (see the module's docstring); None when it has none."""
    if rec["outcome"] == "timeout":
        return limit
    if rec["outcome"] != "compiled":
        return None
    return rec["ttfm"] + (sum(rec["tbm"]) if rec["walked"] else walk_limit)


def errors_after_compile(recs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every exception raised after a compile returned: ``{"schema", "where", "error"}``.

    >>> errors_after_compile([
    ...     {"key": "s/a", "outcome": "budget", "stage": "first mask", "error": "CompileBudgetExceeded: states"},
    ...     {"key": "s/b", "outcome": "budget", "stage": "compile", "error": "CompileBudgetExceeded: states"},
    ...     {"key": "s/c", "outcome": "compiled", "errors": [{"instance": 2, "token": 7, "error": "KeyError: 3"}]}])
    [{'schema': 's/a', 'where': 'first mask', 'error': 'CompileBudgetExceeded: states'}, \
{'schema': 's/c', 'where': 'instance 2, token 7', 'error': 'KeyError: 3'}]
    """
    out = []
    for r in recs:
        if r["outcome"] in ("refused", "budget") and r.get("stage") == "first mask":
            out.append({"schema": r["key"], "where": "first mask", "error": r["error"]})
        for e in r.get("errors", []):
            out.append({"schema": r["key"], "where": f"instance {e['instance']}, token {e['token']}", "error": e["error"]})
    return out


def summarise(recs: list[dict[str, Any]], limit: float, walk_limit: float,
              walk_errors: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The numbers of one engine over ``recs`` (times in seconds; percentiles None when there is no sample)."""
    compiled = [r for r in recs if r["outcome"] == "compiled"]
    timeouts = [r for r in recs if r["outcome"] == "timeout"]
    compile_t = [r["compile"] for r in compiled] + [limit] * len(timeouts)
    ttfm = [r["ttfm"] for r in compiled] + [limit] * len(timeouts)
    whole = [w for w in (whole_cost(r, limit, walk_limit) for r in recs) if w is not None]
    tbm = [t for r in compiled if r["walked"] for t in r["tbm"]]
    slow = [t for t in tbm if t > SLOW_STEP_S]
    refused: dict[str, list[str]] = {}
    for r in recs:
        if r["outcome"] == "refused" and r.get("stage") != "first mask":
            refused.setdefault(r["reason"], []).append(r["name"])
    errors = errors_after_compile(recs) + [{"where": "random walk", **e} for e in walk_errors]
    memory = [r["memory"] for r in compiled if r.get("memory") is not None]
    return {
        "schemas": len(recs),
        "compiled": len(compiled),
        "refused": sum(len(v) for v in refused.values()),
        "refused_by_reason": refused,
        "budget": sum(r["outcome"] == "budget" and r.get("stage") != "first mask" for r in recs),
        "timeout": len(timeouts),
        "died": sum(r["outcome"] == "died" for r in recs),
        "walk_timeout": sum(not r["walked"] for r in compiled),
        **_pcts("compile", compile_t, (50, 90, 99, 100)),
        **_pcts("ttfm", ttfm, (50, 90, 99, 100)),
        "ttfm_over_1s": sum(t > SLOW_COMPILE_S for t in ttfm),
        **_pcts("whole", whole, (50, 90, 100)),
        "whole_sum": sum(whole) if whole else None,
        **_pcts("tbm", tbm, (50, 90, 99, 99.9, 100)),
        "tokens": len(tbm),
        "steps_over_1ms": len(slow),
        "over_1ms_share": sum(slow) / sum(tbm) if tbm and sum(tbm) > 0 else None,
        "mask_time": sum(tbm),
        "instances": sum(r["instances"] for r in compiled if r["walked"]),
        "rejected": sum(len(r["rejected"]) for r in compiled if r["walked"]),
        "errors_after_compile": len(errors),
        "errors": errors,
        **_pcts("memory", memory, (50, 100)),
    }


def common_keys(records: dict[str, list[dict[str, Any]]]) -> set[str]:
    """The schemas every engine compiled and walked, accepting every instance without an error (like with like).

    >>> ok = {"outcome": "compiled", "walked": True, "rejected": [], "errors": []}
    >>> sorted(common_keys({"x": [{**ok, "key": "a"}, {**ok, "key": "b"}, {**ok, "key": "c"}],
    ...                     "y": [{**ok, "key": "a"}, {**ok, "key": "b", "rejected": [0]}, {"key": "c", "outcome": "timeout"}]}))
    ['a']
    """
    def clean(r: dict[str, Any]) -> bool:
        return r["outcome"] == "compiled" and r["walked"] and not r["rejected"] and not r["errors"]

    sets = [{r["key"] for r in recs if clean(r)} for recs in records.values()]
    return set.intersection(*sets) if sets else set()


def compiled_keys(records: dict[str, list[dict[str, Any]]]) -> set[str]:
    """The schemas every engine compiled (its first mask included), whatever their walks did: the set
    compile times are compared on, where each engine's own set would set one engine's largest
    schemas against another's refusals.

    >>> ok = {"outcome": "compiled", "walked": True, "rejected": [], "errors": []}
    >>> sorted(compiled_keys({"x": [{**ok, "key": "a"}, {**ok, "key": "b"}, {**ok, "key": "c"}],
    ...                       "y": [{**ok, "key": "a"}, {**ok, "key": "b", "rejected": [0]}, {"key": "c", "outcome": "refused"}]}))
    ['a', 'b']
    """
    sets = [{r["key"] for r in recs if r["outcome"] == "compiled"} for recs in records.values()]
    return set.intersection(*sets) if sets else set()


# ------------------------------------------------------------------ the table

def _ms(x: float | None) -> str:
    return "—" if x is None else fmt_ms(1e3 * x)


def _us(x: float | None) -> str:
    return "—" if x is None else fmt_us(1e6 * x)


def _mib(x: float | None) -> str:
    return "—" if x is None else f"{x / 2**20:,.1f} MiB"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


#: (label, key, format) of the rows that carry a ratio to llguidance's value
TIMED_ROWS: list[tuple[str, str, Any]] = [
    *((f"compile {q}", f"compile_{q}", _ms) for q in ("p50", "p90", "p99", "max")),
    *((f"compile + first mask {q}", f"ttfm_{q}", _ms) for q in ("p50", "p90", "p99", "max")),
    *((f"compile + every mask, per schema {q}", f"whole_{q}", _ms) for q in ("p50", "p90")),
    ("compile + every mask, summed over the schemas", "whole_sum", _ms),
    *((f"mask + commit {q}", f"tbm_{q}", _us) for q in ("p50", "p90", "p99", "p99.9", "max")),
]


def _ratio(n: dict[str, Any], base: dict[str, Any] | None, key: str) -> str:
    if base is None or n is base or not n.get(key) or not base.get(key):
        return ""
    return f" ({fmt_ratio(n[key] / base[key])})"


def engine_table(numbers: dict[str, dict[str, Any]]) -> str:
    """Engines side by side (one column each), times with their ratio to llguidance's (when it ran)."""
    engines = list(numbers)
    base = numbers.get(BASELINE)
    cols = list(numbers.values())

    def row(label: str, cell: Any) -> list[str]:
        return [label, *(cell(e, n) for e, n in zip(engines, cols))]

    rows = [
        row("schemas compiled", lambda e, n: f"{n['compiled']}/{n['schemas']}"),
        row("refused / budget errors / timeouts (worker died)",
            lambda e, n: f"{n['refused']} / {n['budget']} / {n['timeout']} ({n['died']})"),
    ]
    for label, key, fmt in TIMED_ROWS:
        rows.append(row(label, lambda e, n, key=key, fmt=fmt: fmt(n.get(key)) + _ratio(n, base, key)))
        if key == "ttfm_max":
            rows.append(row("schemas over 1 s (compile + first mask)", lambda e, n: str(n["ttfm_over_1s"])))
    rows += [
        row("steps over 1 ms (share of all mask time)",
            lambda e, n: f"{n['steps_over_1ms']:,} ({_pct(n['over_1ms_share'])})"),
        row("steps timed", lambda e, n: f"{n['tokens']:,}"),
        row("**errors after compile** (must be 0)", lambda e, n: str(n["errors_after_compile"])),
        row("valid instances rejected", lambda e, n: f"{n['rejected']}/{n['instances']}"),
        row("walks over the time limit", lambda e, n: str(n["walk_timeout"])),
        row("guide memory after the walks p50 / max",
            lambda e, n: f"{_mib(n['memory_p50'])} / {_mib(n['memory_max'])}" if n["memory_p50"] is not None else "—"),
    ]
    if any("random_walks" in n for n in cols):
        rows.append(row("random walks valid / invalid / unfinished / raised", lambda e, n: n.get("random_walks", "—")))
    if any("random_walk_slowest" in n for n in cols):
        rows.append(row("random walks' slowest step (mask as a bool array + next state)", lambda e, n: n.get("random_walk_slowest", "—")))
    return markdown_table(["", *engines], rows, "l" + "r" * len(engines))


def summary_table(by_source: dict[str, dict[str, dict[str, Any]]]) -> str:
    """One line per (source, engine): ``by_source[source][engine]`` are :func:`summarise`'s numbers."""
    head = ["source", "engine", "compiled", "compile + first mask p50 / p99", "over 1 s", "whole cost p50",
            "whole cost summed", "mask + commit p50 / p99.9 / max", "steps over 1 ms", "errors after compile",
            "valid rejected"]
    rows = []
    for src, numbers in by_source.items():
        for e, n in numbers.items():
            rows.append([src, e, f"{n['compiled']}/{n['schemas']}", f"{_ms(n['ttfm_p50'])} / {_ms(n['ttfm_p99'])}",
                         str(n["ttfm_over_1s"]), _ms(n["whole_p50"]), _ms(n["whole_sum"]),
                         f"{_us(n['tbm_p50'])} / {_us(n['tbm_p99.9'])} / {_us(n['tbm_max'])}",
                         f"{n['steps_over_1ms']:,} ({_pct(n['over_1ms_share'])})", str(n["errors_after_compile"]),
                         f"{n['rejected']}/{n['instances']}"])
    return markdown_table(head, rows, "ll" + "r" * (len(head) - 2))


def notes(records: dict[str, list[dict[str, Any]]], numbers: dict[str, dict[str, Any]], most: int = 8) -> list[str]:
    """Bullet lines: each engine's refusals by reason, errors after compile (all), valid instances rejected."""
    out = []
    for e, n in numbers.items():
        for reason, names in sorted(n["refused_by_reason"].items(), key=lambda kv: -len(kv[1])):
            out.append(f"- {e} refused {len(names)}: `{reason}` ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})")
        for err in n["errors"]:
            out.append(f"- **{e} raised after compile** on `{err['schema']}` ({err['where']}): {err['error'][:200]}")
        rejected = [(r["key"], r["rejected"]) for r in records[e] if r["outcome"] == "compiled" and r["rejected"]]
        for key, rej in rejected[:most]:
            out.append(f"- {e} rejected valid instance(s) {rej} of {key}")
        if len(rejected) > most:
            out.append(f"- {e}: {len(rejected) - most} more schemas with rejected valid instances")
    return out
