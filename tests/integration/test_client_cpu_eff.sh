#!/usr/bin/env bash
# CPU efficiency is learnt from the tasks' CPU time against the wall time
# they ran (BOINC 6's TIME_STATS::update_cpu_efficiency, an exponential
# average over wall time with a time constant of a day). Jobs of the
# BOINC-API example app in "half" mode (250 ms of CPU work, then 250 ms
# asleep, each step) run on a 2-CPU client for ~RUN seconds:
#  - client_state.xml's <time_stats><cpu_efficiency> falls below 1, by what
#    the day-long average gives for the wall (W) and CPU (C) time the tasks
#    had: 1 - cpu_efficiency ~ (W - C) / 86400 (within -40%/+25%: the last
#    10 s piece is not folded in before the client stops); C / W <= 0.55;
#  - the scheduler request carries it in <time_stats> (sched_request_*.xml);
#  - the policy gets it: `volsched client explain` prints it;
#  - after a restart the client starts from the kept value, not from 1;
#    and it goes on falling from there.
# Run time: RUN (default 20) x 2 + ~10 s.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
RUN=${RUN:-20}
VSC_WORK_PREFIX=vs_client_cpu_eff
VSC_NCPUS=2
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

C="$WORK/client"
vsc_client_dir "$C"
vsc_project eff || fail "could not create project eff"
vsc_jobs boincapp 12 1e9 "40 250 half" 1e30 3600 || fail "create_work"   # ~20 s of wall each
vsc_serve || fail "server did not start"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"

eff() { sed -n 's:.*<cpu_efficiency>\([0-9.e+-]*\)</cpu_efficiency>.*:\1:p' "$1" | head -1; }

vsc_run "$C" || fail "client did not start"
sleep "$RUN"
kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
vsc_stop
json=$("$VOLSCHED" client --dir "$C" status --json) || fail "client status --json"
e1=$(eff "$C/client_state.xml")
[ -n "$e1" ] || fail "no <cpu_efficiency> in client_state.xml"
python3 - "$e1" <<PY || fail "cpu_efficiency $e1 is not what the tasks' CPU and wall time give"
import json, sys
d = json.loads('''$json''')
ce = float(sys.argv[1])
W = sum(p["elapsed_time"] for p in d["projects"])
C = sum(p["cpu_time"] for p in d["projects"])
for t in d["tasks"]:
    if t["state"] in ("ready", "downloading"):
        W += t["elapsed_time"]
        C += t["cpu_time"]
want = (W - C) / 86400
got = 1 - ce
print("tasks: wall %.1f s, CPU %.1f s (C/W %.2f); 1 - cpu_efficiency %.3g, the day-long average gives %.3g"
      % (W, C, C / max(W, 1e-9), got, want))
assert W > 20, "too little run"
assert C / W <= 0.55, "the half-asleep app got more than half its wall time as CPU"
assert 0.6 * want <= got <= 1.25 * want
PY
grep -q "<cpu_efficiency>" "$C"/sched_request_*.xml || fail "the scheduler request has no <cpu_efficiency>"
python3 - "$C" <<'PY' || fail "the scheduler request's <time_stats> does not carry cpu_efficiency < 1"
import glob, re, sys
x = open(sorted(glob.glob(sys.argv[1] + "/sched_request_*.xml"))[0]).read()
ts = re.search(r"<time_stats>(.*?)</time_stats>", x, re.S).group(1)
v = float(re.search(r"<cpu_efficiency>([^<]*)</cpu_efficiency>", ts).group(1))
print("request: cpu_efficiency", v)
sys.exit(0 if 0 < v < 1 else 1)
PY
"$VOLSCHED" client --dir "$C" explain 2>/dev/null | qgrep "cpu_efficiency 0\.9" ||
    fail "client explain does not show the learnt cpu_efficiency"

# The restart starts from the kept value and goes on falling.
vsc_run "$C" || fail "client did not start again"
sleep 2
e2=$(eff "$C/client_state.xml")
sleep "$RUN"
vsc_stop
e3=$(eff "$C/client_state.xml")
echo "cpu_efficiency: $e1 at the stop, $e2 after the restart, $e3 $RUN s later"
python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); sys.exit(0 if abs(b - a) < 1e-4 and c < b else 1)" \
    "$e1" "$e2" "$e3" || fail "cpu_efficiency did not survive the restart ($e1 -> $e2 -> $e3)"
echo "PASS: cpu_efficiency learnt ($e1 after ${RUN}s of half-asleep tasks), sent, kept across a restart ($e3)"
