#!/bin/sh
# The main demo: until the Fashion-MNIST training demo lands, runs the C examples.
set -e
for ex in build/examples/*; do
    [ -x "$ex" ] || continue
    echo "== $ex"
    "$ex"
done
