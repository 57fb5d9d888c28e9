#!/usr/bin/env bash
# BOINC's two buffer preferences reach the policy each as itself, as the
# simulator passes them (min_queue and extra_queue): work is fetched when
# less than work_buf_min_days is queued, then up to work_buf_min_days +
# work_buf_additional_days. Two 1-CPU clients with the same benchmark, each
# attached to its own project of jobs of the same estimate (~20 s of CPU,
# as long as they run), under the default policy, scheduling period 6 s:
#   A: work_buf_min_days 0.001 (86.4 s), work_buf_additional_days 0.002
#   B: work_buf_min_days 0.001, work_buf_additional_days 0
# After the first RPC (a new project's 1 s request, one job), the second
# asks for what fills the buffer: A's request must exceed B's by the
# additional buffer, 172.8 s (within 10 s), whatever the job's estimate.
# Then A does not ask again while its queue (~260 s) drains by 10 s of
# CPU: it is still above min; a client that folded the two into one
# minimum (259.2 s) asks again at once. Each scheduler request carries
# both values as <working_global_preferences> (BOINC's), work_buf_min_days
# and work_buf_additional_days separately. Run time: ~60 s.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_buffer
VSC_NCPUS=1
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

A="$WORK/client_a" B="$WORK/client_b"
PERIOD="<cpu_scheduling_period_minutes>0.1</cpu_scheduling_period_minutes>"
VSC_BUF_DAYS=0.001 VSC_EXTRA_DAYS=0.002 vsc_client_dir "$A" "$PERIOD"
VSC_BUF_DAYS=0.001 VSC_EXTRA_DAYS=0 vsc_client_dir "$B" "$PERIOD"
# A's benchmark, then given to B (a client keeps it 30 days): the same estimates
RPC_PW=$(cat "$A/gui_rpc_auth.cfg") # each dir has its own password
fp=$(vsc_benchmark "$A")
[ -n "$fp" ] || fail "no p_fpops in A's state file"
python3 - "$A/client_state.xml" "$B/client_state.xml" <<'PY' || fail "could not give B A's benchmark"
import re, sys
h = re.search(r"<host_info>.*?</host_info>", open(sys.argv[1]).read(), re.S).group(0)
h = re.sub(r"<host_cpid>.*?</host_cpid>", "", h)   # B is another host
open(sys.argv[2], "w").write("<client_state>\n%s\n</client_state>\n" % h)
PY

est=$(python3 -c "print(20 * $fp)")
for x in a b; do
    vsc_project "p$x" || fail "could not create project p$x"
    sed -i "s|<host_in_progress_per_cpu>[0-9]*</host_in_progress_per_cpu>|<host_in_progress_per_cpu>0</host_in_progress_per_cpu>|; s|<daily_result_quota>[0-9]*</daily_result_quota>|<daily_result_quota>0</daily_result_quota>|" "$WORK/p$x/config.xml"
    VSC_JOB_TAG="_$x" vsc_jobs boincapp 20 "$est" "20 1000" 1e30 86400 || fail "create_work p$x"
    vsc_serve || fail "server p$x did not start"
    dir=$A; [ "$x" = b ] && dir=$B
    "$VOLSCHED" client --dir "$dir" attach "$URL" "$AUTH" || fail "attach p$x"
done

requests() { sed -n 's/.*Requesting new tasks for CPU (\([0-9]*\) s).*/\1/p' "$1/client.log"; }
declare -A REQ
for dir in "$A" "$B"; do
    RPC_PW=$(cat "$dir/gui_rpc_auth.cfg")
    vsc_run "$dir" || fail "client $dir did not start"
    for _ in $(seq 1 100); do
        [ "$(requests "$dir" | wc -l)" -ge 2 ] &&
            [ "$(grep -c 'Scheduler request completed' "$dir/client.log")" -ge 2 ] && break
        sleep 0.2
    done
    # A: its queue drains by 10 s of CPU (at most 60 s of wall)
    if [ "$dir" = "$A" ]; then
        for _ in $(seq 1 60); do
            cpu=$("$VOLSCHED" client --dir "$dir" status --json 2>/dev/null | python3 -c '
import json, sys
print(int(sum(t["cpu_time"] for t in json.load(sys.stdin)["tasks"])))' 2>/dev/null)
            [ "${cpu:-0}" -ge 10 ] && break
            sleep 1
        done
        echo "A: ${cpu:-0} s of CPU run since the fill"
        [ "${cpu:-0}" -ge 10 ] || fail "A's task got under 10 s of CPU in 60 s"
    fi
    kill -0 "$VSC_PID" 2>/dev/null || fail "client $dir died"
    vsc_stop
    REQ[$dir]=$(requests "$dir" | tr '\n' ' ')
    python3 - "$dir"/sched_request_*.xml "$(basename "$dir")" <<'PY' || fail "$dir's scheduler request lacks the two buffer preferences"
import re, sys
x = open(sys.argv[1]).read()
w = re.search(r"<working_global_preferences>(.*?)</working_global_preferences>", x, re.S).group(1)
mn = float(re.search(r"<work_buf_min_days>([^<]*)<", w).group(1))
ad = float(re.search(r"<work_buf_additional_days>([^<]*)<", w).group(1))
want = 0.002 if sys.argv[2] == "client_a" else 0
print("%s request: work_buf_min_days %g, work_buf_additional_days %g" % (sys.argv[2], mn, ad))
sys.exit(0 if mn == 0.001 and ad == want else 1)
PY
done
echo "work requests (s): A ${REQ[$A]}; B ${REQ[$B]}"
python3 - "${REQ[$A]}" "${REQ[$B]}" <<'PY' || fail "the fetch does not follow both buffer preferences (A: ${REQ[$A]}; B: ${REQ[$B]})"
import sys
a = [float(v) for v in sys.argv[1].split()]
b = [float(v) for v in sys.argv[2].split()]
assert len(b) == 2, "want B's first 1 s request and one more"
assert len(a) == 2, "A asked again while more than work_buf_min_days was queued"
assert a[0] == 1 and b[0] == 1
d = a[1] - b[1]
print("A's second request exceeds B's by %.1f s (work_buf_additional_days: 172.8 s)" % d)
assert b[1] < 86.4, "B asked for more than its minimum buffer"
sys.exit(0 if abs(d - 172.8) <= 10 else 1)
PY
echo "PASS: work fetch below work_buf_min_days up to min + work_buf_additional_days, both sent"
