#!/usr/bin/env bash
# Locality scheduling with the real BOINC client (Debian's boinc-client
# 7.20) against `volsched serve` (docs/locality.md). The project has one
# locality app (examples/primes with a second, big input it does not read)
# and starts with one job for the big file bigA; serve runs the locality
# generator (<locality_gen>) with a command that makes one more job per call
# (through `volsched create_work`) and says "no more work" on its third
# call, and the working-set manager (<locality_ws>); the scheduler waits for
# the generator (<locality_scheduling_wait_period>).
#
# Checked: the client downloads bigA once, keeps it sticky and lists it in its
# next requests; its second job of bigA, made on demand while its request
# waited, downloads nothing but the job's small input; once the generator
# says no more work, the server sends <delete_file_info>bigA</delete_file_info>
# and the client deletes the file. The store shows both results sent to the
# host and reported.
set -uo pipefail
LIMIT=${LIMIT:-180}
RC_WORK_PREFIX=vs_locality
RC_SERVER_LOG_LINES=40
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

P="$WORK/project"
PORT=$(demo_free_port)
URL="http://127.0.0.1:$PORT/loc/"
"$VOLSCHED" init "$P" --name "locality test" --url "$URL" >/dev/null || fail init
python3 - "$P/config.xml" "$WORK" <<'PY' || fail "config.xml"
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("</config>", "  <locality_scheduling/>\n"
              "  <locality_scheduling_wait_period>20</locality_scheduling_wait_period>\n"
              "  <locality_gen><command>sh %s/gen.sh</command></locality_gen>\n"
              "  <locality_ws><files>1</files></locality_ws>\n</config>" % sys.argv[2], 1)
open(p, "w").write(s)
PY
"$VOLSCHED" app add --project "$P" --name primes --platform x86_64-pc-linux-gnu --version 100 \
    --locality full "$PRIMES" >/dev/null || fail "app add"
AUTH=$("$VOLSCHED" user add --project "$P" --name volunteer) || fail "user add"
cp "$VS_SOURCE_DIR/tests/data/locality/two_inputs_in" "$P/templates/primes_in" || fail "template"
mkdir -p "$WORK/in"
head -c 3000000 /dev/urandom > "$WORK/in/bigA"
echo "1000000000 1000100000" > "$WORK/in/small_1"
"$VOLSCHED" create_work --project "$P" --appname primes --wu_name bigA__1 \
    "$WORK/in/bigA" "$WORK/in/small_1" >/dev/null || fail "create_work"
# The generator: job k of bigA on call k-1 (bigA is already staged: a bare name).
cat > "$WORK/gen.sh" <<G
#!/bin/sh
n=\$(cat "$WORK/gen.count" 2>/dev/null || echo 1)
n=\$((n + 1))
echo \$n > "$WORK/gen.count"
[ \$n -le 2 ] || exit 2
echo "1000200000 1000300000" > "$WORK/in/small_\$n"
exec "$VOLSCHED" create_work --project "$P" --appname primes --wu_name "\$1__\$n" \
    "\$1" "$WORK/in/small_\$n" >/dev/null
G
chmod +x "$WORK/gen.sh"

# serve runs the generator and the working-set manager beside itself.
demo_serve || fail "server did not start"
stop_gen() { :; }
# The working-set manager puts bigA (it has an unsent result) in the set.
for _ in $(seq 1 20); do [ -e "$P/locality_scheduling/file_working_set/bigA" ] && break; sleep 0.5; done
[ -e "$P/locality_scheduling/file_working_set/bigA" ] || fail "bigA never joined the working set"
export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
demo_client_start || { stop_gen; fail "client did not start or attach"; }
db="$P/volsched.db"
log="$BOINC_DIR/client.log"
pdir=$(ls -d "$BOINC_DIR"/projects/127.0.0.1_* 2>/dev/null | head -1)

# Until the deletion: the client keeps asking (it has nothing queued after
# each job); nudge it so that no backoff makes the test slow.
# Whether a saved request lists bigA as a top-level (sticky) <file_info>.
lists_bigA() {
    local req
    req=$(ls "$BOINC_DIR"/sched_request_127.0.0.1_*.xml 2>/dev/null | head -1)
    [ -n "$req" ] && python3 - "$req" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    sys.exit(1)
sys.exit(0 if any(fi.findtext("name") == "bigA" for fi in root.findall("file_info")) else 1)
PY
}
t0=$(date +%s)
ok=0
listed=0
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$SERVE_PID" 2>/dev/null || { stop_gen; fail "server died"; }
    kill -0 "$BOINC_PID" 2>/dev/null || { stop_gen; fail "client died"; }
    [ "$listed" = 1 ] || { lists_bigA && listed=1; }
    # Done once the delete came and both results are reported.
    if grep -q 'Got server request to delete file bigA' "$log" &&
        [ "$(sqlite3 "$db" "select count(*) from result where server_state = 5" 2>/dev/null)" = 2 ]; then
        ok=1
        break
    fi
    demo_bcmd --project "$URL" update >/dev/null 2>&1
    sleep 3
done
stop_gen
el=$(( $(date +%s) - t0 ))
demo_progress_line "$el"
[ "$ok" = 1 ] || fail "within ${LIMIT}s: deletion of bigA $(demo_count 'request to delete file bigA'), results reported $(sqlite3 "$db" "select count(*) from result where server_state = 5"); generator calls: $(cat "$WORK/gen.count" 2>/dev/null)"

nres=$(sqlite3 "$db" "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like 'bigA__%' and r.server_state = 5 and r.outcome = 1")
[ "$nres" = 2 ] || fail "want 2 reported successes of bigA's jobs, store has $nres"
nhost=$(sqlite3 "$db" "select count(distinct hostid) from result where hostid > 0")
[ "$nhost" = 1 ] || fail "results went to $nhost hosts"
# bigA came down once; the second job fetched only its small input.
ndl=$(grep -c 'Started download of bigA$' "$log")
[ "$ndl" = 1 ] || fail "bigA downloaded $ndl times"
grep -q 'Started download of small_2' "$log" || fail "the second job's input was not downloaded"
# The client listed bigA as a sticky file in a request (seen in its saved request).
[ "$listed" = 1 ] || fail "no request of the client listed bigA as a top-level <file_info>"
[ -e "$P/locality_scheduling/no_work_available/bigA" ] || fail "no no_work_available/bigA"
# The working-set manager ran inside serve: its status row is in the store.
[ "$(sqlite3 "$db" "select count(*) from daemon_status where name in ('locality_gen', 'locality_ws')")" = 2 ] \
    || fail "serve did not run the locality daemons: $(sqlite3 "$db" "select name from daemon_status")"
# The delete reached the client: bigA is gone from its project directory.
for _ in $(seq 1 20); do [ -e "$pdir/bigA" ] || break; sleep 0.5; done
[ ! -e "$pdir/bigA" ] || fail "bigA still in $pdir after the delete"
grep -q 'Unrecoverable error' "$log" && fail "a task failed: $(grep -m1 'Unrecoverable error' "$log")"
echo "ok: bigA downloaded once for 2 jobs (2nd made on demand), deleted on request, in ${el}s"
