#!/usr/bin/env bash
# volsched store copy: a project's SQLite store (apps, app version files,
# users, a team, a host, workunits with results, an assignment, a daemon's
# status, a quota record, trickle messages) is copied into a PostgreSQL
# database on a private server and back into a new SQLite file; the copy
# checks itself row for row, and here every table of the round trip must
# equal the original (sqlite3 dumps compared). Then the project runs on the
# PostgreSQL copy: status reads it and new rows get fresh ids.
set -euo pipefail
: "${VOLSCHED:?set VOLSCHED to the volsched binary}"
: "${VS_SOURCE_DIR:?set VS_SOURCE_DIR to the source tree}"
V=$VOLSCHED
T=$(mktemp -d /tmp/vs_copy_XXXXXX)
PGDIR=$(bash "$VS_SOURCE_DIR/tests/pg/pg_server.sh" start)
trap 'bash "$VS_SOURCE_DIR/tests/pg/pg_server.sh" stop "$PGDIR"; rm -rf "$T"' EXIT
P=$T/proj
fail() { echo "FAIL: $*" >&2; exit 1; }
q() { sqlite3 "$P/volsched.db" "$1"; }
PGURL="postgresql:///moved?host=$PGDIR&user=postgres"
pq() { psql "host=$PGDIR user=postgres dbname=moved" -Atc "$1"; }

$V init "$P" --name "Copy Test" --url http://127.0.0.1:18091/cp/ >/dev/null
printf '#!/bin/sh\ncp in out\n' >"$T/cp.sh"
chmod +x "$T/cp.sh"
cd "$P"
$V app add --name cp --platform x86_64-pc-linux-gnu --version 100 "$T/cp.sh" >/dev/null
team=$($V team add --name crew)
$V user add --name alice --team "$team" >/dev/null
$V user add --name bob >/dev/null
echo hello >"$T/in.txt"
$V create_work --appname cp --wu_name j1 "$T/in.txt" >/dev/null
$V create_work --appname cp --wu_name j2 --target_nresults 2 --min_quorum 2 --max_total_results 4 in.txt >/dev/null
$V create_work --appname cp --wu_name j3 --target_user 1 in.txt >/dev/null
q "INSERT INTO host(userid, create_time, domain_name, p_fpops) VALUES(1, 1, 'h1', 1.5e9)"
q "UPDATE result SET server_state=4, hostid=1, cpu_time=0.1, stderr_out=NULL WHERE name='j2_0'"
q "INSERT INTO daemon_status(name, last_run, last_work, total_work, last_error_time, last_error)
   VALUES('assimilator', 1700000000, 0, 5, 1700000000, 'WU j9: it''s \"quoted\"')"
q "INSERT INTO host_app_version(host_id, app_version_id, n_jobs_today, turnaround_avg) VALUES(1, 1, 3, 0.1)"
q "CREATE TABLE IF NOT EXISTS msg_from_host (id INTEGER PRIMARY KEY, create_time INTEGER NOT NULL, hostid INTEGER NOT NULL, result_name TEXT NOT NULL, variety TEXT NOT NULL, handled INTEGER NOT NULL DEFAULT 0, xml TEXT NOT NULL)"
q "INSERT INTO msg_from_host(create_time, hostid, result_name, variety, xml) VALUES(5, 1, 'j2_0', 'v', '<msg_from_host>ünï</msg_from_host>')"

# A destination that is not empty is refused, nothing written.
$V store copy --from "sqlite:$P/volsched.db" --to "$PGURL" >"$T/copy.txt" || { cat "$T/copy.txt"; fail "copy exit $?"; }
grep -q '^done: the copy matches row for row' "$T/copy.txt" || fail "no match line"
grep -Eq '^  result +3 rows copied and checked' "$T/copy.txt" || { cat "$T/copy.txt"; fail "result rows"; }
set +e
$V store copy --from "sqlite:$P/volsched.db" --to "$PGURL" >/dev/null 2>"$T/again.err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "a second copy into a full store exit $rc, want 1"
grep -q 'not empty' "$T/again.err" || fail "refusal not explained"
[ "$(pq 'SELECT count(*) FROM result')" = 3 ] || fail "PostgreSQL result rows"
[ "$(pq "SELECT xml FROM msg_from_host")" = '<msg_from_host>ünï</msg_from_host>' ] || fail "UTF-8 text"

# Back into SQLite: every table equals the original.
$V store copy --from "$PGURL" --to "sqlite:$T/back.db" >/dev/null || fail "copy back"
for t in platform app app_version app_version_file team '"user"' host workunit result assignment \
         host_app_version daemon_status msg_from_host; do
    a=$(sqlite3 "$P/volsched.db" "SELECT * FROM $t ORDER BY 1, 2")
    b=$(sqlite3 "$T/back.db" "SELECT * FROM $t ORDER BY 1, 2")
    [ "$a" = "$b" ] || { echo "$a"; echo "--"; echo "$b"; fail "table $t differs after the round trip"; }
done

# Switch the project to the copy: status reads it; ids continue after the copied ones.
sed -i "s|<store_url>.*</store_url>|<store_url>postgresql:///moved?host=$PGDIR\&amp;user=postgres</store_url>|" config.xml
$V status --project "$P" >"$T/status.txt" || fail "status on PostgreSQL"
grep -q '^Workunits: 3$' "$T/status.txt" || { cat "$T/status.txt"; fail "status workunits"; }
grep -q '^Hosts: 1  Users: 2  Teams: 1  Apps: 1' "$T/status.txt" || { cat "$T/status.txt"; fail "status hosts"; }
$V create_work --appname cp --wu_name j4 in.txt >/dev/null || fail "create_work on the copy"
[ "$(pq "SELECT id FROM workunit WHERE name = 'j4'")" = 4 ] || fail "new id after the copied ones"
echo "ok: store copy SQLite -> PostgreSQL -> SQLite matches; the project runs on the copy"
