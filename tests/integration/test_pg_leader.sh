#!/usr/bin/env bash
# Two `volsched serve` instances on one PostgreSQL store (a private server):
# each daemon runs on exactly one of them (the leader of its role, a
# PostgreSQL advisory lock), the other stands by; the scheduler answers on
# both; after kill -9 of the leader, the other takes the daemons over
# within seconds and handles new work. Jobs sent through both instances are
# each recorded once (checked in SQL). Two `volsched workgen` for one app do
# the same: one makes the jobs, the other stands by until it dies.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}"
V=$VOLSCHED
W=$(mktemp -d /tmp/vs_pg_leader.XXXXXX)
PGDIR=$(bash "$VS_SOURCE_DIR/tests/pg/pg_server.sh" start) || exit 1
PIDS=()
fail() {
    echo "FAIL: $*"
    for i in a b; do [ -f "$W/$i.log" ] && { echo "--- $i"; tail -15 "$W/$i.log"; }; done
    exit 1
}
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    bash "$VS_SOURCE_DIR/tests/pg/pg_server.sh" stop "$PGDIR"
    rm -rf "$W"
}
trap cleanup EXIT
STORE="postgresql:///lead?host=$PGDIR&user=postgres"
pq() { psql "host=$PGDIR user=postgres dbname=lead" -Atc "$1"; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()'; }
PA=$(port); PB=$(port)

# One project, two instance directories (each serve holds its own pid
# file) naming the same store; uploads would be a shared directory.
$V init "$W/a" --url "http://127.0.0.1:$PA/t/" --store "$STORE" >/dev/null || fail "init"
printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
$V app add --project "$W/a" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" >/dev/null || fail "app add"
AUTH=$($V user add --project "$W/a" --name u) || fail "user add"
# Every RPC below is a new host of one account.
sed -i "s|</config>|<max_new_hosts_per_day>0</max_new_hosts_per_day></config>|" "$W/a/config.xml"
cp -a "$W/a" "$W/b"
sed -i "s|127.0.0.1:$PA|127.0.0.1:$PB|g" "$W/b/config.xml"
echo "1 2" > "$W/in"
for i in 1 2 3 4; do
    $V create_work --project "$W/a" --appname app --wu_name "job$i" "$W/in" >/dev/null || fail "create_work"
done
cp -a "$W/a/download/." "$W/b/download/"

start() { # dir port log
    "$V" serve --project "$1" --listen "127.0.0.1:$2" --daemon-interval 200 --foreground >"$3" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$2/t/" >/dev/null 2>&1 && return 0; sleep 0.2; done
    fail "serve on $2 did not come up"
}
start "$W/a" "$PA" "$W/a.log"; APID=${PIDS[0]}
sleep 1
start "$W/b" "$PB" "$W/b.log"; BPID=${PIDS[1]}
# The transitioner made the results (whoever leads); b stands by for every daemon.
for _ in $(seq 1 50); do [ "$(pq 'SELECT count(*) FROM result')" = 4 ] && break; sleep 0.2; done
[ "$(pq 'SELECT count(*) FROM result')" = 4 ] || fail "the transitioner did not run"
for _ in $(seq 1 25); do grep -q 'transitioner: standing by' "$W/b.log" && break; sleep 0.2; done
grep -q 'transitioner: standing by' "$W/b.log" || fail "b does not stand by"
grep -q 'standing by' "$W/a.log" && fail "a stands by although it started first"

# Both instances schedule, alternately, for new hosts: no job is sent twice
# and every job a reply names is IN_PROGRESS in the store. (Without the
# job-cache leases both caches hold the same jobs in the same order: the
# claim the other instance won first is refused, so an RPC may get fewer
# jobs, never a taken one.)
sed "s/0123456789abcdef0123456789abcdef/$AUTH/" "$VS_SOURCE_DIR/tests/data/boinc/sched_request_01.xml" > "$W/req.xml"
: > "$W/sent"
for i in 1 2; do
    for p in "$PA" "$PB"; do
        curl -sf --data-binary @"$W/req.xml" "http://127.0.0.1:$p/t/cgi-bin/cgi" >"$W/r.xml" || fail "RPC to $p"
        sed -n 's:^ *<name>\(job[0-9]*_[0-9]*\)</name>:\1:p' "$W/r.xml" >>"$W/sent"
    done
done
n=$(wc -l <"$W/sent")
[ "$n" -ge 2 ] || { cat "$W/sent"; fail "replies named $n jobs"; }
dup=$(sort "$W/sent" | uniq -d)
[ -z "$dup" ] || fail "sent twice: $dup"
[ "$(pq 'SELECT count(*) FROM result WHERE server_state = 4 AND hostid > 0')" = "$n" ] || fail "store and replies disagree"

# kill -9 of the leader: b takes the daemons over within seconds.
kill -9 "$APID"; wait "$APID" 2>/dev/null
t0=$(date +%s)
for _ in $(seq 1 50); do grep -q 'transitioner: leading' "$W/b.log" && break; sleep 0.2; done
grep -q 'transitioner: leading' "$W/b.log" || fail "b did not take over after the leader died"
took=$(( $(date +%s) - t0 ))
$V create_work --project "$W/b" --appname app --wu_name job5 "$W/in" >/dev/null || fail "create_work 5"
for _ in $(seq 1 50); do [ "$(pq "SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'job5'")" = 1 ] && break; sleep 0.2; done
[ "$(pq "SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'job5'")" = 1 ] || fail "the new leader's transitioner did not make job5's result"

# Two workgens for one app on the store: one leads and keeps the cushion,
# the other stands by and makes nothing; after kill -9 of the leader the
# other leads and makes the jobs the scheduler drains.
cat > "$W/gen.sh" <<GEN
#!/bin/sh
i=0
while [ \$i -lt "\$VOLSCHED_NEED" ]; do
    i=\$((i + 1)); echo "--wu_name gen_\$1_\$(date +%s%N)_\$i $W/in"
done
GEN
chmod +x "$W/gen.sh"
unsent() { pq "SELECT count(*) FROM result WHERE server_state = 2"; }
made() { pq "SELECT count(*) FROM workunit WHERE name LIKE 'gen\\_$1\\_%'"; }
"$V" workgen --project "$W/b" --app app --cushion 5 --command "$W/gen.sh one" --interval 1 >"$W/g1.log" 2>&1 &
G1=$!; PIDS+=("$G1")
for _ in $(seq 1 50); do [ "$(unsent)" -ge 5 ] && break; sleep 0.2; done
[ "$(unsent)" -ge 5 ] || fail "the first workgen did not fill the cushion: $(tail -3 "$W/g1.log")"
"$V" workgen --project "$W/b" --app app --cushion 5 --command "$W/gen.sh two" --interval 1 >"$W/g2.log" 2>&1 &
G2=$!; PIDS+=("$G2")
for _ in $(seq 1 25); do grep -q 'standing by' "$W/g2.log" && break; sleep 0.2; done
grep -q 'standing by (another workgen for app' "$W/g2.log" || fail "the second workgen does not stand by: $(tail -3 "$W/g2.log")"
# Drained meanwhile: the leader refills, the other makes nothing (without
# the lock both would see the cushion short and both would make jobs).
m0=$(made one)
for _ in $(seq 1 20); do
    [ "$(made one)" -gt "$m0" ] && break
    curl -sf --data-binary @"$W/req.xml" "http://127.0.0.1:$PB/t/cgi-bin/cgi" >/dev/null || fail "drain RPC"
    sleep 0.5
done
[ "$(made one)" -gt "$m0" ] || fail "the leading workgen did not refill the cushion: $(tail -3 "$W/g1.log")"
sleep 2.5
[ "$(made two)" = 0 ] || fail "the standing-by workgen made $(made two) jobs"
m1=$(made one)
kill -9 "$G1"; wait "$G1" 2>/dev/null
for _ in $(seq 1 25); do grep -q 'leading (this workgen' "$W/g2.log" && break; sleep 0.2; done
grep -q 'leading (this workgen makes app' "$W/g2.log" || fail "the second workgen did not take over: $(tail -3 "$W/g2.log")"
for _ in $(seq 1 20); do
    [ "$(made two)" -gt 0 ] && break
    curl -sf --data-binary @"$W/req.xml" "http://127.0.0.1:$PB/t/cgi-bin/cgi" >/dev/null || fail "drain RPC"
    sleep 0.5
done
[ "$(made two)" -gt 0 ] || fail "the new leading workgen made no jobs as the cushion drained: $(tail -3 "$W/g2.log")"
echo "ok: one leader per daemon among two instances; b took over ${took} s after kill -9; $n jobs sent through both, none twice; two workgens: one led ($m1 jobs), the other stood by, then took over"
