#!/usr/bin/env bash
# Inputs hosted elsewhere (seed 003, create_work --remote_file URL NBYTES MD5)
# with the real BOINC client: the input of one primes job lives only on a
# second HTTP server on loopback (python3 -m http.server), never in the
# project's download hierarchy. The client must download it from there
# (BOINC names it jf_<md5> and checks its md5 and size), compute, upload
# and report; the result must be OVER/SUCCESS with the right answer, and the
# second server's log must show the download.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-180}
RC_WORK_PREFIX=vs_remote
RC_SERVER_LOG_LINES=30
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"
export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
FPID=""
stop_files() { [ -n "$FPID" ] && kill "$FPID" 2>/dev/null && wait "$FPID" 2>/dev/null; }
trap 'stop_files; finish' EXIT

demo_make_project 1 1000 || fail "could not create the project"
P="$WORK/project"
# The remote input: a range of numbers for the primes app, on its own server.
mkdir -p "$WORK/elsewhere"
echo "2000000000 2000300000" > "$WORK/elsewhere/range.txt"
FPORT=$(demo_free_port)
(cd "$WORK/elsewhere" && exec python3 -m http.server "$FPORT" --bind 127.0.0.1) >"$WORK/files.log" 2>&1 &
FPID=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$FPORT/range.txt" >/dev/null 2>&1 && break; sleep 0.2; done
: > "$WORK/files.log" # only the client's requests from here on
md5=$(md5sum "$WORK/elsewhere/range.txt" | cut -d' ' -f1)
nb=$(stat -c %s "$WORK/elsewhere/range.txt")
"$VOLSCHED" create_work --project "$P" --appname primes --wu_name remote_job --priority 10 \
    --rsc_fpops_est 2e10 --rsc_fpops_bound 2e14 --delay_bound 86400 \
    --remote_file "http://127.0.0.1:$FPORT/range.txt" "$nb" "$md5" >/dev/null || fail "create_work --remote_file"
db="$P/volsched.db"
[ -z "$(find "$P/download" -name "jf_$md5")" ] || fail "the remote input was staged"
sqlite3 "$db" "select xml_doc from workunit where name='remote_job'" | qgrep "http://127.0.0.1:$FPORT/range.txt" \
    || fail "the workunit does not name the remote URL"
# A bad remote file is refused with a message.
"$VOLSCHED" create_work --project "$P" --appname primes --remote_file "ftp://x/y" 10 "$md5" >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] && grep -q 'must be http' "$WORK/err" || fail "ftp URL accepted: $(cat "$WORK/err")"

demo_serve || fail "server did not start"
demo_client_start || fail "client did not start or attach"
t0=$(date +%s)
row=""
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "server died"
    kill -0 "$BOINC_PID" 2>/dev/null || fail "client died"
    row=$(sqlite3 "$db" "select server_state||'|'||outcome from result r join workunit w on w.id=r.workunitid where w.name='remote_job' and server_state=5" 2>/dev/null)
    [ -n "$row" ] && [ -f "$P/results/remote_job/out" ] && break
    sleep 2
done
demo_progress_line $(( $(date +%s) - t0 ))
[ "$row" = "5|1" ] || fail "the remote job was not reported as a success within ${LIMIT}s (state|outcome '$row')"
grep -q "Finished download of jf_$md5" "$BOINC_DIR/client.log" || fail "the client did not download jf_$md5"
grep -q 'GET /range.txt' "$WORK/files.log" || fail "the second server saw no download: $(cat "$WORK/files.log")"
grep -q 'MD5 check failed\|wrong size' "$BOINC_DIR/client.log" && fail "the client rejected the file"
# The answer: the primes in the range, computed independently.
out="$P/results/remote_job/out" # validated and assimilated as usual
[ -f "$out" ] || fail "no assimilated output of remote_job"
want=$(rc_primes_answer 2000000000 2000300000)
[ "$(cat "$out")" = "$want" ] || fail "output '$(head -c 200 "$out")' is not the known answer '$want'"
echo "PASS: remote input fetched by the real client from a second server (jf_$md5), result OVER/SUCCESS"
