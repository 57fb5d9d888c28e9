#!/usr/bin/env bash
# The rest of what Debian's boinccmd drives (test_client_boinccmd.sh has the
# task operations), and apps that ignore <quit/> and <abort/>:
#  - --project_attach URL AUTH on a running client attaches a second project,
#    which then gets work;
#  - --get_simple_gui_info lists both projects and their tasks;
#  - --project URL suspend stops the project's tasks (shown "suspended via
#    GUI"), the other project's task gets the CPU, resume runs them again;
#  - --project URL detach removes the second project, its tasks and files;
#  - an API app that never reads its shared memory ("hang": a script
#    registered with an api_version) is killed quit_timeout seconds after
#    <abort/> (the task is reported aborted, 203) and after <quit/> at
#    shutdown, each with "Task T did not exit N s after <...>; killing it"
#    in the log and --get_messages; the client goes on. The delay is
#    BOINC's 60 s by default; cc_config <quit_timeout> sets it (3 s here).
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_ctl
VSC_NCPUS=4
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

HANG="$WORK/hang.sh"
cat > "$HANG" <<'EOF'
#!/bin/sh
# ignores SIGTERM and never calls boinc_init, so never sees <quit/> or <abort/>
trap '' TERM
i=0
while [ "$i" -lt 600 ]; do sleep 1; i=$((i + 1)); done
EOF
chmod +x "$HANG"

vsc_project ctl || fail "could not create project ctl"
URL_A=$URL AUTH_A=$AUTH PROJ_A=$PROJ
"$VOLSCHED" app add --project "$PROJ" --name hang --platform x86_64-pc-linux-gnu \
    --version 100 --api-version 7.20.5 "$HANG" >/dev/null || fail "app add hang"
vsc_jobs boincapp 2 1e9 "400 250" || fail "create_work boincapp"   # ~100 s CPU, never ends here
vsc_jobs hang 2 1e9 "x" || fail "create_work hang"
vsc_serve || fail "server ctl did not start"
vsc_project other || fail "could not create project other"
URL_B=$URL AUTH_B=$AUTH PROJ_B=$PROJ
vsc_jobs boincapp 1 1e9 "400 250" || fail "create_work other"
vsc_serve || fail "server other did not start"

C="$WORK/client"
vsc_client_dir "$C" "<leave_apps_in_memory>0</leave_apps_in_memory>"
sed -i 's|</options>|  <quit_timeout>3</quit_timeout>\n  </options>|' "$C/cc_config.xml"
"$VOLSCHED" client --dir "$C" attach "$URL_A" "$AUTH_A" || fail "attach ctl"
vsc_run "$C" || fail "client did not start"

# names of the tasks EXECUTING (of project URL if given)
executing() {
    vsc_bcmd --get_tasks 2>/dev/null | awk -v u="${1:-}" '
        /^   name: / {n = $2} /^   project URL: / {p = $3}
        /active_task_state: EXECUTING/ {if (u == "" || p == u) print n}'
}
wait_for() { # SECONDS COMMAND...: until COMMAND succeeds
    local t=$1 t0
    shift
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "$t" ]; do "$@" && return 0; sleep 1; done
    return 1
}
four_running() { [ "$(executing "$URL_A" | wc -l)" -ge 4 ]; }
wait_for 60 four_running || fail "the 4 tasks of ctl never all EXECUTING: $(executing)"

vsc_bcmd --project_attach "$URL_B" "$AUTH_B" || fail "boinccmd --project_attach failed"
b_listed() { vsc_bcmd --get_project_status | qgrep "master URL: $URL_B"; }
wait_for 20 b_listed || fail "--project_attach: project other not in --get_project_status"
b_task() { vsc_bcmd --get_tasks | qgrep "project URL: $URL_B"; }
wait_for 30 b_task || fail "the attached project got no task"
[ -f "$C/account_127.0.0.1_${PORT}_other.xml" ] || fail "no account file for the attached project"

gui=$(vsc_bcmd --get_simple_gui_info) || fail "--get_simple_gui_info failed"
for want in "======== Projects ========" "name: ctl" "name: other" "======== Tasks ========" \
    "project URL: $URL_A" "project URL: $URL_B" "boincapp_job_1_0" "hang_job_1_0"; do
    grep -qF -- "$want" <<<"$gui" || fail "--get_simple_gui_info lacks '$want': $gui"
