#!/usr/bin/env bash
# Scale-out with real parts: three `volsched serve` instances on one
# PostgreSQL store (a private server, tests/pg/pg_server.sh) behind a real
# nginx (Debian's, run here as a test process with a temporary prefix and
# private ports) configured by the repo's deploy/nginx/volsched.conf.
# The instances share the work of the daemons by BOINC's --mod 3 I.
#
#  1. The real BOINC client (Debian's boinc-client), attached to nginx's URL,
#     downloads, computes, uploads and reports jobs through nginx; the store
#     shows them OVER/SUCCESS and the upload directory their outputs.
#  2. 512 simulated hosts (bench_server --target, the suite's load
#     generator) run against nginx: every job a host was told it got is
#     recorded for that host and no job went to two hosts; every report
#     the server acknowledged is OVER in the store (checked in SQL against
#     the load generator's journal).
#  3. The same load again, and kill -9 of one instance in the middle of it:
#     the journal and the store still agree as above, and the jobs the dead
#     instance's cache had leased come back after the lease (4 s here) and
#     are sent by the other two.
#  4. The same load again while PostgreSQL restarts (every session cut):
#     the instances reconnect by themselves, RPCs meanwhile are told to try
#     again later, and the journal and the store still agree.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}" "${VS_BINARY_DIR:?}"
export PATH="$PATH:/usr/sbin:/sbin"
V=$VOLSCHED
BENCH="$VS_BINARY_DIR/bench_server"
PRIMES="$VS_BINARY_DIR/examples/primes"
for tool in nginx boinc boinccmd psql curl python3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' is not installed (bash scripts/setup.sh)"; exit 1; }
done
[ -x "$BENCH" ] || { echo "FAIL: $BENCH not built"; exit 1; }
[ -x "$PRIMES" ] || { echo "FAIL: $PRIMES not built"; exit 1; }
NLOAD=${NLOAD:-4000} # jobs for the simulated hosts
LEASE=4

W=$(mktemp -d /tmp/vs_pg_nginx.XXXXXX)
chmod 755 "$W"
WORK=$W # lib_demo.sh's client lives in $WORK/boinc
PGDIR=$(bash "$VS_SOURCE_DIR/tests/pg/pg_server.sh" start) || exit 1
declare -A SPID
NGINX_PID=""
. "$VS_SOURCE_DIR/scripts/lib_demo.sh"
cleanup() {
    demo_client_stop
    for k in "${!SPID[@]}"; do
        kill -TERM "${SPID[$k]}" 2>/dev/null
        wait "${SPID[$k]}" 2>/dev/null
    done
    [ -n "$NGINX_PID" ] && { kill -TERM "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; }
    bash "$VS_SOURCE_DIR/tests/pg/pg_server.sh" stop "$PGDIR"
    rm -rf "$W"
}
[ "${KEEP:-0}" = 1 ] || trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    for k in 1 2 3; do [ -f "$W/i$k.log" ] && { echo "--- instance $k"; tail -8 "$W/i$k.log"; }; done
    [ -f "$W/nginx/error.log" ] && { echo "--- nginx"; tail -5 "$W/nginx/error.log"; }
    [ -n "${BOINC_DIR:-}" ] && [ -f "$BOINC_DIR/client.log" ] && { echo "--- client"; tail -15 "$BOINC_DIR/client.log"; }
    exit 1
}
pq() { psql "host=$PGDIR user=postgres dbname=nx" -v ON_ERROR_STOP=1 -Atc "$1"; }
STORE="postgresql:///nx?host=$PGDIR&user=postgres"
PN=$(demo_free_port); P1=$(demo_free_port); P2=$(demo_free_port); P3=$(demo_free_port)
URL="http://127.0.0.1:$PN/t/"

# ---- the project: one config.xml for all (URLs name nginx), shared dirs ----
$V init "$W/i1" --url "$URL" --store "$STORE" >/dev/null || fail "init"
$V app add --project "$W/i1" --name primes --platform x86_64-pc-linux-gnu --version 100 "$PRIMES" >/dev/null || fail "app add"
AUTH=$($V user add --project "$W/i1" --name volunteer) || fail "user add"
AUTH2=$($V user add --project "$W/i1" --name volunteer2) || fail "user add"
# Behind a proxy (deploy/nginx/volsched.conf's header), short leases for the
# test, two writer connections per instance (their batches of the two
# accounts commit side by side), and an account may add the load
# generator's hosts.
sed -i "s|</config>|<trusted_proxy>127.0.0.1</trusted_proxy><http_max_per_address>0</http_max_per_address><job_lease_secs>$LEASE</job_lease_secs><sched_writers>2</sched_writers><max_new_hosts_per_day>0</max_new_hosts_per_day><daily_result_quota>0</daily_result_quota></config>|" "$W/i1/config.xml"
echo "1000000000 1000100000" > "$W/in"
{
    for i in 1 2 3 4; do echo "--wu_name client_$i $W/in"; done
    for i in $(seq 1 "$NLOAD"); do echo "--wu_name load_$i $W/in"; done
} | $V create_work --project "$W/i1" --appname primes --rsc_fpops_est 2e10 --rsc_fpops_bound 2e14 \
    --delay_bound 86400 --stdin >/dev/null || fail "create_work"
