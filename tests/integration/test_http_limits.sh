#!/usr/bin/env bash
# The HTTP front end against slow and greedy clients, with real
# connections on loopback (tests/integration/http_attack.py): the
# per-address limit, slowloris heads and slow bodies closed by their
# deadline while honest scheduler RPCs are answered, a full server refusing
# at once, keep-alive reuse, X-Forwarded-For from a trusted proxy only, and
# every limit hit counted in /metrics and logged at a rate limit.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}" "${VS_BINARY_DIR:?}"
PRIMES="$VS_BINARY_DIR/examples/primes"
for tool in curl python3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' is not installed"; exit 1; }
done
WORK=$(mktemp -d /tmp/vs_httplim.XXXXXX)
# shellcheck source=../../scripts/lib_demo.sh
. "$VS_SOURCE_DIR/scripts/lib_demo.sh"
keep=0
finish() {
    demo_serve_stop >/dev/null 2>&1
    if [ "$keep" = 1 ]; then echo "(work dir kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap finish EXIT
fail() {
    echo "FAIL: $*"
    echo "---- server log (last 20 lines) ----"
    tail -20 "$WORK/serve.log" 2>/dev/null
    keep=1
    exit 1
}

demo_make_project 4 1000 || fail "could not create the project"
HEAD_T=3 PER_ADDR=16 MAXC=300 PROXY=127.0.0.2
sed -i "s:<config>:<config>\n<http_head_timeout>$HEAD_T</http_head_timeout>\n<http_max_per_address>$PER_ADDR</http_max_per_address>\n<http_max_connections>$MAXC</http_max_connections>\n<trusted_proxy>$PROXY</trusted_proxy>\n<trusted_proxy>10.0.0.0/8</trusted_proxy>:" \
    "$WORK/project/config.xml"
sed -i "s:<max_new_hosts_per_day>[0-9]*<:<max_new_hosts_per_day>0<:" "$WORK/project/config.xml"
demo_serve || fail "server did not start"
grep -q "warning.*http_" "$WORK/serve.log" && fail "the limit tags were not known"
SCHED_PATH=$(sed -n 's:.*<cgi_url>http\://[^/]*\(.*\)</cgi_url>.*:\1:p' "$WORK/project/config.xml")cgi
timeout 120 python3 "$VS_SOURCE_DIR/tests/integration/http_attack.py" 127.0.0.1 "$PORT" \
    "$SCHED_PATH" "$AUTH" "$WORK/serve.log" \
    "{\"head_timeout\": $HEAD_T, \"per_address\": $PER_ADDR, \"max_connections\": $MAXC, \"trusted\": \"$PROXY\"}" \
    || fail "attack checks"
# Keep-alive with curl: a page, a download and a scheduler POST in one
# invocation share one connection (curl says so for the second and third).
dl=$(cd "$WORK/project/download" && find . -type f | head -1)
[ -n "$dl" ] || fail "the project has no download to fetch"
cv=$(curl -sv -o /dev/null -o /dev/null "http://127.0.0.1:$PORT/demo/" \
    "http://127.0.0.1:$PORT/demo/download/${dl#./}" \
    --next -o /dev/null --data-binary '<scheduler_request></scheduler_request>' \
    "http://127.0.0.1:$PORT$SCHED_PATH" 2>&1) || fail "curl keep-alive run failed"
nre=$(printf '%s\n' "$cv" | grep -c 'Re-using existing connection')
ncl=$(printf '%s\n' "$cv" | grep -c 'Connection: close')
[ "$nre" = 2 ] && [ "$ncl" = 0 ] || fail "curl: $nre reuses (want 2), $ncl 'Connection: close' (want 0)"
echo "ok: curl kept one connection for a page, a download and a scheduler RPC"
demo_serve_stop || fail "server did not stop cleanly"
# Logged at a rate limit: a few summary lines (every 10 s, and at the
# stop), not one per connection.
n=$(grep -c "http limits in the last" "$WORK/serve.log")
[ "$n" -ge 1 ] && [ "$n" -le 6 ] || fail "$n limit log lines (expected 1 to 6)"
w=$(grep -c "WARN" "$WORK/serve.log")
[ "$w" -le 20 ] || fail "$w warnings logged for about 600 refused or closed connections"
echo "ok: limits logged in $n summary lines, $w warnings in all"
echo "PASS"
