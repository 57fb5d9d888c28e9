# shellcheck shell=bash
# A throw-away test CA and a server certificate for 127.0.0.1 signed by it,
# for the HTTPS tests. Not named test_*.sh, so CTest does not run it.
#   tls_make DIR   makes DIR/ca.pem (the CA a client is told to trust),
#                  DIR/server.pem and DIR/server.key (0600); returns 1 on error
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
