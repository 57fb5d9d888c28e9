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

# The client scheduling policies side by side on the seed scenarios
# (docs/simulator.md): seed 002's debt scheduler, seed 000's shortfall
# scheduler and the older weighted round-robin client they replace.
for scn in examples/scenarios/seed000_scenario1.scn \
           examples/scenarios/seed002_typical.scn \
           examples/scenarios/einstein_resume.scn \
           examples/scenarios/tight_deadline.scn; do
    echo
    echo "== $scn"
    grep -v '^#' "$scn" | sed '/^$/d; s/^/   /'
    echo
    "$vs" sim "$scn" --compare debt,shortfall,wrr --no-progress
done
