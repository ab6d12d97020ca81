#!/bin/sh
# Runs each fuzz target (build/fuzz_<name>, ASan+UBSan) once over every file
# of its committed corpus (tests/fuzz/corpus/<name>/): a regression check, not
# fuzzing. Prints "N passed, N failed" (one per corpus file).
B=build
pass=0; fail=0
for dir in tests/fuzz/corpus/*/; do
    name=$(basename "$dir")
    for f in "$dir"*; do
        if out=$("$B/fuzz_$name" "$f" 2>&1); then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "fuzz_$name: $f failed"; echo "$out" | tail -n 20; fi
    done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
