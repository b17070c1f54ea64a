"""Fuzz the native engine's Python API for a while: the property tests of
tests/automata/test_native_safety.py and tests/vocab/test_native_vocab_safety.py (random terms, bytes, ids,
counters, lazy walks, token tries, trie walks, slices and the DFA guide's core; every
failure must be a named exception, never a crash), tests/json_schema/test_native_front_end_safety.py
(random Python values into the schema texts, the sub-schema walk and the metaschema check) and the
oracle tests (the lazy automata of
random patterns against the ``regex`` module), under the ``explore`` Hypothesis profile (fresh
draws, ten times the examples), round after round until the time is up.

    python tools/fuzz_engine.py --minutes 10
    tools/sanitize.sh tests/automata/test_native_safety.py   # the same target under ASan + UBSan

(atheris is not a dependency; Hypothesis is the driver, with the same coverage-free random search
it does in CI, and a failure prints its reproducing example.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=5.0, help="how long to fuzz (default 5)")
    args = parser.parse_args()
    end = time.monotonic() + 60 * args.minutes
    rounds = 0
    while time.monotonic() < end:
        rounds += 1
        got = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--hypothesis-profile", "explore",
             "tests/automata/test_native_safety.py", "tests/vocab/test_native_vocab_safety.py",
             "tests/automata/test_native_oracle.py", "tests/json_schema/test_native_front_end_safety.py"],
            check=False,
        )
        if got.returncode:
            print(f"fuzz: round {rounds} found a failure (above)")
            return got.returncode
    print(f"fuzz: {rounds} rounds, no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
