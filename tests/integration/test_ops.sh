#!/usr/bin/env bash
# Operating a project from the outside: log files written and reopened after
# a rename + SIGHUP, a second serve refused with the first one's pid,
# stop_sched (maintenance reply) and volsched stop/start, server_status.php
# (HTML and ?xml=1) and /metrics parsed, the /ops/ dashboard (401 without
# the operator password; with it, loaded in headless Chromium: a screenshot
# is taken and the figures of the rendered page match `volsched status
# --json`), host ban, job show/cancel, purge, init --force keeping config.xml,
# a bad config.xml on SIGHUP keeping the old one, and a read-only project.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?}" "${VS_SOURCE_DIR:?}"
V=$VOLSCHED
W=$(mktemp -d /tmp/vs_ops_test.XXXXXX)
SPID=""
fail() { echo "FAIL: $*"; tail -20 "$W/p/log/serve.log" 2>/dev/null; exit 1; }
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then kill -TERM "$SPID"; wait "$SPID"; fi
    [ -n "${KEEP_SHOT:-}" ] && cp "$W/ops.png" "$KEEP_SHOT" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
URL="http://127.0.0.1:$PORT/t/"
P="$W/p"
$V init "$P" --name "Ops Test" --url "$URL" --ops-password 'op-secret-pw' > "$W/init.out" || fail "init"
grep -q 'pbkdf2-sha256\$' "$P/keys/ops_passwd" || fail "operator password not stored hashed"
grep -q 'op-secret' "$P/keys/ops_passwd" && fail "operator password stored in clear"
# init --force keeps the operator's config.xml edits.
sed -i 's:<config>:<config>\n<!-- operator edit -->:' "$P/config.xml"
$V init "$P" --force > "$W/init2.out" || fail "init --force"
grep -q 'operator edit' "$P/config.xml" || fail "init --force rewrote config.xml"
grep -q 'config.xml: *kept' "$W/init2.out" || fail "init --force did not say config.xml was kept"

printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
$V app add --project "$P" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" >/dev/null || fail "app add"
AUTH=$($V user add --project "$P" --name u) || fail "user add"
for i in 1 2 3 4; do echo "$i" > "$W/in$i"; done
$V create_work --project "$P" --appname app --wu_name job1 --batch 5 "$W/in1" >/dev/null || fail "create_work"
$V create_work --project "$P" --appname app --wu_name job2 --batch 5 "$W/in2" >/dev/null || fail "create_work"
$V create_work --project "$P" --appname app --wu_name job3 --batch 6 "$W/in3" >/dev/null || fail "create_work"

start_serve() {
    $V serve --project "$P" --listen "127.0.0.1:$PORT" --daemon-interval 200 > "$W/stderr" 2>&1 &
    SPID=$!
    for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && return 0; sleep 0.2; done
    fail "serve did not come up: $(cat "$W/stderr")"
}
start_serve
[ -s "$W/stderr" ] && fail "serve wrote to stderr without --foreground: $(cat "$W/stderr")"
[ "$(cat "$P/run/serve.pid")" = "$SPID" ] || fail "run/serve.pid is not the server's pid"
# A second serve refuses, naming the first.
$V serve --project "$P" --listen "127.0.0.1:1" > "$W/second" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "second serve exit $rc"
grep -q "already runs.*pid $SPID" "$W/second" || fail "second serve: $(cat "$W/second")"

# One RPC: a job; the RPC is one INFO line in log/serve.log; an unknown key is not logged whole.
sed "s/0123456789abcdef0123456789abcdef/$AUTH/" "$VS_SOURCE_DIR/tests/data/boinc/sched_request_01.xml" > "$W/req.xml"
SCHED="${URL}cgi-bin/cgi"
curl -sf --data-binary @"$W/req.xml" "$SCHED" | qgrep '<name>job1_0</name>' || fail "no job sent"
T_RPC=$(date +%s)
# Banned now; the scheduler's 10 s host cache may still hold the old row.
$V host ban --project "$P" 1 | qgrep banned || fail "host ban"
grep -q 'INFO rpc host 1 (new) user 1 (u) from 127.0.0.1: reported 0 (0 new), sent 1' "$P/log/serve.log" \
    || fail "no RPC line in log/serve.log"
