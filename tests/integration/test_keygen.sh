#!/usr/bin/env bash
# `volsched keygen DIR`: writes the four BOINC key files with the right modes,
# in BOINC's text format, never overwrites them, and refuses bad usage.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$VOLSCHED" keygen "$tmp/keys" >/dev/null || fail "keygen exit $?"
for f in code_sign_private code_sign_public upload_private upload_public; do
    [ -s "$tmp/keys/$f" ] || fail "$f missing"
    [ "$(head -n1 "$tmp/keys/$f")" = 1024 ] || fail "$f: first line is not the bit count"
    [ "$(tail -n1 "$tmp/keys/$f")" = . ] || fail "$f: does not end with a '.' line"
done
[ "$(stat -c %a "$tmp/keys/code_sign_private")" = 600 ] || fail "private key mode"
[ "$(stat -c %a "$tmp/keys")" = 700 ] || fail "key directory mode"
# public: 256 bytes = 8 lines of 64 hex digits; private: 704 bytes = 22 lines
[ "$(grep -cE '^[0-9a-f]{64}$' "$tmp/keys/code_sign_public")" = 8 ] || fail "public key body"
[ "$(grep -cE '^[0-9a-f]{64}$' "$tmp/keys/upload_private")" = 22 ] || fail "private key body"
cmp -s "$tmp/keys/code_sign_public" "$tmp/keys/upload_public" && fail "the two pairs are the same key"
before=$(md5sum "$tmp/keys/code_sign_private")
"$VOLSCHED" keygen "$tmp/keys" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "second keygen exit $rc, want 1"
[ "$(md5sum "$tmp/keys/code_sign_private")" = "$before" ] || fail "a key was overwritten"
"$VOLSCHED" keygen --bits 100 "$tmp/k2" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--bits 100 exit $rc, want 2"
"$VOLSCHED" keygen >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no DIR exit $rc, want 2"
"$VOLSCHED" keygen --bits 512 "$tmp/k3" >/dev/null || fail "--bits 512 exit $?"
[ "$(head -n1 "$tmp/k3/code_sign_public")" = 512 ] || fail "512-bit key text"
echo "ok: keygen"
