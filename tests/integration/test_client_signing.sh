#!/usr/bin/env bash
# Code signing's promise, attacked: only bytes the project signed run on the
# volunteer's machine, even with a middleman on the network or a file changed
# on disk (docs/security.md, "The volunteer's client").
#
# A real project (volsched serve) with a small plain app, zapp, that calls
# zlibVersion() from the system's libz.so.1 and writes its library and
# command search paths to its output. A middleman (mitm_relay.py) between
# the client and the server changes only the scheduler replies:
#   addlib  adds an input named libz.so.1 (a library whose constructor leaves
#           a mark): it must not load; the job still runs and validates
#   outapp  names the app's executable as an output, filled from an input:
#           the reply is refused, nothing is written over the app
#   inapp   names the app's executable as an input: refused
#   inout   names an input as an output too: refused
# Then the app's file is changed on disk after its download: the next task
# is refused (signature check at start, ERR_RSA_FAILED), the bytes never run.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_sign
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
command -v gcc >/dev/null || fail "gcc is needed to build the test app"
LIBZ=/lib/x86_64-linux-gnu/libz.so.1
[ -f "$LIBZ" ] || fail "no $LIBZ"

MARK="$WORK/pwned"
PAY="$WORK/payload"
mkdir -p "$PAY"
cat >"$WORK/zapp.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
const char *zlibVersion(void);
static const char *env(const char *n) { const char *v = getenv(n); return v ? v : ""; }
int main(void)
{
    FILE *o = fopen("out", "w");
    if (!o)
        return 1;
    fprintf(o, "zlib %s\nLD_LIBRARY_PATH=%s\nPATH=%s\n", zlibVersion(), env("LD_LIBRARY_PATH"),
            env("PATH"));
    if (fclose(o) != 0)
        return 1;
    FILE *f = fopen("boinc_finish_called", "w");
    if (f)
        fclose(f);
    return 0;
}
EOF
gcc -O1 -o "$WORK/zapp" "$WORK/zapp.c" "$LIBZ" || fail "cannot build zapp"
cat >"$WORK/evil.c" <<EOF
#include <stdio.h>
__attribute__((constructor)) static void mark(void)
{
    FILE *f = fopen("$MARK", "a");
    if (f) { fputs("library loaded\n", f); fclose(f); }
}
const char *zlibVersion(void) { return "evil"; }
EOF
gcc -shared -fPIC -Wl,-soname,libz.so.1 -o "$PAY/libz.so.1" "$WORK/evil.c" || fail "evil lib"
printf '#!/bin/sh\necho "payload ran" >> %s\n' "$MARK" >"$PAY/payload"

PROJ="$WORK/sign"
PORT=$(demo_free_port)
URL="http://127.0.0.1:$PORT/sign/"
"$VOLSCHED" init "$PROJ" --name sign --url "$URL" >/dev/null || fail "init"
"$VOLSCHED" app add --project "$PROJ" --name zapp --platform x86_64-pc-linux-gnu \
    --version 100 "$WORK/zapp" >/dev/null || fail "app add"
AUTH=$("$VOLSCHED" user add --project "$PROJ" --name volunteer) || fail "user add"
vsc_serve || fail "server did not start"

RELAY_PID=""
relay() {
    [ -n "$RELAY_PID" ] && { kill "$RELAY_PID" 2>/dev/null; wait "$RELAY_PID" 2>/dev/null; }
    RPORT=${2:-$(demo_free_port)}
    python3 "$VS_SOURCE_DIR/tests/integration/mitm_relay.py" "$RPORT" "$PORT" "$1" "$PAY" &
    RELAY_PID=$!
    SERVE_PIDS="$SERVE_PIDS $RELAY_PID"
    local _
    for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$RPORT/sign/" >/dev/null 2>&1 && return 0; sleep 0.1; done
    fail "relay did not start"
}

# waits up to $2 s for the client log to hold $1
wait_log() {
    local _
    for _ in $(seq 1 "$2"); do grep -q "$1" "$VSC_DIR/client.log" 2>/dev/null && return 0; sleep 1; done
    return 1
}

