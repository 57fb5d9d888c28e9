#!/usr/bin/env bash
# `volsched client` end to end against `volsched serve` on loopback: attach,
# master page, scheduler RPCs, downloads (md5 + code signature; one resumed
# from a partial file), running
# examples/primes (a plain executable) and examples/boincapp (built against
# Debian's libboinc-app-dev: shared-memory channel, checkpoints, fraction
# done), uploads, reports. Every workunit must end validated and
# assimilated in the server's store with exactly one successful result,
# and boinccmd must see the client's tasks while they run.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
# The apps run at SCHED_IDLE (checked below), so any other load on the
# machine (the suite runs two tests at once) starves them: a long limit,
# which a passing run never waits out.
LIMIT=${LIMIT:-400}
VSC_WORK_PREFIX=vs_client_e2e
VSC_NO_PRIO=0   # the default priority: this test checks nice 19 + SCHED_IDLE
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

vsc_project e2e || fail "could not create the project"
# primes: 1e6 numbers near 1e9 (~1 s CPU); boincapp: 8 steps of 250 ms, checkpoints every second
vsc_jobs primes 3 2e9 "$((1000000000)) $((1001000000))" || fail "create_work primes"
vsc_jobs boincapp 3 2e9 "8 250" || fail "create_work boincapp"
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach failed"
[ -f "$C/account_127.0.0.1_${PORT}_e2e.xml" ] || fail "no account file after attach"
# half of the app already there, as after an interrupted download: it must be resumed
pdir="$C/projects/127.0.0.1_${PORT}_e2e"
size=$(stat -c %s "$PRIMES")
head -c $((size / 2)) "$PRIMES" > "$pdir/primes_100_x86_64-pc-linux-gnu"
vsc_run "$C" || fail "client did not start"

t0=$(date +%s)
saw_running=0
saw_fraction=0
saw_prio=0
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    tasks=$(vsc_bcmd --get_tasks 2>/dev/null)
    if grep -q 'active_task_state: EXECUTING' <<<"$tasks"; then
        saw_running=1
        pid=$(printf '%s\n' "$tasks" | awk '/active_task_state: EXECUTING/{f=1} f && /PID:/{print $2; exit}')
        if [ -n "$pid" ] && [ -r "/proc/$pid/stat" ]; then
            # fields after the command: 19 nice (17 after ")") and 41 policy (39); SCHED_IDLE = 5
            read -r nice policy < <(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $17, $39}')
            [ -n "$nice" ] && { [ "$nice" = 19 ] && [ "$policy" = 5 ] || fail "app $pid runs at nice $nice policy $policy, want 19 and SCHED_IDLE (5)"; }
            saw_prio=1
        fi
    fi
    if printf '%s\n' "$tasks" | grep -A30 'name: boincapp_job' | qgrep -E 'fraction done: 0\.[0-9]*[1-9]'; then
        saw_fraction=1
    fi
    [ "$(vsc_wus_done)" = 6 ] && break
    sleep 1
done
done=$(vsc_wus_done)
[ "$done" = 6 ] || fail "within ${LIMIT}s: $done of 6 workunits assimilated"
[ "$saw_running" = 1 ] || fail "boinccmd --get_tasks never showed an EXECUTING task"
[ "$saw_prio" = 1 ] || fail "never saw a running app's priority"
[ "$saw_fraction" = 1 ] || fail "boinccmd never showed a boincapp task's fraction done (shared memory app_status)"

log="$C/client.log"
grep -q 'Finished download of primes_100_x86_64-pc-linux-gnu' "$log" || fail "primes app not downloaded"
grep -q "Resuming download of primes_100_x86_64-pc-linux-gnu at byte $((size / 2))" "$log" \
    || fail "the partial app file was not resumed"
grep -q 'Finished download of boincapp_100_x86_64-pc-linux-gnu' "$log" || fail "boincapp not downloaded"
if grep -Eq 'compute error|Checksum or signature error|refus' "$log"; then
    fail "an error in the client log: $(grep -Em1 'compute error|Checksum|refus' "$log")"
fi
# exactly one successful result per workunit, nothing else sent
nres=$(vsc_store "select count(*) from result")
nok=$(vsc_store "select count(*) from result where outcome=1 and validate_state=1")
[ "$nres" = 6 ] && [ "$nok" = 6 ] || fail "store: $nres results, $nok valid successes (want 6 and 6)"
# the boincapp outputs are the app's (the client uploaded what the app wrote)
out="$PROJ/results/boincapp_job_1/out"
grep -q '^steps 8 checksum ' "$out" || fail "boincapp output missing or wrong: $(cat "$out")"
grep -q '^count ' "$PROJ/results/primes_job_1/out" || fail "primes output missing or wrong"
# the API app checkpointed (the client saw checkpoint_cpu_time change) and reported CPU time
cpu=$(vsc_store "select cpu_time from result where name like 'boincapp_job_1%'")
awk -v c="$cpu" 'BEGIN{exit !(c > 1.0)}' || fail "boincapp reported CPU time $cpu (want > 1 s)"
# the state file was written atomically (no leftovers) and the lockfile is held
[ -f "$C/client_state.xml" ] && [ ! -f "$C/client_state_next.xml" ] || fail "state files"
"$VOLSCHED" client --dir "$C" run --foreground --gui_rpc_port "$(demo_free_port)" >"$WORK/second.log" 2>&1
[ $? -ne 0 ] && grep -q 'already running' "$WORK/second.log" || fail "a second client on the same dir did not refuse: $(cat "$WORK/second.log")"
"$VOLSCHED" client --dir "$C" status | qgrep "jobs ok 6 err 0" || fail "client status: $("$VOLSCHED" client --dir "$C" status)"
vsc_stop
grep -q 'volsched client exiting' "$log" || fail "no clean exit after boinccmd --quit"
echo "ok: 6 jobs (3 plain, 3 BOINC-API) computed, uploaded, reported, validated and assimilated in $(( $(date +%s) - t0 ))s"
