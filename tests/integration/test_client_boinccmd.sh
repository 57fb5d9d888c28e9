#!/usr/bin/env bash
# Debian's boinccmd drives `volsched client`: --get_tasks lists the running
# task; --task URL NAME suspend stops the BOINC-API app through shared memory
# (<suspend/>, kept in memory with leave_apps_in_memory: its CPU time stops
# growing, the process stays) and resume continues the same process; abort of
# another task is reported to the server with exit status 203; run mode
# never stops computing and auto resumes it; --project nomorework shows in
# --get_project_status; the events are in --get_messages; a wrong password
# is refused; --quit stops the client.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_bcmd
VSC_NCPUS=2
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

vsc_project bcmd || fail "could not create the project"
vsc_jobs boincapp 2 2e10 "100 250" || fail "create_work"   # ~25 s CPU each
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C" "<leave_apps_in_memory>1</leave_apps_in_memory>"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"

# field VALUE of task NAME in --get_tasks ("current CPU time", "active_task_state" ...)
task_field() {
    vsc_bcmd --get_tasks 2>/dev/null | awk -v n="$1" -v f="$2" '
        /^   name: / {cur = ($2 == n)}
        cur && index($0, "   " f ": ") == 1 {sub("^ *" f ": ", ""); print; exit}'
}
running_task() {
    vsc_bcmd --get_tasks 2>/dev/null | awk '/^   name: /{n=$2} /active_task_state: EXECUTING/{print n; exit}'
}

t0=$(date +%s)
T=""
while [ $(( $(date +%s) - t0 )) -lt 90 ]; do
    T=$(running_task)
    if [ -n "$T" ]; then
        cpu=$(task_field "$T" "current CPU time")
        awk -v c="${cpu:-0}" 'BEGIN{exit !(c > 1.5)}' && break
    fi
    sleep 1
done
[ -n "$T" ] || fail "no task ever EXECUTING in --get_tasks"
pid=$(task_field "$T" "PID")
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || fail "task $T has no live pid ($pid)"
OTHER=$(vsc_bcmd --get_tasks | awk -v t="$T" '/^   name: /{if ($2 != t) {print $2; exit}}')

# "why is it running this?": client explain is volsched explain on the live queue
ex=$("$VOLSCHED" client --dir "$C" explain) || fail "client explain failed"
grep -q "^schedule: .*$T" <<<"$ex" || fail "client explain does not schedule $T: $ex"
exj=$("$VOLSCHED" client --dir "$C" explain --json) || fail "client explain --json failed"
printf '%s' "$exj" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["policy"] == "fair" and sys.argv[1] in d["schedule"]' "$T" \
    || fail "client explain --json: $exj"
# its snapshot goes to $TMPDIR: one that does not exist makes it fail, another works
if TMPDIR="$WORK/no_such_dir" "$VOLSCHED" client --dir "$C" explain >/dev/null 2>&1; then
    fail "client explain did not use TMPDIR"
fi
mkdir -p "$WORK/tmpd"
TMPDIR="$WORK/tmpd" "$VOLSCHED" client --dir "$C" explain >/dev/null || fail "client explain with TMPDIR=$WORK/tmpd"
[ -z "$(ls -A "$WORK/tmpd")" ] || fail "client explain left its snapshot in TMPDIR"

vsc_bcmd --task "$URL" "$T" suspend || fail "boinccmd --task suspend failed"
sleep 2
[ "$(task_field "$T" "suspended via GUI")" = yes ] || fail "task not shown suspended via GUI"
c1=$(task_field "$T" "current CPU time")
sleep 4
c2=$(task_field "$T" "current CPU time")
awk -v a="$c1" -v b="$c2" 'BEGIN{exit !(b - a < 0.2)}' || fail "CPU time grew while suspended: $c1 -> $c2"
kill -0 "$pid" 2>/dev/null || fail "the suspended app left memory (leave_apps_in_memory is on)"
state=$(awk '{print $3}' "/proc/$pid/stat")
[ "$state" = S ] || fail "suspended app process state $state, want S (sleeping in the API)"

vsc_bcmd --task "$URL" "$T" resume || fail "boinccmd --task resume failed"
t1=$(date +%s); c3=$c2
while [ $(( $(date +%s) - t1 )) -lt 20 ]; do
    sleep 1
    c3=$(task_field "$T" "current CPU time")
    awk -v a="$c2" -v b="$c3" 'BEGIN{exit !(b - a > 0.5)}' && break
done
awk -v a="$c2" -v b="$c3" 'BEGIN{exit !(b - a > 0.5)}' || fail "CPU time did not grow after resume: $c2 -> $c3"
[ "$(task_field "$T" "PID")" = "$pid" ] || fail "resume restarted the app instead of continuing it"

# abort the other (queued or running) task: reported with exit status 203
[ -n "$OTHER" ] || fail "no second task"
vsc_bcmd --task "$URL" "$OTHER" abort || fail "boinccmd --task abort failed"
t1=$(date +%s)
while [ $(( $(date +%s) - t1 )) -lt 30 ]; do
    st=$(vsc_store "select exit_status from result where name='$OTHER' and server_state=5")
    [ "$st" = 203 ] && break
    sleep 1
done
[ "$st" = 203 ] || fail "aborted task not reported with exit 203 (store: '$st')"

vsc_bcmd --set_run_mode never || fail "set_run_mode never"
sleep 3
[ -z "$(running_task)" ] || fail "a task still EXECUTING with run mode never"
vsc_bcmd --get_cc_status | qgrep 'current mode: never' || fail "cc_status does not show mode never"
vsc_bcmd --set_run_mode auto || fail "set_run_mode auto"
t1=$(date +%s)
while [ $(( $(date +%s) - t1 )) -lt 15 ] && [ -z "$(running_task)" ]; do sleep 1; done
[ -n "$(running_task)" ] || fail "nothing runs again after run mode auto"

vsc_bcmd --project "$URL" nomorework || fail "project nomorework"
vsc_bcmd --get_project_status | qgrep "don't request more work: yes" || fail "nomorework not shown"
vsc_bcmd --get_state | qgrep "name: $T" || fail "--get_state does not list the task"
msgs=$(vsc_bcmd --get_messages 0)
grep -q "task $T suspended by user" <<<"$msgs" || fail "--get_messages lacks the suspend"
grep -q "Starting task" <<<"$msgs" || fail "--get_messages lacks task starts"
if (cd "$C" && boinccmd --host "127.0.0.1:$RPC_PORT" --passwd wrong --get_tasks >/dev/null 2>&1); then
    fail "a wrong password was accepted"
fi
bad=$(cd "$C" && boinccmd --host "127.0.0.1:$RPC_PORT" --passwd wrong --get_tasks 2>&1)
grep -q 'Authorization failure' <<<"$bad" || fail "no authorization failure for a wrong password: $bad"
vsc_bcmd --quit || fail "--quit"
for _ in $(seq 1 100); do kill -0 "$VSC_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$VSC_PID" 2>/dev/null && fail "client still running 10 s after --quit"
VSC_PID=""
echo "ok: boinccmd suspend ($c1 -> $c2 s while suspended), resume (-> $c3 s, same pid), abort (exit 203), run modes, nomorework, messages, auth, quit"
