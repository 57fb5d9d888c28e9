#!/usr/bin/env bash
# Remote job submission over real HTTP against `volsched serve`, computed by
# Debian's boinc-client (issue 38's acceptance):
#  - a scientist's account (submit rights on the primes app) uploads an input
#    through job_file.php (query_files says it is absent, upload_files puts
#    it, query_files then says it is there), and submits one batch mixing the
#    input modes: local_staged (the uploaded file), inline, and remote (a URL
#    of a separate HTTP server, with its nbytes and md5);
#  - a second batch flagged own_hosts: only the scientist's hosts may run
#    it, and the client here is a volunteer's: none of it may be sent;
#  - the real client computes the first batch; query_batch shows progress
#    and then the batch complete; query_job and query_completed_job answer;
#    every output fetched through get_output.php (result_file, with
#    auth_str = md5(authenticator + result name)) is the right answer,
#    computed here independently; the batch's zip (batch_files) holds them;
#  - refusals, each in BOINC's <error><error_msg> shape and with nothing
#    made: a user without submit rights, a wrong authenticator, a wrong
#    auth_str, malformed XML, a 100 MB request, a batch naming a file that
#    is not on the server, an input mode that would read the server's files;
#  - retire_batch removes the jobs' rows, their output files and the inputs
#    no one else uses;
#  - abort_batch mid-way: a batch of long jobs is aborted while the client
#    runs two of them; nothing more of it is sent, and after the client's
#    next request it aborts them (exit status 202, aborted by project).
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-300}
RC_WORK_PREFIX=vs_submit
RC_SERVER_LOG_LINES=40
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

export DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>'
PORT=$(demo_free_port)
URL="http://127.0.0.1:$PORT/demo/"
P="$WORK/project"
"$VOLSCHED" init "$P" --name "submit test" --url "$URL" >/dev/null || fail "init"
"$VOLSCHED" app add --project "$P" --name primes --platform x86_64-pc-linux-gnu --version 100 \
    "$PRIMES" >/dev/null || fail "app add"
# The hosts running an aborted job are told to stop (BOINC's
# send_result_abort), and a host holds at most one job per CPU, so that
# some of the long batch is still unsent when it is aborted.
sed -i 's|<config>|<config>\n        <send_result_abort>1</send_result_abort>|; s|<max_wus_in_progress>0</max_wus_in_progress>|<max_wus_in_progress>1</max_wus_in_progress>|' "$P/config.xml"
AUTH=$("$VOLSCHED" user add --project "$P" --name volunteer) || fail "user add volunteer"
SCI=$("$VOLSCHED" user add --project "$P" --name scientist --submit primes) || fail "user add scientist"
NOSUB=$("$VOLSCHED" user add --project "$P" --name bystander) || fail "user add bystander"
"$VOLSCHED" user show --project "$P" --name scientist | qgrep 'submit: *primes' \
    || fail "user show does not show the submit right"
db="$P/volsched.db"
demo_serve || fail "server did not start"

# rpc HANDLER FILE: POSTs request=<contents of FILE> as a form; prints the reply.
rpc() { curl -s -S --max-time 60 "$URL$1" --data-urlencode "request@$2"; }
# xq XPATH: the text of the first match in the XML on stdin ("" if none).
xq() {
    python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.fromstring(sys.stdin.buffer.read())
e = r.find(sys.argv[1])
print("" if e is None or e.text is None else e.text.strip())' "$1"
}
want_error() { # WHAT REPLY_FILE: the reply must be BOINC's error shape
    python3 - "$2" <<'PY' || fail "$1: not refused in BOINC's error shape: $(cat "$2")"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
e = r if r.tag == "error" else r.find("error")
assert e is not None and e.find("error_num").text.strip() == "-1"
msg = e.find("error_msg").text.strip()
assert len(msg) > 10 and msg.endswith("."), msg
print("  refused:", msg)
PY
}
count() { sqlite3 "$db" "$1"; }

