#!/usr/bin/env bash
# The operator's path through the CLI: init, app add, team add, user add,
# create_work (good and bad), checked in the store with the sqlite3 command
# and on disk. Every bad call must exit non-zero and leave nothing behind.
set -euo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?set VOLSCHED to the volsched binary}"
V=$VOLSCHED
T=$(mktemp -d /tmp/vs_admin_XXXXXX)
trap 'rm -rf "$T"' EXIT
P=$T/proj
DB=$P/volsched.db
fail() { echo "FAIL: $*" >&2; exit 1; }
q() { sqlite3 "$DB" "$1"; }
# expect STATUS CMD...: runs CMD, checks its exit status.
expect() {
    local want=$1; shift
    set +e; "$@" >"$T/out" 2>"$T/err"; local got=$?; set -e
    [ "$got" = "$want" ] || { cat "$T/err" >&2; fail "'$*' exited $got, want $want"; }
}
snapshot() { echo "$(q 'SELECT count(*) FROM workunit')/$(q 'SELECT count(*) FROM result')/$(q 'SELECT count(*) FROM assignment')/$(find "$P/download" -type f | wc -l)"; }

# --- help -------------------------------------------------------------------
for c in init "app add" "user add" "team add" create_work; do
    # shellcheck disable=SC2086
    expect 0 $V $c --help
    grep -q usage "$T/out" || fail "$c --help prints no usage"
done

# --- init -------------------------------------------------------------------
expect 0 $V init "$P" --name "Admin Test" --url http://127.0.0.1:18080/admin/
for f in config.xml config_aux.xml templates download upload keys/code_sign_private \
         keys/code_sign_public keys/upload_private keys/upload_public html/index.html volsched.db; do
    [ -e "$P/$f" ] || fail "init did not create $f"
done
grep -q '<boinc>' "$P/config.xml" && grep -q '<config>' "$P/config.xml" || fail "config.xml layout"
grep -q '<master_url>http://127.0.0.1:18080/admin/</master_url>' "$P/config.xml" || fail "master_url"
grep -q '<uldl_dir_fanout>1024</uldl_dir_fanout>' "$P/config.xml" || fail "fanout"
grep -q '<enable_assignment>1</enable_assignment>' "$P/config.xml" || fail "enable_assignment"
grep -q '<max_jobs_in_progress>' "$P/config_aux.xml" || fail "config_aux.xml"
grep -q 'rel="boinc_scheduler" href="http://127.0.0.1:18080/admin/cgi-bin/cgi"' \
    "$P/html/index.html" || fail "master page scheduler link"
head -1 "$P/keys/code_sign_public" | qgrep -x 1024 || fail "code-sign key not in BOINC format"
[ "$(q "SELECT value FROM store_meta WHERE key='schema_version'")" = 10 ] || fail "schema version"
[ "$(q 'PRAGMA journal_mode')" = wal ] || fail "store not in WAL mode"
keysum=$(md5sum "$P/keys/code_sign_private")
expect 1 $V init "$P"                       # not empty
grep -q 'not empty' "$T/err" || fail "init on a non-empty dir: unclear error"
expect 0 $V init "$P" --force --url http://127.0.0.1:18080/admin/
[ "$(md5sum "$P/keys/code_sign_private")" = "$keysum" ] || fail "init --force replaced the keys"
expect 2 $V init                            # no DIR
expect 2 $V init "$T/x" --url ftp://nope

# --- app add ----------------------------------------------------------------
cat >"$T/upper.sh" <<'EOF'
#!/bin/sh
tr a-z A-Z <in >out && echo 0 >boinc_finish_called
EOF
chmod +x "$T/upper.sh"
echo "helper data" >"$T/data.txt"
cd "$P"   # --project defaults to the current directory
expect 0 $V app add --name upper --platform x86_64-pc-linux-gnu --version 1.01 "$T/upper.sh" "$T/data.txt"
[ -f templates/upper_in ] && [ -f templates/upper_out ] || fail "default templates missing"
grep -q '<open_name>in</open_name>' templates/upper_in && grep -q '<copy_file/>' templates/upper_in \
    || fail "default input template"
grep -q '<open_name>out</open_name>' templates/upper_out || fail "default output template"
[ "$(q "SELECT version_num FROM app_version")" = 101 ] || fail "version_num"
[ "$(q "SELECT count(*) FROM app_version_file WHERE file_signature LIKE '%.%'")" = 2 ] \
    || fail "app files not signed"
main=$(q "SELECT path FROM app_version_file WHERE main_program = 1")
[ "$main" = "$(q "SELECT path FROM app_version_file WHERE seqno = 0")" ] || fail "main program"
[ -x "download/$main" ] || fail "main program not staged executable at download/$main"
[ "$(md5sum <"download/$main" | cut -c1-32)" = "$(q "SELECT md5_cksum FROM app_version_file WHERE main_program=1")" ] \
    || fail "md5 of the staged program"
