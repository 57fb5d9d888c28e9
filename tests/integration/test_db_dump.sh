#!/usr/bin/env bash
# The statistics exports (issue 39), read back with a small reader written
# to BOINC's published db_dump format (tables.xml; user.gz, team.gz, host.gz
# as gzipped <users>/<teams>/<hosts> of <user>/<team>/<host> elements):
# credit granted by the real validator to three users (two in a team) on
# six hosts; `volsched db_dump` then writes the files, and the reader
# checks every user's, team's and host's total and recent average against
# the store, the counts and total in tables.xml, each CPID against
# md5(cross_project_id + email_addr) computed here from the store, and the
# GDPR-minimal defaults: no e-mail address, IP address or domain name
# anywhere, empty names unless --names, hosts without their owner.
# Then `volsched serve` writes them itself at start (due: none yet) and
# answers them under the master URL at stats/, byte for byte, and refuses
# paths out of the directory and the temporary files.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?VOLSCHED must name the built binary}"
for tool in sqlite3 python3 curl; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed"; exit 1; }
done
V=$VOLSCHED
W=$(mktemp -d /tmp/vs_db_dump.XXXXXX)
SPID=
cleanup() {
    [ -n "$SPID" ] && { kill -TERM "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; }
    rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$W/serve.log" 2>/dev/null; exit 1; }
P="$W/p"
db="$P/volsched.db"
q() { sqlite3 -cmd ".timeout 10000" "$db" "$1"; }
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')

$V init "$P" --url "http://127.0.0.1:$PORT/st/" >/dev/null || fail "init"
printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
$V app add --project "$P" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" >/dev/null || fail "app add"
$V team add --project "$P" --name 'Crunch & <Co>' >/dev/null || fail "team add"
$V user add --project "$P" --name alice --email alice@example.org --team 1 >/dev/null || fail "user add"
$V user add --project "$P" --name 'bob <b>' --email bob@example.org --team 1 >/dev/null || fail "user add"
$V user add --project "$P" --name carol --email carol@example.org >/dev/null || fail "user add"
$V user add --project "$P" --name dave --email dave@example.org >/dev/null || fail "user add" # no credit
sed -i 's:<config>:<config>\n<validator><method>always_valid</method></validator>:' "$P/config.xml"
echo x > "$W/in"
for i in $(seq 1 60); do echo "--wu_name job$i $W/in"; done |
    $V create_work --project "$P" --appname app --rsc_fpops_est 1e13 --stdin >/dev/null || fail "create_work"
$V serve --project "$P" --only transitioner --daemon-interval 50 >"$W/t.log" 2>&1 &
TPID=$!
for _ in $(seq 1 100); do [ "$(q 'SELECT count(*) FROM result')" = 60 ] && break; sleep 0.2; done
kill -TERM "$TPID"; wait "$TPID" 2>/dev/null
q "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 6)
   INSERT INTO host(id, userid, p_fpops, p_ncpus, create_time, domain_name, last_ip_addr,
                    p_vendor, p_model, os_name, os_version)
   SELECT v, 1 + v % 3, 1e9 * v, 2, 1700000000, 'secret-host-' || v, '10.9.8.' || v,
          'GenuineIntel', 'Model <' || v || '>', 'Linux', '6.1' FROM s;
   UPDATE result SET server_state = 5, outcome = 1, client_state = 5, hostid = 1 + id % 6,
     userid = 1 + (1 + id % 6) % 3, sent_time = 1700000000, received_time = 1700003600,
     elapsed_time = 1e13 / (1e9 * (1 + id % 6)), cpu_time = 1e13 / (1e9 * (1 + id % 6));
   UPDATE workunit SET need_validate = 1;" || fail "reports"
$V serve --project "$P" --only validator --daemon-interval 50 >"$W/v.log" 2>&1 &
VPID=$!
for _ in $(seq 1 100); do [ "$(q 'SELECT count(*) FROM workunit WHERE need_validate = 1')" = 0 ] && break; sleep 0.2; done
kill -TERM "$VPID"; wait "$VPID" 2>/dev/null
[ "$(q 'SELECT count(*) FROM result WHERE granted_credit > 0')" = 60 ] || fail "validation did not grant"

$V db_dump --project "$P" > "$W/out.txt" || fail "db_dump: $(cat "$W/out.txt")"
grep -q "3 users, 1 teams, 6 hosts" "$W/out.txt" || fail "db_dump said: $(cat "$W/out.txt")"
ls -a "$P/stats" | qgrep '\.tmp' && fail "temporary files left in stats/"

# The reader: BOINC's format, checked against the store.
cat > "$W/reader.py" <<'PY'
import gzip, hashlib, sqlite3, sys
import xml.etree.ElementTree as ET
stats, db, names = sys.argv[1], sys.argv[2], sys.argv[3] == "names"
con = sqlite3.connect(db)
def fail(m):
    print("reader: " + m); sys.exit(1)
def load(name, root, item):
    raw = gzip.open(f"{stats}/{name}").read() if name.endswith(".gz") else open(f"{stats}/{name}", "rb").read()
    if not raw.startswith(b'<?xml version="1.0" encoding="iso-8859-1"?>\n'):
        fail(f"{name}: not BOINC's header")
    for bad in (b"@example.org", b"secret-host", b"10.9.8.", b"<email", b"<userid>" if item == "host" else b"\0"):
        if bad in raw:
            fail(f"{name} exports {bad!r}")
    t = ET.fromstring(raw)
    if t.tag != root:
        fail(f"{name}: root {t.tag}")
    return t if item is None else t.findall(item)
def near(a, b):
    return abs(float(a) - b) <= 1e-6 * max(1.0, abs(b))
tables = load("tables.xml", "tables", None)
users = load("user.gz", "users", "user")
teams = load("team.gz", "teams", "team")
hosts = load("host.gz", "hosts", "host")
want = {r[0]: r[1:] for r in con.execute('SELECT id, name, email_addr, cross_project_id, total_credit, expavg_credit, expavg_time, teamid FROM "user" WHERE total_credit > 0')}
if [int(u.findtext("id")) for u in users] != sorted(want):
    fail("users: %s, want %s" % ([u.findtext("id") for u in users], sorted(want)))
total = 0.0
for u in users:
    uid = int(u.findtext("id"))
    name, email, xpid, tc, ea, et, team = want[uid]
    if not near(u.findtext("total_credit"), tc) or not near(u.findtext("expavg_credit"), ea) or not near(u.findtext("expavg_time"), et):
        fail(f"user {uid}: credit {u.findtext('total_credit')}/{u.findtext('expavg_credit')}, store {tc}/{ea}")
    if len(xpid) != 32 or u.findtext("cpid") != hashlib.md5((xpid + email).encode()).hexdigest():
        fail(f"user {uid}: cpid {u.findtext('cpid')} is not md5(cross_project_id + email)")
    if (u.findtext("name") or "") != (name if names else ""):
        fail(f"user {uid}: name {u.findtext('name')!r} (names={names})")
    if team and int(u.findtext("teamid")) != team:
        fail(f"user {uid}: teamid")
    total += tc
twant = {r[0]: r[1:] for r in con.execute("SELECT id, name, total_credit, expavg_credit FROM team WHERE total_credit > 0")}
if len(teams) != len(twant) or len(teams) != 1:
    fail("teams")
for t in teams:
    name, tc, ea = twant[int(t.findtext("id"))]
    if t.findtext("name") != name or not near(t.findtext("total_credit"), tc) or not near(t.findtext("expavg_credit"), ea):
        fail(f"team: {t.findtext('name')} {t.findtext('total_credit')}, store {name} {tc}")
hwant = {r[0]: r[1:] for r in con.execute("SELECT id, total_credit, p_model FROM host WHERE total_credit > 0 AND userid <> 0")}
if sorted(int(h.findtext("id")) for h in hosts) != sorted(hwant) or len(hosts) != 6:
    fail("hosts")
for h in hosts:
    tc, model = hwant[int(h.findtext("id"))]
    if not near(h.findtext("total_credit"), tc) or h.findtext("p_model") != model:
        fail(f"host {h.findtext('id')}")
if int(tables.findtext("nusers_total")) != len(users) or int(tables.findtext("nteams_total")) != 1 or int(tables.findtext("nhosts_total")) != 6:
    fail("tables.xml counts")
if not near(tables.findtext("total_credit"), total):
    fail(f"tables.xml total {tables.findtext('total_credit')}, users sum {total}")
if [a.findtext("name") for a in tables.find("applications")] != ["app"]:
    fail("tables.xml applications")
print(f"reader: {len(users)} users, {len(teams)} teams, {len(hosts)} hosts match the store; total {total:.6f}")
PY
python3 "$W/reader.py" "$P/stats" "$db" nonames || fail "the exports do not read as BOINC's"
$V db_dump --project "$P" --names >/dev/null || fail "db_dump --names"
python3 "$W/reader.py" "$P/stats" "$db" names || fail "the exports with --names"
$V db_dump --project "$P" --bogus >/dev/null 2>&1 && fail "an unknown option was accepted"
# Many more users (files past the writer's 64 KiB flush, in several pages
# of the store's walk): still every one of them.
q "WITH RECURSIVE s(v) AS (SELECT 10 UNION ALL SELECT v + 1 FROM s WHERE v < 5009)
   INSERT INTO \"user\"(id, name, email_addr, authenticator, cross_project_id, total_credit,
                        expavg_credit, expavg_time)
   SELECT v, 'many ' || v, 'm' || v || '@example.org', 'a' || v, printf('%032x', v * 7919),
          v * 0.5, 1, 1700000000 FROM s;" || fail "many users"
$V db_dump --project "$P" --names >/dev/null || fail "db_dump of many users"
python3 "$W/reader.py" "$P/stats" "$db" names || fail "the exports of many users"

# serve: writes them at start (none yet), and serves them.
rm -rf "$P/stats"
$V serve --project "$P" --listen "127.0.0.1:$PORT" >"$W/serve.log" 2>&1 &
SPID=$!
for _ in $(seq 1 100); do [ -f "$P/stats/tables.xml" ] && break; sleep 0.2; done
[ -f "$P/stats/tables.xml" ] || fail "serve did not write the exports"
python3 "$W/reader.py" "$P/stats" "$db" nonames || fail "serve's exports"
base="http://127.0.0.1:$PORT/st/stats"
for f in tables.xml user.gz team.gz host.gz; do
    curl -sf "$base/$f" -o "$W/got_$f" || fail "GET stats/$f"
    cmp -s "$W/got_$f" "$P/stats/$f" || fail "stats/$f served differs from the file"
done
for bad in ../config.xml .user.gz.tmp "%2e%2e/config.xml" nothing.gz; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$base/$bad")
    [ "$code" = 404 ] || fail "GET stats/$bad answered $code, want 404"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/user.gz")
[ "$code" = 405 ] || fail "POST stats/user.gz answered $code, want 405"
grep -q "db_dump:.*5003 users, 1 teams, 6 hosts" "$P/log/"*.log "$W/serve.log" 2>/dev/null || fail "no db_dump log line"
echo "PASS: exports read as BOINC's and match the store; served under stats/"