done

# <abort/> to an app that ignores it: killed quit_timeout (3 s) later
hpid=$(vsc_bcmd --get_tasks | awk '/^   name: /{n=$2} n=="hang_job_1_0" && /^   PID: /{print $2; exit}')
[ -n "$hpid" ] && kill -0 "$hpid" 2>/dev/null || fail "hang_job_1_0 has no live pid ($hpid)"
vsc_bcmd --task "$URL_A" hang_job_1_0 abort || fail "--task abort"
killed() { vsc_bcmd --get_messages 0 | qgrep "Task hang_job_1_0 did not exit 3 s after <abort/>; killing it"; }
wait_for 15 killed || fail "no 'did not exit 3 s after <abort/>' message"
gone() { ! kill -0 "$hpid" 2>/dev/null; }
wait_for 5 gone || fail "hang_job_1_0 (pid $hpid) still alive after the kill"
PROJ=$PROJ_A
reported() { [ "$(vsc_store "select exit_status from result where name='hang_job_1_0' and server_state=5")" = 203 ]; }
wait_for 30 reported || fail "the killed task was not reported aborted (203)"

# project suspend: ctl's tasks stop, other's task gets a CPU; resume
vsc_bcmd --project "$URL_A" suspend || fail "--project suspend"
a_stopped() { [ -z "$(executing "$URL_A")" ]; }
wait_for 20 a_stopped || fail "tasks of the suspended project still EXECUTING: $(executing "$URL_A")"
vsc_bcmd --get_project_status | awk -v u="$URL_A" '/master URL: /{m=($3==u)} m && /suspended via GUI: yes/{f=1} END{exit !f}' \
    || fail "--get_project_status does not show ctl suspended via GUI"
b_runs() { [ -n "$(executing "$URL_B")" ]; }
wait_for 20 b_runs || fail "the other project's task did not run while ctl was suspended"
vsc_bcmd --project "$URL_A" resume || fail "--project resume"
a_runs() { [ "$(executing "$URL_A" | grep -c boincapp)" -ge 1 ]; }
wait_for 20 a_runs || fail "ctl's tasks did not run again after resume"

# detach the other project: its tasks, files and account go
bdir="$C/projects/127.0.0.1_${PORT}_other"
[ -d "$bdir" ] || fail "no project dir $bdir"
vsc_bcmd --project "$URL_B" detach || fail "--project detach"
b_gone() { ! vsc_bcmd --get_project_status | qgrep "master URL: $URL_B"; }
wait_for 10 b_gone || fail "detached project still in --get_project_status"
vsc_bcmd --get_tasks | qgrep "project URL: $URL_B" && fail "tasks of the detached project remain"
[ -d "$bdir" ] && fail "the detached project's directory remains"
[ -f "$C/account_127.0.0.1_${PORT}_other.xml" ] && fail "the detached project's account file remains"
vsc_bcmd --get_messages 0 | qgrep "Detached from $URL_B" || fail "no 'Detached from' message"
wait_for 10 a_runs || fail "ctl's tasks stopped after the detach"

# <quit/> at shutdown to an app that ignores it: killed 3 s later, the client exits
h2=$(vsc_bcmd --get_tasks | awk '/^   name: /{n=$2} n=="hang_job_2_0" && /^   PID: /{print $2; exit}')
[ -n "$h2" ] && kill -0 "$h2" 2>/dev/null || fail "hang_job_2_0 not running ($h2)"
t0=$(date +%s)
vsc_bcmd --quit || fail "--quit"
for _ in $(seq 1 300); do kill -0 "$VSC_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$VSC_PID" 2>/dev/null && fail "client still running 30 s after --quit"
wait "$VSC_PID" 2>/dev/null
VSC_PID=""
took=$(( $(date +%s) - t0 ))
grep -q "Task hang_job_2_0 did not exit 3 s after <quit/>; killing it" "$C/client.log" \
    || fail "no 'did not exit 3 s after <quit/>' in the log"
kill -0 "$h2" 2>/dev/null && fail "hang_job_2_0 (pid $h2) survived the client"
echo "ok: project_attach, simple_gui_info, project suspend/resume/detach; an app ignoring <abort/> and <quit/> killed 3 s later (client exit ${took}s after --quit)"
