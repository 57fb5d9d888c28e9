#!/usr/bin/env bash
# Credit on the volunteers' web site and server_status.php (issue 39):
# credit granted by the real validator to three users (two in a team) on
# six computers, plus 45 users and 4 teams with credit written into the
# store (for pages of the leaderboards), and a volunteer who joined with
# create_account.php and owns two computers. Then `volsched serve`, and:
#  - headless Chromium (site_stats_browser.py) follows the site's links:
#    the users' leaderboard by recent average (pages 1 and 2) and by
#    total, the teams' and computers' lists, a computer's page, the team
#    page, and logged in the account page with its computers' credit; every
#    figure and every order checked against the store, names shown as text,
#    no computer's own name in public;
#  - curl: server_status.php?xml=1 parses, its BOINC elements hold the
#    store's counts; bad sort_by / offset answer 400.
# Screenshots are kept in $VS_BINARY_DIR/site_credit_screens/.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?VOLSCHED must name the built binary}"
for tool in sqlite3 python3 curl chromium; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed"; exit 1; }
done
V=$VOLSCHED
W=$(mktemp -d /tmp/vs_site_credit.XXXXXX)
SPID=
CHPID=
cleanup() {
    [ -n "$CHPID" ] && { kill -TERM "$CHPID" 2>/dev/null; wait "$CHPID" 2>/dev/null; }
    [ -n "$SPID" ] && { kill -TERM "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; }
    rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$W/serve.log" 2>/dev/null; exit 1; }
P="$W/p"
db="$P/volsched.db"
q() { sqlite3 -cmd ".timeout 10000" "$db" "$1"; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()'; }
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/st/"

$V init "$P" --url "$URL" >/dev/null || fail "init"
printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
$V app add --project "$P" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" >/dev/null || fail "app add"
$V team add --project "$P" --name 'Crunch & <Co>' >/dev/null || fail "team add"
$V user add --project "$P" --name alice --email alice@example.org --team 1 >/dev/null || fail "user add"
$V user add --project "$P" --name 'bob <b>' --email bob@example.org --team 1 >/dev/null || fail "user add"
$V user add --project "$P" --name carol --email carol@example.org >/dev/null || fail "user add"
sed -i 's:<config>:<config>\n<validator><method>always_valid</method></validator>:' "$P/config.xml"
echo x > "$W/in"
for i in $(seq 1 30); do echo "--wu_name job$i $W/in"; done |
    $V create_work --project "$P" --appname app --rsc_fpops_est 1e13 --stdin >/dev/null || fail "create_work"
$V serve --project "$P" --only transitioner --daemon-interval 50 >"$W/t.log" 2>&1 &
TPID=$!
for _ in $(seq 1 100); do [ "$(q 'SELECT count(*) FROM result')" = 30 ] && break; sleep 0.2; done
kill -TERM "$TPID"; wait "$TPID" 2>/dev/null
q "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 6)
   INSERT INTO host(id, userid, p_fpops, p_ncpus, create_time, domain_name, p_vendor, p_model,
                    os_name, os_version)
   SELECT v, 1 + v % 3, 1e9 * v, 2, 1700000000, 'secret-host-' || v, 'GenuineIntel',
          'Model <' || v || '>', 'Linux', '6.1' FROM s;
   UPDATE result SET server_state = 5, outcome = 1, client_state = 5, hostid = 1 + id % 6,
     userid = 1 + (1 + id % 6) % 3, sent_time = 1700000000, received_time = 1700003600,
     elapsed_time = 1e13 / (1e9 * (1 + id % 6)), cpu_time = 1e13 / (1e9 * (1 + id % 6));
   UPDATE workunit SET need_validate = 1;" || fail "reports"
$V serve --project "$P" --only validator --daemon-interval 50 >"$W/v.log" 2>&1 &
VPID=$!
for _ in $(seq 1 100); do [ "$(q 'SELECT count(*) FROM workunit WHERE need_validate = 1')" = 0 ] && break; sleep 0.2; done
kill -TERM "$VPID"; wait "$VPID" 2>/dev/null
[ "$(q 'SELECT count(*) FROM result WHERE granted_credit > 0')" = 30 ] || fail "validation did not grant"

# More users and teams with credit: recent and total in different orders.
q "WITH RECURSIVE s(v) AS (SELECT 100 UNION ALL SELECT v + 1 FROM s WHERE v < 144)
   INSERT INTO \"user\"(id, name, email_addr, authenticator, cross_project_id, total_credit,
                        expavg_credit, expavg_time, create_time, country)
   SELECT v, 'vol ' || v, 'v' || v || '@example.org', 'a' || v, printf('%032x', v),
          (v * 37 % 101) * 10.5, (v * 53 % 97) * 1.25, 1700000000, 1690000000, 'Chile' FROM s;
   WITH RECURSIVE s(v) AS (SELECT 10 UNION ALL SELECT v + 1 FROM s WHERE v < 13)
   INSERT INTO team(id, name, total_credit, expavg_credit, create_time)
   SELECT v, 'Team ' || v, v * 100.0, 1.5 * v, 1690000000 FROM s;" || fail "more users"
# A volunteer with a password (create_account.php), owning two computers.
EMAIL=erin@example.org
PW='erin secret pw'

$V serve --project "$P" --listen "127.0.0.1:$PORT" >"$W/serve.log" 2>&1 &
SPID=$!
for _ in $(seq 1 100); do curl -sf "${URL}" >/dev/null 2>&1 && break; sleep 0.2; done
H=$(printf '%s' "$PW$EMAIL" | md5sum | cut -c1-32)
curl -sfG "${URL}create_account.php" -d email_addr="$EMAIL" -d passwd_hash="$H" -d user_name=Erin |
    qgrep '<authenticator>' || fail "create_account"
erin=$(q "SELECT id FROM \"user\" WHERE email_addr = '$EMAIL'")
q "UPDATE \"user\" SET total_credit = 321.5, expavg_credit = 12.25 WHERE id = $erin;
   INSERT INTO host(id, userid, p_ncpus, create_time, domain_name, p_vendor, p_model, os_name,
                    total_credit, expavg_credit)
   VALUES (7, $erin, 4, 1700000000, 'mine-7', 'AuthenticAMD', 'Ryzen', 'Linux', 200.25, 8),
          (8, $erin, 8, 1700000000, 'mine-8', 'AuthenticAMD', 'Epyc', 'Linux', 121.25, 4.25);" ||
    fail "erin's credit"

# server_status.php?xml=1: BOINC's elements, the store's counts.
curl -sf "${URL}server_status.php?xml=1" -o "$W/status.xml" || fail "server_status.php?xml=1"
python3 - "$W/status.xml" "$db" <<'PY' || fail "server_status.php?xml=1 does not hold the store's counts"
import sqlite3, sys, time
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "server_status", root.tag
c = sqlite3.connect(sys.argv[2], timeout=10)
one = lambda sql: c.execute(sql).fetchone()[0]
d = root.find("database_file_states")
now = int(root.findtext("update_time"))
assert abs(now - time.time()) < 120, now
want = {
    "results_ready_to_send": one("SELECT count(*) FROM result WHERE server_state = 2"),
    "results_in_progress": one("SELECT count(*) FROM result WHERE server_state = 4"),
    "users_with_recent_credit": one('SELECT count(*) FROM "user" WHERE expavg_credit > 1'),
    "users_with_credit": one('SELECT count(*) FROM "user" WHERE total_credit > 0'),
    "users_registered_in_past_24_hours": one(f'SELECT count(*) FROM "user" WHERE create_time > {now - 86400}'),
    "hosts_with_recent_credit": one("SELECT count(*) FROM host WHERE expavg_credit > 1"),
    "hosts_with_credit": one("SELECT count(*) FROM host WHERE total_credit > 0"),
    "hosts_registered_in_past_24_hours": one(f"SELECT count(*) FROM host WHERE create_time > {now - 86400}"),
}
for k, v in want.items():
    got = d.findtext(k)
    assert got is not None and int(got) == v, (k, got, v)
assert want["users_with_credit"] == 48 and want["hosts_with_credit"] == 8, want
gf = one('SELECT sum(expavg_credit) FROM "user"') / 200
assert abs(float(d.findtext("current_floating_point_speed")) - gf) < 1e-4, (d.findtext("current_floating_point_speed"), gf)
cmds = [x.findtext("command") for x in root.find("daemon_status")]
assert "scheduler" in cmds and "validator" in cmds, cmds
assert [a.findtext("name") for a in root.find("database_file_states/tasks_by_app") or root.find("tasks_by_app")] == ["app"]
print("status xml:", {k: d.findtext(k) for k in want}, "gflops", d.findtext("current_floating_point_speed"))
PY
curl -sf "${URL}server_status.php" | qgrep "id=\"v-users-credit\">$(q 'SELECT count(*) FROM "user" WHERE total_credit > 0')<" || fail "server_status.php's HTML: users with credit"
perday=$(q 'SELECT printf("%.2f", coalesce(sum(expavg_credit), 0)) FROM "user"')
curl -sf "${URL}server_status.php" | qgrep "id=\"v-credit-day\">$perday<" || fail "server_status.php's HTML: credit per day, want $perday"
for bad in "sort_by=evil" "offset=-1" "offset=10001" "offset=1x"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "${URL}top_users.php?$bad")
    [ "$code" = 400 ] || fail "top_users.php?$bad answered $code, want 400"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "${URL}show_host_detail.php?hostid=999")
