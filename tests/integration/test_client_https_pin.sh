#!/usr/bin/env bash
# HTTPS cannot be stripped from a volsched client:
# a middleman on loopback (strip_relay.py) relays the project's plain
# listener and rewrites its master page to name an http scheduler URL
# through itself, logging every account key it sees.
#  - B: a project attached with an https master URL (the relay terminates
#    TLS with a certificate the client trusts, as a middleman with a
#    mis-issued certificate, or a project page naming http, would): the
#    page names only an http scheduler; the client refuses it with a
#    message and sends no request there.
#  - A: a project attached with its http master URL: the first master page
#    (unchanged) names the https scheduler; the client gets work over https
#    (trusting the test CA through ca-bundle.crt, as BOINC's client does)
#    and is pinned to https. Then the middleman blocks https (the server's
#    HTTPS listener goes away) and rewrites the master page: after its
#    failed RPCs the client fetches the page again and refuses the http
#    scheduler URL; the relay sees no account key; the pin is in the state
#    file.
#  - C: a client attached while the project was plain http keeps an http
#    scheduler URL; once the server is https_only its RPCs are refused
#    (403), and after 5 failures it reads the master page again and goes on
#    over https (what BOINC's client does too: test_https_only.sh).
# VS_KEEP_GOING=1 reports every failed check instead of stopping at the
# first (to see each one fail against an older build).
set -uo pipefail
VSC_WORK_PREFIX=vs_https_pin
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
# shellcheck source=lib_tls.sh
. "$VS_SOURCE_DIR/tests/integration/lib_tls.sh"
RELAYS=""
trap 'vsc_stop; for r in $RELAYS; do kill "$r" 2>/dev/null; wait "$r" 2>/dev/null; done; vsc_finish' EXIT

wait_for() { # SECONDS COMMAND...
    local t=$1 t0
    shift
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "$t" ]; do "$@" && return 0; sleep 0.5; done
    return 1
}

# The project's master URL names the relay's port (RP); serve listens on SPORT.
vsc_project pin || fail "could not create the project"
RP=$PORT
MASTER_HTTP=$URL
SPORT=$(demo_free_port)
HP=$(demo_free_port)
sed -i "s#<config>#<config>\n<https_cert>$T/server.pem</https_cert>\n<https_key>$T/server.key</https_key>\n<https_port>$HP</https_port>#" "$PROJ/config.xml"
sed -i "s#<upload_url>.*</upload_url>#<upload_url>https://127.0.0.1:$HP/pin/cgi-bin/file_upload_handler</upload_url>#" "$PROJ/config.xml"
grep -q "<upload_url>https://" "$PROJ/config.xml" || fail "could not set an https upload URL"
vsc_jobs primes 4 2e9 "1000000000 1000300000" || fail "create_work"
AUTH_A=$AUTH
AUTH_B=$("$VOLSCHED" user add --project "$PROJ" --name other) || fail "user add"