# ---- job_file.php: a content-addressed input ----
printf '1000000000 1000600000\n' > "$WORK/staged_in"
md5=$(md5sum "$WORK/staged_in" | cut -d' ' -f1)
JF="jf_$md5"
cat > "$WORK/q.xml" <<EOF
<query_files><authenticator>$SCI</authenticator><phys_name>$JF</phys_name></query_files>
EOF
[ "$(rpc job_file.php "$WORK/q.xml" | xq './absent_files/file')" = "0" ] \
    || fail "query_files: the file should be absent"
cat > "$WORK/u.xml" <<EOF
<upload_files><authenticator>$SCI</authenticator><phys_name>$JF</phys_name></upload_files>
EOF
curl -s -S "${URL}job_file.php" -F "request=<$WORK/u.xml" -F "file_0=@$WORK/staged_in" \
    > "$WORK/u.out" || fail "upload_files: curl"
grep -q '<success/>' "$WORK/u.out" || fail "upload_files: $(cat "$WORK/u.out")"
[ -z "$(rpc job_file.php "$WORK/q.xml" | xq './absent_files/file')" ] \
    || fail "query_files: the uploaded file is still absent"
# The same name with other bytes is refused (names are immutable).
printf 'other\n' > "$WORK/other"
curl -s "${URL}job_file.php" -F "request=<$WORK/u.xml" -F "file_0=@$WORK/other" > "$WORK/r.out"
want_error "upload of other bytes under a jf_<md5> name" "$WORK/r.out"

# ---- a remote input on another HTTP server ----
mkdir -p "$WORK/remote"
printf '1000600000 1001200000\n' > "$WORK/remote/rin"
RPORT=$(demo_free_port)
(cd "$WORK/remote" && exec python3 -m http.server "$RPORT" --bind 127.0.0.1) >"$WORK/remote.log" 2>&1 &
REMOTE_PID=$!
trap 'kill "$REMOTE_PID" 2>/dev/null; finish' EXIT
rmd5=$(md5sum "$WORK/remote/rin" | cut -d' ' -f1)

# ---- refusals first: nothing may be made by them ----
nwu0=$(count "select count(*) from workunit")
nb0=$(count "select count(*) from batch")
nfiles0=$(find "$P/download" -type f | wc -l)
job_inline='<job><input_file><mode>inline</mode><source>1 2</source></input_file></job>'
printf '<submit_batch><authenticator>%s</authenticator><batch><app_name>primes</app_name>%s</batch></submit_batch>' \
    "$NOSUB" "$job_inline" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/r.out"; want_error "a user without submit rights" "$WORK/r.out"
printf '<submit_batch><authenticator>0123456789abcdef0123456789abcdef</authenticator><batch><app_name>primes</app_name>%s</batch></submit_batch>' \
    "$job_inline" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/r.out"; want_error "a wrong authenticator" "$WORK/r.out"
printf '<submit_batch><authenticator>%s</authenticator><batch><app_name>primes' "$SCI" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/r.out"; want_error "malformed XML" "$WORK/r.out"
printf '<submit_batch><authenticator>%s</authenticator><batch><app_name>primes</app_name>%s<job><input_file><mode>local_staged</mode><source>jf_00000000000000000000000000000000</source></input_file></job></batch></submit_batch>' \
    "$SCI" "$job_inline" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/r.out"; want_error "a batch naming a missing file" "$WORK/r.out"
printf '<submit_batch><authenticator>%s</authenticator><batch><app_name>primes</app_name><job><input_file><mode>local_staged</mode><source>config.xml</source></input_file></job></batch></submit_batch>' \
    "$SCI" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/r.out"; want_error "a staged name that is a server file" "$WORK/r.out"
printf '<submit_batch><authenticator>%s</authenticator><batch><app_name>primes</app_name><job><input_file><mode>local</mode><source>/etc/passwd</source></input_file></job></batch></submit_batch>' \
    "$SCI" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/r.out"; want_error "mode local" "$WORK/r.out"
head -c 100000000 /dev/zero | tr '\0' 'a' > "$WORK/big"
code=$(curl -s -o "$WORK/r.out" -w '%{http_code}' "${URL}submit_rpc_handler.php" \
    -H 'Content-Type: application/x-www-form-urlencoded' --data-binary "@$WORK/big")
