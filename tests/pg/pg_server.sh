#!/bin/bash
# A private PostgreSQL server for the tests: initdb into a temporary
# directory, listening only on a unix socket in that directory (no port
# to collide with another run), started and stopped by the caller.
#
#   pg_server.sh start      prints the directory (the socket is in it)
#   pg_server.sh restart DIR  restarts it (fast: every session is cut)
#   pg_server.sh stop DIR   stops the server and removes DIR
#
# initdb refuses to run as root: as root the server runs as the Debian
# package's "postgres" user (runuser). fsync is off: these servers hold
# test data only, and their speed is the suite's (PG_DURABLE=1 keeps
# PostgreSQL's durable defaults, for benchmarks).
set -euo pipefail

PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/initdb" ] || { echo "pg_server.sh: no PostgreSQL server (postgresql package)" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
    fast="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    [ "${PG_DURABLE:-0}" = 1 ] && fast=""
    dir=$(mktemp -d /tmp/vs_pg.XXXXXX)
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_owner "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres --no-locale -E UTF8 \
        --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-k $dir -c listen_addresses= -c port=5432 $fast -c max_connections=200" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "$dir"
    ;;
restart)
    # Fast restart (sessions cut, as on a crash or failover), same options.
    dir=${2:?pg_server.sh restart DIR}
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 30 restart >/dev/null
    ;;
stop)
    dir=${2:?pg_server.sh stop DIR}
    [ -d "$dir/data" ] && as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: pg_server.sh start | restart DIR | stop DIR" >&2
    exit 2
    ;;
esac