sed "s/$AUTH/ffffffffffffffffffffffffffffffff/" "$W/req.xml" > "$W/bad.xml"
curl -sf --data-binary @"$W/bad.xml" "$SCHED" >/dev/null
grep -q "unknown authenticator md5:" "$P/log/serve.log" || fail "unknown key not logged as its fingerprint"
grep -q 'ffffffffffffffff' "$P/log/serve.log" && fail "unknown key logged whole"
[ -f "$P/log/transitioner.log" ] || fail "no log/transitioner.log"

# Logs: rename (logrotate) + SIGHUP -> a new serve.log; SIGUSR1/2 do not kill serve.
mv "$P/log/serve.log" "$P/log/serve.log.1"
kill -HUP "$SPID"
for _ in $(seq 1 50); do [ -f "$P/log/serve.log" ] && break; sleep 0.1; done
grep -q 'log files reopened' "$P/log/serve.log" || fail "serve.log not reopened after SIGHUP"
grep -q 'config.xml reloaded' "$P/log/serve.log" || fail "config not reloaded on SIGHUP"
kill -USR1 "$SPID"; kill -USR2 "$SPID"; sleep 0.3
kill -0 "$SPID" || fail "SIGUSR1/SIGUSR2 killed serve"
grep -q 'SIGUSR2 ignored' "$P/log/serve.log" || fail "SIGUSR2 not logged"
# A broken config.xml on SIGHUP: refused, the old one kept, serve still answers.
cp "$P/config.xml" "$W/config.good"
echo '<boinc><config><daily_result_quota>lots</daily_result_quota></config></boinc>' > "$P/config.xml"
kill -HUP "$SPID"; sleep 0.5
grep -qF "config reload refused, keeping the running config: $P/config.xml:1: <daily_result_quota>" "$P/log/serve.log" \
    || fail "bad config not refused with file:line"
cp "$W/config.good" "$P/config.xml"
curl -sf "$URL" >/dev/null || fail "serve died on a bad config"

# Host ban: the host's next RPC (past the host cache's 10 s) gets no work and a message.
while [ $(( $(date +%s) - T_RPC )) -le 11 ]; do sleep 0.5; done
sed 's:<hostid>0</hostid>:<hostid>1</hostid>:; s:<rpc_seqno>[0-9]*</rpc_seqno>:<rpc_seqno>5</rpc_seqno>:' "$W/req.xml" > "$W/req2.xml"
grep -q '<hostid>1</hostid>' "$W/req2.xml" || fail "test request has no hostid to set"
r=$(curl -sf --data-binary @"$W/req2.xml" "$SCHED")
grep -q 'not allowed to get work' <<<"$r" || fail "banned host: $r"
grep -q '<result>' <<<"$r" && fail "banned host got work"
$V host show --project "$P" 1 | qgrep 'BANNED' || fail "host show does not say banned"
$V host ban --project "$P" --lift 1 >/dev/null || fail "host ban --lift"

# job show / cancel (one WU, then a batch).
$V job show --project "$P" job1 | qgrep 'job1_0 .*in_progress' || fail "job show"
$V job cancel --project "$P" job2 | qgrep 'cancelled (1 unsent' || fail "job cancel"
[ "$(sqlite3 "$P/volsched.db" "select server_state||outcome from result where name='job2_0'")" = 55 ] \
    || fail "cancelled WU's result not OVER/DIDNT_NEED"
$V job cancel --project "$P" --batch 6 | qgrep 'cancelled' || fail "job cancel --batch"
$V result show --project "$P" job1_0 | qgrep 'server_state *in_progress' || fail "result show"

