#!/usr/bin/env bash
# The daemon is what the simulator measures: seed 002's typical scenario
# (examples/scenarios/seed002_typical.scn: P1(1000, 2000, .5), P2(1, 10, .5),
# NCPUS=4) run by `volsched sim` and by the real client on a scaled clock,
# 1 hour there = SCALE seconds here (default 4): P1's 1000-hour jobs are
# 4000 s of the BOINC-API example app (they never end in the run), P2's
# 1-hour jobs 4 s (8 steps of 500 ms, checkpointing). The app sleeps its
# steps ("sleep" mode): a job lasts its scaled length in wall time however
# loaded the machine is, and the policy accounts wall time. Delay bounds 8000 s and
# 40 s, the scheduling period 4 s, the queue 0.1 hour = 0.4 s, as the
X
# scaled hours) each project's share of the wall CPU time the client gave
# (what the policy accounts) must be within 5 points of the share `volsched
# sim` reports for the same scaled duration, under the client's default
# policy (VSC_POLICY: another). The estimates are the seed's: rsc_fpops_est =
# the scaled hours x the client's own benchmark (p_fpops, measured in a
# first short run). Run time: RUN + ~20 s.
set -uo pipefail
RUN=${RUN:-120}
SCALE=${SCALE:-4}
VSC_WORK_PREFIX=vs_client_vs_sim
VSC_NCPUS=4
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

SCN="$VS_SOURCE_DIR/examples/scenarios/seed002_typical.scn"
[ -f "$SCN" ] || fail "missing $SCN"
C="$WORK/client"
period_min=$(python3 -c "print($SCALE / 60)")
buf_days=$(python3 -c "print(0.1 * $SCALE / 86400)")
VSC_BUF_DAYS=$buf_days vsc_client_dir "$C" "<cpu_scheduling_period_minutes>$period_min</cpu_scheduling_period_minutes>
   <leave_apps_in_memory>0</leave_apps_in_memory>"

# The client's benchmark, so that the estimates are the scenario's hours.
fp=$(vsc_benchmark "$C")
[ -n "$fp" ] || fail "no p_fpops in the state file"

# project NAME HOURS DELAY_HOURS NJOBS "INPUT"
mkproj() {
    vsc_project "$1" || fail "could not create project $1"
    sed -i "s|<host_in_progress_per_cpu>[0-9]*</host_in_progress_per_cpu>|<host_in_progress_per_cpu>0</host_in_progress_per_cpu>|; s|<daily_result_quota>[0-9]*</daily_result_quota>|<daily_result_quota>0</daily_result_quota>|" "$WORK/$1/config.xml"
    local est delay
    est=$(python3 -c "print($2 * $SCALE * $fp)")
    delay=$(python3 -c "print(int($3 * $SCALE))")
    vsc_jobs boincapp "$4" "$est" "$5" 1e30 "$delay" || fail "create_work $1"
    vsc_serve || fail "server $1 did not start"
    "$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach $1"
}
# 1000 h = 4000 s: 4000 steps of 1 s; 1 h = 4 s: 8 steps of 500 ms (SCALE 4)
mkproj P1 1000 2000 8 "$((SCALE * 1000)) 1000 sleep"
mkproj P2 1 10 400 "$((SCALE * 2)) 500 sleep"

vsc_run "$C" || fail "client did not start"
sleep "$RUN"
kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
json=$("$VOLSCHED" client --dir "$C" status --json) || fail "client status --json"
vsc_stop
read -r e1 e2 < <(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
name = {p["master_url"]: p["master_url"].rstrip("/").rsplit("/", 1)[-1] for p in d["projects"]}
wall = {name[p["master_url"]]: p["elapsed_time"] for p in d["projects"]}
for t in d["tasks"]:
    if t["state"] in ("ready", "downloading"):
        wall[name[t["project"]]] += t["elapsed_time"]
print(wall["P1"], wall["P2"])')
days=$(python3 -c "print($RUN / $SCALE / 24)")
sim=$("$VOLSCHED" sim "$SCN" --days "$days" --json --no-progress ${VSC_POLICY:+--policy "$VSC_POLICY"}) \
    || fail "volsched sim failed"
read -r s1 s2 < <(printf '%s' "$sim" | python3 -c 'import json,sys; p=json.load(sys.stdin)["projects"]; print(p["P1"]["cpu_share"], p["P2"]["cpu_share"])')
python3 - "$e1" "$e2" "$s1" "$s2" "$days" <<'PY' || fail "the client's shares differ from volsched sim's by more than 5 points"
import sys
e1, e2, s1, s2, days = map(float, sys.argv[1:])
assert e1 + e2 > 100, "too little work done (%.0f s)" % (e1 + e2)
c1, c2 = e1 / (e1 + e2), e2 / (e1 + e2)
print("seed002_typical over %.2f scaled days: client P1 %.3f P2 %.3f (wall %.0f s : %.0f s); "
      "volsched sim P1 %.3f P2 %.3f" % (days, c1, c2, e1, e2, s1, s2))
sys.exit(0 if abs(c1 - s1) <= 0.05 and abs(c2 - s2) <= 0.05 else 1)
PY
echo "ok: client and volsched sim agree on seed002_typical's shares within 5 points"
