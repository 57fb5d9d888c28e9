#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the packages,
# runs the source checks, builds the dev and asan presets with warnings as
# errors, and runs every test under CTest in both (integration tests, which
# start real servers and the real BOINC client, run in the dev build only).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== source checks"
bash scripts/checksrc.sh
bash scripts/format-check.sh
jobs=$(nproc 2>/dev/null || echo 2)
for preset in dev asan; do
    echo "== build ($preset)"
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j "$jobs"
    echo "== tests ($preset)"
    ctest --preset "$preset" -j "$jobs"
done
# The main job (scripts/demo.sh) and the benchmarks build the release preset:
# -O2 brings warnings (format truncation, ...) the debug builds do not see.
echo "== build (release)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
echo "== all tests passed"
