#!/usr/bin/env bash
# Build the native engine with AddressSanitizer + UndefinedBehaviorSanitizer (CMakePresets.json:
# asan) and run a fast test subset under it: the native engine's own tests (the fuzz target
# included), the pool's and string lengths' tests, the guides over regexes, and the token tries,
# walks and slices against their Python references. The extension
# that Python loads is swapped for the sanitized one for the run and put back after (whatever
# the install: editable or a wheel). A Python host needs the ASan runtime preloaded.
#
#   tools/sanitize.sh                 # the subset below
#   tools/sanitize.sh tests/guides    # other tests, under the sanitizers
set -euo pipefail
cd "$(dirname "$0")/.."
python -c "import nanobind" 2>/dev/null || { echo "tools/sanitize.sh: pip install nanobind cmake ninja first"; exit 1; }
cmake --preset asan -DPython_EXECUTABLE="$(command -v python)" >/dev/null
cmake --build --preset asan
built=$(ls build/asan/_core*.so)
target=$(python -c "import structgen._engine._core as c; print(c.__file__)")
backup=$(mktemp)
cp "$target" "$backup"
trap 'cp "$backup" "$target"; rm -f "$backup"' EXIT
cp "$built" "$target"
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    tests=(tests/automata/test_native_safety.py tests/automata/test_native_oracle.py tests/automata/test_expr.py tests/automata/test_dfa_tables.py
           tests/automata/test_string_length.py tests/automata/test_native_differential.py tests/guides/test_guides.py
           tests/vocab/test_native_vocab_safety.py tests/vocab/test_native_vocab.py tests/vocab/test_trie_walk.py
           tests/vocab/test_slices.py tests/guides/test_native_frames.py tests/guides/test_batch_threads.py
           tests/json_schema/test_native_front_end_safety.py tests/json_schema/test_schema_texts.py
           tests/json_schema/test_schema_walk.py tests/json_schema/test_metaschemas.py tests/json_schema/test_unique_items.py)
fi
# (Python itself leaks by design: leak checks off; a UBSan finding stops the run. libstdc++ is
# preloaded after the ASan runtime: python does not link it, and ASan's interceptor of C++ throws
# must find the real one at start-up)
LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)" \
ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1" \
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    python -m pytest -q -x -m "not slow" -p no:cacheprovider --capture=sys "${tests[@]}"
# (--capture=sys: a sanitizer's report, written to file descriptor 2 as the process dies, reaches
# the terminal instead of pytest's capture file)
