#!/usr/bin/env bash
# Seed 000's "no work because of deadlines", for real: a project whose every
# job would miss its deadline on this host (a job estimated at days, a
# one-hour delay bound). `volsched serve` sends nothing, says why, and puts
# the flag and a request delay in its reply; the volsched client marks the
# project latency-limited for that delay (its log, `client status`, `client
# status --json`, `client explain`), does not ask it again meanwhile, and
# does not count the reply as an empty one (no work backoff). Debian's
# boinc-client 7.20.5 gets the same reply: it shows the server's message,
# keeps the request delay, and takes no offence at the flag (an element it
# does not know).
set -uo pipefail
VSC_WORK_PREFIX=vs_client_latency
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
command -v boinc >/dev/null || { echo "FAIL: 'boinc' is not installed (bash scripts/setup.sh)"; exit 1; }
BOINC_PID=""
stop_real() { [ -n "$BOINC_PID" ] && demo_client_stop >/dev/null 2>&1; BOINC_PID=""; }
trap 'stop_real; vsc_finish' EXIT

vsc_project lat || fail "could not create the project"
# 1e15 flops: days at this host's speed; the delay bound is an hour.
vsc_jobs primes 5 1e15 "1000000000 1000100000" 1e16 3600 || fail "create_work"
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach failed"
vsc_run "$C" || fail "client did not start"

t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt 60 ]; do
    grep -q 'latency-limited for' "$C/client.log" && break
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    sleep 0.5
done
grep -q 'latency-limited for' "$C/client.log" || fail "the client never marked the project latency-limited"
grep -q "Tasks won't finish in time" "$C/client.log" || fail "the server's reason is not in the client's messages"
reply="$C/sched_reply_127.0.0.1_${PORT}_lat.xml"
grep -q '<vs_no_work_because_of_deadlines/>' "$reply" || fail "the reply has no deadline flag: $(cat "$reply")"
delay=$(sed -n 's:.*<request_delay>\([0-9.]*\)</request_delay>.*:\1:p' "$reply")
[ "${delay%.*}" = 600 ] || fail "request_delay '$delay', want 600"
[ "$(vsc_store "select count(*) from result where server_state=4")" = 0 ] || fail "a job was sent"

# Status and explain, from the state file, while the daemon runs.
st=$("$VOLSCHED" client --dir "$C" status) || fail "client status failed"
grep -Eq 'latency-limited for (5[0-9][0-9]|600) s' <<<"$st" || fail "status: $st"
js=$("$VOLSCHED" client --dir "$C" status --json) || fail "status --json failed"
lat=$(printf '%s' "$js" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["projects"][0]["latency_limited_for"]))')
[ "$lat" -gt 500 ] && [ "$lat" -le 600 ] || fail "status --json latency_limited_for $lat"
ex=$("$VOLSCHED" client --dir "$C" explain) || fail "client explain failed"
grep -q 'latency_limited' <<<"$ex" || fail "explain does not say latency-limited: $ex"
# Not an empty reply: no work backoff, and no second request within the delay.
sleep 5
nrpc=$(grep -c 'Requesting new tasks' "$C/client.log")
[ "$nrpc" = 1 ] || fail "$nrpc work requests within the delay, want 1"
grep -q '<vs_work_backoff_until>[1-9]' "$C/client_state.xml" && fail "the reply was backed off as an empty one"
vsc_stop

# Debian's client against the same server: the message, the delay, no complaint.
demo_client_start || fail "Debian's boinc did not start or attach"
t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt 60 ]; do
    grep -q "Tasks won't finish in time" "$BOINC_DIR/client.log" && break
    kill -0 "$BOINC_PID" 2>/dev/null || fail "boinc died"
    sleep 1
done
blog="$BOINC_DIR/client.log"
grep -q "Tasks won't finish in time" "$blog" || fail "Debian's client shows no reason: $(tail -20 "$blog")"
grep -q 'Project requested delay of 600 seconds' "$blog" || fail "Debian's client did not keep the delay: $(tail -20 "$blog")"
grep -Eiq 'unparsed|parse error|error .* scheduler reply' "$blog" && fail "Debian's client complained: $(grep -Ei 'unparsed|parse' "$blog")"
stop_real
echo "ok: latency-limited for ${lat} s after 'no work because of deadlines' (delay $delay s, one request); Debian's client kept the delay"
