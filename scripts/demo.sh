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
    "$vs" sim "$scn" --compare fair,debt,shortfall,wrr --no-progress
done

# The default policy (fair) against BOINC's client emulator on its own
# scenarios (docs/simulator.md, "Against BOINC's emulator").
echo
echo "== the default policy vs BOINC's client emulator (examples/scenarios/emulator/)"
VOLSCHED="$vs" VS_SOURCE_DIR="$PWD" bash tests/integration/test_sim_emulator.sh || true

# ---- Serve a demo project to the real BOINC client ----------------------
# Creates a project with the examples/primes app and some jobs, serves it on
# loopback, runs Debian's boinc-client against it in a private directory and
# shows the jobs travelling: sent, computed, uploaded, reported, validated,
# assimilated into DIR/results/<wu>/. Stops when every job is home or after
# DEMO_SECS seconds (default 120), then stops both.
# Everything lives in a temporary directory (kept: its path is printed).
DEMO_SECS=${DEMO_SECS:-120}
NJOBS=8
VOLSCHED=$PWD/$vs
PRIMES=$PWD/build/release/examples/primes
WORK=$(mktemp -d /tmp/volsched_demo.XXXXXX)
# shellcheck source=lib_demo.sh
. scripts/lib_demo.sh
trap 'demo_stop_all' EXIT
trap 'demo_stop_all; exit 130' INT TERM
export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
echo
echo "== demo: a volsched project served to the real BOINC client (at most ${DEMO_SECS}s)"
demo_make_project "$NJOBS" 1500000
db="$WORK/project/volsched.db"
echo "project:   $WORK/project ($NJOBS jobs of the primes app; volunteer key $AUTH)"
demo_serve
echo "serving:   $URL  (server log: $WORK/serve.log)"
demo_client_start
echo "client:    boinc $(boinc --version | head -1), private dir $BOINC_DIR, attached"
t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt "$DEMO_SECS" ]; do
    sleep 5
    demo_progress_line $(( $(date +%s) - t0 ))
    nassim=$(sqlite3 "$db" "select count(*) from workunit where assimilate_state=2" 2>/dev/null || echo 0)
    printf '       server: uploads finished %s | reports acked %s | workunits assimilated %s/%s\n' \
        "$(demo_count 'Finished upload of')" "$(demo_count 'got ack for task')" "$nassim" "$NJOBS"
    [ "$nassim" -ge "$NJOBS" ] && break
done
demo_client_stop
if demo_serve_stop; then echo "server stopped cleanly (SIGTERM)"; else echo "server exit status $?"; fi
echo "-- volsched status:"
"$vs" status --project "$WORK/project" | sed 's/^/   /'
echo "-- the jobs that came home (DIR/results/<wu>/out, checked by the validator, copied by the assimilator):"
for d in "$WORK"/project/results/*/; do
    [ -f "$d/out" ] || continue
    printf '   %-14s %s\n' "$(basename "$d")" "$(tr '\n' ' ' < "$d/out")"
done
echo "demo files kept in $WORK"
