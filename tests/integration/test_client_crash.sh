#!/usr/bin/env bash
# Crash safety: `volsched client` is killed with SIGKILL twice in the middle
# of a run (tasks running, others queued, uploads and reports in flight) and
# started again each time. Every workunit must end assimilated with exactly
# one successful result in the server's store (no result lost, none
# errored), each result acknowledged exactly once in the client's log, and
# the apps the killed client left behind must be taken care of by the next
# one (restarted from their checkpoints in their slots).
set -uo pipefail
LIMIT=${LIMIT:-240}
VSC_WORK_PREFIX=vs_client_crash
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

vsc_project crash || fail "could not create the project"
vsc_jobs primes 6 2e9 "1000000000 1002000000" || fail "create_work primes"   # ~2 s CPU
vsc_jobs boincapp 4 2e9 "12 250" || fail "create_work boincapp"             # ~3 s CPU
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
N=10

t0=$(date +%s)
for round in 1 2; do
    vsc_run "$C" || fail "client did not start (round $round)"
    # wait until something is running, then a little more, then kill -9
    for _ in $(seq 1 60); do
        grep -q 'Starting task\|Restarting task' "$C/client.log" && break
        sleep 0.5
    done
    sleep $(( round + 2 ))
    vsc_kill9
    echo "round $round: killed the client with $(vsc_orphans | wc -w) app process(es) left running"
    # the state file is replaced by a rename over it: no moment without one
    [ -f "$C/client_state.xml" ] || fail "no client_state.xml after kill -9 ($(ls "$C" | grep client_state | tr '\n' ' '))"
    sleep 1
done
# Apps the last kill left behind. A BOINC-API app may also quit by itself
# when it sees its client gone, so the restarted client meets them only if
# they are still there when it starts; either way none may run on beside it.
before=$(vsc_orphans)
vsc_run "$C" || fail "client did not start after the crashes"
# The limit counts from this start: the kill rounds before it take as long
# as a loaded machine makes them.
t1=$(date +%s)
while [ $(( $(date +%s) - t1 )) -lt "$LIMIT" ]; do
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    [ "$(vsc_wus_done)" = "$N" ] && break
    sleep 1
done
done=$(vsc_wus_done)
[ "$done" = "$N" ] || fail "within ${LIMIT}s of the last start: $done of $N workunits assimilated"
nres=$(vsc_store "select count(*) from result")
nok=$(vsc_store "select count(*) from result where outcome=1 and validate_state=1")
[ "$nres" = "$N" ] && [ "$nok" = "$N" ] || fail "store: $nres results, $nok valid successes (want $N and $N)"
dup=$(grep -o 'got ack for task [^ ]*' "$C/client.log" | sort | uniq -d)
[ -z "$dup" ] || fail "results acknowledged twice: $dup"
nack=$(grep -o 'got ack for task [^ ]*' "$C/client.log" | sort -u | wc -l)
[ "$nack" = "$N" ] || fail "$nack results acknowledged, want $N"
for p in $before; do
    if kill -0 "$p" 2>/dev/null && ! grep -q "process $p of the previous run\|Process $p of the previous run" "$C/client.log"; then
        fail "app process $p of the killed client still runs and the restarted client never met it"
    fi
done
vsc_stop
left=$(vsc_orphans | wc -w)
[ "$left" = 0 ] || fail "$left app processes still running after the client stopped"
echo "ok: 2 x kill -9, $N jobs each completed and reported exactly once in $(( $(date +%s) - t0 ))s"
