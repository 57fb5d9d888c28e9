#!/usr/bin/env bash
# A hostile volunteer against a real `volsched serve` on loopback
# (docs/security.md), each check one of a security review's findings:
#   1. file modes: the store (and its WAL), config.xml and keys/ are the
#      project user's only;
#   2. 16 uploads of 62 MiB of junk behind a forged certificate: refused,
#      and the server's peak RSS (VmHWM) stays under 100 MB;
#   3. 20 parallel uploads of one real output file with different bytes:
#      exactly one client hears "success", and the file holds its bytes;
#   4. an unknown authenticator carrying a newline: no forged log line, and
#      the key is not in the log (only its fingerprint);
#   5. 100 wrong authenticators from one address: after the burst they are
#      refused without a lookup.
# The helper tests/integration/hostile_client.py speaks the protocols.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}" "${VS_BINARY_DIR:?}"
PRIMES="$VS_BINARY_DIR/examples/primes"
HC="$VS_SOURCE_DIR/tests/integration/hostile_client.py"
for tool in curl python3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' is not installed"; exit 1; }
done
WORK=$(mktemp -d /tmp/vs_hostile.XXXXXX)
# shellcheck source=../../scripts/lib_demo.sh
. "$VS_SOURCE_DIR/scripts/lib_demo.sh"
keep=0
finish() {
    demo_serve_stop >/dev/null 2>&1
    if [ "$keep" = 1 ]; then echo "(work dir kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap finish EXIT
# VS_KEEP_GOING=1 reports every failed check instead of stopping at the
# first (to see each finding fail against an older build).
nfail=0
fail() {
    echo "FAIL: $*"
    nfail=$((nfail + 1))
    [ "${VS_KEEP_GOING:-0}" = 1 ] && return 0
    echo "---- server log (last 20 lines) ----"; tail -20 "$WORK/serve.log" 2>/dev/null
    keep=1
    exit 1
}

demo_make_project 20 1000 || fail "could not create the project"
P="$WORK/project"
CGI=$(sed -n 's:.*<cgi_url>\(.*\)</cgi_url>.*:\1:p' "$P/config.xml")
SCHED="${CGI}cgi"
UPLOAD="${CGI}file_upload_handler"
demo_serve || fail "server did not start"

# ---- 1. file modes
mode() { stat -c %a "$1"; }
[ "$(mode "$P/config.xml")" = 600 ] || fail "config.xml is mode $(mode "$P/config.xml")"
[ "$(mode "$P/volsched.db")" = 600 ] || fail "the store is mode $(mode "$P/volsched.db")"
[ "$(mode "$P/keys")" = 700 ] || fail "keys/ is mode $(mode "$P/keys")"
for k in code_sign_private upload_private; do
    [ "$(mode "$P/keys/$k")" = 600 ] || fail "keys/$k is mode $(mode "$P/keys/$k")"
done
python3 "$HC" rpc "$SCHED" "$AUTH" 0 1 1 > "$WORK/r0.xml"
[ -f "$P/volsched.db-wal" ] || fail "no WAL after a request"
[ "$(mode "$P/volsched.db-wal")" = 600 ] || fail "the WAL is mode $(mode "$P/volsched.db-wal")"
echo "ok: store, WAL, config.xml 0600; keys/ 0700"

# ---- 2. junk uploads: memory
out=$(python3 "$HC" junk "$UPLOAD" 16 62) || fail "junk uploads: helper failed"
hwm=$(awk '/VmHWM/{print $2}' "/proc/$SERVE_PID/status")
echo "16 x 62 MiB junk uploads: $out; server peak RSS ${hwm} kB"
grep -q '"200:-1": 16' <<<"$out" || fail "junk uploads were not all refused: $out"
grep -q 'invalid upload certificate' <<<"$out" || fail "not refused for the certificate: $out"
[ "$hwm" -lt 102400 ] || fail "server peak RSS ${hwm} kB >= 100 MB"
[ -z "$(find "$P/upload" -name 'forged_0')" ] || fail "a forged upload left a file"

# ---- 3. parallel uploads of one file
python3 "$HC" rpc "$SCHED" "$AUTH" 0 1 100 > "$WORK/r1.xml"
grep -q '<result>' "$WORK/r1.xml" || fail "no job for the upload race: $(head -c 600 "$WORK/r1.xml")"
race=$(python3 "$HC" race "$UPLOAD" "$WORK/r1.xml" 20 1024) || fail "upload race: helper failed"
echo "$race" | python3 -c '
import json, sys, glob, hashlib
r = json.load(sys.stdin)
ok = [i for i, s in enumerate(r["status"]) if s == 0]
files = glob.glob(sys.argv[1] + "/upload/*/" + r["name"])
disk = hashlib.md5(open(files[0], "rb").read()).hexdigest() if files else None
print("20 parallel uploads of %s: %d success, statuses %s" % (r["name"], len(ok), sorted(r["status"])))
if len(ok) != 1:
    sys.exit("expected exactly one success, got %d" % len(ok))
if disk != r["md5"][ok[0]]:
    sys.exit("the file on disk is not the bytes of the successful client")
' "$P" || fail "upload race"
f=$(find "$P/upload" -type f | head -1)
[ "$(mode "$f")" = 640 ] || fail "an uploaded file is mode $(mode "$f")"

# ---- 4. log injection
forged='2099-01-01T00:00:00Z FORGED INFO volunteer 1 granted admin'
python3 "$HC" rpc "$SCHED" "deadbeef"$'\n'"$forged" 0 1 1 > "$WORK/r2.xml"
grep -q 'Invalid or missing account key' "$WORK/r2.xml" || fail "the bad key was not refused"
sleep 0.3
grep -q '^2099-01-01T00:00:00Z FORGED' "$WORK/serve.log" && fail "a client forged a log line"
grep -q 'deadbeef' "$WORK/serve.log" && fail "the unknown authenticator is in the log"
grep -q 'unknown authenticator md5:' "$WORK/serve.log" || fail "no fingerprint of the bad key logged"
echo "ok: no forged line, the bad key logged as its fingerprint"

# ---- 5. failed authenticators throttled (last: it throttles this address)
out=$(python3 "$HC" keys "$SCHED" 100) || fail "wrong keys: helper failed"
n_refused=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refused"])')
n_throttled=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["throttled"])')
lookups=$(grep -c 'unknown authenticator' "$WORK/serve.log")
echo "100 wrong keys: $n_refused refused after a lookup, $n_throttled throttled; $lookups failed lookups logged"
[ "$n_throttled" -ge 75 ] || fail "only $n_throttled of 100 wrong keys throttled"
[ "$lookups" -le 25 ] || fail "$lookups failed lookups: not throttled"
kill -0 "$SERVE_PID" || fail "the server died"
[ "$nfail" = 0 ] || exit 1
echo "PASS"
