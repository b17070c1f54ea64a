"""Valid instances of real-world schemas: ``hypothesis-jsonschema`` draws them, ``jsonschema`` checks them.

The real-world benchmark walks every engine over instances it did not write itself. Drawing can hang
or exhaust memory on a large schema, so it runs in a worker process (``python -m benchmarks.instances``,
started by :func:`generate_instances`) that the parent kills after its time limit. An instance is
kept only when :func:`validator` calls it valid: ``jsonschema`` with its format checker (and
OpenAPI's ``int32`` / ``int64`` read as the bounds of a signed integer of that width, as the
OpenAPI specification defines them) and ``pattern`` read with ASCII classes, as ECMA-262 (JSON
Schema's regex dialect) reads them.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import warnings
from typing import Any, Callable, Iterator

import jsonschema
from jsonschema.exceptions import ValidationError

from benchmarks.corpora import Case
from benchmarks.harness import Worker, reason_of

MODULE = "benchmarks.instances"


def _ascii_pattern(v: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if v.is_type(instance, "string") and not re.search(pattern, instance, re.ASCII):
        yield ValidationError(f"{instance!r} does not match {pattern!r} (ASCII \\d \\w \\s, as in ECMA-262)")


#: OpenAPI's integer formats: a number outside a signed integer of this many bits is not one.
INTEGER_FORMAT_BITS = {"int32": 32, "int64": 64}


def _integer_format(bits: int) -> Callable[[Any], bool]:
    def check(instance: Any) -> bool:
        if isinstance(instance, bool) or not isinstance(instance, (int, float)):
            return True  # (a format checks only the type it is about)
        return -(2 ** (bits - 1)) <= instance <= 2 ** (bits - 1) - 1
    return check


def validator(schema: Any) -> Any:
    """jsonschema's validator for ``schema``'s draft, with its format checker (OpenAPI's ``int32`` and ``int64``
    read as integer widths, :data:`INTEGER_FORMAT_BITS`), and ``pattern`` read with ASCII classes: Python's
    ``\\d`` also matches ``২`` or ``𝟲``, ECMA-262's (JSON Schema's, every engine's) does not.

    >>> v = validator({"type": "integer", "format": "int64"})
    >>> first_error(v, 2 ** 63 - 1) is None, first_error(v, 2 ** 63)
    (True, "format at /: 9223372036854775808 is not a 'int64'")
    """
    cls = jsonschema.validators.validator_for(schema)
    cls = jsonschema.validators.extend(cls, {"pattern": _ascii_pattern})
    checker = copy.deepcopy(cls.FORMAT_CHECKER)
    for name, bits in INTEGER_FORMAT_BITS.items():
        checker.checks(name)(_integer_format(bits))
    return cls(schema, format_checker=checker)


def first_error(v: Any, value: Any) -> str | None:
    """None when ``value`` is valid under the validator ``v``, else its first error (keyword at path: message).

    >>> first_error(validator({"type": "integer"}), "a")
    "type at /: 'a' is not of type 'integer'"
    """
    err = next(iter(v.iter_errors(value)), None)
    if err is None:
        return None
    return f"{err.validator} at /{'/'.join(map(str, err.absolute_path))}: {err.message[:200]}"


def draw(schema: Any, n: int) -> dict[str, Any]:
    """Up to ``n`` distinct valid instances of ``schema``, spread over sizes (the largest included)."""
    # hypothesis is a benchmark-only dependency: imported where it is used, in the worker.
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis_jsonschema import from_schema

    found: list[Any] = []
    err = None
    try:
        strategy = from_schema(schema)

        @settings(database=None, max_examples=max(4 * n, 8), deadline=None, derandomize=True,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate])
        @given(strategy)
        def collect(value: Any) -> None:
            found.append(value)

        collect()
    except Exception as e:  # noqa: BLE001 - hypothesis-jsonschema cannot generate for every schema
        err = reason_of(e)
    keep: dict[str, Any] = {}
    try:
        v = validator(schema)
        for value in found:
            text = json.dumps(value, sort_keys=True)
            try:
                json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates: not text a model writes
            except UnicodeEncodeError:
                continue
            if text not in keep and first_error(v, value) is None:
                keep[text] = value
    except Exception as e:  # noqa: BLE001
        err = err or reason_of(e)
    values = sorted(keep.values(), key=lambda x: len(json.dumps(x)))
    if len(values) > n:  # spread over sizes, largest included
        values = [values[round(i * (len(values) - 1) / max(n - 1, 1))] for i in range(n)] if n > 1 else values[-1:]
    return {"instances": values, "error": err, "generated": len(found)}


def serve() -> None:
    """The worker: one ``{"schema", "n"}`` job per line on stdin, one :func:`draw` result per line on stdout."""
    warnings.simplefilter("ignore")
    out = sys.stdout
    sys.stdout = sys.stderr  # hypothesis' chatter must not corrupt the protocol
    out.write(json.dumps({"ready": 0}) + "\n")
    out.flush()
    for line in sys.stdin:
        job = json.loads(line)
        out.write(json.dumps(draw(job["schema"], job["n"])) + "\n")
        out.flush()


def generate_instances(cases: list[Case], n: int, timeout: float, log: Callable[[str], None],
                       memory_bytes: int = 0) -> dict[str, Any]:
    """"source/name" -> {"instances": [...], "error": reason or None}; ``timeout`` s per schema.

    The ``corpus`` source has its own valid instances: the first ``n`` are taken as they are.
    """
    out: dict[str, Any] = {}
    w: Worker | None = None
    for c in cases:
        if c.source == "corpus":
            out[f"{c.source}/{c.name}"] = {"instances": c.instances[:n], "error": None}
            continue
        if w is None:
            w = Worker(MODULE, memory_bytes=memory_bytes)
            if not (w.recv(300) or {}).get("ready") == 0:
                raise RuntimeError("the instance generator did not start")
        w.send({"schema": c.schema, "n": n})
        msg = w.recv(timeout)
        key = f"{c.source}/{c.name}"
        if msg is None or "dead" in msg:
            out[key] = {"instances": [], "error": "timeout" if msg is None else "generator died"}
            w.kill()
            w = None
        else:
            out[key] = msg
        log(f"hypothesis {key}: {len(out[key]['instances'])} instances"
            + (f" ({out[key]['error']})" if out[key].get("error") else ""))
    if w is not None:
        w.kill()
    return out


if __name__ == "__main__":
    serve()
