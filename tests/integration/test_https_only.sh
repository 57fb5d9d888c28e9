#!/usr/bin/env bash
# <https_only> and the TLS setup of `volsched serve`:
#  - serve refuses https_only without a certificate, and with an http
#    upload URL, saying why;
#  - the plain listener serves the master page (naming the https
#    scheduler), get_project_config.php and downloads, and answers the
#    scheduler, uploads, /ops/, server_status.php and /metrics 403 with the
#    https URL; over https they work, and the operator's session cookie is
#    Secure;
#  - TLS: 1.0 and 1.1 are refused, a static-RSA suite (AES128-SHA) is
#    refused, TLS 1.2 with ECDHE and TLS 1.3 connect;
#  - the real BOINC client (7.20.5) attached while the project was plain
#    http keeps an http scheduler URL; once https_only is on, its RPCs are
#    refused (403), it fetches the master page again (after
#    --master_fetch_period failures), moves to the https scheduler, and
#    computes, uploads and reports over https.
# VS_KEEP_GOING=1 reports every failed check instead of stopping at the
# first (to see each one fail against an older build).
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-180}
RC_WORK_PREFIX=vs_https_only
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"
# shellcheck source=lib_tls.sh
. "$VS_SOURCE_DIR/tests/integration/lib_tls.sh"
OPS_PW='operator password 1'

# ---- the project, without jobs yet (their upload URL is fixed when made)
PORT=$(demo_free_port)
URL="http://127.0.0.1:$PORT/demo/"
P="$WORK/project"
"$VOLSCHED" init "$P" --name "volsched demo" --url "$URL" --ops-password "$OPS_PW" >/dev/null \
    || fail "init"
"$VOLSCHED" app add --project "$P" --name primes --platform x86_64-pc-linux-gnu --version 100 \
    "$PRIMES" >/dev/null || fail "app add"
AUTH=$("$VOLSCHED" user add --project "$P" --name volunteer) || fail "user add"
HTTPS_PORT=$(demo_free_port)
HTTPS="https://127.0.0.1:$HTTPS_PORT"

# ---- the BOINC client attaches while the project is plain http
demo_serve || fail "server did not start"
mkdir -p "$WORK/boinc"
cp "$T/ca.pem" "$WORK/boinc/ca-bundle.crt"
DEMO_BOINC_ARGS="--master_fetch_period 2" demo_client_start || fail "client did not start or attach"
first_rpc() { grep -q 'Scheduler request completed' "$BOINC_DIR/client.log"; }
wait_until() { # SECONDS COMMAND...
    local t=$1 t0
    shift
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "$t" ]; do "$@" && return 0; sleep 1; done
    return 1
}
wait_until 60 first_rpc || fail "the client's first RPC (plain http) did not complete"
grep -q "<scheduler_url>http://127.0.0.1:$PORT/demo/cgi-bin/cgi" "$BOINC_DIR/client_state.xml" \
    || fail "the client did not keep the http scheduler URL"
demo_serve_stop

# ---- https_only's conditions
cfg="$P/config.xml"
cp "$cfg" "$WORK/config.plain"
sed -i "s#<config>#<config>\n<https_only>1</https_only>#" "$cfg"
timeout 20 "$VOLSCHED" serve --project "$P" --listen "127.0.0.1:$PORT" --foreground > "$WORK/r1" 2>&1 \
    && fail "serve started with https_only and no certificate"
grep -q "https_only: no certificate" "$WORK/r1" || fail "no reason for the refusal: $(tail -2 "$WORK/r1")"
sed -i "s#<config>#<config>\n<https_cert>$T/server.pem</https_cert>\n<https_key>$T/server.key</https_key>\n<https_port>$HTTPS_PORT</https_port>#" "$cfg"
timeout 20 "$VOLSCHED" serve --project "$P" --listen "127.0.0.1:$PORT" --foreground > "$WORK/r2" 2>&1 \
    && fail "serve started with https_only and an http upload URL"
grep -q "https_only: the upload URL http://.* is not https" "$WORK/r2" \
    || fail "no reason for the refusal: $(tail -2 "$WORK/r2")"
sed -i "s#<upload_url>.*</upload_url>#<upload_url>$HTTPS/demo/cgi-bin/file_upload_handler</upload_url>#" "$cfg"

# ---- jobs (the transitioner gives them the https upload URL), then serve
mkdir -p "$WORK/inputs"
for i in 1 2 3; do
    echo "$((1000000000 + (i - 1) * 300000)) $((1000000000 + i * 300000))" > "$WORK/inputs/in_$i"
    echo "--wu_name primes_job_$i $WORK/inputs/in_$i"
done | "$VOLSCHED" create_work --project "$P" --appname primes --rsc_fpops_est 2e9 \
    --rsc_fpops_bound 2e14 --delay_bound 86400 --stdin >/dev/null || fail "create_work"
demo_serve || fail "server did not start with https_only"
grep -q "https_only: plain http serves only" "$WORK/serve.log" || fail "no https_only line in the log"

# ---- the plain listener: the master page, get_project_config.php and downloads only
page=$(curl -sf "$URL") || fail "no master page over plain http"
grep -q "href=\"$HTTPS/demo/cgi-bin/cgi\"" <<<"$page" || fail "the master page does not name the https scheduler"
curl -sf -o "$WORK/pc.xml" "${URL}get_project_config.php"
grep -q '<project_config>' "$WORK/pc.xml" || fail "no get_project_config.php over plain http"
# The account RPCs (password hashes) go over https (issue 36).
grep -q "<web_rpc_url_base>$HTTPS/demo/</web_rpc_url_base>" "$WORK/pc.xml" ||
    fail "web_rpc_url_base is not the https one: $(cat "$WORK/pc.xml")"
