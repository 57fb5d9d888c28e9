#!/usr/bin/env bash
# A project server that crawls cannot freeze the client (security review,
# issue 34 finding 3). slow_project.py sends every file, and the scheduler
# reply of its "driprpc" project, one byte every 2 s. One client is attached
# to its "drip" project (7 files) and to a real `volsched serve` project:
#  1. the drip project's downloads take its share of the transfer slots
#     (BOINC's max_file_xfers_per_project, 2) and no more, while the
#     boinccmd --get_state / --get_tasks answer within ~1 s;
#  2. the real project's files download, and its tasks run, while the drip
#     project's two downloads are in flight;
#  3. while the driprpc scheduler reply drips, boinccmd still answers;
#  4. SIGTERM ends the client within a few seconds, the partial downloads
#     kept on disk;
#  5. restarted with cc_config <http_transfer_timeout>5 and
#     <max_file_xfers_per_project>3: the downloads resume (HTTP Range), 3 at
#     once, and the low-speed limit fails them and the scheduler RPC with
#     "transfer slower than 10 bytes/s for 5 s" and backs them off; boinccmd
#     answers; SIGTERM again ends it within a few seconds.
# The old client did each transfer and RPC inside its only loop (blocking
# libcurl, 120 s timeouts): boinccmd froze, one download at a time.
# VS_KEEP_GOING=1 reports every failed check instead of stopping at the first.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_slow
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

# at exit, a client still there is killed at once (vsc_stop asks boinccmd
# first, which the old client kept waiting for minutes)
trap '[ -n "$VSC_PID" ] && kill -KILL "$VSC_PID" 2>/dev/null; VSC_PID=""; vsc_finish' EXIT
nfail=0
check() { # MSG: a failed check (fatal unless VS_KEEP_GOING=1)
    if [ "${VS_KEEP_GOING:-0}" = 1 ]; then echo "FAIL: $*"; nfail=$((nfail + 1)); keep=1; return 0; fi
    fail "$@"
}
wait_for() { # SECONDS COMMAND...
    local t=$1 t0
    shift
    t0=$(date +%s)
    while [ $(($(date +%s) - t0)) -lt "$t" ]; do "$@" && return 0; sleep 0.5; done
    return 1
}
# boinccmd, bounded (the old client could leave it waiting for minutes)
bcmd() { (cd "$C" && timeout 10 boinccmd --host "127.0.0.1:$RPC_PORT" --passwd "$RPC_PW" "$@"); }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

SPORT=$(demo_free_port)
SURL="http://127.0.0.1:$SPORT"
python3 "$VS_SOURCE_DIR/tests/integration/slow_project.py" "$SPORT" &
SERVE_PIDS="$SERVE_PIDS $!"
wait_for 10 curl -sf "$SURL/stats" -o /dev/null || fail "slow_project.py did not start"
stat_of() { curl -sf --max-time 5 "$SURL/stat/$1/$2"; } # PROJECT FIELD
stat_is() { [ "$(stat_of "$1" "$2")" = "$3" ]; }

vsc_project good || fail "could not create the project"
vsc_jobs primes 2 2e9 "1000000000 1000500000" || fail "create_work"
vsc_serve || fail "server did not start"

# boinccmd's answer time, the worst of N rounds of --get_state and --get_tasks
maxlat=0
latency() { # ROUNDS LABEL
    local i t0 d cmd
    for i in $(seq 1 "$1"); do
        for cmd in --get_state --get_tasks; do
            t0=$(now)
            bcmd $cmd >"$WORK/bcmd.out" 2>&1 || check "$2: boinccmd $cmd failed: $(head -3 "$WORK/bcmd.out")"
            d=$(elapsed "$t0")
            lt "$d" "$maxlat" || maxlat=$d
            lt "$d" 2 || check "$2: boinccmd $cmd took $d s"
        done
        sleep 0.5
    done
}
# like vsc_run, with a bound on the wait (the old client's GUI RPC froze)
start_client() { # LABEL
    local t0
    VSC_DIR=$C
    RPC_PORT=$(demo_free_port)
    "$VOLSCHED" client --dir "$C" run --foreground --gui_rpc_port "$RPC_PORT" >>"$C/client.log" 2>&1 &
    VSC_PID=$!
    t0=$(now)
    until bcmd --client_version >/dev/null 2>&1; do
        kill -0 "$VSC_PID" 2>/dev/null || fail "$1: the client exited"
        lt "$(elapsed "$t0")" 30 || { check "$1: GUI RPC did not answer within 30 s"; return; }
        sleep 0.2
    done
}
term_time() { # LABEL: SIGTERM, the seconds to exit
    local t0 d _
    t0=$(now)
    kill -TERM "$VSC_PID"
    for _ in $(seq 1 300); do kill -0 "$VSC_PID" 2>/dev/null || break; sleep 0.1; done
    d=$(elapsed "$t0")
    if kill -0 "$VSC_PID" 2>/dev/null; then
        check "$1: still running 30 s after SIGTERM"
        kill -KILL "$VSC_PID"
    fi
    wait "$VSC_PID" 2>/dev/null
    VSC_PID=""
    echo "$1: SIGTERM to exit: $d s"
    lt "$d" 5 || check "$1: SIGTERM took $d s"
}

