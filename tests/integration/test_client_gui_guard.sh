#!/usr/bin/env bash
# The GUI RPC port cannot be used to lock the volunteer out or to stall the
# client, and remote access needs a password (security review, issue 34,
# findings 7 and 9):
#  1. an empty gui_rpc_auth.cfg with remote access allowed (cc_config
#     <allow_remote_gui_rpc>, remote_hosts.cfg, --allow_remote_gui_rpc) is
#     refused at start with a message saying what to do; with a password, or
#     without remote access, the client starts;
#  2. 40 idle unauthenticated connections (the table holds 32): boinccmd
#     still answers at once, and the idle ones are closed;
#  3. two connections that keep sending get_state requests and never read a
#     reply (one authenticated, one not): boinccmd still answers within
#     ~1 s, and both are dropped.
# The old client closed every connection past the 32nd at once, kept idle
# ones forever, and blocked in send() (5 s a reply) on a peer that did not
# read. VS_KEEP_GOING=1 reports every failed check instead of stopping.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_gui
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

nfail=0
check() {
    if [ "${VS_KEEP_GOING:-0}" = 1 ]; then echo "FAIL: $*"; nfail=$((nfail + 1)); keep=1; return 0; fi
    fail "$@"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
FLOOD_PIDS=""
cleanup() {
    local p
    for p in $FLOOD_PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    vsc_finish
}
trap cleanup EXIT

C="$WORK/client"
vsc_client_dir "$C"
remote_opt() { # tag value: cc_config with <allow_remote_gui_rpc> VALUE
    sed -i '/allow_remote_gui_rpc/d' "$C/cc_config.xml"
    sed -i "s|</options>|  <allow_remote_gui_rpc>$1</allow_remote_gui_rpc>\n  </options>|" "$C/cc_config.xml"
}
refused() { # LABEL [RUN OPTIONS]: the client must exit at once with the message
    local label=$1 rc
    shift
    local port
    port=$(demo_free_port)
    timeout 20 "$VOLSCHED" client --dir "$C" run --foreground --gui_rpc_port "$port" "$@" \
        >"$WORK/refused.out" 2>&1
    rc=$?
    [ "$rc" != 0 ] && [ "$rc" != 124 ] || { check "$label: the client ran (exit $rc)"; return; }
    grep -q "refusing to start: GUI RPC access from other hosts is allowed ($label) but gui_rpc_auth.cfg is empty" \
        "$WORK/refused.out" || check "$label: no clear message: $(tail -3 "$WORK/refused.out")"
    grep -q "Put a password in $C/gui_rpc_auth.cfg" "$WORK/refused.out" ||
        check "$label: the message does not say what to do"
}

# 1. empty password + remote access
: >"$C/gui_rpc_auth.cfg"
remote_opt 1
refused "<allow_remote_gui_rpc> in cc_config.xml"
remote_opt 0
printf '10.254.77.9\n' >"$C/remote_hosts.cfg"
refused "remote_hosts.cfg"
rm -f "$C/remote_hosts.cfg"
refused "--allow_remote_gui_rpc" --allow_remote_gui_rpc
# empty password, loopback only: starts (boinccmd needs no password then)
RPC_PW=""
vsc_run "$C" || check "an empty password without remote access was refused"
grep -q "GUI RPC listening on 127.0.0.1:$RPC_PORT" "$C/client.log" || check "not on 127.0.0.1"
vsc_stop
# a password with remote access: starts, on all interfaces
RPC_PW=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$RPC_PW" >"$C/gui_rpc_auth.cfg"
remote_opt 1
vsc_run "$C" || check "remote access with a password was refused"
grep -q "GUI RPC listening on 0.0.0.0:$RPC_PORT" "$C/client.log" || check "not on 0.0.0.0 with remote access"
vsc_stop
remote_opt 0

vsc_run "$C" || fail "client did not start"
timed_bcmd() { # LABEL LIMIT: boinccmd --get_state within LIMIT s
    local t0 d
    t0=$(now)
    (cd "$C" && timeout 30 boinccmd --host "127.0.0.1:$RPC_PORT" --passwd "$RPC_PW" --get_state) \
        >"$WORK/state.out" 2>&1
    d=$(elapsed "$t0")
    echo "$1: boinccmd --get_state answered in $d s"
    grep -q "======== Projects ========" "$WORK/state.out" ||
        { check "$1: boinccmd --get_state failed: $(head -3 "$WORK/state.out")"; return; }
    lt "$d" "$2" || check "$1: boinccmd --get_state took $d s"
}
flood() { # OUTFILE ARGS...: gui_flood.py in the background until "open"
    local out=$1 _
    shift
    python3 -u "$VS_SOURCE_DIR/tests/integration/gui_flood.py" "$RPC_PORT" "$@" >"$out" 2>&1 &
    FLOOD_PIDS="$FLOOD_PIDS $!"
    for _ in $(seq 1 100); do grep -q '^open' "$out" && return 0; sleep 0.1; done
    check "gui_flood.py $*: $(cat "$out")"
}
closed_all() { tail -1 "$1" | qgrep "^closed $2 of $2$"; }

# 2. 40 idle connections
flood "$WORK/idle.out" idle 40
timed_bcmd "40 idle connections" 3
timed_bcmd "40 idle connections, again" 3
for _ in $(seq 1 40); do closed_all "$WORK/idle.out" 40 && break; sleep 0.5; done
closed_all "$WORK/idle.out" 40 || check "idle connections still open 20 s on: $(tail -1 "$WORK/idle.out")"
for p in $FLOOD_PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done # part 3 on its own
FLOOD_PIDS=""
sleep 1

# 3. requests whose replies are never read
flood "$WORK/noread.out" noread "$RPC_PW"
for i in 1 2 3 4 5 6; do
    timed_bcmd "non-readers, round $i" 2
    sleep 1
done
for _ in $(seq 1 40); do closed_all "$WORK/noread.out" 2 && break; sleep 0.5; done
closed_all "$WORK/noread.out" 2 || check "a non-reading connection is still open: $(tail -1 "$WORK/noread.out")"
timed_bcmd "after the non-readers" 2
kill -0 "$VSC_PID" 2>/dev/null || check "the client died"
vsc_stop
grep -q "GUI RPC: a connection took no byte of its reply for 10 s; closed" "$C/client.log" ||
    check "no log line for the dropped non-reader"
[ "$nfail" = 0 ] || { echo "$nfail checks failed"; exit 1; }
echo "ok"
