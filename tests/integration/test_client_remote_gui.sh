#!/usr/bin/env bash
# The client's GUI RPC answers other hosts only as BOINC's does: without
# remote_hosts.cfg it listens on 127.0.0.1 alone (a connection to another
# address of this machine is refused by the kernel); with remote_hosts.cfg it
# listens on every address and serves the hosts listed there (Debian's
# boinccmd --host works from one), and closes connections from any other
# host with a log line. A non-loopback address for the test is added to lo
# (10.254.77.1/32; root), so a peer that is not 127.x exists on any machine.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_rgui
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

ADDR=10.254.77.1
added=0
cleanup() {
    vsc_finish
    [ "$added" = 1 ] && ip addr del "$ADDR/32" dev lo 2>/dev/null
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "FAIL: this test adds an address to lo and needs root"; exit 1; }
if ! ip -4 addr show dev lo | qgrep "inet $ADDR/"; then
    ip addr add "$ADDR/32" dev lo || { echo "FAIL: cannot add $ADDR to lo"; exit 1; }
    added=1
fi
remote_bcmd() { (cd "$VSC_DIR" && boinccmd --host "$ADDR:$RPC_PORT" --passwd "$RPC_PW" "$@"); }

C="$WORK/client"
vsc_client_dir "$C"
# 1. No remote_hosts.cfg: loopback only.
vsc_run "$C" || fail "client did not start"
grep -q "GUI RPC listening on 127.0.0.1:$RPC_PORT" "$C/client.log" || fail "not on 127.0.0.1 alone"
remote_bcmd --client_version >"$WORK/out" 2>&1 && fail "answered $ADDR without remote_hosts.cfg"
vsc_bcmd --client_version >/dev/null 2>&1 || fail "loopback no longer answers"
vsc_stop

# 2. remote_hosts.cfg names the peer: it is served, by name list, on 0.0.0.0.
printf '# hosts allowed to control this client\n%s\n' "$ADDR" >"$C/remote_hosts.cfg"
vsc_run "$C" || fail "client did not start with remote_hosts.cfg"
grep -q "GUI RPC listening on 0.0.0.0:$RPC_PORT" "$C/client.log" || fail "not on 0.0.0.0"
remote_bcmd --get_state >"$WORK/state" 2>&1 || { cat "$WORK/state"; fail "listed host refused"; }
grep -q "======== Projects ========" "$WORK/state" || fail "get_state from the listed host: $(head -5 "$WORK/state")"
vsc_stop

# 3. remote_hosts.cfg names another host: this peer is closed and logged.
printf '10.254.77.9\n' >"$C/remote_hosts.cfg"
vsc_run "$C" || fail "client did not start"
remote_bcmd --get_state >"$WORK/state" 2>&1
grep -q "======== Projects ========" "$WORK/state" && fail "a host not in remote_hosts.cfg got the state"
vsc_bcmd --client_version >/dev/null 2>&1 || fail "loopback refused with a remote_hosts.cfg"
vsc_stop # the log is flushed at exit
grep -q "refused a connection from a host not in remote_hosts.cfg" "$C/client.log" ||
    fail "no log line for the refused host"
echo "ok"