# stop_sched: maintenance reply with a delay; volsched stop / start.
$V stop --project "$P" | qgrep 'disabled' || fail "volsched stop"
sleep 0.3
r=$(curl -sf --data-binary @"$W/req.xml" "$SCHED")
grep -q 'temporarily shut down for maintenance' <<<"$r" || fail "stop_sched: $r"
grep -q '<request_delay>' <<<"$r" || fail "stop_sched: no request_delay"
$V status --project "$P" --json > "$W/s.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["server"]["stop_sched"] and d["daemons"]["validator"]["status"]=="disabled", d' "$W/s.json" || fail "status after stop"
$V start --project "$P" | qgrep 'already runs' || fail "volsched start with serve up"
sleep 0.5

# server_status.php, both forms, and /metrics, parsed.
curl -sf "${URL}server_status.php?xml=1" > "$W/ss.xml" || fail "server_status.php?xml=1"
curl -sf "${URL}server_status.php" | qgrep '<h1>Ops Test server status</h1>' || fail "server_status.php HTML"
curl -sf "http://127.0.0.1:$PORT/metrics" > "$W/metrics" || fail "/metrics"
$V status --project "$P" --json > "$W/s.json" || fail "status --json"
python3 - "$W/ss.xml" "$W/metrics" "$W/s.json" <<'PY' || fail "server_status/metrics do not match status --json"
import json, re, sys
import xml.etree.ElementTree as ET
x = ET.parse(sys.argv[1]).getroot()
s = json.load(open(sys.argv[3]))
assert x.tag == "server_status"
st = {d.findtext("command"): d.findtext("status") for d in x.iter("daemon")}
assert st["scheduler"] == "running" and st["validator"] == "running", st
fs = x.find("database_file_states")
assert int(fs.findtext("results_ready_to_send")) == s["ready_to_send"]
assert int(fs.findtext("results_in_progress")) == s["in_progress"] == 1
apps = {a.findtext("name"): a for a in x.iter("app")}
assert int(apps["app"].findtext("in_progress")) == 1
m = {}
for line in open(sys.argv[2]):
    if line.startswith("#"):
        continue
    name, val = line.rsplit(" ", 1)
    m[name] = float(val)
    assert re.match(r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})?$', name), name
assert m['volsched_scheduler_rpcs_total{outcome="maintenance"}'] >= 1
assert m["volsched_jobs_sent_total"] == 1
assert m['volsched_scheduler_request_duration_seconds_bucket{le="+Inf"}'] == m["volsched_scheduler_request_duration_seconds_count"] >= 4
assert m["volsched_job_cache_slots"] == s["job_cache"]["slots"]
assert m["volsched_results_in_progress"] == s["in_progress"]
assert m['volsched_daemon_pass_seconds_count{daemon="validator"}'] >= 1
PY

# The dashboard: 401 without the password, then in headless Chromium.
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/ops/")
[ "$code" = 401 ] || fail "/ops/ without password answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -u op:wrong "http://127.0.0.1:$PORT/ops/")
[ "$code" = 401 ] || fail "/ops/ with a wrong password answered $code"
command -v chromium >/dev/null || fail "chromium is not installed (deps/debian-packages.txt)"
OPSURL="http://op:op-secret-pw@127.0.0.1:$PORT/ops/"
CH=(chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$W/chrome"
    --window-size=1280,2000 --virtual-time-budget=3000)
timeout 60 "${CH[@]}" --screenshot="$W/ops.png" "$OPSURL" > "$W/chrome.log" 2>&1
[ -s "$W/ops.png" ] || fail "no screenshot: $(tail -5 "$W/chrome.log")"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; import struct; w,h=struct.unpack(">II",d[16:24]); assert w>=1000 and h>=1000,(w,h)' "$W/ops.png" || fail "screenshot is not a PNG of the page"
timeout 60 "${CH[@]}" --dump-dom "$OPSURL" > "$W/dom.html" 2>>"$W/chrome.log"
$V status --project "$P" --json > "$W/s.json"
python3 - "$W/dom.html" "$W/s.json" <<'PY' || fail "dashboard figures do not match status --json"
import json, re, sys
dom = open(sys.argv[1]).read()
s = json.load(open(sys.argv[2]))
def v(i):
    m = re.search(r'id="%s"[^>]*>([^<]*)<' % i, dom)
    assert m, "no element " + i
    return m.group(1).strip()
