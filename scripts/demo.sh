#!/usr/bin/env bash
# The main job: installs what is needed, builds volsched (release preset) and
# runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)"
vs=build/release/volsched
"$vs" --version
"$vs" --help
