#!/bin/sh
# Installs what the build, tests, benchmarks and examples need (Debian
# packages; fortunes: the text corpus of examples/char_gpt.py and lstm_lm.py):
# with apt-get as root, else prints the one command to run. Idempotent:
# installs only what is missing. `deps.sh demo` adds the demo's extras
# (a progress bar and the plot; the demo runs without them too).
PKGS="build-essential clang cmake pkg-config libjansson-dev libopenblas-openmp-dev liblapacke-dev libkissfft-dev libdnnl-dev zlib1g-dev python3 python3-dev python3-numpy python3-pytest python3-torch dataset-fashion-mnist fortunes libopenmpi-dev openmpi-bin"
[ "$1" = demo ] && PKGS="$PKGS python3-tqdm python3-matplotlib"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq $missing >/dev/null; } || { echo "deps: apt-get failed" >&2; exit 1; }
else
    echo "deps: missing packages. Run:  sudo apt-get install -y$missing" >&2
    exit 1
fi
