#!/usr/bin/env bash
# Trickle messages both ways. A boincapp task (Debian's BOINC API) sends a
# trickle-up halfway; `volsched client` sends it as <msg_from_host> in a
# scheduler RPC it forces for it; `volsched serve` stores it (durable before
# the reply) and its <trickle_handler> command runs once for it and answers
# with a trickle-down; the next RPC carries it as <msg_to_host>; the client
# hands it to the still-running app, which writes it to its stderr, which
# comes back to the server with the result.
set -uo pipefail
LIMIT=${LIMIT:-240}
VSC_WORK_PREFIX=vs_client_trickle
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

vsc_project trk || fail "could not create the project"
cat > "$WORK/handler.sh" <<'SH'
#!/bin/sh
# trickle handler: HOSTID RESULT VARIETY MSG_FILE REPLY_FILE
echo "$1 $2 $3 $(tr -d '\n' < "$4")" >> "$(dirname "$0")/handled.log"
echo "hello $2 from the project" > "$5"
SH
chmod +x "$WORK/handler.sh"
sed -i "s|</config>|<trickle_handler>$WORK/handler.sh</trickle_handler>\n</config>|" "$PROJ/config.xml"
vsc_jobs boincapp 1 1e10 "48 250 trickle" || fail "create_work"   # ~12 s CPU, trickle at step 24: 6 s left for the handler, an RPC and the delivery
vsc_serve || fail "server did not start"
C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"

t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    [ -s "$WORK/handled.log" ] && break
    sleep 0.5
done
[ -s "$WORK/handled.log" ] || fail "the trickle handler never ran"
grep -q 'Trickle-up message from task boincapp_job_1_0 queued' "$C/client.log" || fail "client did not queue the trickle-up"
grep -q 'boincapp_job_1_0 progress .*<msg_text>&lt;step&gt;24&lt;/step&gt;</msg_text>' "$WORK/handled.log" || fail "handler got: $(cat "$WORK/handled.log")"
n=$(vsc_store "select count(*) from msg_from_host where handled=1")
[ "$n" = 1 ] || fail "store: $n handled trickle-ups, want 1"
# the trickle-down goes out with the host's next RPC: ask for one
sleep 1
vsc_bcmd --project "$URL" update || fail "project update"
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    [ "$(vsc_wus_done)" = 1 ] && break
    sleep 1
done
[ "$(vsc_wus_done)" = 1 ] || fail "the job did not complete"
grep -q 'Trickle-down message received' "$C/client.log" || fail "client never received the trickle-down"
[ "$(vsc_store "select count(*) from msg_to_host where handled=1")" = 1 ] || fail "trickle-down not marked sent"
err=$(vsc_store "select stderr_out from result where name='boincapp_job_1_0'")
{ grep -q 'boincapp: trickle-down: <msg_to_host>' <<<"$err" &&
  grep -q 'hello boincapp_job_1_0 from the project' <<<"$err"; } \
    || fail "the app did not get the trickle-down; its stderr: $err"
[ "$(wc -l < "$WORK/handled.log")" = 1 ] || fail "the handler ran more than once"
echo "ok: trickle-up stored and handled once, trickle-down delivered to the running app"
