#!/usr/bin/env bash
# Fair share between submitters (issue 38): two scientists with quotas 1 and
# 3 submit long batches over HTTP (submit_rpc_handler.php) to `volsched
# serve`, the one with quota 1 first; then simulated hosts (bench_server
# --target: the real 7.20.5 client's work request, one job per RPC) take
# jobs for a while. Over the run the jobs sent must split 1:3 between the
# two batches, within 10%, although the first batch came first and both
# still have jobs waiting at the end.
set -uo pipefail
: "${VOLSCHED:?}" "${VS_SOURCE_DIR:?}" "${VS_BINARY_DIR:?}"
V=$VOLSCHED
BENCH="$VS_BINARY_DIR/bench_server"
PRIMES="$VS_BINARY_DIR/examples/primes"
NJOBS=${NJOBS:-3000}
NSEND=${NSEND:-3000}
[ -x "$BENCH" ] || { echo "FAIL: $BENCH not built"; exit 1; }
W=$(mktemp -d /tmp/vs_fair.XXXXXX)
SERVE_PID=""
keep=0
finish() {
    if [ -n "$SERVE_PID" ] && kill -0 "$SERVE_PID" 2>/dev/null; then
        kill -TERM "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null
    fi
    if [ "$keep" = 1 ]; then echo "(work dir kept: $W)"; else rm -rf "$W"; fi
}
trap finish EXIT
fail() { echo "FAIL: $*"; tail -20 "$W/serve.log" 2>/dev/null; keep=1; exit 1; }

PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
URL="http://127.0.0.1:$PORT/demo/"
P="$W/project"
$V init "$P" --url "$URL" >/dev/null || fail "init"
# A short job-cache lease: the feeder rescans the store every second, so a
# new batch's place in the sending order is seen at once.
# The simulated hosts are many of one account, and need no daily quota.
sed -i 's|</config>|<job_lease_secs>2</job_lease_secs><max_new_hosts_per_day>0</max_new_hosts_per_day><daily_result_quota>0</daily_result_quota><http_max_per_address>0</http_max_per_address></config>|' "$P/config.xml"
$V app add --project "$P" --name primes --platform x86_64-pc-linux-gnu --version 100 "$PRIMES" >/dev/null || fail "app add"
AUTH=$($V user add --project "$P" --name volunteer) || fail "user add"
ALICE=$($V user add --project "$P" --name alice --submit primes --quota 1) || fail "user add alice"
BOB=$($V user add --project "$P" --name bob --submit primes --quota 3) || fail "user add bob"
$V serve --project "$P" --listen "127.0.0.1:$PORT" --foreground --cache-slots 500 >"$W/serve.log" 2>&1 &
SERVE_PID=$!
for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "$URL" >/dev/null || fail "server did not start"

submit() { # AUTH TAG -> batch id
    python3 - "$1" "$2" "$NJOBS" > "$W/req_$2.xml" <<'PY'
import sys
auth, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
jobs = "".join(f"<job><name>{tag}_{i}</name><input_file><mode>inline</mode><source>{tag} {i}</source></input_file></job>" for i in range(n))
print(f"<submit_batch><authenticator>{auth}</authenticator><batch><app_name>primes</app_name>"
      f"<job_params><rsc_fpops_est>2e10</rsc_fpops_est><rsc_fpops_bound>2e14</rsc_fpops_bound>"
      f"<delay_bound>86400</delay_bound></job_params>{jobs}</batch></submit_batch>")
PY
    curl -s -S "${URL}submit_rpc_handler.php" --data-urlencode "request@$W/req_$2.xml" \
        | sed -n 's|.*<batch_id>\([0-9]*\)</batch_id>.*|\1|p'
}
BA=$(submit "$ALICE" alice); [ -n "$BA" ] || fail "alice's batch refused"
BB=$(submit "$BOB" bob); [ -n "$BB" ] || fail "bob's batch refused"
db="$P/volsched.db"
for _ in $(seq 1 150); do
    [ "$(sqlite3 "$db" "select count(*) from result where server_state = 2")" = $((2 * NJOBS)) ] && break
    sleep 0.2
done
[ "$(sqlite3 "$db" "select count(*) from result where server_state = 2")" = $((2 * NJOBS)) ] \
    || fail "the transitioner did not make the batches' results"
sleep 2 # a feeder rescan
"$BENCH" --target "$PORT" --path /demo/cgi-bin/cgi --auth "$AUTH" --conc 16 --secs 60 \
    --rpcs "$NSEND" >"$W/load.out" 2>&1 || { cat "$W/load.out"; fail "load generator"; }
na=$(sqlite3 "$db" "select count(*) from result where batch = $BA and server_state >= 4")
nb=$(sqlite3 "$db" "select count(*) from result where batch = $BB and server_state >= 4")
echo "jobs sent: alice (quota 1) $na, bob (quota 3) $nb"
[ $((na + nb)) -ge 1000 ] || fail "only $((na + nb)) jobs were sent"
[ "$nb" -lt "$NJOBS" ] && [ "$na" -lt "$NJOBS" ] || fail "a batch ran out of jobs: the share was not contended"
python3 -c "
import sys
na, nb = $na, $nb
share = nb / (na + nb)
print(f'bob\'s share {share:.3f}, want 0.75 +- 10%')
sys.exit(0 if abs(share - 0.75) <= 0.075 else 1)" || fail "the jobs sent do not follow the quotas 1:3"
echo "PASS: fair share between submitters"
