#!/bin/bash
# Runs store test binaries against a real PostgreSQL server: starts a
# private one (pg_server.sh), runs each binary given with VS_TEST_PG set (a
# fresh database per store, tests/store_backend.h), stops the server
# whatever happens. CTest's pg.store runs it over the contract tests.
#
#   run.sh BINARY...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(bash "$here/pg_server.sh" start) || exit 1
trap 'bash "$here/pg_server.sh" stop "$dir"' EXIT
export VS_TEST_PG="host=$dir&user=postgres"
status=0
for bin in "$@"; do
    echo "== $(basename "$bin") on PostgreSQL"
    start=$(date +%s.%N)
    if ! "$bin"; then
        echo "FAILED on PostgreSQL: $(basename "$bin")"
        status=1
    fi
    printf '   %.1f s\n' "$(echo "$(date +%s.%N) - $start" | bc)"
done
# Every test dropped the databases it made: what is left was leaked.
left=$(psql "host=$dir user=postgres dbname=postgres" -Atc \
    "SELECT count(*) FROM pg_database WHERE datname LIKE 'vs\_%'")
if [ "$left" != 0 ]; then
    echo "FAILED: $left test databases left behind"
    status=1
fi
exit $status
