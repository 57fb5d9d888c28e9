#!/usr/bin/env bash
# Debian's BOINC Manager 7.20 (boincmgr) under Xvfb against `volsched
# client`, through a relay that writes down every GUI RPC request and reply
# (gui_rpc_record.py), driven with xdotool:
#  - the Simple view, the Advanced view's Notices, Projects, Tasks,
#    Transfers, Statistics and Disk tabs, the Computing preferences dialog
#    (opened and saved) and the event log. Each step waits for the request
#    its view sends (get_statistics for Statistics, get_disk_usage for
#    Disk, get_global_prefs_working for the dialog, ...), so a view the
#    Manager never reached fails the test;
#  - no reply the Manager got was an error (no "unrecognized op");
#  - the Manager's own parsers (libboinc's RPC_CLIENT, which boincmgr is
#    built on; mgr_parse.cpp) replay every op of the session against the
#    client, each parsing to what the view shows (tasks linked to their
#    workunit and app version, disk usage with d_boinc and d_allowed, daily
#    statistics, preferences, no account manager so "Add project" shows);
#  - the Add Project wizard's requests (get_project_config, create_account,
#    lookup_account and their polls, project_attach_poll), sent with the
#    Manager's code (it hashes the password as the wizard does) to the client
#    and through it to the project: a new account, found again by lookup.
#    (Driving the wizard itself with xdotool was tried: without a window
#    manager its "Next" did not take the clicks and keys reliably.)
#  - with MGR_SHOTS=1, screenshots of the steps are kept in the work
#    directory (PNG), to look at.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_mgr
VSC_NCPUS=1
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
for tool in boincmgr Xvfb xdotool g++; do
    command -v "$tool" >/dev/null || fail "'$tool' is not installed (bash scripts/setup.sh)"
done
[ -f /usr/include/boinc/gui_rpc_client.h ] || fail "libboinc-app-dev is not installed"

# the Manager's parsers, from Debian's libboinc
g++ -std=c++11 -O1 -Wall -I/usr/include/boinc -I/usr/include/boinc/lib \
    "$VS_SOURCE_DIR/tests/integration/mgr_parse.cpp" -lboinc -o "$WORK/mgr_parse" ||
    fail "could not build mgr_parse.cpp against libboinc"

vsc_project mgr || fail "could not create the project"
vsc_jobs boincapp 3 4e11 "100 250" || fail "create_work" # they run for the whole test
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"
vsc_wait_executing 120 >/dev/null || fail "no task running"

REC="$WORK/rec.jsonl"
: > "$REC"
PP=$(demo_free_port)
python3 "$VS_SOURCE_DIR/tests/integration/gui_rpc_record.py" "$PP" "$RPC_PORT" "$REC" &
SERVE_PIDS="$SERVE_PIDS $!"
for _ in $(seq 1 50); do (echo > "/dev/tcp/127.0.0.1/$PP") 2>/dev/null && break; sleep 0.1; done

# a display of our own (Xvfb picks a free number)
Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$WORK/display" >"$WORK/xvfb.log" 2>&1 &
SERVE_PIDS="$SERVE_PIDS $!"
for _ in $(seq 1 100); do [ -s "$WORK/display" ] && break; sleep 0.1; done
[ -s "$WORK/display" ] || fail "Xvfb did not start: $(cat "$WORK/xvfb.log")"
DISPLAY=":$(head -1 "$WORK/display")"
export DISPLAY
mkdir -p "$WORK/home"
# -m: another instance allowed, -nd: do not start a client of its own
HOME="$WORK/home" boincmgr -n 127.0.0.1 -g "$PP" -p "$RPC_PW" -m -nd >"$WORK/mgr.log" 2>&1 &
MGR_PID=$!
SERVE_PIDS="$SERVE_PIDS $MGR_PID"

count() { grep -c "\"op\": \"$1\"" "$REC" || true; }
# wait_op OP BEFORE [SECS]: until the Manager has sent OP more than BEFORE times
wait_op() {
    local t0
    t0=$(date +%s)
    until [ "$(count "$1")" -gt "$2" ]; do
        kill -0 "$MGR_PID" 2>/dev/null || fail "the Manager exited: $(tail -5 "$WORK/mgr.log")"
        [ $(($(date +%s) - t0)) -lt "${3:-60}" ] || fail "the Manager sent no $1 (step: $STEP)"
        sleep 0.5
    done
}
shot() { [ "${MGR_SHOTS:-0}" = 1 ] && xwd -root -silent > "$WORK/$1.xwd"; return 0; }
mgr_win() { xdotool search --pid "$MGR_PID" --name "BOINC Manager" 2>/dev/null | tail -1; }
# keys KEY...: to the Manager's main window, pointer over it
keys() {
    local w
    w=$(mgr_win)
    [ -n "$w" ] || fail "no Manager window (step: $STEP)"
    xdotool windowfocus --sync "$w" 2>/dev/null || true
    xdotool key --delay 150 "$@"
}

