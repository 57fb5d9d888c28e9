#!/usr/bin/env bash
# Results come home, with the real BOINC client (Debian's boinc-client 7.20):
# a project with the examples/primes app and 4 jobs is served by `volsched
# serve` (scheduler, downloads, upload handler, and the transitioner,
# validator, assimilator and file deleter on their thread). A private client
# attaches and must, within the time limit, compute, upload and report at
# least 3 jobs, which the server must acknowledge, validate and assimilate.
# Keep-alive: the client (libcurl, one connection cache for all its
# transfers) must reuse connections (its curl trace says so), and the
# server must have answered more requests than it accepted connections.
# Each assimilated output in DIR/results/<wu>/out is checked against the
# answer computed here independently (a sieve in Python, not the app's trial
# division). The store must show the results OVER/SUCCESS/VALID, the
# workunits assimilated, and the client must have no result left to report.
set -uo pipefail
LIMIT=${LIMIT:-240}
NJOBS=4
WANT=3
STEP=1000000
RC_WORK_PREFIX=vs_e2e
RC_SERVER_LOG_LINES=30
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

# The client reports at once (the deadline is a day away, which makes it
# report at once anyway; the option makes it independent of that rule).
export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
export DEMO_LOG_FLAGS='<http_debug>1</http_debug>'
demo_make_project "$NJOBS" "$STEP" || fail "could not create the project"
demo_serve || fail "server did not start"
demo_client_start || fail "client did not start or attach"
db="$WORK/project/volsched.db"

t0=$(date +%s)
ok=0
nassim=0
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "server died"
    kill -0 "$BOINC_PID" 2>/dev/null || fail "client died"
    nassim=$(sqlite3 "$db" "select count(*) from workunit where assimilate_state=2" 2>/dev/null || echo 0)
    if [ "$nassim" -ge "$WANT" ]; then ok=1; break; fi
    sleep 2
done
el=$(( $(date +%s) - t0 ))
demo_progress_line "$el"
[ "$ok" = 1 ] || fail "within ${LIMIT}s only $nassim workunits were assimilated (want >= $WANT);" \
    "uploads: $(demo_count 'Finished upload of'), acked: $(grep -c 'handle_scheduler_reply(): got ack for task' "$BOINC_DIR/client.log")"

log="$BOINC_DIR/client.log"
if grep -q 'Unrecoverable error for task' "$log"; then
    fail "a task failed: $(grep -m1 'Unrecoverable error' "$log")"
fi
grep -q 'Error reported by file upload server' "$log" \
    && fail "the upload handler refused: $(grep -m1 'Error reported by file upload server' "$log")"
nup=$(demo_count 'Finished upload of')
[ "$nup" -ge "$WANT" ] || fail "the client finished $nup uploads, want >= $WANT"

# Every assimilated workunit: its result is OVER/SUCCESS/VALID and canonical,
# and the copied output holds the right answer.
nchecked=0
while IFS='|' read -r wu canon; do
    [ -n "$wu" ] || continue
    row=$(sqlite3 "$db" "select server_state, outcome, validate_state from result where id=$canon")
    [ "$row" = "5|1|1" ] || fail "$wu: canonical result $canon has state|outcome|validate $row, want 5|1|1"
    out="$WORK/project/results/$wu/out"
    [ -f "$out" ] || fail "$wu: no assimilated output $out"
    [ -f "$WORK/project/results/$wu/summary.json" ] || fail "$wu: no summary.json"
    python3 -m json.tool "$WORK/project/results/$wu/summary.json" >/dev/null || fail "$wu: summary.json is not JSON"
    i=${wu##*_}
    read -r lo hi < "$WORK/inputs/primes_in_$i"
    want=$(rc_primes_answer "$lo" "$hi")
    got=$(cat "$out")
    [ "$got" = "$want" ] || fail "$wu: assimilated output differs from the known answer:
--- got
$got
--- want
$want"
    nchecked=$((nchecked + 1))
done < <(sqlite3 "$db" "select name, canonical_resultid from workunit where assimilate_state=2")
[ "$nchecked" -ge "$WANT" ] || fail "checked $nchecked outputs, want >= $WANT"

# The server acknowledged what it recorded: the client's log shows the acks.
nack=$(grep -c 'got ack for task' "$log" || true)
[ "$nack" -ge "$WANT" ] || fail "the client logged $nack acks, want >= $WANT"
nrep=$(sqlite3 "$db" "select count(*) from result where server_state=5 and received_time>0")
[ "$nrep" -ge "$WANT" ] || fail "store has $nrep reported results, want >= $WANT"

# Keep-alive, from both ends: curl's trace in the client's log, and the
# server's own counters (read before the client stops; this curl adds one
# connection and one request of its own).
# curl numbers its connections (#N): each request line (same ID#) is
# charged to its transfer's connection; a reuse line names the connection
# and so the kind of request it kept alive for.
read -r kdl ksched kup < <(awk '
    function kind(l) { return l ~ /download\// ? "dl" : l ~ /file_upload_handler/ ? "up" : "sc" }
    match($0, /\[ID#[0-9]+\]/) { id = substr($0, RSTART, RLENGTH) }
    /Info: +Connected to / && match($0, /\(#[0-9]+\)/) { conn[id] = substr($0, RSTART + 2, RLENGTH - 3) }
    /Re-using existing connection #/ && match($0, /#[0-9]+ with/) {
        k = substr($0, RSTART + 1, RLENGTH - 6); conn[id] = k; kept[last[k]]++
    }
    /Sent header to server: (GET|POST) / && (id in conn) { last[conn[id]] = kind($0) }
    END { print kept["dl"] + 0, kept["sc"] + 0, kept["up"] + 0 }' "$log")
nreuse=$((kdl + ksched + kup))
[ "$kdl" -ge 1 ] || fail "no connection was reused after a download (after: $ksched scheduler RPCs, $kup uploads)"
[ "$ksched" -ge 1 ] || fail "no connection was reused after a scheduler RPC"
metrics=$(curl -s "http://127.0.0.1:$PORT/metrics") || fail "GET /metrics failed"
nconn=$(printf '%s\n' "$metrics" | sed -n 's/^volsched_http_connections_total \([0-9]*\)$/\1/p')
nreq=$(printf '%s\n' "$metrics" | sed -n 's/^volsched_http_requests_total \([0-9]*\)$/\1/p')
[ -n "$nconn" ] && [ -n "$nreq" ] || fail "/metrics lacks the connection or request counters"
[ "$nreq" -gt "$nconn" ] || fail "server answered $nreq requests on $nconn connections: no reuse"

demo_client_stop
demo_serve_stop; rc=$?
[ "$rc" = 0 ] || fail "server exit status $rc after SIGTERM, want 0"
echo "ok: $nchecked jobs computed, uploaded ($nup uploads), reported ($nack acks), validated and assimilated in ${el}s; outputs match the known answers; keep-alive: $nreuse reuses in the client's trace (kept alive by $kdl downloads, $ksched scheduler RPCs, $kup uploads), $nreq requests on $nconn connections"
