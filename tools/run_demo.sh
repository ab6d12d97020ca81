#!/bin/sh
# The main demo (`make demo`): trains a LeNet-style CNN on Fashion-MNIST with
# Ember's Python API (examples/train_fashion_mnist.py). Arguments are passed
# on, e.g. `sh tools/run_demo.sh --epochs 1 --threads 1`.
set -e
cd "$(dirname "$0")/.."
PYTHONPATH="python${PYTHONPATH:+:$PYTHONPATH}" "${PYTHON:-/usr/bin/python3}" examples/train_fashion_mnist.py "$@"
echo
echo "The same network trained through the C API only: build/examples/train_fashion_mnist"
echo "(source: examples/train_fashion_mnist.c; more C examples in build/examples/)"
