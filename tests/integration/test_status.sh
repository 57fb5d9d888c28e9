#!/usr/bin/env bash
# volsched status through the CLI: a project with jobs made by create_work
# (whose transitioner pass creates their results), a host, a result moved
# on by hand and a daemon error recorded; the table and the --json object
# must report each count, and bad calls must exit non-zero.
set -euo pipefail
: "${VOLSCHED:?set VOLSCHED to the volsched binary}"
V=$VOLSCHED
T=$(mktemp -d /tmp/vs_status_XXXXXX)
trap 'rm -rf "$T"' EXIT
P=$T/proj
fail() { echo "FAIL: $*" >&2; exit 1; }
q() { sqlite3 "$P/volsched.db" "$1"; }
j() { jq -e "$1" "$T/status.json" >/dev/null || { cat "$T/status.json" >&2; fail "json: $1"; }; }

$V init "$P" --name "Status Test" --url http://127.0.0.1:18081/st/ >/dev/null
printf '#!/bin/sh\ncp in out\n' >"$T/cp.sh"
chmod +x "$T/cp.sh"
cd "$P"
$V app add --name cp --platform x86_64-pc-linux-gnu --version 100 "$T/cp.sh" >/dev/null
$V user add --name alice >/dev/null
$V user add --name bob >/dev/null
echo hello >"$T/in.txt"
$V create_work --appname cp --wu_name j1 "$T/in.txt" >/dev/null
$V create_work --appname cp --wu_name j2 --target_nresults 2 --min_quorum 2 --max_total_results 4 in.txt >/dev/null
$V create_work --appname cp --wu_name j3 --target_user 1 in.txt >/dev/null

# By hand, what a host, a report and a daemon would have written.
q "INSERT INTO host(userid, create_time) VALUES(1, 1)"
q "UPDATE result SET server_state=5, outcome=1, validate_state=0 WHERE name='j1_0'"
q "UPDATE result SET server_state=4, hostid=1 WHERE name='j2_0'"
q "UPDATE workunit SET error_mask=2 WHERE name='j3'"
q "INSERT INTO daemon_status(name, last_run, last_work, total_work, last_error_time, last_error)
   VALUES('assimilator', 1700000000, 0, 5, 1700000000, 'WU j9: command exited with 4')"

$V status --project "$P" >"$T/status.txt" || fail "status exit $?"
grep -Eq '^Workunits: 3$' "$T/status.txt" || fail "workunit total"
grep -Eq '^  in_progress +2$' "$T/status.txt" || fail "in_progress"
grep -Eq '^  error +1$' "$T/status.txt" || fail "error phase"
grep -Eq '^  error too_many_error_results +1$' "$T/status.txt" || fail "error bit"
grep -Eq '^Results: 3$' "$T/status.txt" || fail "result total"
grep -Eq '^  over +success +1$' "$T/status.txt" || fail "over/success row"
grep -Eq '^  in_progress +- +1$' "$T/status.txt" || fail "in_progress row"
grep -Eq '^  unsent +- +1$' "$T/status.txt" || fail "unsent row"
grep -q '^Results ready to send: 1 (1 sendable by the feeder)' "$T/status.txt" || fail "ready to send"
grep -q '^Server: down' "$T/status.txt" || fail "server down not said"
grep -q '^Job cache: none (server down)' "$T/status.txt" || fail "job cache of a stopped server"
grep -q '^Hosts: 1  Users: 2  Teams: 0  Apps: 1' "$T/status.txt" || fail "hosts/users"
grep -Eq '^  assimilator +not running +2023-11-14 22:13:20Z +0 +5  2023-11-14 22:13:20Z: WU j9: command exited with 4$' \
    "$T/status.txt" || { cat "$T/status.txt"; fail "assimilator row"; }
grep -Eq '^  validator +not running +never +0 +0  -$' "$T/status.txt" || fail "validator row"

(cd / && $V status --project "$P" --json) >"$T/status.json" || fail "status --json exit $?"
j '.workunits.total == 3'
j '.workunits.by_state.in_progress == 2 and .workunits.by_state.error == 1'
j '.workunits.errors.too_many_error_results == 1'
j '.results.total == 3'
j '.results.by_server_state.unsent == 1 and .results.by_server_state.in_progress == 1'
j '.results.by_server_state.over == 1 and .results.by_outcome.success == 1'
j '.results.by_validate_state.init == 1'
j '.ready_to_send == 1 and .sendable == 1 and .job_cache == null and .server.up == false'
j '.hosts == 1 and .users == 2 and .apps == 1'
j '.daemons.assimilator.last_error == "WU j9: command exited with 4"'
j '.daemons.assimilator.total_work == 5'
j '.daemons.transitioner.last_run == 0 and .daemons.transitioner.last_error == null'

# Bad calls.
set +e
$V status --project "$T/nowhere" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "status on a non-project exited $rc, want 1"
$V status --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "status --bogus exited $rc, want 2"
$V status extra >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "status extra exited $rc, want 2"
set -e
echo ok
