#!/usr/bin/env bash
# Bad input does not stop `volsched client`: one client is attached to a
# real project (volsched serve, 2 jobs) and to broken or hostile ones: a
# URL that is not a BOINC project, a job that runs past its time bound, a second real project attached with a
# wrong account key, and a fake scheduler (hostile_project.py) whose replies are
# malformed, oversize, name a file ../../evil, give an input only a file://
# URL, or send an app without a code signature; plus an app that crashes.
# Each must give a clear message in the client's log and in boinccmd
# --get_messages, nothing hostile may run or be written outside the data
# directory, and the real project's jobs must still complete.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-120}
VSC_WORK_PREFIX=vs_client_bad
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

rm -f /tmp/vs_hostile_ran
vsc_project good || fail "could not create the project"
vsc_jobs primes 2 2e9 "1000000000 1001000000" || fail "create_work"
vsc_jobs boincapp 1 2e9 "x" || fail "create_work (bad input: the app exits with an error)"
# a job that runs far longer than its bound allows (rsc_fpops_bound / flops ~ 2 s): aborted, 197
VSC_JOB_TAG=_long vsc_jobs boincapp 1 1e9 "400 250" 1e9 || fail "create_work (too long)"
vsc_serve || fail "server did not start"
GOOD_URL=$URL GOOD_AUTH=$AUTH GOOD_PORT=$PORT
HPORT=$(demo_free_port)
python3 "$VS_SOURCE_DIR/tests/integration/hostile_project.py" "$HPORT" &
HPID=$!
SERVE_PIDS="$SERVE_PIDS $HPID"
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$HPORT/x/" >/dev/null 2>&1 && break; sleep 0.1; done
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$GOOD_URL" "$GOOD_AUTH" || fail "attach"
"$VOLSCHED" client --dir "$C" attach "http://127.0.0.1:$GOOD_PORT/good/" "x" 2>/dev/null \
    && fail "attaching twice to one URL was accepted"
out=$("$VOLSCHED" client --dir "$C" attach "ftp://127.0.0.1/x/" "k" 2>&1) && fail "an ftp:// URL was accepted"
grep -q 'Invalid URL' <<<"$out" || fail "no clear message for an ftp URL: $out"
# URLs whose directory would be the projects directory or its parent (the
# old client's attach removed every project's files for http://../)
touch "$C/keepme"
for u in "http://../" "http://./" "http://a.b/x/../" "https://127.0.0.1:$GOOD_PORT/good/"; do
    out=$("$VOLSCHED" client --dir "$C" attach "$u" "k" 2>&1) && fail "attach $u was accepted"
    grep -qE 'Invalid URL|would share the directory' <<<"$out" || fail "no clear message for $u: $out"
done
[ -f "$C/keepme" ] && [ -f "$C/account_127.0.0.1_${GOOD_PORT}_good.xml" ] || fail "an attach removed files"
"$VOLSCHED" client --dir "$C" attach "http://127.0.0.1:$HPORT/notboinc/" "k" || fail "attach notboinc"
# a second real project, attached with an account key it does not know
vsc_project other || fail "could not create the second project"
vsc_serve || fail "second server did not start"
"$VOLSCHED" client --dir "$C" attach "$URL" "0123456789abcdef0123456789abcdef" || fail "attach other"
for m in badxml oversize dotdot fileurl unsigned; do
    "$VOLSCHED" client --dir "$C" attach "http://127.0.0.1:$HPORT/$m/" "k" || fail "attach $m"
done
vsc_run "$C" || fail "client did not start"
PROJ="$WORK/good"
assimilated() { vsc_store "select count(*) from workunit where assimilate_state=2"; }

want=(
    "is not a BOINC project"
    "Invalid or missing account key"
    "Scheduler reply is malformed"
    "Scheduler request failed: size or count limit exceeded"
    "Scheduler reply refused: file name '../../evil' is not a plain file name"
    "URL 'file:///etc/passwd' is not http or https"
    "missing signature: refusing an unsigned app file"
    "compute error: process exited with code 1"
    "exceeded elapsed time limit"
)
t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    msgs=$(vsc_bcmd --get_messages 0 2>/dev/null)
    missing=0
    for w in "${want[@]}"; do grep -qF -- "$w" <<<"$msgs" || missing=$((missing + 1)); done
    [ "$missing" = 0 ] && [ "$(assimilated)" = 4 ] && break
    sleep 1
done
msgs=$(vsc_bcmd --get_messages 0 2>/dev/null)
for w in "${want[@]}"; do
    grep -qF -- "$w" <<<"$msgs" || fail "--get_messages lacks: $w"
    grep -qF -- "$w" "$C/client.log" || fail "the client log lacks: $w"
done
[ "$(assimilated)" = 4 ] || fail "the real project's 4 workunits were not all assimilated ($(assimilated))"
nok=$(vsc_store "select count(*) from result where outcome=1")
nerr=$(vsc_store "select count(*) from result where outcome=3 and exit_status=1")
nlong=$(vsc_store "select count(*) from result where outcome=3 and exit_status=197")
[ "$nok" = 2 ] && [ "$nerr" = 1 ] && [ "$nlong" = 1 ] \
    || fail "store: $nok successes (want 2), $nerr client errors with exit 1 (want 1), $nlong with 197 (want 1)"
[ ! -e /tmp/vs_hostile_ran ] || fail "a hostile app ran"
[ ! -e "$C/../evil" ] && [ ! -e "$C/projects/evil" ] && [ ! -e "$WORK/evil" ] || fail "a file ../../evil was written"
if find "$C" -name 'unsigned_app' -perm -u+x | qgrep .; then fail "the unsigned app was kept as an executable"; fi
vsc_bcmd --get_tasks >/dev/null || fail "boinccmd fails after the bad input"
# what holds the account key is the owner's only (the old client wrote 0644)
for f in "$C"/account_*.xml "$C"/sched_request_*.xml "$C"/slots/*/init_data.xml; do
    [ -e "$f" ] || continue
    [ "$(stat -c %a "$f")" = 600 ] || fail "$f is mode $(stat -c %a "$f"), not 600"
done
D2="$WORK/newdir/data"
mkdir -p "$WORK/newdir"
"$VOLSCHED" client --dir "$D2" attach "$GOOD_URL" "$GOOD_AUTH" >/dev/null 2>&1 || fail "attach in a new dir"
[ "$(stat -c %a "$D2")" = 700 ] || fail "a new data directory is mode $(stat -c %a "$D2"), not 700"
echo "ok: ${#want[@]} kinds of bad input reported in the log and --get_messages; the real project's jobs completed"
