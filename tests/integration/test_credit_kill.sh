#!/usr/bin/env bash
# Credit survives kill -9 of the validator (issue 39): a store with NWU
# reported results (set up in SQL: the test is about the validator, not the
# scheduler) from hosts of different speeds, granted by the adaptive
# scheme; `volsched serve --only validator` is killed with SIGKILL 20 times
# at random moments in its batches, started again each time, and finally
# left to finish. Then, in SQL on the store:
#   - every result is VALID and granted credit exactly once (granted > 0);
#   - no result that is not VALID holds granted credit;
#   - the hosts', users' and team's total_credit sums each equal the sum of
#     the granted credit of their valid results (nothing lost, nothing
#     doubled), and every credited user has a recent average.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is not installed"; exit 1; }
V=$VOLSCHED
NWU=${NWU:-4000}
KILLS=${KILLS:-20}
W=$(mktemp -d /tmp/vs_credit_kill.XXXXXX)
VPID=
cleanup() {
    [ -n "$VPID" ] && kill -9 "$VPID" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    tail -20 "$W/p/log/validator.log" 2>/dev/null
    exit 1
}
P="$W/p"
db="$P/volsched.db"
q() { sqlite3 -cmd ".timeout 10000" "$db" "$1"; }

$V init "$P" --url "http://127.0.0.1:1/c/" >/dev/null || fail "init"
printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
$V app add --project "$P" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" \
    >/dev/null || fail "app add"
$V team add --project "$P" --name crunchers >/dev/null || fail "team add"
$V user add --project "$P" --name alice --team crunchers >/dev/null || fail "user add"
$V user add --project "$P" --name bob --team crunchers >/dev/null || fail "user add"
$V user add --project "$P" --name carol >/dev/null || fail "user add"
# Reports come without files: every result is valid; credit is adaptive.
sed -i 's:<config>:<config>\n<validator><method>always_valid</method></validator>:' "$P/config.xml"
echo x > "$W/in"
for i in $(seq 1 "$NWU"); do echo "--wu_name job$i $W/in"; done |
    $V create_work --project "$P" --appname app --rsc_fpops_est 1e13 --rsc_fpops_bound 1e15 \
        --stdin >/dev/null || fail "create_work"
# The transitioner makes the results.
$V serve --project "$P" --only transitioner --daemon-interval 50 >"$W/t.log" 2>&1 &
TPID=$!
for _ in $(seq 1 100); do [ "$(q 'SELECT count(*) FROM result')" = "$NWU" ] && break; sleep 0.2; done
kill -TERM "$TPID"; wait "$TPID" 2>/dev/null
[ "$(q 'SELECT count(*) FROM result')" = "$NWU" ] || fail "the transitioner made no results"

# Twelve hosts, 1e8 to 1e11 FLOPS, of the three users; each host's results
# ran for est / (speed * 0.5) seconds, give or take 20%.
q "INSERT INTO host(id, userid, p_fpops, p_ncpus, create_time)
   SELECT value, 1 + value % 3, 1e8 * power(1000, (value - 1) / 11.0), 4, 1700000000
   FROM generate_series(1, 12);" 2>/dev/null ||
    q "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 12)
       INSERT INTO host(id, userid, p_fpops, p_ncpus, create_time)
       SELECT v, 1 + v % 3, 1e8 * (CASE v % 4 WHEN 0 THEN 1 WHEN 1 THEN 10 WHEN 2 THEN 100
       ELSE 1000 END), 4, 1700000000 FROM s;" || fail "hosts"
q "UPDATE result SET server_state = 5, outcome = 1, client_state = 5,
     hostid = 1 + id % 12, userid = 1 + (1 + id % 12) % 3,
     sent_time = 1700000000, received_time = 1700003600,
     elapsed_time = 1e13 / ((SELECT p_fpops FROM host WHERE host.id = 1 + result.id % 12) * 0.5)
                    * (0.8 + (abs(random()) % 400) / 1000.0),
     cpu_time = elapsed_time;
   UPDATE workunit SET need_validate = 1, transition_time = 1700003600;" || fail "reports"

kills=0
for k in $(seq 1 "$KILLS"); do
    $V serve --project "$P" --only validator --daemon-interval 20 >>"$W/v.log" 2>&1 &
    VPID=$!
    # Kill it somewhere in its work: 0.10 to 0.30 s in (it validates
    # several hundred to a few thousand workunits a second, one transaction
    # each, as the machine's load allows).
    sleep "0.$((10 + RANDOM % 21))"
    kill -9 "$VPID" 2>/dev/null && kills=$((kills + 1))
    wait "$VPID" 2>/dev/null
    VPID=
    left=$(q "SELECT count(*) FROM workunit WHERE need_validate = 1")
    echo "kill $k: $left workunits left"
    [ "$left" = 0 ] && break
done
# On a fast, idle machine the work may end before the last kills: half of
# them landing inside it is enough for the sums below to mean something.
[ "$kills" -ge $((KILLS / 2)) ] || fail "only $kills kills landed"
$V serve --project "$P" --only validator --daemon-interval 20 >>"$W/v.log" 2>&1 &
VPID=$!
for _ in $(seq 1 300); do
    [ "$(q 'SELECT count(*) FROM workunit WHERE need_validate = 1')" = 0 ] && break
    sleep 0.2
done
kill -TERM "$VPID"; wait "$VPID" 2>/dev/null; VPID=

[ "$(q 'SELECT count(*) FROM result WHERE validate_state = 1 AND granted_credit > 0')" = "$NWU" ] ||
    fail "not every result is valid with credit: $(q 'SELECT validate_state, count(*), sum(granted_credit > 0) FROM result GROUP BY 1')"
[ "$(q 'SELECT count(*) FROM result WHERE validate_state <> 1 AND granted_credit <> 0')" = 0 ] ||
    fail "credit on results that are not valid"
check() { # what sql-sum sql-expected
    local got want
    got=$(q "$2"); want=$(q "$3")
    python3 -c "import sys; g,w=float('$got'),float('$want'); sys.exit(0 if abs(g-w) <= 1e-9*max(1,w) else 1)" ||
        fail "$1: $got, want $want"
    echo "$1: $got (granted $want)"
}
check "hosts" "SELECT sum(total_credit) FROM host" \
    "SELECT sum(granted_credit) FROM result WHERE validate_state = 1"
check "users" "SELECT sum(total_credit) FROM \"user\"" \
    "SELECT sum(granted_credit) FROM result WHERE validate_state = 1"
check "team" "SELECT total_credit FROM team" \
    "SELECT sum(granted_credit) FROM result WHERE validate_state = 1 AND userid IN (SELECT id FROM \"user\" WHERE teamid <> 0)"
for h in 1 5 12; do
    check "host $h" "SELECT total_credit FROM host WHERE id = $h" \
        "SELECT sum(granted_credit) FROM result WHERE validate_state = 1 AND hostid = $h"
done
[ "$(q 'SELECT count(*) FROM "user" WHERE total_credit > 0 AND expavg_credit > 0')" = 3 ] ||
    fail "recent averages missing"
echo "PASS: $kills kills, $NWU results granted once each"
