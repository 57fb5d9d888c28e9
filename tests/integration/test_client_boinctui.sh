#!/usr/bin/env bash
# Debian's boinctui 2.7.0 (the text-mode manager) runs against `volsched
# client` in a tmux pane: it starts and stays up (it crashed within a second
# when get_disk_usage had no d_boinc / d_allowed), lists the tasks, and its
# "S" key suspends the selected task (boinccmd then shows it suspended via
# GUI); the statistics, disk and host views it polls parse.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_btui
VSC_NCPUS=1
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
for tool in boinctui tmux; do
    command -v "$tool" >/dev/null || fail "'$tool' is not installed (bash scripts/setup.sh)"
done

TMUX_SOCK="vs_btui_$$"
tmux_stop() { tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true; }
trap 'tmux_stop; vsc_finish' EXIT

vsc_project btui || fail "could not create the project"
vsc_jobs boincapp 2 4e11 "100 250" || fail "create_work"   # long: they run for the whole test
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"

T=$(vsc_wait_executing) || fail "no task ever EXECUTING"
ntasks=$(vsc_bcmd --get_tasks | grep -c '^   name: ')
[ "$ntasks" -ge 2 ] || fail "want 2 tasks in the client, have $ntasks"

mkdir -p "$WORK/home"
# its configuration (without one it opens the configuration dialog first)
cat > "$WORK/home/.boinctui.cfg" <<CFG
<boinctui_cfg>
<boinchost>
<host>127.0.0.1</host>
<port>$RPC_PORT</port>
<pwd>$RPC_PW</pwd>
</boinchost>
</boinctui_cfg>
CFG
tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s btui -x 200 -y 50 \
    "env HOME=$WORK/home TERM=xterm boinctui --boinchost=127.0.0.1:$RPC_PORT --pwd=$RPC_PW" ||
    fail "tmux could not start boinctui"
tmux -L "$TMUX_SOCK" set-option -t btui remain-on-exit on >/dev/null
screen() { tmux -L "$TMUX_SOCK" capture-pane -p -t btui; }
dead() { [ "$(tmux -L "$TMUX_SOCK" display-message -p -t btui '#{pane_dead}')" = 1 ]; }

# the task list: both task names on the screen, boinctui alive all along
t0=$(date +%s)
while :; do
    dead && fail "boinctui exited (crashed?): $(screen | tail -5)"
    n=$(screen | grep -c 'boincapp_job_')
    [ "$n" -ge 2 ] && break
    [ $(( $(date +%s) - t0 )) -lt 30 ] || fail "boinctui does not list the 2 tasks:
$(screen)"
    sleep 0.5
done
sleep 3 # several refreshes (it polls every second): still up
dead && fail "boinctui exited after listing the tasks: $(screen | tail -5)"
screen | qgrep 'EXECUTING\|Running\|run' || fail "no running task shown:
$(screen)"

# select the first task, suspend it with "S"
tmux -L "$TMUX_SOCK" send-keys -t btui Down
sleep 1
tmux -L "$TMUX_SOCK" send-keys -t btui S
t0=$(date +%s)
until vsc_bcmd --get_tasks | qgrep 'suspended via GUI: yes'; do
    [ $(( $(date +%s) - t0 )) -lt 15 ] || fail "\"S\" in boinctui suspended no task:
$(screen)"
    sleep 0.5
done
grep -q 'suspended by user' "$C/client.log" || fail "no log line for the suspension"
dead && fail "boinctui exited after the suspend"
tmux -L "$TMUX_SOCK" send-keys -t btui Q
echo "PASS: boinctui lists the tasks and suspends one"