dl=$(cd "$P/download" && find . -type f | head -1 | sed 's:^\./::')
curl -sf -o /dev/null "${URL}download/$dl" || fail "download $dl over plain http failed"
REQ="<scheduler_request>\n<authenticator>$AUTH</authenticator>\n</scheduler_request>\n"
plain_refused() { # METHOD PATH
    local out code
    out=$(if [ "$1" = POST ]; then printf '%b' "$REQ" | curl -s -w '\n%{http_code}' --data-binary @- "http://127.0.0.1:$PORT$2";
          else curl -s -w '\n%{http_code}' "http://127.0.0.1:$PORT$2"; fi)
    code=$(echo "$out" | tail -1)
    [ "$code" = 403 ] || { fail "plain $1 $2 answered $code"; return; }
    grep -q "only over https: $HTTPS$2" <<<"$out" || fail "plain $1 $2: no https URL in '$(echo "$out" | head -1)'"
}
plain_refused POST /demo/cgi-bin/cgi
plain_refused POST /demo/cgi-bin/file_upload_handler
plain_refused GET /ops/
plain_refused GET /demo/server_status.php
plain_refused GET /metrics
plain_refused GET /demo/lookup_account.php
plain_refused GET /demo/login.php
plain_refused POST /demo/login.php
grep -q "http 403 POST /demo/cgi-bin/cgi from 127.0.0.1: this project serves" "$WORK/serve.log" \
    || fail "the refusal is not logged"

# ---- over https they work; the operator's cookie is Secure there
reply=$(printf '%b' "$REQ" | curl -sf --cacert "$T/ca.pem" --data-binary @- "$HTTPS/demo/cgi-bin/cgi") \
    || fail "the scheduler over https failed"
grep -q '<scheduler_reply>' <<<"$reply" || fail "no scheduler reply over https"
reply=$(curl -sf --cacert "$T/ca.pem" "$HTTPS/demo/lookup_account.php?email_addr=nobody%40example.org")
grep -q '<error_num>-136</error_num>' <<<"$reply" || fail "lookup_account over https: $reply"
curl -s --cacert "$T/ca.pem" -D "$WORK/sh" -o /dev/null "$HTTPS/demo/login.php"
grep -i '^Set-Cookie: vs_site=' "$WORK/sh" | qgrep 'Secure' || fail "the site's cookie over https is not Secure"
curl -s --cacert "$T/ca.pem" -D "$WORK/oh" -o /dev/null -u "op:$OPS_PW" "$HTTPS/ops/"
head -1 "$WORK/oh" | qgrep ' 200' || fail "/ops/ over https: $(head -1 "$WORK/oh")"
grep -i '^Set-Cookie: vs_ops=' "$WORK/oh" | qgrep 'Secure' || fail "the session cookie over https is not Secure"

# ---- TLS versions and suites
tls_ok() { # openssl s_client options: 0 when a handshake completed
    local out
    out=$(echo | timeout 10 openssl s_client -connect "127.0.0.1:$HTTPS_PORT" "$@" 2>&1)
    grep -q 'Cipher is [^(]' <<<"$out"
}
# SECLEVEL=0: OpenSSL 3 itself offers TLS 1.0/1.1 only at level 0
tls_ok -tls1 -cipher 'DEFAULT:@SECLEVEL=0' && fail "TLS 1.0 accepted"
tls_ok -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' && fail "TLS 1.1 accepted"
tls_ok -tls1_2 -cipher 'AES128-SHA:@SECLEVEL=0' && fail "a static-RSA suite (AES128-SHA) accepted"
tls_ok -tls1_2 -cipher 'AES256-GCM-SHA384' && fail "a static-RSA suite (AES256-GCM-SHA384) accepted"
tls_ok -tls1_2 -cipher 'ECDHE-RSA-AES128-GCM-SHA256' || fail "TLS 1.2 with ECDHE refused"
tls_ok -tls1_3 || fail "TLS 1.3 refused"

# ---- the BOINC client: refused over http, re-reads the master page, goes on over https
on_https() {
    demo_bcmd --project "$URL" update >/dev/null 2>&1
    grep -q "<scheduler_url>$HTTPS/demo/cgi-bin/cgi" "$BOINC_DIR/client_state.xml" \
        && [ "$(demo_tasks_received)" -ge 1 ]
}
wait_until "$LIMIT" on_https || fail "the client did not move to the https scheduler and get tasks"
grep -q "http 403 POST /demo/cgi-bin/cgi from 127.0.0.1" "$WORK/serve.log" \
    || fail "the client's http RPC was not refused"
uploaded_reported() {
    grep -q "Finished upload of primes_job_" "$BOINC_DIR/client.log" \
        && [ "$(sqlite3 "$P/volsched.db" "select count(*) from result where server_state=5 and outcome=1")" -ge 1 ]
}
wait_until "$LIMIT" uploaded_reported || fail "no task uploaded and reported over https"
grep -Eiq 'SSL certificate problem|unable to get local issuer' "$BOINC_DIR/client.log" \
    && fail "the client had certificate errors"
echo "BOINC: http scheduler refused $(grep -c 'http 403 POST /demo/cgi-bin/cgi' "$WORK/serve.log") times, then https: $(demo_tasks_received) tasks, $(sqlite3 "$P/volsched.db" "select count(*) from result where server_state=5 and outcome=1") reported"
demo_stop_all
[ "$nfail" = 0 ] || { echo "$nfail checks failed"; exit 1; }
echo "PASS"
