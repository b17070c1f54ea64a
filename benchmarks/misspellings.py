"""How often the misspelt-keyword warning fires on real schemas: every schema of every source of
:mod:`benchmarks.corpora` is loaded (metaschema check, rewrite into 2020-12) and its unknown
keywords one edit from a constraining keyword are listed (:func:`structgen.json_schema.loading.unknown_keywords`),
with the time the load took.

    python -m benchmarks.misspellings [--sources kubernetes,cfn,check-jsonschema,corpus]

Each hit is printed (source, schema, pointer, keyword, suggestion) to be read by eye: a hit that is
not a misspelling is a false positive of the warning.
"""

from __future__ import annotations

import argparse
import time
import warnings

from benchmarks.corpora import load_cfn, load_check_jsonschema, load_corpus, load_kubernetes
from structgen.errors import ConstraintError
from structgen.json_schema.loading import load_schema
from structgen.json_schema.unknown_keywords import unknown_keywords

LOADERS = {"kubernetes": load_kubernetes, "cfn": load_cfn, "check-jsonschema": load_check_jsonschema, "corpus": load_corpus}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=",".join(LOADERS))
    args = parser.parse_args()
    print("| source | schemas | loaded | refused at load | warnings (misspelt-keyword hits) | load time |")
    print("|---|--:|--:|--:|--:|--:|")
    for name in args.sources.split(","):
        cases = LOADERS[name]()
        loaded = refused = 0
        hits = []
        start = time.perf_counter()
        for case in cases:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    schema = load_schema(case.schema)
            except ConstraintError:
                refused += 1
                continue
            loaded += 1
            hits += [(case.name, path, key, near) for path, key, _, near in unknown_keywords(schema) if near]
        seconds = time.perf_counter() - start
        print(f"| {name} | {len(cases)} | {loaded} | {refused} | {len(hits)} | {seconds:.1f} s |")
        for hit in hits:
            print("    hit:", *hit)


if __name__ == "__main__":
    main()
