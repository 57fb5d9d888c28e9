#!/usr/bin/env bash
# The client's web page (served on the GUI RPC port), in headless Chromium
# driven through the DevTools protocol (webui_drive.py): with the token from
# gui_rpc_auth.cfg it lists the tasks with their progress and a Suspend
# click suspends one (boinccmd then shows it suspended via GUI); without the
# token, or with a wrong one, POST /rpc answers 401 (logged) and the page
# shows no data; a request naming another host is refused (DNS rebinding);
# from another address of this machine the page cannot be reached unless
# remote_hosts.cfg lists that address, and then only with the token.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_webui
VSC_NCPUS=1
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
for tool in chromium; do
    command -v "$tool" >/dev/null || fail "'$tool' is not installed (bash scripts/setup.sh)"
done
DRIVE=(python3 "$VS_SOURCE_DIR/tests/integration/webui_drive.py")

vsc_project webui || fail "could not create the project"
vsc_jobs boincapp 2 4e11 "100 250" || fail "create_work"   # they run for the whole test
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"
T=$(vsc_wait_executing) || fail "no task ever EXECUTING"
BASE="http://127.0.0.1:$RPC_PORT"

# the token: none, wrong, right
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code -X POST -d '<get_state/>' "$BASE/rpc")" = 401 ] || fail "/rpc without a token is not 401"
[ "$(code -X POST -H 'Authorization: Bearer nope' -d '<get_state/>' "$BASE/rpc")" = 401 ] ||
    fail "/rpc with a wrong token is not 401"
grep -q 'web page: 1 request without the right token refused' "$C/client.log" || fail "no log line for the refusal"
[ "$(code -X POST -H "Authorization: Bearer $RPC_PW" -d '<get_state/>' "$BASE/rpc")" = 200 ] ||
    fail "/rpc with the token is not 200"
[ "$(code -H "Host: rebound.example:$RPC_PORT" "$BASE/")" = 421 ] || fail "a foreign Host was served"
[ "$(code "$BASE/")" = 200 ] || fail "the page is not served"
curl -s -D - -o /dev/null "$BASE/" | qgrep -i "^Content-Security-Policy: default-src 'none'" ||
    fail "no CSP on the page"

# in Chromium: without the token no data; with it, the tasks and a suspend
out=$(timeout 120 "${DRIVE[@]}" "$BASE/#token=wrong" - "$WORK/b0" 2>&1) || fail "chromium (wrong token): $out"
grep -qx 'main shown: false' <<<"$out" || fail "the page showed data with a wrong token: $out"
grep -qx 'status: wrong token' <<<"$out" || fail "no 'wrong token' on the page: $out"
out=$(timeout 120 "${DRIVE[@]}" "$BASE/#token=$RPC_PW" "$T" "$WORK/b1" 2>&1) || fail "chromium: $out"
echo "$out"
ntasks=$(printf '%s\n' "$out" | sed -n 's/^tasks: //p' | wc -w)
[ "$ntasks" = 2 ] || fail "the page lists $ntasks tasks, want 2: $out"
grep -qx 'suspended' <<<"$out" || fail "the suspend did not show: $out"
[ -s "$WORK/b1/webui.png" ] || fail "no screenshot"
vsc_bcmd --get_tasks | awk -v t="$T" '/^   name: /{cur=($2==t)} cur && /suspended via GUI: yes/{f=1} END{exit !f}' ||
    fail "boinccmd does not show $T suspended via GUI"
[ -n "${VSC_KEEP_SHOT:-}" ] && cp "$WORK/b1/webui.png" "$VSC_KEEP_SHOT"

# from another address of this machine
IP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
[ -n "$IP" ] || IP=$(hostname -I 2>/dev/null | awk '{print $1}')
[ -n "$IP" ] || fail "this machine has no non-loopback IPv4 address to test from"
curl -s -m 5 -o /dev/null "http://$IP:$RPC_PORT/" && fail "the page answered on $IP without remote access"
vsc_stop
printf '192.0.2.1\n' > "$C/remote_hosts.cfg" # another host: this one is still refused
vsc_run "$C" || fail "client did not restart"
curl -s -m 5 -o /dev/null "http://$IP:$RPC_PORT/" && fail "the page answered $IP, not in remote_hosts.cfg"
for _ in $(seq 1 20); do
    grep -q 'refused a connection from a host not in remote_hosts.cfg' "$C/client.log" && break
    sleep 0.25
done
grep -q 'refused a connection from a host not in remote_hosts.cfg' "$C/client.log" ||
    fail "no log line for the refused address"
vsc_stop
printf '%s\n' "$IP" > "$C/remote_hosts.cfg"
vsc_run "$C" || fail "client did not restart"
[ "$(code -m 5 "http://$IP:$RPC_PORT/")" = 200 ] || fail "the page is not served to $IP listed in remote_hosts.cfg"
[ "$(code -m 5 -X POST -d '<get_state/>' "http://$IP:$RPC_PORT/rpc")" = 401 ] || fail "remote /rpc without token"
r=$(curl -s -m 5 -X POST -H "Authorization: Bearer $RPC_PW" -d '<get_results/>' "http://$IP:$RPC_PORT/rpc")
grep -q <<<"$r" "<name>$T</name>" || fail "remote /rpc with the token: $r"
echo "PASS: web page: tasks shown, suspend from the page, token and address checks"