assert v("v-ready") == str(s["ready_to_send"]), (v("v-ready"), s["ready_to_send"])
assert v("v-inprogress") == str(s["in_progress"])
assert v("v-validate") == str(s["need_validate"])
assert v("v-assimilate") == str(s["need_assimilate"])
assert v("v-cache") == str(s["job_cache"]["present"])
assert v("st-validator") == s["daemons"]["validator"]["status"]
assert v("c-sent-total") == "1" and int(v("c-rpcs-total")) >= 4
assert '<svg id="c-rpcs"' in dom and "<rect" in dom
assert re.search(r'<table class="t" id="hosts">.*?<td>1</td>', dom, re.S), "host 1 not in the last hour's hosts"
assert re.search(r'<table class="t" id="batches">.*?<td>6</td>', dom, re.S), "batch 6 missing"
PY

# A clean stop: SIGTERM drains and exits 0, the pid file goes.
kill -TERM "$SPID"; wait "$SPID"; rc=$?; SPID=""
[ $rc -eq 0 ] || fail "exit $rc after SIGTERM"
grep -q 'stopped' "$P/log/serve.log" || fail "no stop line"
[ -f "$P/run/serve.pid" ] && fail "pid file left behind"
$V status --project "$P" | qgrep '^Server: down' || fail "status after stop"

# purge: nothing old enough is finished yet; --older 0 after marking a WU finished.
sqlite3 "$P/volsched.db" "update workunit set file_delete_state=2, mod_time=1 where name='job2'"
$V purge --project "$P" --older 1 | qgrep 'purged 1 workunits' || fail "purge"
grep -q '<name>job2</name>' "$P"/archives/wu_archive_*.xml || fail "purged WU not archived"
grep -q '<name>job2_0</name>' "$P"/archives/result_archive_*.xml || fail "purged result not archived"
[ "$(sqlite3 "$P/volsched.db" "select count(*) from workunit where name='job2'")" = 0 ] || fail "purged WU still in the store"

# A read-only project directory (and upload directory): a clear error at
# start, not "Server error" later. As root, permission bits do not stop
# writes: the immutable flag does, or, where the file system has none, a
# read-only bind mount. One of the three always runs.
ro_refused() { # $1: project dir, $2: what the message names
    $V serve --project "$1" --listen "127.0.0.1:$PORT" > "$W/ro" 2>&1 && fail "serve started with a read-only $2"
    grep -q "the $2 .* is not writable" "$W/ro" || fail "read-only $2: $(cat "$W/ro")"
}
if [ "$(id -u)" != 0 ]; then
    chmod a-w "$P"
    ro_refused "$P" "project directory"
    chmod u+w "$P"
    chmod a-w "$P/upload"
    ro_refused "$P" "upload directory"
    chmod u+w "$P/upload"
elif chattr +i "$P" 2>/dev/null; then
    ro_refused "$P" "project directory"
    chattr -i "$P"
    chattr +i "$P/upload" || fail "chattr +i on the upload directory"
    ro_refused "$P" "upload directory"
    chattr -i "$P/upload"
else
    mkdir "$W/ro_mnt"
    mount --bind "$P" "$W/ro_mnt" && mount -o remount,bind,ro "$W/ro_mnt" \
        || fail "as root, neither chattr +i nor a read-only bind mount works here"
    # the same project seen read-only (config.xml's paths name $P: check the
    # directory the command was given)
    $V serve --project "$W/ro_mnt" --listen "127.0.0.1:$PORT" > "$W/ro" 2>&1
    rc=$?
    umount "$W/ro_mnt"
    [ $rc != 0 ] || fail "serve started on a read-only bind mount"
    grep -q 'not writable' "$W/ro" || fail "read-only mount: $(cat "$W/ro")"
fi
echo "ok: logs, pid lock, signals, stop files, status page, metrics, dashboard, ops commands"