rm -f "$WORK/big"
[ "$code" = 413 ] || fail "a 100 MB request: HTTP $code, want 413"
want_error "a 100 MB request" "$WORK/r.out"
[ "$(count "select count(*) from workunit")" = "$nwu0" ] || fail "a refused request made workunits"
[ "$(count "select count(*) from batch")" = "$nb0" ] || fail "a refused request left a batch"
[ "$(find "$P/download" -type f | wc -l)" = "$nfiles0" ] || fail "a refused request left files: $(find "$P/download" -type f)"
grep -q 'root:' "$P/download" -r 2>/dev/null && fail "/etc/passwd was published"

# ---- the own_hosts batch (never for this volunteer's host) ----
printf '<submit_batch><authenticator>%s</authenticator><batch><app_name>primes</app_name><own_hosts/><job_params><rsc_fpops_est>2e10</rsc_fpops_est><rsc_fpops_bound>2e14</rsc_fpops_bound><delay_bound>86400</delay_bound></job_params><job><input_file><mode>inline</mode><source>1000000000 1000010000</source></input_file></job></batch></submit_batch>' \
    "$SCI" > "$WORK/own.xml"
OWN=$(rpc submit_rpc_handler.php "$WORK/own.xml" | xq './batch_id')
[ -n "$OWN" ] || fail "own_hosts batch not accepted"

# ---- the batch, mixing the input modes ----
cat > "$WORK/b.xml" <<EOF
<submit_batch>
<authenticator>$SCI</authenticator>
<batch>
<app_name>primes</app_name>
<batch_name>mixed</batch_name>
<job_params><rsc_fpops_est>2e10</rsc_fpops_est><rsc_fpops_bound>2e14</rsc_fpops_bound><delay_bound>86400</delay_bound></job_params>
<job><name>mixed_staged</name><input_file><mode>local_staged</mode><source>$JF</source></input_file></job>
<job><name>mixed_inline</name><input_file><mode>inline</mode><source>1001200000 1001800000
</source></input_file></job>
<job><name>mixed_remote</name><input_file><mode>remote</mode><url>http://127.0.0.1:$RPORT/rin</url><nbytes>$(stat -c %s "$WORK/remote/rin")</nbytes><md5>$rmd5</md5></input_file></job>
</batch>
</submit_batch>
EOF
rpc submit_rpc_handler.php "$WORK/b.xml" > "$WORK/b.out"
BATCH=$(xq './batch_id' < "$WORK/b.out")
[ -n "$BATCH" ] || fail "submit_batch: $(cat "$WORK/b.out")"
echo "batch $BATCH submitted (own_hosts batch $OWN)"
printf '<query_batch><authenticator>%s</authenticator><batch_id>%s</batch_id><get_job_details>1</get_job_details></query_batch>' \
    "$SCI" "$BATCH" > "$WORK/qb.xml"
rpc submit_rpc_handler.php "$WORK/qb.xml" > "$WORK/qb.out"
[ "$(xq './njobs' < "$WORK/qb.out")" = 3 ] || fail "query_batch: $(cat "$WORK/qb.out")"
grep -q '<status>queued</status>' "$WORK/qb.out" || fail "query_batch shows no queued job"
# Someone else's query of the batch is refused.
printf '<query_batch><authenticator>%s</authenticator><batch_id>%s</batch_id></query_batch>' \
    "$AUTH" "$BATCH" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/r.out"; want_error "another user's query" "$WORK/r.out"

demo_client_start || fail "client did not start or attach"
t0=$(date +%s)
state=""
seen_progress=0
while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
    kill -0 "$SERVE_PID" 2>/dev/null || fail "server died"
    rpc submit_rpc_handler.php "$WORK/qb.xml" > "$WORK/qb.out"
    state=$(xq './state' < "$WORK/qb.out")
    fd=$(xq './fraction_done' < "$WORK/qb.out")
    if grep -q '<status>in_progress</status>' "$WORK/qb.out" || { [ "$state" = 1 ] && [ "$fd" != "0.000000" ]; }; then
        seen_progress=1
    fi
    [ "$state" = 2 ] && break
    sleep 2
