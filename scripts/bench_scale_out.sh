#!/bin/bash
# N `volsched serve` instances on one store, driven by bench_server --target,
# with the CPU per RPC split between the instances and PostgreSQL
# (docs/scale-out.md "Figures").
#
#   bench_scale_out.sh BUILD_DIR STORE NLIST CONCLIST [SECS]
#
# e.g. bench_scale_out.sh build/release 'postgresql:///x?host=/tmp/pg' 1,2,3 64,512
# One project (JOBS jobs, default 40000) copied into max(NLIST) directories;
# for each N of NLIST, N instances run every CONC of CONCLIST, then stop.
# STORE: a PostgreSQL URL (a fresh database is made from it: its dbname is
# replaced) or "sqlite" (one instance only: the file is the project's).
# ACCOUNTS (default 100): the hosts belong to that many accounts, round
# robin (a real project's hosts are spread over many; on PostgreSQL the
# scheduler's transactions of different accounts run side by side).
# VOLSCHED: the volsched binary to serve with (default BUILD_DIR/volsched),
# to compare two builds under one load generator.
# Prints one line: rpc/s, errors, the instances' and PostgreSQL's CPU
# microseconds per RPC (utime + stime of their processes over the phase,
# /proc/PID/stat), and the load average before the phase.
set -uo pipefail
B=${1:?BUILD_DIR}
STORE=${2:?STORE}
NLIST=${3:?NLIST}
CONCLIST=${4:?CONCLIST}
N=$(tr , '\n' <<<"$NLIST" | sort -n | tail -1)
SECS=${5:-5}
V=${VOLSCHED:-$B/volsched}
JOBS=${JOBS:-40000}
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
sed -i "s|</config>|<http_max_per_address>0</http_max_per_address><max_new_hosts_per_day>0</max_new_hosts_per_day><daily_result_quota>0</daily_result_quota></config>|" "$W/i1/config.xml"
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
phase() { # n conc
    local n=$1 conc=$2 load PGP s0 p0 s1 p1 out row rpcs hz ports
    load=$(cut -d' ' -f1 /proc/loadavg)
    PGP=$(pg_pids)
    s0=$(ticks "${PIDS[@]}")
    p0=$(ticks $PGP)
    ports=$(IFS=,; echo "${PORTS[*]:0:$n}")
    out=$("$B/bench_server" --target "$ports" --path /t/cgi-bin/cgi --auth "$AUTH" --conc "$conc" \
        --secs "$SECS" --rpcs 1000000)
    s1=$(ticks "${PIDS[@]}")
    p1=$(ticks $PGP) # the backends that lived through the phase: the instances' connections
    row=$(grep -E '^ +[0-9]+ ' <<<"$out" | tail -1)
    rpcs=$(awk '{print $2}' <<<"$row")
    hz=$(getconf CLK_TCK)
    echo "$row" | awk -v n="$n" -v load="$load" -v st=$((s1 - s0)) -v pt=$((p1 - p0)) -v hz="$hz" \
        -v store="$([ -n "$PGDIR" ] && echo postgresql || echo sqlite)" -v rpcs="$rpcs" \
        '{ printf "%s instances=%s hosts=%s rpc/s=%s errors=%s p50_ms=%s serve_us=%.0f pg_us=%.0f load=%s\n",
           store, n, $1, $3, $8, $6, st * 1e6 / hz / rpcs, pt * 1e6 / hz / rpcs, load }'
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
