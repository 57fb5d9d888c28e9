#!/usr/bin/env bash
# The Add Project wizard's GUI RPCs forwarded by `volsched client` to a
# project's account web RPCs (acct_stub.py answers as BOINC's PHP does):
# get_project_config, lookup_account and create_account answer <success/>
# at once, their _poll forms say -204 (in progress) while the project has
# not answered, then give its reply (configuration, account key, or the
# project's error); the client asked the right pages with the right query
# (email, md5(password + email) hash, user name). A bad URL gives -189, a
# project that does not answer -107. boinccmd's --get_project_config,
# --lookup_account and --create_account work against it. A proxy set with
# boinccmd --set_proxy_settings carries the client's next request.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_gacct
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
RPC="python3 $VS_SOURCE_DIR/tests/integration/gui_rpc.py"

SPORT=$(demo_free_port)
SLOG="$WORK/stub.log"
: > "$SLOG"
python3 "$VS_SOURCE_DIR/tests/integration/acct_stub.py" "$SPORT" "$SLOG" &
SERVE_PIDS="$SERVE_PIDS $!"
SURL="http://127.0.0.1:$SPORT/stub/"
for _ in $(seq 1 50); do curl -s -o /dev/null "$SURL" && break; sleep 0.1; done

C="$WORK/client"
vsc_client_dir "$C"
vsc_run "$C" || fail "client did not start"
rpc() { $RPC "$RPC_PORT" "$RPC_PW" "$@"; }

# get_project_config: in progress, then the project's configuration
out=$(rpc "<get_project_config><url>$SURL</url></get_project_config>" \
          "<get_project_config_poll/>" "poll:<get_project_config_poll/>") || fail "rpc: $out"
first=$(printf '%s\n' "$out" | awk '/^----$/{n++; next} n==0')
poll1=$(printf '%s\n' "$out" | awk '/^----$/{n++; next} n==1')
poll2=$(printf '%s\n' "$out" | awk '/^----$/{n++; next} n==2')
[ "$first" = "<success/>" ] || fail "get_project_config answered: $first"
grep -q '<error_num>-204</error_num>' <<<"$poll1" || fail "first poll not in progress: $poll1"
grep -q '<name>Stub Project</name>' <<<"$poll2" || fail "second poll: $poll2"
grep -q '<?xml' <<<"$poll2" && fail "the XML declaration was passed on: $poll2"
grep -qx '/stub/get_project_config.php' "$SLOG" || fail "stub saw: $(cat "$SLOG")"
grep -q 'Fetching configuration file from' "$C/client.log" || fail "no log line for the fetch"

# lookup_account: right password, wrong password, unknown email
H=$(printf '%s' 'secret12vol@example.com' | md5sum | cut -d' ' -f1)
look() {
    rpc "<lookup_account><url>$SURL</url><email_addr>$1</email_addr><passwd_hash>$2</passwd_hash></lookup_account>" \
        "poll:<lookup_account_poll/>" | awk '/^----$/{n++; next} n==1'
}
r=$(look vol@example.com "$H")
grep -q '<authenticator>stubauth_vol</authenticator>' <<<"$r" || fail "lookup: $r"
grep -q "^/stub/lookup_account.php?email_addr=vol%40example.com&passwd_hash=$H\$" "$SLOG" ||
    fail "lookup query: $(grep lookup "$SLOG")"
r=$(look vol@example.com 0123456789abcdef0123456789abcdef)
grep -q '<error_num>-206</error_num>' <<<"$r" || fail "wrong password: $r"
r=$(look nobody@example.com "$H")
grep -q '<error_num>-136</error_num>' <<<"$r" || fail "unknown email: $r"
r=$(rpc "<lookup_account><url>$SURL</url></lookup_account>")
grep -q '<error>missing URL, email address, or password</error>' <<<"$r" || fail "missing args: $r"

# create_account: new, then the same email again
N=$(printf '%s' 'pw123456new@example.com' | md5sum | cut -d' ' -f1)
create() {
    rpc "<create_account><url>$SURL</url><email_addr>new@example.com</email_addr><passwd_hash>$N</passwd_hash><user_name>New Volunteer</user_name></create_account>" \
        "poll:<create_account_poll/>" | awk '/^----$/{n++; next} n==1'
}
r=$(create)
grep -q '<authenticator>stubauth_new' <<<"$r" || fail "create: $r"
grep -q "^/stub/create_account.php?email_addr=new%40example.com&passwd_hash=$N&user_name=New%20Volunteer\$" "$SLOG" ||
    fail "create query: $(grep create "$SLOG")"
r=$(create)
grep -q '<error_num>-137</error_num>' <<<"$r" || fail "duplicate email: $r"

# a bad URL; a project that does not answer
r=$(rpc "<get_project_config><url>ftp://x/</url></get_project_config>" "<get_project_config_poll/>" |
    awk '/^----$/{n++; next} n==1')
grep -q '<error_num>-189</error_num>' <<<"$r" || fail "bad URL: $r"
DEAD=$(demo_free_port)
r=$(rpc "<get_project_config><url>http://127.0.0.1:$DEAD/x/</url></get_project_config>" \
        "poll:<get_project_config_poll/>" | awk '/^----$/{n++; next} n==1')
grep -q '<error_num>-107</error_num>' <<<"$r" || fail "no project: $r"

# boinccmd's own commands (they poll until the reply is in)
o=$(vsc_bcmd --get_project_config "$SURL") || fail "boinccmd --get_project_config"
grep -q 'name: Stub Project' <<<"$o" || fail "boinccmd --get_project_config: $o"
o=$(vsc_bcmd --lookup_account "$SURL" vol@example.com secret12)
grep -q 'account key: stubauth_vol' <<<"$o" || fail "boinccmd --lookup_account: $o"
o=$(vsc_bcmd --create_account "$SURL" other@example.com pw999999 Other)
grep -q 'account key: stubauth_new' <<<"$o" || fail "boinccmd --create_account: $o"
# the proxy: a forwarding HTTP proxy that logs the absolute URLs it gets
PPORT=$(demo_free_port)
python3 - "$PPORT" "$WORK/proxy.log" <<'PY' &
import sys, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class P(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        open(sys.argv[2], "a").write(self.path + "\n")
        body = urllib.request.urlopen(self.path, timeout=30).read()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), P).serve_forever()
PY
SERVE_PIDS="$SERVE_PIDS $!"
for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$PPORT") 2>/dev/null && break; sleep 0.2; done
vsc_bcmd --set_proxy_settings 127.0.0.1 "$PPORT" "" "" "" 0 "" "" "" || fail "set_proxy_settings"
vsc_bcmd --get_proxy_settings | qgrep "HTTP server port: $PPORT" || fail "get_proxy_settings: $(vsc_bcmd --get_proxy_settings)"
grep -q "Using HTTP proxy 127.0.0.1:$PPORT" "$C/client.log" || fail "no log line for the proxy"
o=$(vsc_bcmd --get_project_config "$SURL")
grep -q 'name: Stub Project' <<<"$o" || fail "through the proxy: $o"
grep -qx "${SURL}get_project_config.php" "$WORK/proxy.log" || fail "the request did not go through the proxy"
echo "PASS: account web RPCs forwarded"