[ "$code" = 404 ] || fail "show_host_detail.php of no host answered $code"

CDP=$(free_port)
chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$W/chrome" \
    --remote-debugging-port="$CDP" --window-size=1200,1000 about:blank > "$W/chrome.log" 2>&1 &
CHPID=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$CDP/json/version" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$CDP/json/version" >/dev/null || fail "chromium did not start: $(tail -5 "$W/chrome.log")"
mkdir -p "$W/shots"
out=$(cd "$VS_SOURCE_DIR/tests/integration" && timeout 180 python3 site_stats_browser.py "$CDP" "$URL" "$W/shots" "$db" "$EMAIL" "$PW" 2>&1) ||
    fail "the site in the browser: $out"
kill -TERM "$CHPID"; wait "$CHPID" 2>/dev/null; CHPID=
rm -rf "$VS_BINARY_DIR/site_credit_screens"
cp -r "$W/shots" "$VS_BINARY_DIR/site_credit_screens"
for f in "$W/shots"/*.png; do
    python3 -c 'import sys,struct; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; w,h=struct.unpack(">II",d[16:24]); assert w>=800 and h>=600,(w,h)' "$f" ||
        fail "$f is not a screenshot of the page"
done
kill -TERM "$SPID"; wait "$SPID" || fail "serve exit status after SIGTERM"
SPID=
echo "PASS: leaderboards, host, team and account pages and server_status.php agree with the store; $(ls "$W/shots" | wc -l) screenshots in $VS_BINARY_DIR/site_credit_screens"
