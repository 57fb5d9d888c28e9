#!/usr/bin/env bash
# HTTPS in `volsched serve`: config.xml names a certificate and
# key (made here by a throw-away test CA) and an HTTPS port beside the HTTP
# one. The master page, fetched over HTTP, must advertise only the https
# scheduler URL; curl must reach it with the CA and be refused without it;
# and the real BOINC client, given the test CA the way it trusts a CA (the
# file ca-bundle.crt in its data directory, which it hands to libcurl), must
# attach and receive tasks over HTTPS, so its account key never travels in
# clear.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-120}
RC_WORK_PREFIX=vs_https
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"
# ---- the test CA and the server's certificate (IP 127.0.0.1): $T
# shellcheck source=lib_tls.sh
. "$VS_SOURCE_DIR/tests/integration/lib_tls.sh"

demo_make_project 4 1000000 || fail "could not create the project"
HTTPS_PORT=$(demo_free_port)
sed -i "s:<config>:<config>\n<https_cert>$T/server.pem</https_cert>\n<https_key>$T/server.key</https_key>\n<https_port>$HTTPS_PORT</https_port>:" \
    "$WORK/project/config.xml"
demo_serve || fail "server did not start"
grep -q "https on 127.0.0.1:$HTTPS_PORT" "$WORK/serve.log" || fail "no https listener in the log"

# ---- the master page (over HTTP) names only the https scheduler
page=$(curl -sf "$URL") || fail "no master page"
grep -q "<link rel=\"boinc_scheduler\" href=\"https://127.0.0.1:$HTTPS_PORT/" <<<"$page" \
    || fail "the master page does not advertise the https scheduler: $page"
grep -q 'href="http://' <<<"$page" && fail "the master page still advertises an http scheduler"
SURL=$(echo "$page" | sed -n 's:.*<scheduler>\(.*\)</scheduler>.*:\1:p')
echo "master page advertises $SURL"

# ---- TLS: trusted with the CA, refused without it
curl -sf --cacert "$T/ca.pem" "https://127.0.0.1:$HTTPS_PORT/demo/" | qgrep boinc_scheduler \
    || fail "the master page over https with the CA failed"
if curl -sf "https://127.0.0.1:$HTTPS_PORT/demo/" >/dev/null 2>&1; then
    fail "curl trusted the server without the test CA"
fi
reply=$(printf '<scheduler_request>\n<authenticator>%s</authenticator>\n</scheduler_request>\n' "$AUTH" \
    | curl -sf --cacert "$T/ca.pem" --data-binary @- "$SURL") || fail "scheduler over https failed"
grep -q '<scheduler_reply>' <<<"$reply" || fail "no scheduler reply over https: $reply"

# ---- the real BOINC client, trusting the test CA through its ca-bundle.crt
mkdir -p "$WORK/boinc"
cp "$T/ca.pem" "$WORK/boinc/ca-bundle.crt"
demo_client_start || fail "client did not start or attach"
t0=$(date +%s)
ok=0
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "server died"
    kill -0 "$BOINC_PID" 2>/dev/null || fail "client died"
    if [ "$(demo_tasks_received)" -ge 1 ]; then ok=1; break; fi
    sleep 1
done
[ "$ok" = 1 ] || fail "within ${LIMIT}s the client got no tasks over https"
grep -q "<scheduler_url>https://127.0.0.1:$HTTPS_PORT/" "$BOINC_DIR/client_state.xml" \
    || fail "the client's scheduler URL is not the https one"
if grep -Eiq 'SSL certificate problem|peer certificate|unable to get local issuer' "$BOINC_DIR/client.log"; then
    fail "the client had certificate errors: $(grep -Eim1 'SSL|certificate' "$BOINC_DIR/client.log")"
fi
echo "the real BOINC client got $(demo_tasks_received) tasks over https (scheduler $SURL)"
demo_stop_all
echo "PASS"
