#!/bin/sh
# Fuzzes each target (build/fuzz_<name>, ASan+UBSan) for FUZZ_SECONDS
# (default 20) from its committed corpus (tests/fuzz/corpus/<name>/); new
# inputs go to a temporary directory, not the repository. A crash leaves its
# input in build/fuzz-crashes/ (add it to the corpus once fixed). Prints one
# line per target (executions, corpus size) and "N passed, N failed".
B=build
T=${FUZZ_SECONDS:-20}
pass=0; fail=0
mkdir -p "$B/fuzz-crashes"
for dir in tests/fuzz/corpus/*/; do
    name=$(basename "$dir")
    work=$(mktemp -d)
    if out=$("$B/fuzz_$name" -max_total_time="$T" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
            -artifact_prefix="$B/fuzz-crashes/$name-" "$work" "$dir" 2>&1); then
        pass=$((pass + 1))
        echo "fuzz_$name: $(printf "%s\n" "$out" | grep -aE 'stat::number_of_executed_units' | awk '{print $2}') runs in ${T} s, no crash"
    else
        fail=$((fail + 1)); echo "fuzz_$name: FAILED"; printf "%s\n" "$out" | grep -av '^#' | tail -n 30
    fi
    rm -rf "$work"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