# serve on SPORT (vsc_serve serves $PROJ on $PORT and waits for $URL)
serve_on_sport() {
    PORT=$SPORT URL="http://127.0.0.1:$SPORT/pin/" vsc_serve
}
serve_on_sport || fail "server did not start"
RLOG="$WORK/relay.log"
STRIP_FLAG="$WORK/strip_now"
HTTP_SCHED="http://127.0.0.1:$RP/pin/cgi-bin/cgi"
relay() { # LOG ARGS...: starts a relay, waits until it listens
    local log=$1 _
    shift
    python3 "$VS_SOURCE_DIR/tests/integration/strip_relay.py" --log "$log" \
        --upstream "127.0.0.1:$SPORT" --master-path /pin/ --sched "$HTTP_SCHED" "$@" \
        >>"$WORK/relay.err" 2>&1 &
    RELAYS="$RELAYS $!"
    for _ in $(seq 1 50); do grep -q ready "$log" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
# the plain middleman at the master URL's address; it strips once $STRIP_FLAG exists
relay "$RLOG" --listen "$RP" --when "$STRIP_FLAG" || fail "relay did not start: $(cat "$WORK/relay.err")"
grep -q "href=\"https://127.0.0.1:$HP/pin/cgi-bin/cgi\"" <<<"$(curl -sf "$MASTER_HTTP")" \
    || fail "the relayed master page does not name the https scheduler"
# the TLS middleman (a certificate the client trusts), always stripping
RT=$(demo_free_port)
relay "$WORK/relay_tls.log" --listen "$RT" --tls "$T/server.pem" "$T/server.key" \
    || fail "TLS relay did not start: $(cat "$WORK/relay.err")"
grep -q "href=\"$HTTP_SCHED\"" <<<"$(curl -sf --cacert "$T/ca.pem" "https://127.0.0.1:$RT/pin/")" \
    || fail "the TLS relay does not rewrite the master page"

auth_seen() { grep -q "auth=$1" "$RLOG" "$WORK/relay_tls.log"; }

# ---- B: an https master URL whose page names only an http scheduler
CB="$WORK/client_b"
vsc_client_dir "$CB"
cp "$T/ca.pem" "$CB/ca-bundle.crt"
"$VOLSCHED" client --dir "$CB" attach "https://127.0.0.1:$RT/pin/" "$AUTH_B" || fail "attach B"
vsc_run "$CB" || fail "client B did not start"
refused_b() { grep -q "Refusing to send a scheduler request to $HTTP_SCHED" "$CB/client.log"; }
wait_for 30 refused_b || fail "client B did not refuse the http scheduler URL of its https project"
sleep 3 # time for a request, were one to be sent
auth_seen "$AUTH_B" && fail "client B sent its account key over http: $(grep "auth=$AUTH_B" "$RLOG")"
grep -q "POST /pin/cgi-bin/cgi" "$RLOG" && fail "client B posted to the http scheduler"
echo "B: https master URL, page naming $HTTP_SCHED: refused, no request sent"
vsc_stop

# ---- A: the http master URL; the scheduler was https once
CA="$WORK/client_a"
vsc_client_dir "$CA"
cp "$T/ca.pem" "$CA/ca-bundle.crt"
"$VOLSCHED" client --dir "$CA" attach "$MASTER_HTTP" "$AUTH_A" || fail "attach A"
vsc_run "$CA" || fail "client A did not start"
got_work() { [ "$(vsc_store "select count(*) from result where server_state in (4, 5) and hostid > 0")" -ge 1 ]; }
wait_for 60 got_work || fail "client A got no work over https"
grep -q "This project's scheduler is https" "$CA/client.log" || fail "no pin message"
uploaded() { grep -q "Finished upload of" "$CA/client.log"; }
wait_for 60 uploaded || fail "client A uploaded nothing over https"
auth_seen "$AUTH_A" && fail "client A's key went over http before any stripping"
# The middleman blocks https and strips the master page.
touch "$STRIP_FLAG"
kill -TERM "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null
sed -i "/<https_cert>\|<https_key>\|<https_port>/d" "$PROJ/config.xml"
serve_on_sport || fail "server did not restart without https"
# The client reads the master page again after 5 failed RPCs in a row
# (the user's "update" asks for them sooner than its backoff would).
refetched() { grep -q "rewrote the master page" "$RLOG"; }
update_until_refetched() {
    vsc_bcmd --project "$MASTER_HTTP" update >/dev/null 2>&1
    sleep 2
    refetched
}
wait_for 120 update_until_refetched || fail "client A never fetched the master page again"
refused_a() { grep -q "Refusing to send a scheduler request to $HTTP_SCHED" "$CA/client.log"; }
wait_for 20 refused_a || fail "client A did not refuse the stripped scheduler URL"
sleep 3
auth_seen "$AUTH_A" && fail "client A sent its account key over http: $(grep -c "auth=$AUTH_A" "$RLOG") requests"
vsc_stop
grep -q "<vs_https_pinned/>" "$CA/client_state.xml" || fail "the pin is not in client_state.xml"
grep -q "<scheduler_url>http://" "$CA/client_state.xml" && fail "an http scheduler URL was kept"
echo "A: http master URL, https scheduler, then stripped: refused, the relay saw no key ($(grep -c '' "$RLOG") requests relayed)"

# ---- C: a plain-http client when the server turns https_only
CC="$WORK/client_c"
vsc_client_dir "$CC"
cp "$T/ca.pem" "$CC/ca-bundle.crt"
DIRECT="http://127.0.0.1:$SPORT/pin/"
"$VOLSCHED" client --dir "$CC" attach "$DIRECT" "$AUTH_B" || fail "attach C"
vsc_run "$CC" || fail "client C did not start"
rpc_c() { grep -q "Scheduler request completed" "$CC/client.log"; }
wait_for 30 rpc_c || fail "client C's first RPC (plain http) did not complete"
grep -q "<scheduler_url>http://" "$CC/client_state.xml" || fail "client C has no http scheduler URL"
kill -TERM "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null
sed -i "s#<config>#<config>\n<https_only>1</https_only>\n<https_cert>$T/server.pem</https_cert>\n<https_key>$T/server.key</https_key>\n<https_port>$HP</https_port>#" "$PROJ/config.xml"
VSC_JOB_TAG=c vsc_jobs primes 2 2e9 "1000000000 1000300000" || fail "create_work C"
serve_on_sport || fail "server did not restart with https_only"
on_https_c() {
    vsc_bcmd --project "$DIRECT" update >/dev/null 2>&1
    sleep 1
    grep -q "Finished upload of primesc_job_" "$CC/client.log"
}
wait_for 120 on_https_c || fail "client C did not move to https and compute there"
grep -q "http 403 POST /pin/cgi-bin/cgi" "$PROJ/log/serve.log" || fail "client C's http RPCs were not refused"
grep -q "This project's scheduler is https" "$CC/client.log" || fail "client C not pinned"
echo "C: http scheduler refused $(grep -c 'http 403 POST /pin/cgi-bin/cgi' "$PROJ/log/serve.log") times, then https"
vsc_stop
[ "$nfail" = 0 ] || { echo "$nfail checks failed"; exit 1; }
echo "PASS"
