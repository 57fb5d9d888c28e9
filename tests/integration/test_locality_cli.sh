#!/usr/bin/env bash
# Locality scheduling's command-line side (docs/locality.md), without HTTP:
# `app add --locality`, create_work's naming rule (FILENAME__SUFFIX, refused
# otherwise) and sticky + report_on_rpc marking of the big input, and the two
# daemons, one pass each (`--once`): the generator's exit statuses (0 made
# work, 2 no more work, 1 keep the trigger) and the working-set manager's
# target, drops and re-adds.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}" "${VS_SOURCE_DIR:?}"
W=$(mktemp -d /tmp/vs_loccli.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
P="$W/p"
"$VOLSCHED" init "$P" --name loc --url http://127.0.0.1:9/loc/ >/dev/null || fail init
printf '#!/bin/sh\nexit 0\n' > "$W/app"; chmod +x "$W/app"
"$VOLSCHED" app add --project "$P" --name ein --platform x86_64-pc-linux-gnu --version 100 \
    --locality full "$W/app" >/dev/null || fail "app add --locality full"
[ "$(sqlite3 "$P/volsched.db" "select locality_scheduling from app where name='ein'")" = 2 ] \
    || fail "app.locality_scheduling is not 2"
"$VOLSCHED" app add --project "$P" --name ein --platform x86_64-pc-linux-gnu --version 100 \
    --locality bogus "$W/app" >/dev/null 2>&1; [ $? -eq 2 ] || fail "--locality bogus accepted"
# --locality given again on the same version changes the mode (docs/locality.md)
# and leaves the version as it is; without --locality a second add still fails.
loc() { sqlite3 "$P/volsched.db" "select locality_scheduling from app where name='ein'"; }
out=$("$VOLSCHED" app add --project "$P" --name ein --platform x86_64-pc-linux-gnu --version 100 \
    --locality none "$W/app" 2>&1) || fail "app add --locality none on an existing version: $out"
[ "$(loc)" = 0 ] || fail "--locality none on an existing version left mode $(loc)"
grep -q "locality none (was full); version 100 .*already registered" <<<"$out" \
    || fail "app add --locality none said: $out"
[ "$(sqlite3 "$P/volsched.db" "select count(*) from app_version")" = 1 ] \
    || fail "a second app_version row was written"
out=$("$VOLSCHED" app add --project "$P" --name ein --platform x86_64-pc-linux-gnu --version 100 \
    "$W/app" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "already exists" <<<"$out" || fail "a second add without --locality: rc $rc: $out"
"$VOLSCHED" app add --project "$P" --name ein --platform x86_64-pc-linux-gnu --version 100 \
    --locality full "$W/app" >/dev/null 2>&1 || fail "app add --locality full again"
[ "$(loc)" = 2 ] || fail "--locality full again left mode $(loc)"
# Two inputs: the big file (its name names the workunits) and a small one.
cp "$VS_SOURCE_DIR/tests/data/locality/two_inputs_in" "$P/templates/ein_in" || fail "template"
head -c 100000 /dev/urandom > "$W/h1_0001"
echo "1 2" > "$W/in_1"; echo "3 4" > "$W/in_2"
cw() { "$VOLSCHED" create_work --project "$P" --appname ein "$@"; }
# Misnamed locality jobs are refused, nothing is written.
out=$(cw --wu_name other_name "$W/h1_0001" "$W/in_1" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "FILENAME__SUFFIX" <<<"$out" || fail "misnamed job accepted: $out"

out=$(cw --wu_name h1_9999__x "$W/h1_0001" "$W/in_1" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "not one of its inputs" <<<"$out" || fail "job named after a file it lacks accepted: $out"
cp "$W/h1_0001" "$W/a__b"
out=$(cw "$W/a__b" "$W/in_1" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "may not contain '__'" <<<"$out" || fail "file name with __ accepted: $out"
[ "$(sqlite3 "$P/volsched.db" "select count(*) from workunit")" = 0 ] || fail "a refused job left a row"
# A good one with an automatic name, one with a given name.
cw "$W/h1_0001" "$W/in_1" >/dev/null || fail "create_work (auto name)"
cw --wu_name h1_0001__second h1_0001 "$W/in_2" >/dev/null || fail "create_work (given name, staged file)"
names=$(sqlite3 "$P/volsched.db" "select name from workunit order by id")
grep -q '^h1_0001__ein_' <<<"$names" || fail "automatic name is not FILE__...: $names"
grep -q '^h1_0001__second$' <<<"$names" || fail "given name lost: $names"
doc=$(sqlite3 "$P/volsched.db" "select xml_doc from workunit where name='h1_0001__second'")
python3 - "$doc" <<'PY' || fail "big input not marked sticky + report_on_rpc: $doc"
import sys, re
doc = sys.argv[1]
fis = re.findall(r"<file_info>(.*?)</file_info>", doc, re.S)
big = [f for f in fis if "<name>h1_0001</name>" in f]
small = [f for f in fis if "<name>in_2</name>" in f]
assert big and "<sticky/>" in big[0] and "<report_on_rpc/>" in big[0], big
assert small and "<sticky/>" not in small[0], small
PY

# The generator: exit 0 removes the trigger, 2 makes no_work_available, 1 keeps it.
L="$P/locality_scheduling"
mkdir -p "$L/need_work"
cat > "$W/gen.sh" <<'G'
#!/bin/sh
echo "$1" >> "$(dirname "$0")/gen.log"
case "$1" in
  made) exit 0 ;;
  done) exit 2 ;;
  *) exit 1 ;;
esac
G
chmod +x "$W/gen.sh"
touch "$L/need_work/made" "$L/need_work/done" "$L/need_work/broken" "$L/need_work/.hidden"
"$VOLSCHED" locality-gen --project "$P" --command "sh $W/gen.sh" --once 2>"$W/gen.err" \
    || fail "locality-gen --once: $(cat "$W/gen.err")"
[ ! -e "$L/need_work/made" ] || fail "need_work/made kept after exit 0"
[ ! -e "$L/need_work/done" ] && [ -e "$L/no_work_available/done" ] || fail "exit 2 did not make no_work_available/done"
[ -e "$L/need_work/broken" ] || fail "need_work/broken removed after exit 1"
[ "$(sort "$W/gen.log" | tr '\n' ' ')" = "broken done made " ] || fail "generator runs: $(cat "$W/gen.log")"
"$VOLSCHED" locality-gen --project "$P" --once >/dev/null 2>&1; [ $? -eq 2 ] || fail "locality-gen without --command accepted"

# The working-set manager: room for 2; only h1_0001 has work (once the
# transitioner made its results); files_no_work drops it, work brings it back.
"$VOLSCHED" serve --project "$P" --only transitioner --daemon-interval 100 >/dev/null 2>&1 &
tp=$!
for _ in $(seq 1 50); do
    [ "$(sqlite3 "$P/volsched.db" "select count(*) from result")" -ge 2 ] && break
    sleep 0.1
done
kill -TERM $tp; wait $tp
"$VOLSCHED" locality-ws --project "$P" --files 2 --once 2>/dev/null || fail "locality-ws --once"
[ "$(ls "$L/file_working_set")" = "h1_0001" ] || fail "working set: $(ls "$L/file_working_set")"
touch "$L/files_no_work/h1_0001" "$L/file_working_set/stale"
"$VOLSCHED" locality-ws --project "$P" --files 1 --once 2>/dev/null || fail "locality-ws pass 2"
[ ! -e "$L/files_no_work/h1_0001" ] || fail "files_no_work/h1_0001 not consumed"
# It still has unsent results, so it is re-added only if there is room: 1 file ('stale') is there.
[ "$(ls "$L/file_working_set")" = "stale" ] || fail "after the drop: $(ls "$L/file_working_set")"
rm "$L/file_working_set/stale"
"$VOLSCHED" locality-ws --project "$P" --files 1 --once 2>/dev/null || fail "locality-ws pass 3"
[ "$(ls "$L/file_working_set")" = "h1_0001" ] || fail "not re-added: $(ls "$L/file_working_set")"
"$VOLSCHED" locality-ws --project "$P" --once >/dev/null 2>&1; [ $? -eq 2 ] || fail "locality-ws without --files accepted"
# config.xml's locality tags: the daemon blocks and lite are read; a bad block
# is an error with file and line.
cp "$P/config.xml" "$W/config.good"
python3 - "$P/config.xml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read().replace("</config>", "<locality_scheduling_lite/>\n<locality_gen><command>sh x</command></locality_gen>\n<locality_ws><files>3</files></locality_ws>\n</config>", 1)
open(p, "w").write(s)
PY
out=$("$VOLSCHED" status --project "$P" 2>&1) || fail "status with locality blocks: $out"
grep -q "unknown tag" <<<"$out" && fail "locality tags reported unknown: $out"
python3 - "$P/config.xml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read().replace("<files>3</files>", "<files>3</files><bogus/>", 1)
open(p, "w").write(s)
PY
out=$("$VOLSCHED" status --project "$P" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "config.xml:[0-9]*:.*unknown tag in <locality_ws>" <<<"$out" \
    || fail "a bad <locality_ws> block was accepted (rc $rc): $out"
cp "$W/config.good" "$P/config.xml"
echo "ok: locality create_work rules, generator statuses, working-set manager"
