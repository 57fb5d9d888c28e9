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

# ---- Serve a demo project to the real BOINC client ----------------------
# Creates a project with the examples/primes app and some jobs, serves it on
# loopback, runs Debian's boinc-client against it in a private directory and
# shows its progress for DEMO_SECS seconds (default 90), then stops both.
# Everything lives in a temporary directory (kept: its path is printed).
DEMO_SECS=${DEMO_SECS:-90}
VOLSCHED=$PWD/$vs
PRIMES=$PWD/build/release/examples/primes
WORK=$(mktemp -d /tmp/volsched_demo.XXXXXX)
# shellcheck source=lib_demo.sh
. scripts/lib_demo.sh
trap 'demo_stop_all' EXIT
trap 'demo_stop_all; exit 130' INT TERM
echo
echo "== demo: a volsched project served to the real BOINC client (${DEMO_SECS}s)"
demo_make_project 8 1500000
echo "project:   $WORK/project (8 jobs of the primes app; volunteer key $AUTH)"
demo_serve
echo "serving:   $URL  (server log: $WORK/serve.log)"
demo_client_start
echo "client:    boinc $(boinc --version | head -1), private dir $BOINC_DIR, attached"
t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt "$DEMO_SECS" ]; do
    sleep 5
    demo_progress_line $(( $(date +%s) - t0 ))
done
echo "-- the client's tasks (boinccmd --get_tasks):"
demo_bcmd --get_tasks 2>/dev/null | grep -E '^   (name|active_task_state|fraction done):' | head -24 || true
demo_client_stop
if demo_serve_stop; then echo "server stopped cleanly (SIGTERM)"; else echo "server exit status $?"; fi
echo "-- the server's results by state (2 UNSENT, 4 IN_PROGRESS, 5 OVER):"
sqlite3 "$WORK/project/volsched.db" \
    "select server_state, count(*) from result group by server_state" | sed 's/|/: /'
echo "(uploads and reports are issue 6: finished tasks wait on the client to upload)"
echo "demo files kept in $WORK"
