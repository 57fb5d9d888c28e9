#!/usr/bin/env bash
# Assigned work and create_work's flags from the outside, with the built volsched, a real project on disk,
# `volsched serve` on loopback and curl: create_work's exact flags and the
# refused ones with their messages, assigned work refused while its tag is
# off, --no_transition held across another create_work until `release`,
# wu_check with a missing and a corrupted input (and --repair), the
# work generator keeping its cushion while a load generator drains jobs
# through the real scheduler, and many simultaneous requests of one user's
# hosts for one targeted job over HTTP (BOINC's #1937).
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?}" "${VS_SOURCE_DIR:?}"
W=$(mktemp -d /tmp/vs_asg.XXXXXX)
SPID=""; GPID=""
cleanup() {
    for p in $GPID $SPID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$W/serve.log" ] && tail -20 "$W/serve.log"; exit 1; }
q() { sqlite3 "$W/p/volsched.db" "$1"; }

PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
URL="http://127.0.0.1:$PORT/t/"
"$VOLSCHED" init "$W/p" --name "Assign Test" --url "$URL" >/dev/null || fail "init"
printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
"$VOLSCHED" app add --project "$W/p" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" >/dev/null || fail "app add"
AUTH=$("$VOLSCHED" user add --project "$W/p" --name u) || fail "user add"
cw() { "$VOLSCHED" create_work --project "$W/p" --appname app "$@"; }
n=0
# input: a new input file each time, its path in $IN (not in a subshell, so
# the count survives).
input_new() { n=$((n + 1)); echo "input $n $RANDOM" > "$W/in$n"; IN="$W/in$n"; }

# ---- exact options: BOINC's -d 3 is the debug level, not --delay_bound ----
input_new; cw -d 3 --wu_name d3 "$IN" >/dev/null 2>"$W/err" || fail "-d 3: $(cat "$W/err")"
[ "$(q "select delay_bound from workunit where name='d3'")" = 604800 ] || fail "-d 3 changed delay_bound"
input_new; cw --delay 3 --wu_name pre "$IN" >/dev/null 2>"$W/err"; [ $? -eq 2 ] || fail "--delay (a prefix) accepted"
grep -q "unknown option '--delay'" "$W/err" || fail "prefix message: $(cat "$W/err")"
input_new; cw --rsc_bandwidth_bound 1e6 --config_dir "$W/p" --verbose --wu_name bw "$IN" >/dev/null 2>"$W/err" || fail "bandwidth/config_dir: $(cat "$W/err")"
[ "$(q "select rsc_bandwidth_bound from workunit where name='bw'")" = 1000000.0 ] || fail "rsc_bandwidth_bound not stored"
grep -q 'created bw (id' "$W/err" || fail "--verbose said nothing"
for f in "sub_appname x" "size_class 1" "wu_id 5"; do
    set -- $f
    input_new; cw "--$1" "$2" "$IN" >/dev/null 2>"$W/err"; [ $? -eq 2 ] || fail "--$1 accepted"
    grep -q -- "--$1 is not supported: " "$W/err" || fail "--$1 message: $(cat "$W/err")"
done
[ "$(q "select count(*) from workunit where name like '%sub%' or name like '%size%'")" = 0 ] || fail "a refused flag created a job"

# ---- --continue_on_error ----
input_new; IN0=$IN; input_new; printf '%s\n--wu_name c2 /no/such/file\n--wu_name c3 %s\n' "--wu_name c1 $IN0" "$IN" \
    | cw --stdin --continue_on_error >"$W/out" 2>"$W/err" || fail "continue_on_error: $(cat "$W/err")"
grep -q 'skipped job 2' "$W/err" || fail "no skip message: $(cat "$W/err")"
[ "$(q "select count(*) from workunit where name in ('c1','c2','c3')")" = 2 ] || fail "continue_on_error made the wrong jobs"
input_new; IN0=$IN; printf '%s\n--wu_name e2 /no/such/file\n' "--wu_name e1 $IN0" | cw --stdin >/dev/null 2>&1 && fail "a bad line without continue_on_error"
[ "$(q "select count(*) from workunit where name='e1'")" = 0 ] || fail "all or nothing broken"

# ---- assigned work refused while its tag is off ----
sed -i 's|<enable_assignment>1</enable_assignment>|<enable_assignment>0</enable_assignment>|; s|<enable_assignment_multi>1</enable_assignment_multi>|<enable_assignment_multi>0</enable_assignment_multi>|' "$W/p/config.xml"
grep -q '<enable_assignment>0' "$W/p/config.xml" || fail "config.xml has no <enable_assignment> to turn off"
input_new; cw --target_user 1 "$IN" >/dev/null 2>"$W/err"; [ $? -eq 2 ] || fail "targeted job accepted with the tag off"
grep -q '<enable_assignment>1</enable_assignment>' "$W/err" || fail "message does not name the tag: $(cat "$W/err")"
input_new; cw --broadcast "$IN" >/dev/null 2>"$W/err"; [ $? -eq 2 ] || fail "broadcast accepted with the tag off"
grep -q '<enable_assignment_multi>1</enable_assignment_multi>' "$W/err" || fail "broadcast message: $(cat "$W/err")"
sed -i 's|<enable_assignment>0</enable_assignment>|<enable_assignment/>|; s|<enable_assignment_multi>0</enable_assignment_multi>|<enable_assignment_multi/>|' "$W/p/config.xml"
sed -i 's|<max_new_hosts_per_day>[0-9]*</max_new_hosts_per_day>|<max_new_hosts_per_day>0</max_new_hosts_per_day>|' "$W/p/config.xml"

# ---- --no_transition holds until released ----
input_new; cw --no_transition --batch 7 --wu_name held "$IN" >/dev/null || fail "no_transition"
input_new; cw --wu_name after "$IN" >/dev/null || fail "create_work after a held job"
[ "$(q "select count(*) from result r join workunit w on w.id=r.workunitid where w.name='held'")" = 0 ] \
    || fail "the next create_work released the held job"
[ "$(q "select count(*) from result r join workunit w on w.id=r.workunitid where w.name='after'")" = 1 ] || fail "normal job has no result"
"$VOLSCHED" release --project "$W/p" --batch 7 | qgrep 'released 1 workunit' || fail "release --batch"
[ "$(q "select count(*) from result r join workunit w on w.id=r.workunitid where w.name='held'")" = 1 ] || fail "released job has no result"

# ---- wu_check: a missing and a corrupted input, then --repair ----
mkdir -p "$W/orig"
input_new; cw --wu_name chk1 "$IN" >/dev/null && cp "$W/in$n" "$W/orig/in$n"; a=$n
input_new; cw --wu_name chk2 "$IN" >/dev/null && cp "$W/in$n" "$W/orig/in$n"; b=$n
"$VOLSCHED" wu_check --project "$W/p" >"$W/wc" || fail "wu_check on a good project: $(cat "$W/wc")"
pa=$(find "$W/p/download" -name "in$a"); pb=$(find "$W/p/download" -name "in$b")
rm -f "$pa"; echo corrupted > "$pb"
"$VOLSCHED" wu_check --project "$W/p" >"$W/wc"; [ $? -eq 1 ] || fail "wu_check missed the damage"
grep -q "^chk1 in$a missing" "$W/wc" || fail "missing not reported: $(cat "$W/wc")"
grep -q "^chk2 in$b corrupted" "$W/wc" || fail "corrupted not reported: $(cat "$W/wc")"
grep -q '1 missing, 1 corrupted' "$W/wc" || fail "summary: $(tail -1 "$W/wc")"
"$VOLSCHED" wu_check --project "$W/p" --repair "$W/orig" >"$W/wc" || fail "repair: $(cat "$W/wc")"
grep -q '2 repaired' "$W/wc" || fail "repair summary: $(tail -1 "$W/wc")"
cmp -s "$pb" "$W/orig/in$b" || fail "corrupted file not restored"
"$VOLSCHED" wu_check --project "$W/p" >/dev/null || fail "still damaged after repair"

# ---- serve, then many simultaneous requests of one user's hosts ----
"$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" --daemons none > "$W/serve.log" 2>&1 &
SPID=$!
for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.2; done
sched="${URL}cgi-bin/cgi"
req() { # req HOSTID SECONDS
    sed -e "s/0123456789abcdef0123456789abcdef/$AUTH/" -e "s|<hostid>0</hostid>|<hostid>$1</hostid>|" \
        -e "s|<work_req_seconds>[0-9.]*</work_req_seconds>|<work_req_seconds>$2</work_req_seconds>|" \
        -e "s|<cpu_req_secs>[0-9.]*</cpu_req_secs>|<cpu_req_secs>$2</cpu_req_secs>|" \
        "$VS_SOURCE_DIR/tests/data/boinc/sched_request_01.xml"
}
NH=12
hosts=()
for i in $(seq 1 $NH); do
    req 0 0 > "$W/r0.xml"
    h=$(curl -sf --data-binary @"$W/r0.xml" "$sched" | sed -n 's|.*<hostid>\([0-9]*\)</hostid>.*|\1|p')
    [ -n "$h" ] || fail "no host id for new host $i"
    hosts+=("$h")
done
uid=$(q "select id from user where name='u'")
input_new; cw --target_user "$uid" --wu_name race --max_error_results 3 --max_total_results 5 "$IN" >/dev/null || fail "targeted job"
for h in "${hosts[@]}"; do req "$h" 1 > "$W/req_$h.xml"; done
for h in "${hosts[@]}"; do
    curl -sf --data-binary @"$W/req_$h.xml" "$sched" > "$W/rep_$h.xml" &
done
wait $(jobs -p | grep -v "^$SPID$") 2>/dev/null
got=0
for h in "${hosts[@]}"; do grep -q '<name>race_' "$W/rep_$h.xml" && got=$((got + 1)); done
[ "$got" = 1 ] || fail "$got hosts got the targeted job, want 1"
[ "$(q "select count(*) from result r join workunit w on w.id=r.workunitid where w.name='race'")" = 1 ] \
    || fail "more than target_nresults instances of the targeted job"

# ---- the work generator keeps its cushion while a load drains jobs ----
cat > "$W/gen.sh" <<GEN
#!/bin/sh
i=0
while [ \$i -lt "\$VOLSCHED_NEED" ]; do
    i=\$((i + 1)); f="$W/gen_\$(date +%s%N)_\$i"; echo "gen \$i" > "\$f"; echo "\$f"
done
GEN
chmod +x "$W/gen.sh"
CUSHION=6
"$VOLSCHED" workgen --project "$W/p" --app app --cushion $CUSHION --command "$W/gen.sh" --interval 1 \
    > "$W/gen.log" 2>&1 &
GPID=$!
unsent() { q "select count(*) from result where server_state=2 and appid=(select id from app where name='app')"; }
for _ in $(seq 1 50); do [ "$(unsent)" -ge $CUSHION ] && break; sleep 0.2; done
[ "$(unsent)" -ge $CUSHION ] || fail "workgen did not fill the cushion: $(unsent); $(tail -5 "$W/gen.log")"
drained=0
h=${hosts[0]}
req "$h" 100000 > "$W/load.xml"
for _ in $(seq 1 8); do  # a load generator: one host asking for lots of work
    c=$(curl -sf --data-binary @"$W/load.xml" "$sched" | grep -c '<result>')
    drained=$((drained + c))
    sleep 1.5
done
[ "$drained" -ge $CUSHION ] || fail "the load got only $drained jobs"
sleep 2.5
[ "$(unsent)" -ge $CUSHION ] || fail "cushion not kept: $(unsent) unsent after $drained drained; $(tail -5 "$W/gen.log")"
st=$("$VOLSCHED" status --project "$W/p" --json)
python3 - "$st" <<'PY' || fail "status --json lacks unsent_by_app / assigned: $st"
import json, sys
d = json.loads(sys.argv[1])
assert d["unsent_by_app"]["app"] >= 6, d["unsent_by_app"]
assert d["assigned"]["targeted_user"]["jobs"] == 1, d["assigned"]
PY
kill "$GPID"; wait "$GPID"; GPID=""
grep -q 'stopped by a signal' "$W/gen.log" || fail "workgen did not stop cleanly: $(tail -3 "$W/gen.log")"
grep -q 'created' "$W/gen.log" || fail "workgen logged no creation"
echo "PASS: assigned work, create_work flags, release, wu_check, workgen ($drained drained, cushion $CUSHION kept), #1937 over HTTP"