C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$SURL/drip/" "k" || fail "attach drip"
start_client "start"

# 1. the drip project's share of the slots, and no more
wait_for 30 stat_is drip active 2 || check "the drip project's downloads: $(stat_of drip active) in flight, want 2"
latency 4 "drip downloads in flight"
stat_is drip started 2 || check "the drip project started $(stat_of drip started) downloads, want 2 (its share)"
stat_is drip max_active 2 || check "the drip project had $(stat_of drip max_active) downloads at once, want 2"

# 2. another project's transfers and tasks go on meanwhile
bcmd --project_attach "$URL" "$AUTH" >/dev/null || check "project_attach good"
grep_log() { grep -q "$1" "$C/client.log"; }
wait_for 60 grep_log "\[good\] Computation for task primes_job_.* finished" ||
    check "no task of the real project finished while the drip project's downloads crawled"
grep -q "\[good\] Finished download of" "$C/client.log" || check "no download of the real project"
stat_is drip active 2 || check "the drip downloads are not in flight any more ($(stat_of drip active))"
stat_is drip ended 0 || check "a drip download ended ($(stat_of drip ended)): not all in flight throughout"

# 3. a scheduler reply that drips
bcmd --project_attach "$SURL/driprpc/" "k" >/dev/null || check "project_attach driprpc"
wait_for 30 stat_is driprpc rpc_active 1 || check "no driprpc scheduler request in flight"
latency 4 "scheduler reply dripping"
stat_is driprpc rpc_active 1 || check "the dripping scheduler request ended early"

# 4. TERM with all that in flight; the partial downloads stay
term_time "run 1"
grep -q "Abandoning [0-9]* transfers in flight" "$C/client.log" || check "no 'Abandoning' message"
DDIR="$C/projects/127.0.0.1_${SPORT}_drip"
partial=$(find "$DDIR" -maxdepth 1 -name 'drip_*' -size +0c 2>/dev/null | wc -l)
[ "$partial" -ge 1 ] || check "no partial download kept in $DDIR"

# 5. low-speed limit, a budget from cc_config, resume
sed -i 's|</options>|  <http_transfer_timeout>5</http_transfer_timeout>\n    <max_file_xfers_per_project>3</max_file_xfers_per_project>\n  </options>|' \
    "$C/cc_config.xml"
grep -q "<http_transfer_timeout>5<" "$C/cc_config.xml" || fail "cc_config edit"
from=$(($(wc -l <"$C/client.log") + 1))
start_client "restart"
new_log() { tail -n +"$from" "$C/client.log" | qgrep "$1"; }
wait_for 20 new_log "Resuming download of drip_.* at byte [1-9]" || check "no download resumed"
[ "$(stat_of drip ranges)" -ge 1 ] || check "the server saw no Range request"
wait_for 20 stat_is drip active 3 || check "$(stat_of drip active) drip downloads at once, want 3 (cc_config)"
latency 3 "after restart"
wait_for 30 new_log "Temporarily failed download of drip_.*: transfer slower than 10 bytes/s for 5 s; retrying in" ||
    check "no low-speed failure of a download in the log"
wait_for 30 new_log "driprpc/\] Scheduler request failed: transfer slower than 10 bytes/s for 5 s; retrying in" ||
    check "no low-speed failure of the scheduler request in the log"
msgs=$(bcmd --get_messages 0 2>/dev/null)
grep -q "transfer slower than 10 bytes/s for 5 s" <<<"$msgs" || check "--get_messages lacks the low-speed failure"
latency 2 "low-speed retries"
[ "$(stat_of drip max_active)" -le 3 ] || check "$(stat_of drip max_active) drip downloads at once, over 3"
kill -0 "$VSC_PID" 2>/dev/null || check "the client died"
term_time "run 2"

echo "boinccmd worst answer time: $maxlat s"
[ "$nfail" = 0 ] || { echo "$nfail checks failed"; exit 1; }
echo "ok"
