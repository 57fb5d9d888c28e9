#!/usr/bin/env bash
# The scientist's tools against `volsched serve`, computed by Debian's
# boinc-client: `volsched batch submit|status|wait|fetch|abort|retire` over
# HTTP (files uploaded once through job_file.php: a second batch naming the
# same file uploads nothing), and examples/submit/submit_example.py (standard
# library only) doing the same from upload to retire. Each output is checked
# against the answer computed here independently. Usage errors and a
# refused account end with the documented exit status and a message.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-300}
RC_WORK_PREFIX=vs_submit_cli
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
PORT=$(demo_free_port)
URL="http://127.0.0.1:$PORT/demo/"
P="$WORK/project"
"$VOLSCHED" init "$P" --name "submit cli" --url "$URL" >/dev/null || fail "init"
"$VOLSCHED" app add --project "$P" --name primes --platform x86_64-pc-linux-gnu --version 100 \
    "$PRIMES" >/dev/null || fail "app add"
AUTH=$("$VOLSCHED" user add --project "$P" --name volunteer) || fail "user add"
SCI=$("$VOLSCHED" user add --project "$P" --name scientist) || fail "user add scientist"
demo_serve || fail "server did not start"
B() { "$VOLSCHED" batch "$@" --url "$URL" --auth "$SCI"; }

mkdir -p "$WORK/in"
printf '1000000000 1000500000\n' > "$WORK/in/a"
printf '1000500000 1001000000\n' > "$WORK/in/b"
printf '%s\n%s\n' "$WORK/in/a" "$WORK/in/b" > "$WORK/jobs"

# Refusals: no submit right yet (exit 1, the server's sentence), usage errors (exit 2).
out=$(B submit --app primes --jobs "$WORK/jobs" 2>&1); st=$?
[ "$st" = 1 ] && grep -q <<<"$out" "may not submit" || fail "submit without rights: exit $st: $out"
"$VOLSCHED" batch submit --auth x --app primes </dev/null >/dev/null 2>&1; st=$?
[ "$st" = 2 ] || fail "submit without --url: exit $st, want 2"
B wait >/dev/null 2>&1; st=$?
[ "$st" = 2 ] || fail "wait without --batch: exit $st, want 2"
"$VOLSCHED" user set --project "$P" --name scientist --submit primes --quota 3 >/dev/null \
    || fail "user set --submit"
"$VOLSCHED" user show --project "$P" --name scientist --json | qgrep '"quota": 3' \
    || fail "user show: $("$VOLSCHED" user show --project "$P" --name scientist --json)"

BATCH=$(B submit --app primes --jobs "$WORK/jobs" --fpops-est 2e10 --fpops-bound 2e14 \
    --delay-bound 86400 --name first 2>"$WORK/submit.err") || fail "batch submit: $(cat "$WORK/submit.err")"
grep -q '2 uploaded' "$WORK/submit.err" || fail "first submit did not upload 2 files: $(cat "$WORK/submit.err")"
B status --batch "$BATCH" | qgrep "batch $BATCH (first, app primes): in progress; 2 jobs" \
    || fail "batch status: $(B status --batch "$BATCH")"
# The same inputs again: nothing uploaded (content-addressed), abort it at once.
B2=$(B submit --app primes --jobs "$WORK/jobs" --fpops-est 2e10 2>"$WORK/submit2.err") \
    || fail "second submit: $(cat "$WORK/submit2.err")"
grep -q '0 uploaded, 2 already on the server' "$WORK/submit2.err" \
    || fail "second submit uploaded again: $(cat "$WORK/submit2.err")"
B abort --batch "$B2" | qgrep "batch $B2 aborted" || fail "batch abort"
B status --batch "$B2" | qgrep ': aborted;' || fail "aborted batch status: $(B status --batch "$B2")"

demo_client_start || fail "client did not start or attach"
B wait --batch "$BATCH" --timeout "$LIMIT" >"$WORK/wait.out" 2>&1 || fail "batch wait: $(cat "$WORK/wait.out")"
grep -q 'complete; 2 jobs, 2 done' "$WORK/wait.out" || fail "wait: $(cat "$WORK/wait.out")"
B fetch --batch "$BATCH" --dir "$WORK/out" >"$WORK/fetch.out" 2>&1 || fail "fetch: $(cat "$WORK/fetch.out")"
grep -q '2 of 2 jobs fetched (2 files)' "$WORK/fetch.out" || fail "fetch: $(cat "$WORK/fetch.out")"
[ "$(cat "$WORK/out/b${BATCH}_1_0")" = "$(rc_primes_answer 1000000000 1000500000)" ] || fail "job 1's output is wrong"
[ "$(cat "$WORK/out/b${BATCH}_2_0")" = "$(rc_primes_answer 1000500000 1001000000)" ] || fail "job 2's output is wrong"
B fetch --batch "$BATCH" --dir "$WORK/out" --zip >/dev/null || fail "fetch --zip"
python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert len(z.namelist()) == 2 and z.testzip() is None' \
    "$WORK/out/batch_$BATCH.zip" || fail "the zip is not the batch's 2 outputs"
B retire --batch "$BATCH" | qgrep retired || fail "retire"
B status --batch "$BATCH" >/dev/null 2>&1 && fail "a retired batch still listed"

# The Python example, end to end.
printf '1001000000 1001400000\n' > "$WORK/in/c"
python3 "$VS_SOURCE_DIR/examples/submit/submit_example.py" "$URL" "$SCI" primes "$WORK/in/c" "$WORK/in/a" \
    --out "$WORK/pyout" --timeout "$LIMIT" >"$WORK/py.out" 2>&1 &
PY_PID=$!
# The client found no work a while ago and backs off; once the batch is in,
# ask it to contact the project now (as a volunteer's "Update" would).
for _ in $(seq 1 60); do grep -q '^batch ' "$WORK/py.out" && break; sleep 1; done
sleep 2
demo_bcmd --project "$URL" update >/dev/null 2>&1
wait "$PY_PID" || fail "submit_example.py: $(cat "$WORK/py.out")"
grep -q 'retired' "$WORK/py.out" || fail "submit_example.py: $(cat "$WORK/py.out")"
n=0
for f in "$WORK"/pyout/*; do
    got=$(cat "$f")
    if [ "$got" = "$(rc_primes_answer 1001000000 1001400000)" ] || [ "$got" = "$(rc_primes_answer 1000000000 1000500000)" ]; then
        n=$((n + 1))
    else
        fail "submit_example.py wrote a wrong output $f"
    fi
done
[ "$n" = 2 ] || fail "submit_example.py wrote $n outputs, want 2"
echo "PASS: volsched batch and the Python example"