# ---- addlib: the job runs with the signed app and the system's library
VSC_JOB_TAG=_lib vsc_jobs zapp 1 1e9 "x" || fail "create_work"
relay addlib
ADDLIB_PORT=$RPORT
C="$WORK/c_addlib"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "http://127.0.0.1:$RPORT/sign/" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"
for _ in $(seq 1 90); do [ "$(vsc_wus_done)" -ge 1 ] && break; sleep 1; done
vsc_stop
[ -s "$PAY/changed" ] || fail "the relay changed no reply"
[ -e "$MARK" ] && fail "the unsigned library ran inside the app: $(cat "$MARK")"
[ "$(vsc_wus_done)" -ge 1 ] || fail "the job did not complete through the relay"
out="$PROJ/results/zapp_lib_job_1/out"
[ -f "$out" ] || fail "no output assimilated ($out)"
grep -q "^zlib evil" "$out" && fail "the app used the unsigned libz.so.1"
grep -q "^zlib 1\." "$out" || fail "the app did not report the system's zlib: $(cat "$out")"
ld=$(sed -n 's/^LD_LIBRARY_PATH=//p' "$out")
path=$(sed -n 's/^PATH=//p' "$out")
echo "app saw LD_LIBRARY_PATH=$ld"
IFS=: read -ra entries <<<"$ld:$path"
for e in "${entries[@]}"; do
    case "$e" in
    /*/projects/* | /*/slots/*) fail "a directory with unsigned files on a search path: $e" ;;
    /*) ;;
    *) fail "a relative (working-directory) entry on a search path: '$e'" ;;
    esac
done
case "$ld" in "$C/app_versions/"*) ;; *) fail "the library path does not start with the verified directory: $ld" ;; esac
echo "addlib: the unsigned libz.so.1 was downloaded as an input and never loaded; the job validated"

# ---- outapp, inapp, inout: the reply is refused whole
for mode in outapp inapp inout; do
    : >"$PAY/changed"
    VSC_JOB_TAG=_$mode vsc_jobs zapp 1 1e9 "x" || fail "create_work"
    relay "$mode"
    C="$WORK/c_$mode"
    vsc_client_dir "$C"
    # an account each: one account may add only a few hosts a day
    auth=$("$VOLSCHED" user add --project "$PROJ" --name "v_$mode") || fail "user add"
    "$VOLSCHED" client --dir "$C" attach "http://127.0.0.1:$RPORT/sign/" "$auth" || fail "attach"
    vsc_run "$C" || fail "client did not start"
    wait_log "Scheduler reply refused: file .* is " 60 ||
        fail "$mode: no refusal in the log ($(cat "$PAY/changed" 2>/dev/null | wc -l) replies changed)"
    sleep 3
    vsc_stop
    grep "Scheduler reply refused" "$C/client.log" | head -1
    [ -e "$MARK" ] && fail "$mode: the payload ran: $(cat "$MARK")"
    grep -q "Starting task" "$C/client.log" && fail "$mode: a task of a refused reply started"
    ls "$C/slots"/*/payload >/dev/null 2>&1 && fail "$mode: a payload reached a slot"
done
echo "outapp, inapp, inout: each reply refused with a message, no task started"

# ---- slotname: an input opened under the app file's name in the slot
: >"$PAY/changed"
VSC_JOB_TAG=_slot vsc_jobs zapp 1 1e9 "x" || fail "create_work"
relay slotname
C="$WORK/c_slotname"
vsc_client_dir "$C"
auth=$("$VOLSCHED" user add --project "$PROJ" --name v_slotname) || fail "user add"
"$VOLSCHED" client --dir "$C" attach "http://127.0.0.1:$RPORT/sign/" "$auth" || fail "attach"
vsc_run "$C" || fail "client did not start"
wait_log "refusing to start: files .* share the open name" 60 ||
    fail "slotname: an input shadowing the app file in the slot was not refused ($(wc -l <"$PAY/changed") replies changed)"
vsc_stop
grep "refusing to start" "$C/client.log" | head -1
[ -e "$MARK" ] && fail "slotname: the payload ran: $(cat "$MARK")"
grep -q "Starting task" "$C/client.log" && fail "slotname: the task started"
echo "slotname: refused before the slot was set up"

# ---- the app file changed on disk after its download
C="$WORK/c_addlib"
VSC_DIR=$C
RPC_PW=$(head -1 "$C/gui_rpc_auth.cfg")
esc=$(ls "$C/projects")
app=$(grep -o '<file_name>zapp[^<]*</file_name>' "$C/client_state.xml" | head -1 | sed 's/<[^>]*>//g')
[ -n "$app" ] && [ -f "$C/projects/$esc/$app" ] || fail "no downloaded app file ($app)"
chmod u+w "$C/projects/$esc/$app"
cp "$PAY/payload" "$C/projects/$esc/$app" # written in place: the verified copy shares the bytes
before=$(vsc_wus_done)
VSC_JOB_TAG=_tamper vsc_jobs zapp 1 1e9 "x" || fail "create_work"
relay none "$ADDLIB_PORT" # the client's project URL is the relay's
vsc_run "$C" || fail "client did not start"
wait_log "failed its signature check" 60 || fail "the changed app file was not caught at task start"
grep "failed its signature check" "$C/client.log" | head -1
errored() {
    vsc_store "select count(*) from result r join workunit w on r.workunitid=w.id
               where w.name='zapp_tamper_job_1' and r.outcome=3 and r.exit_status=-120"
}
for _ in $(seq 1 60); do [ "$(errored)" -ge 1 ] && break; sleep 1; done
vsc_stop
[ -e "$MARK" ] && fail "the changed app file ran: $(cat "$MARK")"
[ "$(errored)" -ge 1 ] || fail "the refused task was not reported as an error -120 (ERR_RSA_FAILED)"
echo "tampered app: refused at start, reported to the project as error -120"
[ "$(vsc_wus_done)" = "$before" ] || fail "a job completed with the changed app"
echo "PASS"
