#!/usr/bin/env bash
# One project floods the client (flood_project.py: 12 replies of 2,500 new
# tasks, 2,500 workunits no task names and 250 files nothing names each,
# next_rpc_delay 1), beside an honest `volsched serve` project. Then the
# honest project gets a job. Before the per-project caps, the flood took
# the client's 20,000-task cap for itself, its workunits piled up without
# bound (RSS and client_state.xml with them) and the honest project's job
# was dropped without a word while its server recorded it as sent. Now:
#  - the flooding project holds at most its share (20,000 / 2 projects) and
#    gets "Refused N of M new tasks: this project is at its limit of 10000
#    tasks", and the next request's <other_results> lists only what it holds
#    (so its server can tell the rest were not kept);
#  - workunits no task names and files nothing names are not kept
#    ("Ignored ..."), and no such file is downloaded;
#  - the client's peak RSS and its state file stay bounded;
#  - the honest project's job is received, run and validated;
#  - with nothing changing, the state file is not rewritten every second.
# ~2 min.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_limits
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
RSS_MAX_MB=${RSS_MAX_MB:-100}
STATE_MAX_MB=${STATE_MAX_MB:-12}

vsc_project honest || fail "could not create the project"
vsc_serve || fail "server did not start"
vsc_flood flood 2500 12 || fail "the flooding project did not start"

C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach honest"
"$VOLSCHED" client --dir "$C" attach "$FURL" "k" || fail "attach flood"
vsc_run "$C" || fail "client did not start"

hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$VSC_PID/status"; }
state_kb() { echo $(( $(stat -c %s "$C/client_state.xml" 2>/dev/null || echo 0) / 1024 )); }
max_state=0
t0=$(date +%s)
while [ "$(stat_of rpcs)" -le 12 ] && [ $(( $(date +%s) - t0 )) -lt 240 ]; do
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died during the flood"
    s=$(state_kb); [ "$s" -gt "$max_state" ] && max_state=$s
    sleep 1
done
[ "$(stat_of rpcs)" -gt 12 ] || fail "the flood did not end in 240 s ($(stat_of rpcs) RPCs)"
s=$(state_kb); [ "$s" -gt "$max_state" ] && max_state=$s
echo "flood: $(stat_of results_sent) tasks sent in $(stat_of rpcs) RPCs; the last request listed $(stat_of other_results); peak RSS $(( $(hwm) / 1024 )) MB, state file up to $((max_state / 1024)) MB"

# the honest project's job, after the flood
vsc_jobs primes 1 2e9 "1000000000 1000200000" || fail "create_work"
vsc_bcmd --project "$URL" update >/dev/null || fail "boinccmd update"
done_one() { [ "$(vsc_wus_done)" = 1 ]; }
t0=$(date +%s)
until done_one; do
    [ $(( $(date +%s) - t0 )) -lt 150 ] || fail "the honest project's job was not run and validated in 150 s (sent: $(vsc_store "select count(*) from result where server_state=4 or server_state=5"))"
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    sleep 1
done
echo "the honest project's job was run and validated"

# quiet now: the state is written when something changes, not every second
sleep 3
w0=$(stat -c %y "$C/client_state.xml" 2>/dev/null)
writes=0
for _ in $(seq 1 40); do
    sleep 0.25
    w=$(stat -c %y "$C/client_state.xml" 2>/dev/null)
    [ "$w" != "$w0" ] && writes=$((writes + 1)) && w0=$w
done
echo "state file writes in 10 quiet seconds: $writes"

peak=$(( $(hwm) / 1024 ))
log="$C/client.log"
grep -q "\[flood\] Refused [0-9]* of 2500 new tasks: this project is at its limit of 10000 tasks" "$log" \
    || fail "no 'Refused ... limit of 10000 tasks' message for the flooding project"
grep -q "\[flood\] Ignored [0-9]* workunits no task of the reply names and [0-9]* files nothing names" "$log" \
    || fail "no 'Ignored ...' message for the flooding project"
msgs=$(vsc_bcmd --get_messages 0) || fail "boinccmd --get_messages"
grep -q "this project is at its limit of 10000 tasks" <<<"$msgs" \
    || fail "--get_messages lacks the refusal"
other=$(stat_of other_results)
[ "$other" -le 10000 ] || fail "the last request listed $other tasks of the flooding project (its cap: 10000)"
[ "$(stat_of junk_gets)" = 0 ] || fail "$(stat_of junk_gets) files nothing names were downloaded"
[ "$peak" -le "$RSS_MAX_MB" ] || fail "peak RSS $peak MB (want <= $RSS_MAX_MB)"
[ "$max_state" -le $((STATE_MAX_MB * 1024)) ] || fail "state file reached $((max_state / 1024)) MB (want <= $STATE_MAX_MB)"
[ "$writes" -le 4 ] || fail "the state file was rewritten $writes times in 10 quiet seconds"
grep -q "Couldn't write state file" "$log" && fail "a state write failed"
vsc_stop
echo "ok: flood capped (last request listed $other of $(stat_of results_sent)), nothing unused downloaded, peak RSS $peak MB, state <= $((max_state / 1024)) MB, $writes state writes in 10 quiet s, honest job done"