# Instances 2 and 3: copies of the directory (own log/ and run/), whose
# config.xml names instance 1's download, upload and key directories.
cp -a "$W/i1" "$W/i2"; cp -a "$W/i1" "$W/i3"
grep -q "<upload_dir>$W/i1/upload</upload_dir>" "$W/i3/config.xml" || fail "the copies do not share the upload directory"

# ---- nginx: the repo's config with this test's ports ----
mkdir -p "$W/nginx/tmp"
sed -e "s|server 127.0.0.1:8081 |server 127.0.0.1:$P1 |" -e "s|server 127.0.0.1:8082 |server 127.0.0.1:$P2 |" \
    -e "s|server 127.0.0.1:8083 |server 127.0.0.1:$P3 |" -e "s|listen 80;|listen 127.0.0.1:$PN;|" \
    -e "s|limit_conn volsched_per_addr 32;|limit_conn volsched_per_addr 2048;|" \
    "$VS_SOURCE_DIR/deploy/nginx/volsched.conf" > "$W/nginx/volsched.conf"
grep -q "127.0.0.1:$P3 " "$W/nginx/volsched.conf" || fail "the nginx config has changed shape: update this test"
cat > "$W/nginx/nginx.conf" <<EOF
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes 1;
pid $W/nginx/nginx.pid;
error_log $W/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log $W/nginx/access.log;
    client_body_temp_path $W/nginx/tmp/body;
    proxy_temp_path $W/nginx/tmp/proxy;
    fastcgi_temp_path $W/nginx/tmp/fastcgi;
    uwsgi_temp_path $W/nginx/tmp/uwsgi;
    scgi_temp_path $W/nginx/tmp/scgi;
    include $W/nginx/volsched.conf;
}
EOF
nginx -t -p "$W/nginx" -c "$W/nginx/nginx.conf" -e "$W/nginx/error.log" >"$W/nginx/t.log" 2>&1 || { cat "$W/nginx/t.log"; fail "nginx -t"; }
start() { # k port
    "$V" serve --project "$W/i$1" --listen "127.0.0.1:$2" --daemon-interval 200 --cache-slots 300 \
        --mod 3 $(($1 - 1)) --foreground >"$W/i$1.log" 2>&1 &
    SPID[$1]=$!
}
start 1 "$P1"; start 2 "$P2"; start 3 "$P3"
for p in "$P1" "$P2" "$P3"; do
    for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$p/t/" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -sf "http://127.0.0.1:$p/t/" >/dev/null || fail "instance on $p is not up"
done
nginx -p "$W/nginx" -c "$W/nginx/nginx.conf" -e "$W/nginx/error.log" -g "daemon off;" &
NGINX_PID=$!
for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "$URL" | grep -q "cgi-bin/cgi" || fail "nginx does not serve the master page"
for k in 1 2 3; do grep -q -- "--mod 3 $((k - 1))" "$W/i$k.log" || fail "instance $k does not say it shards"; done
grep -qE "(transitioner|validator|assimilator|file_deleter): standing by" "$W/i1.log" "$W/i2.log" "$W/i3.log" \
    && fail "an id-keyed daemon stood by under --mod"

# ---- 1. the real client, through nginx ----
export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
demo_client_start || fail "client did not start or attach"
t0=$(date +%s)
done_n=0
while [ $(( $(date +%s) - t0 )) -lt 150 ]; do
    kill -0 "$BOINC_PID" 2>/dev/null || fail "client died"
    done_n=$(pq "SELECT count(*) FROM result WHERE server_state = 5 AND outcome = 1 AND received_time > 0")
    # The store first, then the client's log of the reply's acks.
    nack=$(grep -c 'got ack for task' "$BOINC_DIR/client.log" || true)
    [ "$done_n" -ge 2 ] && [ "$nack" -ge 2 ] && break
    sleep 1
done
[ "$done_n" -ge 2 ] || fail "the real client completed $done_n jobs through nginx in 150 s (want 2)"
[ "$nack" -ge 2 ] || fail "the client logged $nack acks"
# (The outputs themselves may be gone already: the file deleter removes
# them once assimilated; the upload handler's writes went to i1/upload.)
nup=$(grep -c 'Finished upload of' "$BOINC_DIR/client.log" || true)
[ "$nup" -ge 2 ] || fail "the client finished $nup uploads"
for what in 'POST /t/cgi-bin/cgi HTTP/1.1" 200' 'GET /t/download/[^ ]* HTTP/1.1" 200' 'POST /t/cgi-bin/file_upload_handler HTTP/1.1" 200'; do
    grep -q "$what" "$W/nginx/access.log" || fail "nginx logged no '$what'"
