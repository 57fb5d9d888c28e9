#!/usr/bin/env bash
# Credit reaches the volunteer (issue 39), with Debian's real boinc-client:
# it computes the 3 jobs of a volsched project (examples/primes), the
# validator grants credit (the adaptive default: a host without history is
# granted the average, est x cobblestone scale), and after the next
# scheduler RPC `boinccmd --get_project_status` shows the user's and the
# host's total and recent average credit, non-zero and equal to what the
# store holds (the reply's <user_total_credit>, <host_total_credit> ...).
set -uo pipefail
LIMIT=${LIMIT:-240}
NJOBS=3
STEP=1000000
RC_WORK_PREFIX=vs_credit
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
demo_make_project "$NJOBS" "$STEP" || fail "could not create the project"
demo_serve || fail "server did not start"
demo_client_start || fail "client did not start or attach"
db="$WORK/project/volsched.db"
q() { sqlite3 -cmd ".timeout 5000" "$db" "$1"; }

t0=$(date +%s)
n=0
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "server died"
    kill -0 "$BOINC_PID" 2>/dev/null || fail "client died"
    n=$(q "SELECT count(*) FROM result WHERE validate_state = 1 AND granted_credit > 0" 2>/dev/null || echo 0)
    [ "$n" -ge "$NJOBS" ] && break
    sleep 2
done
[ "$n" -ge "$NJOBS" ] || fail "within ${LIMIT}s $n results were granted credit (want $NJOBS)"
# Every granted value is the average for a host without history: the
# job's estimate (2e10 FLOPs) in cobblestones, 2e10 * 200 / 86400e9.
bad=$(q "SELECT count(*) FROM result WHERE validate_state = 1 AND abs(granted_credit - 2e10 * 200 / 86400e9) > 1e-9")
[ "$bad" = 0 ] || fail "granted credit is not the average: $(q 'SELECT name, granted_credit FROM result')"

# The scheduler caches account rows for 10 s: ask after that.
sleep 11
store_user=$(q "SELECT total_credit FROM \"user\" WHERE name = 'volunteer'")
store_uavg=$(q "SELECT expavg_credit FROM \"user\" WHERE name = 'volunteer'")
store_host=$(q "SELECT total_credit FROM host ORDER BY id LIMIT 1")
store_havg=$(q "SELECT expavg_credit FROM host ORDER BY id LIMIT 1")
nrpc=$(grep -c 'Scheduler request completed' "$BOINC_DIR/client.log")
demo_bcmd --project "$URL" update >/dev/null || fail "boinccmd update failed"
for _ in $(seq 1 60); do
    [ "$(grep -c 'Scheduler request completed' "$BOINC_DIR/client.log")" -gt "$nrpc" ] && break
    sleep 0.5
done
[ "$(grep -c 'Scheduler request completed' "$BOINC_DIR/client.log")" -gt "$nrpc" ] ||
    fail "the client made no scheduler request after 'update'"
st=$(demo_bcmd --get_project_status) || fail "boinccmd --get_project_status failed"
field() { printf '%s\n' "$st" | sed -n "s/^ *$1: *//p" | head -1; }
same() { # name got want
    python3 -c "import sys; g,w=float('$2'),float('$3'); sys.exit(0 if w > 0 and abs(g-w) <= 1e-4*w else 1)" ||
        fail "$1: the client shows '$2', the store holds $3
$st"
    echo "$1: client $2, store $3"
}
same user_total_credit "$(field user_total_credit)" "$store_user"
same user_expavg_credit "$(field user_expavg_credit)" "$store_uavg"
same host_total_credit "$(field host_total_credit)" "$store_host"
same host_expavg_credit "$(field host_expavg_credit)" "$store_havg"
# /metrics counts the credit this server's validator granted.
granted=$(q "SELECT sum(granted_credit) FROM result WHERE validate_state = 1")
m=$(curl -s "http://127.0.0.1:$PORT/metrics") || fail "GET /metrics"
same volsched_credit_granted_total "$(printf '%s\n' "$m" | sed -n 's/^volsched_credit_granted_total //p')" "$granted"
demo_client_stop
demo_serve_stop
echo "ok: boinccmd shows the store's credit: user $store_user, host $store_host"