# The main program's path follows BOINC's fanout rule.
name=$(q "SELECT name FROM app_version_file WHERE main_program = 1")
want=$(python3 -c "import hashlib,sys; h=hashlib.md5(sys.argv[1].encode()).hexdigest(); print('%x/%s' % (int(h[1:8],16) % 1024, sys.argv[1]))" "$name")
[ "$main" = "$want" ] || fail "fanout path $main, want $want"
before=$(find download -type f | wc -l)
expect 2 $V app add --name upper --platform x86_64-pc-linux-gnu --version 101 "$T/upper.sh"
grep -q 'already exists' "$T/err" || fail "duplicate version: unclear error"
expect 2 $V app add --name upper --platform x86_64-pc-linux-gnu --version 102 "$T/none"
expect 2 $V app add --name upper --platform x86_64-pc-linux-gnu --version x.y "$T/upper.sh"
expect 2 $V app add --name upper --version 103 "$T/upper.sh"
[ "$(find download -type f | wc -l)" = "$before" ] || fail "a failed app add left files behind"
[ "$(q 'SELECT count(*) FROM app_version')" = 1 ] || fail "a failed app add left rows behind"
expect 1 $V app add --project "$T" --name a --platform p --version 1 "$T/upper.sh"

# --- team add, user add -----------------------------------------------------
expect 0 $V team add --name Crunchers
team=$(cat "$T/out")
[ "$team" = "$(q "SELECT id FROM team WHERE name='Crunchers'")" ] || fail "team add output"
expect 2 $V team add --name Crunchers
expect 0 $V user add --name alice --team Crunchers
auth=$(cat "$T/out")
grep -qxE <<<"$auth" '[0-9a-f]{32}' || fail "user add did not print only an authenticator: $auth"
[ "$(q "SELECT name FROM user WHERE authenticator='$auth'")" = alice ] || fail "authenticator"
[ "$(q "SELECT teamid FROM user WHERE name='alice'")" = "$team" ] || fail "user team"
[ "$(q "SELECT nusers FROM team WHERE id=$team")" = 1 ] || fail "team nusers"
expect 0 $V user add --name bob --json --project "$P"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['id']==2 and len(d['authenticator'])==32" \
    "$T/out" || fail "user add --json"
expect 2 $V user add --name alice
expect 2 $V user add --name carol --team NoSuchTeam
[ "$(q 'SELECT count(*) FROM user')" = 2 ] || fail "a failed user add wrote a row"
expect 0 $V team add --name Solo --json
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['name']=='Solo'" "$T/out" \
    || fail "team add --json"

# --- create_work: good ------------------------------------------------------
echo "hello world" >"$T/in1.txt"
echo "second input" >"$T/in2.txt"
expect 0 $V create_work --appname upper "$T/in1.txt"
wu=$(cat "$T/out")
[ "$(q "SELECT count(*) FROM workunit WHERE name='$wu'")" = 1 ] || fail "create_work printed $wu"
# The transitioner ran: one UNSENT result with a signed output file.
[ "$(q "SELECT server_state FROM result WHERE name='${wu}_0'")" = 2 ] || fail "no UNSENT result"
q "SELECT xml_doc_in FROM result WHERE name='${wu}_0'" | qgrep '<xml_signature>' \
    || fail "output file without upload certificate"
staged=$(find download -name in1.txt)
[ -n "$staged" ] && cmp -s "$staged" "$T/in1.txt" || fail "input not staged"
q "SELECT xml_doc FROM workunit WHERE name='$wu'" | qgrep "$(md5sum <"$T/in1.txt" | cut -c1-32)" \
    || fail "input md5 not in the workunit XML"
# Every flag at once (BOINC's single-dash spelling too).
expect 0 $V create_work -appname upper -wu_name full -app_version_num 101 \
    --rsc_fpops_est 1e10 --rsc_fpops_bound 1e12 --rsc_memory_bound 1e8 --rsc_disk_bound 1e8 \
    --delay_bound 3600 --min_quorum 2 --target_nresults 2 --max_error_results 3 \
    --max_total_results 6 --max_success_results 4 --priority 9 --batch 4 --keywords "7 8" \
    --command_line "-v" --wu_template templates/upper_in --result_template templates/upper_out \
    in1.txt
[ "$(q "SELECT rsc_fpops_est||','||delay_bound||','||min_quorum||','||target_nresults||','||max_error_results||','||max_total_results||','||max_success_results||','||priority||','||app_version_num FROM workunit WHERE name='full'")" \
  = "10000000000.0,3600,2,2,3,6,4,9,101" ] || fail "flags not stored: $(q "SELECT * FROM workunit WHERE name='full'")"
