#!/usr/bin/env bash
# Durability of sends and reports across a server crash (KILL_SIGNAL=TERM:
# a clean stop under load, test_durability_term.sh). A small load script
# (curl in bash, 3 simulated clients; not the real client) streams scheduler
# requests that get work and report it: every RPC reports the results the
# client holds and asks for one more job. In the middle of the stream the
# server is killed with SIGKILL and started again; the clients keep going
# (a failed RPC is simply retried, keeping the unacknowledged reports). Then,
# with sqlite3 on the store:
#   - every acknowledged report is in the store (OVER, received, that host);
#   - every result a client received is recorded as sent to that client's host;
#   - no result was sent twice (no name appears twice across all replies).
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}" "${VS_BINARY_DIR:?}"
NWU=${NWU:-150}
NCLIENTS=3
KILL_AFTER_ACKS=${KILL_AFTER_ACKS:-30}
LIMIT=${LIMIT:-150}
PRIMES="$VS_BINARY_DIR/examples/primes"
for tool in curl python3 sqlite3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' is not installed"; exit 1; }
done

WORK=$(mktemp -d /tmp/vs_durab.XXXXXX)
# shellcheck source=../../scripts/lib_demo.sh
. "$VS_SOURCE_DIR/scripts/lib_demo.sh"
LOAD_PIDS=()
keep=0
finish() {
    touch "$WORK/stop"
    local p
    for p in "${LOAD_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    demo_serve_stop >/dev/null 2>&1
    if [ "$keep" = 1 ]; then echo "(work dir kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap finish EXIT
fail() {
    echo "FAIL: $*"
    echo "---- server logs (last 15 lines each) ----"
    tail -15 "$WORK/serve.log" 2>/dev/null; tail -15 "$WORK/serve2.log" 2>/dev/null
    keep=1
    exit 1
}

demo_make_project "$NWU" 1000 || fail "could not create the project"
# Reports here come without uploaded files: accept them as valid so the
# daemons do not turn them into errors and replicas (the test is about the
# scheduler's durability, not about validation).
sed -i 's:<config>:<config>\n<validator><method>always_valid</method></validator>:' \
    "$WORK/project/config.xml"
db="$WORK/project/volsched.db"
SCHED=$(sed -n 's:.*<cgi_url>\(.*\)</cgi_url>.*:\1:p' "$WORK/project/config.xml")cgi

# One simulated client: $1 = its number. Files in $WORK/c$1/: sent (names
# received, one a line, in order), acked, pending (to report), hostid.
client() {
    local c=$1 d="$WORK/c$1" hostid=0 seq=0 idle=0
    mkdir -p "$d"
    : > "$d/sent"; : > "$d/acked"; : > "$d/pending"
    while [ ! -f "$WORK/stop" ]; do
        {
            printf '<scheduler_request>\n<authenticator>%s</authenticator>\n' "$AUTH"
            printf '<hostid>%s</hostid>\n<rpc_seqno>%s</rpc_seqno>\n' "$hostid" "$seq"
            printf '<core_client_major_version>7</core_client_major_version>\n'
            printf '<core_client_minor_version>20</core_client_minor_version>\n'
            printf '<core_client_release>5</core_client_release>\n'
            printf '<platform_name>x86_64-pc-linux-gnu</platform_name>\n'
            printf '<work_req_seconds>1</work_req_seconds>\n<cpu_req_secs>1</cpu_req_secs>\n'
            printf '<cpu_req_instances>1</cpu_req_instances>\n'
            printf '<host_info>\n<host_cpid>durability%s</host_cpid>\n<p_ncpus>2</p_ncpus>\n' "$c"
            printf '<p_fpops>1e9</p_fpops>\n<m_nbytes>1e10</m_nbytes>\n<d_free>1e11</d_free>\n</host_info>\n'
            local r
            while read -r r; do
                [ -n "$r" ] || continue
                printf '<result>\n<name>%s</name>\n<final_cpu_time>1</final_cpu_time>\n' "$r"
                printf '<final_elapsed_time>1</final_elapsed_time>\n<exit_status>0</exit_status>\n'
                printf '<state>5</state>\n<platform>x86_64-pc-linux-gnu</platform>\n'
                printf '<version_num>100</version_num>\n<app_version_num>100</app_version_num>\n</result>\n'
            done < "$d/pending"
            printf '</scheduler_request>\n'
        } > "$d/req"
        seq=$((seq + 1))
        if ! curl -s -m 10 --data-binary @"$d/req" "$SCHED" -o "$d/reply" 2>/dev/null \
            || ! grep -q '</scheduler_reply>' "$d/reply"; then
            sleep 0.2 # server down: retry, keeping the unacknowledged reports
            continue
        fi
        if [ "$hostid" = 0 ]; then
            hostid=$(sed -n 's:.*<hostid>\([0-9]*\)</hostid>.*:\1:p' "$d/reply" | head -1)
            [ -n "$hostid" ] || hostid=0
            echo "$hostid" > "$d/hostid"
        fi
        # Names of <result>s sent, and of <result_ack>s.
        awk '/<result>/{inr=1} /<result_ack>/{ina=1}
             /<name>/{ n=$0; sub(/.*<name>/,"",n); sub(/<\/name>.*/,"",n);
                       if (inr) {print "S " n; inr=0} else if (ina) {print "A " n; ina=0} }' \
            "$d/reply" > "$d/parsed"
        local nsent nack
        nsent=$(grep -c '^S ' "$d/parsed")
        nack=$(grep -c '^A ' "$d/parsed")
        sed -n 's/^S //p' "$d/parsed" >> "$d/sent"
        sed -n 's/^A //p' "$d/parsed" >> "$d/acked"
        # Still to report: what we hold minus what was acknowledged.
        { grep -vxF -f <(sed -n 's/^A //p' "$d/parsed") "$d/pending" 2>/dev/null || true
          sed -n 's/^S //p' "$d/parsed"; } > "$d/pending.new"
        mv "$d/pending.new" "$d/pending"
        if [ "$nsent" = 0 ] && [ ! -s "$d/pending" ]; then
            idle=$((idle + 1))
            [ "$idle" -ge 3 ] && break
            sleep 0.5
        else
            idle=0
        fi
    done
    echo done > "$d/finished"
}

demo_serve || fail "server did not start"
for c in $(seq 1 $NCLIENTS); do
    client "$c" &
    LOAD_PIDS+=($!)
done
acks() { cat "$WORK"/c*/acked 2>/dev/null | wc -l; }
t0=$(date +%s)
while [ "$(acks)" -lt "$KILL_AFTER_ACKS" ]; do
    [ $(( $(date +%s) - t0 )) -lt 60 ] || fail "only $(acks) acks before the kill"
    kill -0 "$SERVE_PID" 2>/dev/null || fail "server died before the kill"
    sleep 0.05
done
kill -"${KILL_SIGNAL:-KILL}" "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=""
acked_at_kill=$(acks)
sent_at_kill=$(cat "$WORK"/c*/sent | wc -l)
echo "killed the server (SIG${KILL_SIGNAL:-KILL}) after $acked_at_kill acks, $sent_at_kill results received"
sleep 1
mv "$WORK/serve.log" "$WORK/serve1.log"
demo_serve || fail "server did not restart"
mv "$WORK/serve.log" "$WORK/serve2.log" 2>/dev/null || true

# Let the clients drain the project.
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    n=0
    for c in $(seq 1 $NCLIENTS); do [ -f "$WORK/c$c/finished" ] && n=$((n + 1)); done
    [ "$n" = "$NCLIENTS" ] && break
    sleep 0.5
done
touch "$WORK/stop"
for p in "${LOAD_PIDS[@]}"; do wait "$p" 2>/dev/null; done
LOAD_PIDS=()
demo_serve_stop || fail "server did not stop cleanly after the restart"

total_sent=0 total_acked=0
for c in $(seq 1 $NCLIENTS); do
    d="$WORK/c$c"
    h=$(cat "$d/hostid")
    [ -n "$h" ] && [ "$h" != 0 ] || fail "client $c never got a host id"
    # Every acknowledged report is in the store, for this host.
    while read -r r; do
        row=$(sqlite3 "$db" "select server_state, received_time > 0, hostid from result where name='$r'")
        [ "$row" = "5|1|$h" ] || fail "acked report $r of client $c (host $h): store has '$row'"
    done < <(sort -u "$d/acked")
    # Every result the client received is recorded as sent to its host.
    while read -r r; do
        row=$(sqlite3 "$db" "select hostid, sent_time > 0 from result where name='$r'")
        [ "$row" = "$h|1" ] || fail "result $r received by client $c (host $h): store has '$row'"
    done < "$d/sent"
    total_sent=$((total_sent + $(wc -l < "$d/sent")))
    total_acked=$((total_acked + $(sort -u "$d/acked" | wc -l)))
done
# No result was sent twice: no name twice across all replies of all clients.
dups=$(cat "$WORK"/c*/sent | sort | uniq -d | head -5)
[ -z "$dups" ] || fail "results sent twice: $dups"
[ "$total_sent" -gt "$sent_at_kill" ] || fail "no result was sent after the restart"
[ "$total_acked" -gt "$acked_at_kill" ] || fail "no report was acknowledged after the restart"
# Everything that was acknowledged was received, and the store agrees on the count.
nover=$(sqlite3 "$db" "select count(*) from result where server_state=5 and received_time>0")
[ "$nover" -ge "$total_acked" ] || fail "store has $nover reported results, clients saw $total_acked acks"
echo "ok: $total_sent results sent, $total_acked reports acked (kill after $acked_at_kill); all in the store, none sent twice"
