#!/usr/bin/env bash
# The real BOINC client (Debian's boinc-client 7.20) against `volsched serve`:
# a project with the examples/primes app and 6 jobs is served on loopback; a
# private client attaches with the volunteer's authenticator and must, within
# the time limit, receive at least 2 tasks, download the app and the inputs
# (the client checks the code signature of the app and the md5 of each
# input) and start at least 2 of them. The server's store must record the
# sent results as IN_PROGRESS for the client's host, and the server must
# stop cleanly on SIGTERM. Evidence comes from the client's own log and its
# GUI RPC (boinccmd).
set -uo pipefail
LIMIT=${LIMIT:-150}
RC_WORK_PREFIX=vs_real_client
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

# Each job counts primes over 4e6 numbers near 1e9 (a few seconds): long enough to be seen
# running, short enough not to matter.
demo_make_project 6 4000000 || fail "could not create the project"
demo_serve || fail "server did not start"
demo_client_start || fail "client did not start or attach"

t0=$(date +%s)
ok=0
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "server died"
    kill -0 "$BOINC_PID" 2>/dev/null || fail "client died"
    recv=$(demo_tasks_received)
    started=$(demo_count 'Starting task')
    if [ "$recv" -ge 2 ] && [ "$started" -ge 2 ]; then ok=1; break; fi
    sleep 2
done
demo_progress_line $(( $(date +%s) - t0 ))
[ "$ok" = 1 ] || fail "within ${LIMIT}s: received $(demo_tasks_received) tasks, started $(demo_count 'Starting task') (want >= 2 each)"

log="$BOINC_DIR/client.log"
# Downloads: the app and every started task's input, verified by the client.
grep -q 'Finished download of primes_100_x86_64-pc-linux-gnu' "$log" || fail "app not downloaded"
ninputs=$(grep -c 'Finished download of primes_in_' "$log")
[ "$ninputs" -ge 2 ] || fail "only $ninputs input files downloaded"
if grep -Eq 'MD5 check failed|Signature verification failed|missing signature|Checksum or signature error' "$log"; then
    fail "the client rejected a file: $(grep -Em1 'MD5 check failed|Signature|signature' "$log")"
fi
if grep -q 'Unrecoverable error for task' "$log"; then
    fail "a task failed: $(grep -m1 'Unrecoverable error' "$log")"
fi
# The client's view: tasks of this project, some executing.
tasks=$(demo_bcmd --get_tasks 2>/dev/null)
ntasks=$(printf '%s\n' "$tasks" | grep -c '^   name: primes_job_')
[ "$ntasks" -ge 2 ] || fail "boinccmd --get_tasks lists $ntasks tasks"
# The server's view: what the client holds is recorded as sent to its host.
hostid=$(sed -n 's:.*<hostid>\([0-9]*\)</hostid>.*:\1:p' "$BOINC_DIR"/client_state.xml | head -1)
db="$WORK/project/volsched.db"
nsent=$(sqlite3 "$db" "select count(*) from result where server_state=4 and hostid=$hostid")
[ "$nsent" -ge "$ntasks" ] || fail "store records $nsent results IN_PROGRESS for host $hostid, client holds $ntasks"
nhost=$(sqlite3 "$db" "select count(*) from host")
[ "$nhost" = 1 ] || fail "store has $nhost hosts, want 1"

demo_client_stop
demo_serve_stop; rc=$?
[ "$rc" = 0 ] || fail "server exit status $rc after SIGTERM, want 0"
grep -q 'stopped' "$WORK/serve.log" || fail "server log has no clean stop"
echo "ok: real client received $ntasks tasks ($nsent recorded on host $hostid), downloaded app + $ninputs inputs, started $(demo_count 'Starting task')"
