# shellcheck shell=bash
# Set-up shared by the HTTPS tests. Not named test_*.sh, so CTest does not
# run it on its own. Source it after lib_real_client.sh or lib_vs_client.sh
# (it uses their $WORK and fail). It makes a throw-away test CA and a server
# certificate for 127.0.0.1 signed by it:
#   $T/ca.pem (the CA a client is told to trust), $T/server.pem, $T/server.key
# and, with VS_KEEP_GOING=1, turns fail into a counter ($nfail; keep the
# work dir) so that a test reports every failed check (against an older
# build); such a test ends with: [ "$nfail" = 0 ] || exit 1.
nfail=0
if [ "${VS_KEEP_GOING:-0}" = 1 ]; then
    fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); keep=1; }
fi

# tls_make DIR: the CA and the certificate in DIR; returns 1 on error
tls_make() {
    local t=$1
    mkdir -p "$t"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=volsched test CA" \
        -keyout "$t/ca.key" -out "$t/ca.pem" >/dev/null 2>&1 || return 1
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$t/server.key" -out "$t/server.csr" >/dev/null 2>&1 || return 1
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$t/ext.cnf"
    openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial \
        -days 2 -extfile "$t/ext.cnf" -out "$t/server.pem" >/dev/null 2>&1 || return 1
    chmod 600 "$t/server.key"
}

command -v openssl >/dev/null || fail "'openssl' is not installed"
T="$WORK/tls"
tls_make "$T" || fail "cannot make the test CA and certificate"
