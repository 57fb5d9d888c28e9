#!/usr/bin/env bash
# The backoff after a work request that brought nothing holds back work
# requests only, and a finished upload ends it (BOINC's rule, the one the
# simulators apply: src/policy/client/backoff.c). A project that allows one
# job in progress per CPU (max_wus_in_progress 1) and a one-CPU client with
# a buffer of several jobs: the client gets one job, asks for more and gets
# none, so it backs off for an hour or more (sched_retry_delay_min 3600
# here); when its job's output is uploaded the backoff ends, and the RPC that
# reports the job asks for work again and gets the next one. Before the
# rule, the client waited out the hour after each job: three jobs took hours.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_work_backoff
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

vsc_project wb || fail "could not create the project"
sed -i "s|<max_wus_in_progress>0</max_wus_in_progress>|<max_wus_in_progress>1</max_wus_in_progress>|" "$PROJ/config.xml"
grep -q "<max_wus_in_progress>1<" "$PROJ/config.xml" || fail "could not set max_wus_in_progress"
vsc_jobs primes 3 2e9 "1000000000 1001000000" || fail "create_work"
vsc_serve || fail "server did not start"
C="$WORK/client"
VSC_NCPUS=1 VSC_RETRY_MIN=3600 VSC_RETRY_MAX=14400 vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach failed"
vsc_run "$C" || fail "client did not start"

# The empty reply: a work backoff of at least half an hour, in the state file.
t0=$(date +%s) backed=""
while [ $(( $(date +%s) - t0 )) -lt 60 ]; do
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    until=$(sed -n 's:.*<vs_work_backoff_until>\([0-9.]*\)</vs_work_backoff_until>.*:\1:p' "$C/client_state.xml" 2>/dev/null | head -1)
    if [ -n "$until" ] && [ "${until%.*}" -gt $(( $(date +%s) + 1700 )) ]; then backed=$until; break; fi
    sleep 0.2
done
[ -n "$backed" ] || fail "no work backoff after the refused request"
grep -q 'got 0 new tasks' "$C/client.log" || fail "no empty reply in the log"

# All three jobs done and reported well within the hour.
t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt 120 ]; do
    [ "$(vsc_store "select count(*) from result where server_state=5 and outcome=1")" = 3 ] && break
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    sleep 1
done
done_n=$(vsc_store "select count(*) from result where server_state=5 and outcome=1")
[ "$done_n" = 3 ] || fail "$done_n of 3 jobs reported after 120 s: the work backoff was not ended by the uploads"
took=$(( $(date +%s) - t0 ))
vsc_stop
echo "ok: work backoff to $(( ${backed%.*} - t0 )) s ahead; cleared by each upload, 3 jobs reported in ${took} s"