done
demo_progress_line $(( $(date +%s) - t0 ))
[ "$state" = 2 ] || fail "batch not complete within ${LIMIT}s: $(cat "$WORK/qb.out")"
[ "$seen_progress" = 1 ] || fail "query_batch never showed the batch in progress"
[ "$(xq './fraction_done' < "$WORK/qb.out")" = "1.000000" ] || fail "fraction_done: $(cat "$WORK/qb.out")"
[ "$(grep -c '<status>done</status>' "$WORK/qb.out")" = 3 ] || fail "not every job done: $(cat "$WORK/qb.out")"

# ---- outputs, through get_output.php ----
declare -A range=([mixed_staged]="1000000000 1000600000" [mixed_inline]="1001200000 1001800000" \
                  [mixed_remote]="1000600000 1001200000")
for job in mixed_staged mixed_inline mixed_remote; do
    printf '<query_completed_job><authenticator>%s</authenticator><job_name>%s</job_name></query_completed_job>' \
        "$SCI" "$job" > "$WORK/x.xml"
    rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/qc.out"
    cid=$(xq './completed_job/canonical_resultid' < "$WORK/qc.out")
    [ -n "$cid" ] || fail "query_completed_job $job: $(cat "$WORK/qc.out")"
    jid=$(count "select id from workunit where name='$job'")
    printf '<query_job><authenticator>%s</authenticator><job_id>%s</job_id></query_job>' "$SCI" "$jid" > "$WORK/x.xml"
    rpc submit_rpc_handler.php "$WORK/x.xml" > "$WORK/qj.out"
    rname=$(python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
for i in r.findall("instance"):
    if i.find("id").text.strip() == sys.argv[2]:
        assert i.find("outfile/size") is not None, "no outfile size"
        print(i.find("name").text.strip())' "$WORK/qj.out" "$cid") || fail "query_job $job: $(cat "$WORK/qj.out")"
    [ -n "$rname" ] || fail "query_job $job does not list its canonical instance"
    astr=$(printf '%s%s' "$SCI" "$rname" | md5sum | cut -d' ' -f1)
    curl -s -S -f "${URL}get_output.php?cmd=result_file&result_name=$rname&file_num=0&auth_str=$astr" \
        > "$WORK/out_$job" || fail "get_output.php result_file $rname"
    # shellcheck disable=SC2086
    want=$(rc_primes_answer ${range[$job]})
    [ "$(cat "$WORK/out_$job")" = "$want" ] || fail "$job: output differs from the known answer"
done
bad=$(curl -s -o "$WORK/r.out" -w '%{http_code}' \
    "${URL}get_output.php?cmd=result_file&result_name=$rname&file_num=0&auth_str=0123456789abcdef0123456789abcdef")
[ "$bad" = 403 ] && grep -q '^ERROR: bad authenticator' "$WORK/r.out" || fail "a wrong auth_str: HTTP $bad $(cat "$WORK/r.out")"
bad=$(curl -s -o "$WORK/r.out" -w '%{http_code}' \
    "${URL}get_output.php?cmd=result_file&result_name=no_such_result&file_num=0&auth_str=$astr")
[ "$bad" = 400 ] && grep -q '^ERROR: no such job instance' "$WORK/r.out" || fail "a missing result: HTTP $bad $(cat "$WORK/r.out")"
bstr=$(printf '%s%s' "$SCI" "$BATCH" | md5sum | cut -d' ' -f1)
curl -s -S -f "${URL}get_output.php?cmd=batch_files&batch_id=$BATCH&auth_str=$bstr" > "$WORK/batch.zip" \
    || fail "get_output.php batch_files"
python3 - "$WORK/batch.zip" "$WORK" <<'PY' || fail "the batch's zip does not hold the outputs"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
got = sorted(z.read(n) for n in z.namelist())
want = sorted(open(f"{sys.argv[2]}/out_{j}", "rb").read() for j in ("mixed_staged", "mixed_inline", "mixed_remote"))
assert got == want, (z.namelist(), got, want)
print("  zip:", len(got), "outputs")
PY
[ "$(count "select count(*) from result r join workunit w on w.id = r.workunitid where w.batch = $OWN and r.server_state >= 4")" = 0 ] \
    || fail "a job of the own_hosts batch was sent to a volunteer's host"

# ---- retire: rows and files go ----
outs=$(count "select r.name from result r join workunit w on w.id=r.workunitid where w.batch=$BATCH and r.outcome=1")
inline_md5=$(printf '1001200000 1001800000\n' | md5sum | cut -d' ' -f1)
[ -n "$(find "$P/download" -name "jf_$inline_md5")" ] || fail "the inline input is not in the download hierarchy"
printf '<retire_batch><authenticator>%s</authenticator><batch_id>%s</batch_id></retire_batch>' "$SCI" "$BATCH" > "$WORK/x.xml"
[ "$(rpc submit_rpc_handler.php "$WORK/x.xml" | xq './success')" = 1 ] || fail "retire_batch"
[ "$(count "select count(*) from workunit where batch=$BATCH")" = 0 ] || fail "retire left workunits"
[ "$(count "select state from batch where id=$BATCH")" = 4 ] || fail "retired batch not in state 4"
for f in $outs; do
    [ -z "$(find "$P/upload" -name "${f}_*" -o -name "$f" )" ] || fail "retire left output $f"
done
[ -z "$(find "$P/upload" -type f)" ] || fail "retire left outputs: $(find "$P/upload" -type f)"
[ -z "$(find "$P/download" -name "jf_$inline_md5")" ] || fail "retire left the inline input"
[ -z "$(find "$P/download" -name "$JF")" ] || fail "retire left the uploaded input"
[ "$(count "select count(*) from job_file where name='$JF'")" = 0 ] || fail "retire left the job_file row"

# ---- abort mid-way ----
jobs=""
for i in $(seq 1 6); do
    jobs+="<job><input_file><mode>inline</mode><source>$((2000000000 + i * 100000000)) $((2000000000 + i * 100000000 + 60000000))</source></input_file></job>"
done
printf '<submit_batch><authenticator>%s</authenticator><batch><app_name>primes</app_name><job_params><rsc_fpops_est>2e10</rsc_fpops_est><rsc_fpops_bound>2e15</rsc_fpops_bound><delay_bound>86400</delay_bound></job_params>%s</batch></submit_batch>' \
    "$SCI" "$jobs" > "$WORK/x.xml"
AB=$(rpc submit_rpc_handler.php "$WORK/x.xml" | xq './batch_id')
[ -n "$AB" ] || fail "long batch not accepted"
demo_bcmd --project "$URL" update >/dev/null 2>&1
t0=$(date +%s)
running=0
while [ $(( $(date +%s) - t0 )) -lt 120 ]; do
    running=$(demo_tasks_running)
    [ "$running" -ge 1 ] && break
    sleep 1
done
[ "$running" -ge 1 ] || fail "no job of the long batch started"
sent_before=$(count "select count(*) from result where batch=$AB and sent_time > 0")
[ "$sent_before" -lt 6 ] || fail "every job of the long batch was sent before the abort"
printf '<abort_batch><authenticator>%s</authenticator><batch_id>%s</batch_id></abort_batch>' "$SCI" "$AB" > "$WORK/x.xml"
[ "$(rpc submit_rpc_handler.php "$WORK/x.xml" | xq './success')" = 1 ] || fail "abort_batch"
demo_bcmd --project "$URL" update >/dev/null 2>&1
t0=$(date +%s)
n202=0
while [ $(( $(date +%s) - t0 )) -lt 90 ]; do
    n202=$(count "select count(*) from result where batch=$AB and exit_status=202")
    [ "$n202" -ge 1 ] && break
    sleep 2
done
[ "$n202" -ge 1 ] || fail "the client did not abort the batch's running jobs (exit 202)"
sent_after=$(count "select count(*) from result where batch=$AB and sent_time > 0")
[ "$sent_after" = "$sent_before" ] || fail "jobs of the aborted batch were sent after the abort ($sent_before -> $sent_after)"
[ "$(count "select count(*) from result where batch=$AB and server_state=2")" = 0 ] \
    || fail "the aborted batch still has sendable results"
printf '<query_batches><authenticator>%s</authenticator></query_batches>' "$SCI" > "$WORK/x.xml"
rpc submit_rpc_handler.php "$WORK/x.xml" | qgrep "<state>3</state>" || fail "query_batches does not show the abort"
echo "PASS: submission API end to end ($n202 running jobs aborted by the project)"
