#!/bin/sh
# Runs every test suite and prints one closing line: "N passed, N failed".
# Each suite prints its own "N passed, N failed" line; this sums them.
B=build
total_p=0; total_f=0; rc=0
run() { # name, command...
    name=$1; shift
    echo "== $name"
    out=$("$@" 2>&1); status=$?
    echo "$out" | tail -n 40
    line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    [ -z "$line" ] && { p=0; f=1; echo "$name: no result line (exit $status)"; }
    [ $status -ne 0 ] && [ "$f" = 0 ] && f=1
    total_p=$((total_p + p)); total_f=$((total_f + f))
}
run "C tests" $B/test_ember
run "C tests under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $B/asan/test_ember
run "Fuzz corpus replay (ASan+UBSan)" sh tools/replay_fuzz_corpus.sh
run "Fuzzing each reader for ${FUZZ_SECONDS:-20} s (ASan+UBSan)" sh tools/run_fuzz.sh
run "make install into a temporary DESTDIR; programs built with pkg-config and CMake" sh tests/install/test_install.sh
run "Python tests (pytest, against PyTorch 1.13)" env PYTHONPATH=python /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python
run "The code of README.md and docs/c_api.md compiles and runs" /usr/bin/python3 tests/docs/test_docs.py
echo "== docs/ops.md is generated from the op table"
if $B/opdoc | diff -q - docs/ops.md >/dev/null; then
    echo "1 passed, 0 failed"; total_p=$((total_p + 1))
else
    echo "docs/ops.md is stale: run 'make docs'"; total_f=$((total_f + 1))
fi
echo "$total_p passed, $total_f failed"
[ $total_f -eq 0 ]