[ "$(q "SELECT count(*) FROM result r JOIN workunit w ON w.id=r.workunitid WHERE w.name='full'")" = 2 ] \
    || fail "target_nresults 2 gave other than 2 results"
# Targeted and broadcast: assignment rows, transitioner flags, no results.
expect 0 $V create_work --appname upper --wu_name tgt --target_user 1 in1.txt
[ "$(q "SELECT transitioner_flags||','||transition_time FROM workunit WHERE name='tgt'")" = "2,2147483647" ] \
    || fail "targeted WU flags"
[ "$(q "SELECT target_type||','||target_id||','||multi FROM assignment a JOIN workunit w ON w.id=a.workunitid WHERE w.name='tgt'")" = "2,1,0" ] \
    || fail "targeted assignment row"
expect 0 $V create_work --appname upper --wu_name bcast --broadcast_team "$team" in1.txt
[ "$(q "SELECT transitioner_flags FROM workunit WHERE name='bcast'")" = 1 ] || fail "broadcast flags"
[ "$(q "SELECT target_type||','||target_id||','||multi FROM assignment a JOIN workunit w ON w.id=a.workunitid WHERE w.name='bcast'")" = "3,$team,1" ] \
    || fail "broadcast assignment row"
expect 0 $V create_work --appname upper --wu_name ball --broadcast in1.txt
[ "$(q "SELECT count(*) FROM result r JOIN workunit w ON w.id=r.workunitid WHERE w.name IN ('tgt','bcast','ball')")" = 0 ] \
    || fail "assigned work got results from the transitioner"
# Many jobs from stdin, one transaction.
printf '%s\n' "in1.txt" "# a comment" "--wu_name named --priority 3 $T/in2.txt" "" \
    "--target_user 2 in2.txt" >"$T/jobs"
expect 0 $V create_work --appname upper --wu_name batch --stdin <"$T/jobs"
[ "$(wc -l <"$T/out")" = 3 ] || fail "--stdin: $(cat "$T/out")"
[ "$(q "SELECT count(*) FROM workunit WHERE name IN ('batch_1','named','batch_5')")" = 3 ] \
    || fail "--stdin names"
[ "$(q "SELECT priority FROM workunit WHERE name='named'")" = 3 ] || fail "--stdin priority"

# --- create_work: bad (exit non-zero, nothing written) -----------------------
snap=$(snapshot)
expect 2 $V create_work --appname upper --wu_name full in1.txt           # duplicate name
grep -q "already exists" "$T/err" || fail "duplicate WU name: unclear error"
expect 2 $V create_work --appname nosuch in1.txt                         # unknown app
grep -q "no app named 'nosuch'" "$T/err" || fail "unknown app: unclear error"
expect 2 $V create_work --appname upper "$T/missing.txt"                 # missing input
expect 2 $V create_work --appname upper never_staged.txt                 # not staged
expect 2 $V create_work --appname upper --wu_template templates/none in1.txt
expect 2 $V create_work --appname upper --result_template templates/none in1.txt
expect 2 $V create_work --appname upper --min_quorum 3 --target_nresults 2 in1.txt
grep -q "min_quorum (3) exceeds target_nresults (2)" "$T/err" || fail "replication: unclear error"
expect 2 $V create_work --appname upper --max_error_results 5 --max_total_results 2 in1.txt
expect 2 $V create_work --appname upper --target_user 99 in1.txt
expect 2 $V create_work --appname upper --target_host 0 in1.txt          # id 0 rejected
expect 2 $V create_work --appname upper --target_user 1 --broadcast in1.txt
expect 2 $V create_work --appname upper --app_version_num 999 in1.txt
expect 2 $V create_work --appname upper "$T/in1.txt" "$T/in2.txt"        # template takes one
expect 2 $V create_work --appname upper --rsc_fpops_est lots in1.txt
expect 2 $V create_work --appname upper --bogus in1.txt
expect 2 $V create_work in1.txt                                         # no --appname
# A batch whose third line is bad: the first two are not created either,
# and the new input of line 1 is not left staged.
echo "fresh" >"$T/fresh.txt"
printf '%s\n' "$T/fresh.txt" "in1.txt" "$T/missing.txt" >"$T/badjobs"
expect 2 $V create_work --appname upper --stdin <"$T/badjobs"
[ "$(snapshot)" = "$snap" ] || fail "a failed create_work wrote something: $snap -> $(snapshot)"
[ -z "$(find download -name fresh.txt)" ] || fail "fresh.txt left staged"
# A different file under an already staged name is refused (names are immutable).
mkdir -p "$T/other" && echo "not the same" >"$T/other/in1.txt"
expect 2 $V create_work --appname upper "$T/other/in1.txt"
[ "$(snapshot)" = "$snap" ] || fail "name clash wrote something"
expect 1 $V create_work --project "$T" --appname upper in1.txt           # not a project
echo "ok: project admin CLI"
