#!/usr/bin/env bash
# `volsched serve` from the outside, with curl: usage errors, the master page,
# get_project_config.php, a scheduler RPC that gets a job (recorded in the
# store), refused requests (malformed, unknown account key, body over
# --max-body) answered properly and logged, downloads with Range and unsafe
# paths, and a clean stop on SIGINT.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}"
fail() { echo "FAIL: $*"; [ -f "${W:-}/serve.log" ] && tail -20 "$W/serve.log"; exit 1; }
W=$(mktemp -d /tmp/vs_serve_test.XXXXXX)
SPID=""
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then kill -TERM "$SPID"; wait "$SPID"; fi
    rm -rf "$W"
}
trap cleanup EXIT

# Usage errors: exit 2, nothing started.
"$VOLSCHED" serve --help | qgrep 'usage: volsched serve' || fail "--help"
"$VOLSCHED" serve --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option not exit 2"
"$VOLSCHED" serve --project "$W" --listen nonsense >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --listen not exit 2"
"$VOLSCHED" serve --project "$W/none" >/dev/null 2>&1; [ $? -eq 2 ] || fail "not a project: not exit 2"
"$VOLSCHED" serve --only bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "--only with an unknown daemon not exit 2"
"$VOLSCHED" serve --daemons validator,bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "--daemons with an unknown daemon not exit 2"

PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
URL="http://127.0.0.1:$PORT/t/"
"$VOLSCHED" init "$W/p" --name "Serve Test" --url "$URL" >/dev/null || fail "init"
printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
"$VOLSCHED" app add --project "$W/p" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" >/dev/null || fail "app add"
AUTH=$("$VOLSCHED" user add --project "$W/p" --name u) || fail "user add"
echo "1 2" > "$W/in1"
"$VOLSCHED" create_work --project "$W/p" --appname app --wu_name job1 "$W/in1" >/dev/null || fail "create_work"

"$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" --max-body 20000 --foreground > "$W/serve.log" 2>&1 &
SPID=$!
for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.2; done
page=$(curl -sf "$URL") || fail "master page"
sched="${URL}cgi-bin/cgi"
grep -qx <<<"$page" "<link rel=\"boinc_scheduler\" href=\"$sched\">" || fail "master page lacks the scheduler link: $page"
grep -q <<<"$page" "<scheduler>$sched</scheduler>" || fail "master page lacks <scheduler>"
curl -sf "${URL}get_project_config.php" | qgrep "<master_url>$URL</master_url>" || fail "get_project_config.php"

# A real first RPC (the captured attach request with this user's key): one job.
sed "s/0123456789abcdef0123456789abcdef/$AUTH/" "$VS_SOURCE_DIR/tests/data/boinc/sched_request_01.xml" > "$W/req.xml"
reply=$(curl -sf --data-binary @"$W/req.xml" "$sched") || fail "scheduler POST"
grep -q <<<"$reply" '<name>job1_0</name>' || fail "no job in reply: $reply"
grep -q <<<"$reply" '<hostid>1</hostid>' || fail "no hostid in reply"
grep -q <<<"$reply" '<code_sign_key>' || fail "no code_sign_key in reply"
st=$(sqlite3 "$W/p/volsched.db" "select server_state||' '||hostid from result where name='job1_0'")
[ "$st" = "4 1" ] || fail "store: job1_0 is '$st', want IN_PROGRESS on host 1"

# The files the reply names can be downloaded, whole and from an offset.
url=$(echo "$reply" | sed -n 's:.*<url>\(.*/in1\)</url>.*:\1:p' | head -1)
[ -n "$url" ] || fail "no input URL in reply"
[ "$(curl -sf "$url")" = "1 2" ] || fail "input download"
[ "$(curl -sf -r 2- "$url")" = "2" ] || fail "Range download"
code=$(curl -s -o /dev/null -w '%{http_code}' --path-as-is "${URL}download/../config.xml")
[ "$code" = 404 ] || fail "path escape answered $code"

# Refusals: a scheduler reply with a message and a delay, or an HTTP error.
r=$(curl -sf --data-binary 'garbage<' "$sched") || fail "malformed POST"
grep -q <<<"$r" '<request_delay>600' || fail "malformed: $r"
grep -q <<<"$r" '</scheduler_reply>' || fail "malformed: reply not closed"
sed "s/$AUTH/ffffffffffffffffffffffffffffffff/" "$W/req.xml" > "$W/bad.xml"
r=$(curl -sf --data-binary @"$W/bad.xml" "$sched") || fail "bad key POST"
grep -q <<<"$r" 'account key' || fail "unknown key: $r"
grep -q <<<"$r" '<request_delay>3600' || fail "unknown key: no delay"
head -c 30000 /dev/zero | tr '\0' x > "$W/big"
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$W/big" "$sched")
[ "$code" = 413 ] || fail "oversized body answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$sched")
[ "$code" = 405 ] || fail "GET on the scheduler answered $code"
grep -q 'refused request from 127.0.0.1: unknown authenticator' "$W/serve.log" || fail "unknown key not logged"
grep -q 'http 413' "$W/serve.log" || fail "413 not logged"
grep -q 'http 404' "$W/serve.log" || fail "404 not logged"

# Uploads: the handler answers the data server protocol (a size query for a
# file we do not have answers 0; tests/unit/test_results.c covers the rest).
upload=$(sed -n 's:.*<upload_url>\(.*\)</upload_url>.*:\1:p' "$W/p/config.xml")
r=$(curl -sf --data-binary $'<data_server_request>\n<core_client_major_version>7</core_client_major_version>\n<get_file_size>job1_x_0</get_file_size>\n</data_server_request>\n' "$upload") || fail "size query"
grep -q <<<"$r" '<status>0</status>' || fail "size query: $r"
grep -q <<<"$r" '<file_size>0</file_size>' || fail "size query without file_size: $r"

# Still serving after all that; stops cleanly on SIGINT.
curl -sf "$URL" >/dev/null || fail "server died"
kill -INT "$SPID"; wait "$SPID"; rc=$?; SPID=""
[ $rc -eq 0 ] || fail "exit status $rc after SIGINT"
grep -q 'stopped' "$W/serve.log" || fail "no clean stop in the log"
# --only NAME: one daemon alone, no HTTP; it does its work and stops on SIGTERM.
"$VOLSCHED" serve --project "$W/p" --only transitioner --daemon-interval 100 --foreground > "$W/only.log" 2>&1 &
OPID=$!
# Under a loaded machine the start can take a while: wait for the log line.
for _ in $(seq 1 50); do grep -q 'running transitioner alone' "$W/only.log" && break; sleep 0.2; done
kill -0 "$OPID" 2>/dev/null || fail "--only transitioner exited: $(cat "$W/only.log")"
grep -q 'running transitioner alone' "$W/only.log" || fail "--only log: $(cat "$W/only.log")"
kill -TERM "$OPID"; wait "$OPID"; rc=$?
[ $rc -eq 0 ] || fail "--only exit status $rc after SIGTERM"
grep -q 'transitioner stopped' "$W/only.log" || fail "--only: no clean stop"
echo "ok: serve answers, refuses and stops as documented"
