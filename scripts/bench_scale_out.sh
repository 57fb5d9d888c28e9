#!/bin/bash
# N `volsched serve` instances on one store, driven by bench_server --target,
# with the CPU per RPC split between the instances and PostgreSQL
# (docs/scale-out.md "Figures").
#
#   bench_scale_out.sh BUILD_DIR STORE NLIST CONCLIST [SECS]
#
# e.g. bench_scale_out.sh build/release 'postgresql:///x?host=/tmp/pg' 1,2,3 64,512
# One project (JOBS jobs, default 100000) copied into max(NLIST) directories;
# for each N of NLIST, N instances run every CONC of CONCLIST, then stop.
# STORE: a PostgreSQL URL (a fresh database is made from it: its dbname is
# replaced) or "sqlite" (one instance only: the file is the project's).
# ACCOUNTS (default 100): the hosts belong to that many accounts, round
# robin (a real project's hosts are spread over many; on PostgreSQL the
# scheduler's transactions of different accounts run side by side).
# SQLITE (default 1): with a PostgreSQL STORE, first one instance on an
# SQLite store (its own project, same jobs and accounts), for the figure
# beside PostgreSQL's in the same run; 0 skips it.
# WRITERS (default 1): <sched_writers> of each instance on PostgreSQL.
# VOLSCHED: the volsched binary to serve with (default BUILD_DIR/volsched),
# to compare two builds under one load generator.
# Prints one line: rpc/s, errors, the instances' and PostgreSQL's CPU
# microseconds per RPC (utime + stime of their processes over the phase,
# /proc/PID/stat), the load generator's own (it shares the machine), and
# PostgreSQL's WAL bytes per RPC, the load average before the phase, and
# store=checked when the store holds every job sent and report acknowledged
# (the load generator's journal against the result table).
set -uo pipefail
B=${1:?BUILD_DIR}
STORE=${2:?STORE}
NLIST=${3:?NLIST}
CONCLIST=${4:?CONCLIST}
N=$(tr , '\n' <<<"$NLIST" | sort -n | tail -1)
SECS=${5:-5}
V=${VOLSCHED:-$B/volsched}
JOBS=${JOBS:-100000}
ACCOUNTS=${ACCOUNTS:-100}
SRC=$(cd "$(dirname "$0")/.." && pwd)

W=$(mktemp -d /tmp/vs_scale.XXXXXX)
declare -a PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    [ -n "${DB:-}" ] && [ -n "$ADMIN" ] && psql "$ADMIN" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1
    rm -rf "$W"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PGDIR=""
if [ "$STORE" != sqlite ] && [ "${SQLITE:-1}" = 1 ]; then
    SQLITE=0 bash "$0" "$B" sqlite 1 "$CONCLIST" "$SECS" || exit 1
fi
if [ "$STORE" != sqlite ]; then
    DB=scale_$(date +%s%N)
    URL=$(sed -E "s|^(postgresql://[^/]*/)[^?]*|\1$DB|" <<<"$STORE")
    ADMIN=$(sed -E "s|^(postgresql://[^/]*/)[^?]*|\1postgres|" <<<"$STORE")
    PGDIR=$(psql "$ADMIN" -Atc "SHOW data_directory")
    STOREARG=(--store "$URL")
else
    [ "$N" = 1 ] || { echo "sqlite: one instance only" >&2; exit 2; }
    ADMIN=""
    STOREARG=()
fi
declare -a PORTS=()
for k in $(seq 1 "$N"); do PORTS+=("$(free_port)"); done
$V init "$W/i1" --url "http://127.0.0.1:${PORTS[0]}/t/" "${STOREARG[@]}" >/dev/null || exit 1
$V app add --project "$W/i1" --name primes --platform x86_64-pc-linux-gnu --version 100 \
    "$B/examples/primes" >/dev/null || exit 1
AUTH=""
for a in $(seq 1 "$ACCOUNTS"); do
    k=$($V user add --project "$W/i1" --name "volunteer$a") || exit 1
    AUTH=${AUTH:+$AUTH,}$k
done
WTAG=""
[ -n "$PGDIR" ] && WTAG="<sched_writers>${WRITERS:-1}</sched_writers>"
sed -i "s|</config>|$WTAG<http_max_per_address>0</http_max_per_address><max_new_hosts_per_day>0</max_new_hosts_per_day><daily_result_quota>0</daily_result_quota></config>|" "$W/i1/config.xml"
echo "1000000000 1000100000" >"$W/in"
for i in $(seq 1 "$JOBS"); do echo "--wu_name j_$i $W/in"; done |
    $V create_work --project "$W/i1" --appname primes --rsc_fpops_est 2e10 --rsc_fpops_bound 2e14 \
        --delay_bound 86400 --stdin >/dev/null || exit 1