done
# Validated and assimilated, each by the instance whose --mod share holds
# its workunit's id, and by no other.
for _ in $(seq 1 75); do
    [ "$(pq "SELECT count(*) FROM workunit w WHERE assimilate_state = 2")" -ge "$done_n" ] && break
    sleep 0.2
done
shards=$(pq "SELECT DISTINCT id % 3 FROM workunit WHERE assimilate_state = 2")
[ -n "$shards" ] || fail "nothing the real client returned was assimilated"
for k in 1 2 3; do
    if grep -qx "$((k - 1))" <<<"$shards"; then
        grep -q "assimilator: [0-9]* workunits" "$W/i$k.log" || fail "instance $k did not assimilate its share"
    else
        grep -q "assimilator: [0-9]* workunits" "$W/i$k.log" && fail "instance $k assimilated outside its share"
    fi
done
demo_client_stop
echo "real client: $done_n jobs completed through nginx ($nack acks, $nup uploads) in $(( $(date +%s) - t0 )) s"

# ---- the checks of the store against the load generator's journal ----
check_journal() { # label journal
    pq "CREATE TABLE IF NOT EXISTS j (kind TEXT, hostid BIGINT, name TEXT); TRUNCATE j" >/dev/null
    psql "host=$PGDIR user=postgres dbname=nx" -qc "\\copy j FROM '$2' WITH (FORMAT text, DELIMITER ' ')" || fail "$1: journal load"
    local ns na two wrong lost
    ns=$(pq "SELECT count(DISTINCT name) FROM j WHERE kind = 'S'")
    na=$(pq "SELECT count(DISTINCT name) FROM j WHERE kind = 'A'")
    [ "$ns" -gt 100 ] || fail "$1: only $ns jobs sent"
    # No job told to two hosts (a host may get its own job again: a lost reply's resend).
    two=$(pq "SELECT count(*) FROM (SELECT name FROM j WHERE kind = 'S' GROUP BY name HAVING count(DISTINCT hostid) > 1) x")
    [ "$two" = 0 ] || fail "$1: $two jobs were sent to two hosts"
    # Every job a host was told it got is that host's in the store.
    wrong=$(pq "SELECT count(*) FROM j LEFT JOIN result r ON r.name = j.name WHERE j.kind = 'S' AND (r.id IS NULL OR r.hostid <> j.hostid OR r.server_state NOT IN (4, 5))")
    [ "$wrong" = 0 ] || fail "$1: $wrong sent jobs are not that host's in the store"
    # Every acknowledged report is stored: OVER, from that host, received.
    lost=$(pq "SELECT count(*) FROM j LEFT JOIN result r ON r.name = j.name WHERE j.kind = 'A' AND (r.id IS NULL OR r.hostid <> j.hostid OR r.server_state <> 5 OR r.received_time = 0)")
    [ "$lost" = 0 ] || fail "$1: $lost acknowledged reports are not stored"
    echo "$1: $ns jobs sent (none to two hosts, all recorded for their host), $na reports acknowledged (all stored)"
}
LOADARGS=(--target "$PN" --path /t/cgi-bin/cgi --auth "$AUTH,$AUTH2" --conc 512)

# ---- 2. 512 hosts through nginx ----
"$BENCH" "${LOADARGS[@]}" --secs 6 --rpcs 1200 --journal "$W/j1" >"$W/load1.out" 2>&1 || { cat "$W/load1.out"; fail "load generator"; }
cat "$W/load1.out"
check_journal "512 hosts" "$W/j1"
for k in 1 2 3; do grep -q "rpc host [0-9]* user" "$W/i$k.log" || fail "instance $k had no RPC: nginx did not spread the load"; done

# ---- 3. kill -9 of instance 2 under load ----
# More work first: a fast machine sends phase 2's leftovers within the
# 3 s before the kill, and a cache with nothing to lease proves nothing.
for i in $(seq 1 6000); do echo "--wu_name kill_$i $W/in"; done \
    | $V create_work --project "$W/i1" --appname primes --rsc_fpops_est 2e10 --rsc_fpops_bound 2e14 \
        --delay_bound 86400 --stdin >/dev/null || fail "create_work (kill phase)"