STEP="connect"
wait_op get_state 0 90
wait_op get_all_projects_list 0

wait_op get_results 0
STEP="simple view"
sleep 2
shot simple
STEP="advanced view"
n=$(count get_notices)
keys ctrl+shift+a
wait_op get_notices "$n"
for v in "p get_project_status projects" "t get_results tasks" "x get_file_transfers transfers" \
    "s get_statistics statistics" "d get_disk_usage disk" "n get_notices notices"; do
    # shellcheck disable=SC2086 # the three words of $v
    set -- $v
    STEP="$3 tab"
    n=$(count "$2")
    keys "ctrl+shift+$1"
    wait_op "$2" "$n"
    sleep 1
    shot "$3"
done

# Options > Computing preferences: it reads the working and override sets;
# saved, it writes the override and has the client read it
STEP="preferences dialog"
n=$(count get_global_prefs_working)
keys alt+o p
wait_op get_global_prefs_working "$n"
wait_op get_global_prefs_override 0
sleep 2
shot prefs
STEP="preferences saved"
n=$(count read_global_prefs_override)
w=$(xdotool search --pid "$MGR_PID" --name 'preferences' 2>/dev/null | tail -1)
[ -n "$w" ] || fail "no preferences dialog window"
xdotool windowfocus --sync "$w" 2>/dev/null || true
xdotool key Return
wait_op read_global_prefs_override "$n" 30
wait_op set_global_prefs_override 0

STEP="event log"
n=$(count get_messages)
keys ctrl+shift+e
wait_op get_messages "$n"
sleep 2
shot eventlog

# ---- what the Manager got ----------------------------------------------------
python3 - "$REC" > "$WORK/ops" <<'PY' || fail "the Manager got error replies: $(cat "$WORK/ops")"
import json, sys
ops, bad = [], []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["op"] not in ops:
        ops.append(r["op"])
    rep = r["reply"]
    if "unrecognized op" in rep or ("<error>" in rep and r["op"] not in ("get_global_prefs_file",)):
        bad.append(r["op"] + ": " + rep[:200])
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("\n".join(ops))
PY
nops=$(wc -l < "$WORK/ops")
echo "the Manager sent $(wc -l < "$REC") requests of $nops kinds: $(tr '\n' ' ' < "$WORK/ops")"
mapfile -t OPS < "$WORK/ops"
WIZARD_OPS=(get_project_config_poll create_account_poll lookup_account_poll project_attach_poll)
MGR_URL="$URL" MGR_EMAIL=wizard.user@example.org MGR_PASSWD='wizard pw 7' "$WORK/mgr_parse" "$RPC_PORT" "$RPC_PW" "${OPS[@]}" "${WIZARD_OPS[@]}" > "$WORK/parse.out" 2>&1 ||
    fail "the Manager's parsers:
$(cat "$WORK/parse.out")"
cat "$WORK/parse.out"
[ "$(vsc_store "select name from user where email_addr='wizard.user@example.org'")" = "Wizard User" ] ||
    fail "the wizard's create_account made no account at the project"
for op in get_statistics get_disk_usage get_global_prefs_working get_global_prefs_override acct_mgr_info \
    create_account_poll lookup_account_poll; do
    qgrep "^$op: ok" "$WORK/parse.out" || fail "the session did not cover $op"
done
grep -q 'GUI RPC: unrecognized op' "$C/client.log" && fail "the client logged an unrecognized op: $(grep 'unrecognized op' "$C/client.log")"
kill -TERM "$MGR_PID" 2>/dev/null
if [ "${MGR_SHOTS:-0}" = 1 ]; then
    for f in "$WORK"/*.xwd; do python3 "$VS_SOURCE_DIR/tests/manual/xwd2png.py" "$f" "${f%.xwd}.png"; done
    keep=1
fi
echo "PASS: BOINC Manager 7.20 went through the Simple view, six tabs, the preferences dialog and the event log; $nops kinds of request, every reply parsed by its own code"
