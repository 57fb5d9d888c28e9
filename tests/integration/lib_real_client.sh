# shellcheck shell=bash
# Set-up shared by the tests that run the real BOINC client against
# `volsched serve` (test_real_client.sh, test_real_client_e2e.sh). Not named
# test_*.sh, so CTest does not run it on its own. Source it after setting:
#   RC_WORK_PREFIX     name of the work directory under /tmp (mktemp template stem)
#   RC_SERVER_LOG_LINES  how many server log lines fail() shows (default 20)
# It checks the tools and the example app, makes $WORK, sources
# scripts/lib_demo.sh, stops everything on exit (keeping $WORK after a
# failure), and defines fail MESSAGE..., which prints the message and the
# tails of the client and server logs and exits 1.
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}" "${VS_BINARY_DIR:?}"
: "${RC_WORK_PREFIX:?}"
PRIMES="$VS_BINARY_DIR/examples/primes"

for tool in boinc boinccmd curl python3 sqlite3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' is not installed (bash scripts/setup.sh)"; exit 1; }
done
[ -x "$PRIMES" ] || { echo "FAIL: example app not built: $PRIMES"; exit 1; }

WORK=$(mktemp -d "/tmp/$RC_WORK_PREFIX.XXXXXX")
# shellcheck source=../../scripts/lib_demo.sh
. "$VS_SOURCE_DIR/scripts/lib_demo.sh"
keep=0
finish() {
    demo_stop_all
    if [ "$keep" = 1 ]; then echo "(work dir kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap finish EXIT
fail() {
    local n=${RC_SERVER_LOG_LINES:-20}
    echo "FAIL: $*"
    if [ -n "${BOINC_DIR:-}" ] && [ -f "$BOINC_DIR/client.log" ]; then
        echo "---- client log (last 40 lines) ----"; tail -40 "$BOINC_DIR/client.log"
    fi
    echo "---- server log (last $n lines) ----"; tail -"$n" "$WORK/serve.log" 2>/dev/null
    keep=1
    exit 1
}

# The primes app's answer for [LO, HI), computed independently (a sieve in
# Python, not the app's trial division): the three lines the app writes.
rc_primes_answer() {
    python3 - "$1" "$2" <<'PY'
import math, sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
r = math.isqrt(hi) + 1
small = bytearray([1]) * (r + 1)
small[0:2] = b"\0\0"
for p in range(2, math.isqrt(r) + 1):
    if small[p]:
        small[p * p :: p] = bytearray(len(small[p * p :: p]))
seg = bytearray([1]) * (hi - lo)
for p in range(2, r + 1):
    if small[p]:
        start = max(p * p, (lo + p - 1) // p * p)
        seg[start - lo :: p] = bytearray(len(seg[start - lo :: p]))
for k in range(max(0, 2 - lo)):
    seg[k] = 0
primes = [lo + k for k, v in enumerate(seg) if v]
print(f"range {lo} {hi}\ncount {len(primes)}\nlargest {primes[-1] if primes else 0}")
PY
}

# rc_attach_key KEY: attaches the running client ($BOINC_DIR) to $URL with
# account key KEY, without the local override of max_ncpus_pct (the
# project's preferences decide it), then waits up to $LIMIT s for one of
# that account's results to be returned successfully. Sets RC_UID (the
# account) and RC_DONE (its successful results).
rc_attach_key() {
    local key=$1 db="$WORK/project/volsched.db" t0
    grep -v max_ncpus_pct "$BOINC_DIR/global_prefs_override.xml" > "$WORK/ovr" &&
        mv "$WORK/ovr" "$BOINC_DIR/global_prefs_override.xml"
    demo_bcmd --read_global_prefs_override >/dev/null 2>&1
    demo_bcmd --project_attach "$URL" "$key" >/dev/null 2>&1 || fail "project_attach"
    RC_UID=$(sqlite3 "$db" "select id from user where authenticator='$key'")
    t0=$(date +%s)
    RC_DONE=0
    while [ $(( $(date +%s) - t0 )) -lt "${LIMIT:-240}" ]; do
        kill -0 "$BOINC_PID" 2>/dev/null || fail "client died"
        RC_DONE=$(sqlite3 "$db" "select count(*) from result where userid=$RC_UID and server_state=5 and outcome=1")
        [ "$RC_DONE" -ge 1 ] && return 0
        sleep 2
    done
    fail "no result of account $RC_UID returned within ${LIMIT:-240}s"
}

# rc_wait_prefs PATTERN: asks the client for a scheduler RPC and waits up
# to 60 s for its global_prefs.xml to hold PATTERN and for it to say it
# now uses one CPU; fails otherwise.
rc_wait_prefs() {
    local _
    demo_bcmd --project "$URL" update >/dev/null 2>&1
    for _ in $(seq 1 60); do
        if grep -q "$1" "$BOINC_DIR/global_prefs.xml" 2>/dev/null &&
            grep -q 'max CPUs used: 1' "$BOINC_DIR/client.log"; then return 0; fi
        sleep 1
    done
    fail "the project's prefs ($1) did not reach the client or were not applied: $(cat "$BOINC_DIR/global_prefs.xml" 2>/dev/null)"
}