for k in $(seq 2 "$N"); do cp -a "$W/i1" "$W/i$k"; done
ticks() { # pids...: their utime + stime
    local t=0 v
    for p in "$@"; do v=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) && t=$((t + v)); done
    echo "$t"
}
pg_pids() {
    [ -n "$PGDIR" ] || return 0
    local pm
    pm=$(head -1 "$PGDIR/postmaster.pid")
    cat /proc/"$pm"/task/*/children
}
wal_lsn() { # PostgreSQL's WAL position, or nothing on SQLite
    [ -n "$PGDIR" ] && psql "$ADMIN" -Atc "SELECT pg_current_wal_lsn()"
}
wal_bytes() { # from to: bytes of WAL between the two positions (0 on SQLite)
    if [ -n "$1" ] && [ -n "$2" ]; then
        psql "$ADMIN" -Atc "SELECT pg_wal_lsn_diff('$2', '$1')::bigint"
    else
        echo 0
    fi
}
q() { # sql: one value from the project's store
    if [ -n "$PGDIR" ]; then
        PGOPTIONS="-c client_min_messages=warning" psql "$URL" -Atc "$1"
    else
        sqlite3 -cmd ".timeout 30000" "$W/i1/volsched.db" "$1" # the server may be writing
    fi
}
# Every job a host was told it got is that host's in the store, no job went
# to two hosts, and every acknowledged report is stored (as bench_server's
# own durability line, and tests/pg/test_pg_nginx.sh, check).
check_journal() { # journal
    if [ -n "$PGDIR" ]; then
        q "CREATE TABLE IF NOT EXISTS j (kind TEXT, hostid BIGINT, name TEXT); TRUNCATE j" >/dev/null
        psql "$URL" -qc "\\copy j FROM '$1' WITH (FORMAT text, DELIMITER ' ')" || return 1
    else
        q "CREATE TABLE IF NOT EXISTS j (kind TEXT, hostid INTEGER, name TEXT); DELETE FROM j" || return 1
        printf '.separator " "\n.import %s j\n' "$1" | sqlite3 -cmd ".timeout 30000" "$W/i1/volsched.db" || return 1
    fi
    local two wrong lost
    two=$(q "SELECT count(*) FROM (SELECT name FROM j WHERE kind = 'S' GROUP BY name HAVING count(DISTINCT hostid) > 1) x")
    wrong=$(q "SELECT count(*) FROM j LEFT JOIN result r ON r.name = j.name WHERE j.kind = 'S' AND (r.id IS NULL OR r.hostid <> j.hostid OR r.server_state NOT IN (4, 5))")
    lost=$(q "SELECT count(*) FROM j LEFT JOIN result r ON r.name = j.name WHERE j.kind = 'A' AND (r.id IS NULL OR r.hostid <> j.hostid OR r.server_state <> 5 OR r.received_time = 0)")
    if [ "$two" != 0 ] || [ "$wrong" != 0 ] || [ "$lost" != 0 ]; then
        echo "store check FAILED: $two jobs sent to two hosts, $wrong sent jobs not their host's, $lost acknowledged reports not stored" >&2
        return 1
    fi
    echo "checked"
}
phase() { # n conc
    local n=$1 conc=$2 load PGP s0 p0 s1 p1 w0 w1 wal check out row rpcs hz ports
    load=$(cut -d' ' -f1 /proc/loadavg)
    PGP=$(pg_pids)
    s0=$(ticks "${PIDS[@]}")
    p0=$(ticks $PGP)
    w0=$(wal_lsn)
    ports=$(IFS=,; echo "${PORTS[*]:0:$n}")
    out=$("$B/bench_server" --target "$ports" --path /t/cgi-bin/cgi --auth "$AUTH" --conc "$conc" \
        --secs "$SECS" --rpcs 1000000 --journal "$W/journal")
    s1=$(ticks "${PIDS[@]}")
    p1=$(ticks $PGP) # the backends that lived through the phase: the instances' connections
    w1=$(wal_lsn)
    row=$(grep -E '^ +[0-9]+ ' <<<"$out" | tail -1)
    rpcs=$(awk '{print $2}' <<<"$row")
    hz=$(getconf CLK_TCK)
    wal=$(wal_bytes "$w0" "$w1")
    check=$(check_journal "$W/journal") || check=FAILED
    rm -f "$W/journal"
    echo "$row" | awk -v n="$n" -v load="$load" -v st=$((s1 - s0)) -v pt=$((p1 - p0)) -v hz="$hz" \
        -v store="$([ -n "$PGDIR" ] && echo postgresql || echo sqlite)" -v rpcs="$rpcs" -v wal="$wal" -v check="$check" -v w="$([ -n "$PGDIR" ] && echo "${WRITERS:-1}" || echo 1)" \
        '{ printf "%s writers=%s instances=%s hosts=%s rpc/s=%s jobs/s=%s errors=%s p50_ms=%s p99_ms=%s serve_us=%.0f pg_us=%.0f loadgen_us=%s wal_bytes=%.0f load=%s store=%s\n",
           store, w, n, $1, $3, $4, $8, $6, $7, st * 1e6 / hz / rpcs, pt * 1e6 / hz / rpcs, $11, wal / rpcs, load, check }'
}
for n in $(tr , ' ' <<<"$NLIST"); do
    PIDS=()
    for k in $(seq 1 "$n"); do
        # Scheduler only: the in-process bench_server runs no daemons either.
        $V serve --project "$W/i$k" --listen "127.0.0.1:${PORTS[$((k - 1))]}" --daemons none \
            --cache-slots 2000 --foreground >>"$W/i$k.log" 2>&1 &
        PIDS+=($!)
    done
    for p in "${PORTS[@]:0:$n}"; do
        for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$p/t/" >/dev/null 2>&1 && break; sleep 0.2; done
    done
    sleep 2 # the job caches fill
    for c in $(tr , ' ' <<<"$CONCLIST"); do phase "$n" "$c"; done
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    PIDS=()
done