"$BENCH" "${LOADARGS[@]}" --secs 16 --rpcs 1000000 --journal "$W/j2" >"$W/load2.out" 2>&1 &
LOADPID=$!
sleep 3
OWNER=$(sed -n 's/.*job cache: lease owner \([0-9]*\),.*/\1/p' "$W/i2.log" | head -1)
[ -n "$OWNER" ] || fail "instance 2 logged no lease owner"
# Frozen first, so that what it leases is read while it can send nothing more.
kill -STOP "${SPID[2]}"
sleep 0.3
pq "CREATE TABLE victim AS SELECT id, lease_until FROM result WHERE server_state = 2 AND lease_owner = $OWNER AND lease_until > extract(epoch FROM now())" >/dev/null
kill -9 "${SPID[2]}"; wait "${SPID[2]}" 2>/dev/null; unset 'SPID[2]'

nv=$(pq "SELECT count(*) FROM victim")
[ "$nv" -gt 0 ] || fail "instance 2 held no leased jobs when killed"
wait "$LOADPID" || { cat "$W/load2.out"; fail "load generator (kill phase)"; }
cat "$W/load2.out"
# On a loaded machine 16 s may end before the others' caches reach the dead
# instance's jobs (they had the phase's other work too): more of the same
# load, a few times at most, until none of them is left unsent.
extra=()
for t in 1 2 3 4; do
    left=$(pq "SELECT count(*) FROM victim v JOIN result r ON r.id = v.id WHERE r.server_state = 2")
    [ "$left" = 0 ] && break
    echo "kill -9: $left of the $nv leased jobs still unsent after the load; $t more load phase(s)"
    "$BENCH" "${LOADARGS[@]}" --secs 8 --rpcs 1000000 --journal "$W/j2_$t" >"$W/load2_$t.out" 2>&1 ||
        { cat "$W/load2_$t.out"; fail "load generator (kill phase, more)"; }
    extra+=("$W/j2_$t")
done
cat "$W/j1" "$W/j2" "${extra[@]}" > "$W/jall"
check_journal "kill -9 of one instance under load" "$W/jall"
back=$(pq "SELECT count(*) FROM victim v JOIN result r ON r.id = v.id WHERE r.server_state IN (4, 5) AND r.sent_time >= v.lease_until AND EXISTS (SELECT 1 FROM j WHERE j.kind = 'S' AND j.name = r.name AND j.hostid = r.hostid)")
[ "$back" = "$nv" ] || fail "of the $nv jobs the dead instance had leased, $back were sent by the others after the lease"
echo "kill -9: the $nv jobs the dead instance had leased were sent by the other two after the lease ($LEASE s)"
for k in 1 3; do kill -0 "${SPID[$k]}" 2>/dev/null || fail "instance $k died"; done

# ---- 4. restart of PostgreSQL under load ----
for i in $(seq 1 1500); do echo "--wu_name more_$i $W/in"; done \
    | $V create_work --project "$W/i1" --appname primes --rsc_fpops_est 2e10 --rsc_fpops_bound 2e14 \
        --delay_bound 86400 --stdin >/dev/null || fail "create_work (more)"
"$BENCH" "${LOADARGS[@]}" --secs 14 --rpcs 1000000 --journal "$W/j3" >"$W/load3.out" 2>&1 &
LOADPID=$!
sleep 3
bash "$VS_SOURCE_DIR/tests/pg/pg_server.sh" restart "$PGDIR" || fail "PostgreSQL did not restart"
TRESTART=$(date +%s)
# Work made after the restart, so that some is left to send whatever the
# load took before it (on a busy machine the 1,500 above may all go out
# before PostgreSQL stops): what of it is sent shows the instances back.
for i in $(seq 1 1000); do echo "--wu_name after_$i $W/in"; done \
    | $V create_work --project "$W/i1" --appname primes --rsc_fpops_est 2e10 --rsc_fpops_bound 2e14 \
        --delay_bound 86400 --stdin >/dev/null || fail "create_work (after the restart)"
wait "$LOADPID" || { cat "$W/load3.out"; fail "load generator (restart phase)"; }
cat "$W/load3.out"
for k in 1 3; do kill -0 "${SPID[$k]}" 2>/dev/null || fail "instance $k died when PostgreSQL restarted"; done
# RPCs meanwhile were refused ("Server error; try again later", logged as a
# refused request), not answered with half a result.
grep -q "scheduler: refused request from" "$W/i1.log" "$W/i3.log" \
    || fail "no RPC was told to try again later while PostgreSQL restarted"
cat "$W/j1" "$W/j2" "$W/j3" > "$W/jall"
check_journal "restart of PostgreSQL under load" "$W/jall"
after=$(pq "SELECT count(*) FROM result WHERE (name LIKE 'more\_%' OR name LIKE 'after\_%') AND server_state IN (4, 5) AND sent_time >= $TRESTART")
[ "$after" -gt 50 ] || fail "only $after jobs were sent after PostgreSQL came back"
echo "PostgreSQL restart: both instances reconnected by themselves and sent $after jobs after it"
echo "ok: three instances behind nginx on one PostgreSQL store"
