#!/usr/bin/env bash
# volsched sim from the command line: inline and file scenarios, errors with
# line:column and exit 2, --json keys, --compare columns, --timeline/--csv
# files, and byte-identical output for the same seed.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scn="$VS_SOURCE_DIR/examples/scenarios"

"$VOLSCHED" sim --help | qgrep "usage: volsched sim" || fail "--help"

# Inline, the seed's one-line form; a readable table by default.
out=$("$VOLSCHED" sim '(P1(1000, 2000, .5), P2(1, 10, .5), NCPUS=4)' --days 2) || fail "inline run"
grep -q <<<"$out" "^deadline_misses  *0$" || fail "inline: table without deadline_misses 0: $out"
grep -q <<<"$out" "^P2 (target share 0.500)" || fail "inline: no per-project rows"

# --json: one object with the documented keys.
"$VOLSCHED" sim "$scn/seed000_scenario1.scn" --days 1 --json >"$tmp/a.json" || fail "json run"
for k in idle_frac wasted_frac share_violation monotony rpcs_per_job deadline_misses \
         jobs_completed preemptions restart_waste_frac projects cpu_share; do
    grep -q "\"$k\"" "$tmp/a.json" || fail "json lacks $k"
done

grep -q '"P3": {' "$tmp/a.json" || fail "json projects not keyed by name"

# Determinism: same seed, same bytes (figures, timeline and CSV).
"$VOLSCHED" sim "$scn/einstein_resume.scn" --days 2 --seed 7 --json \
    --timeline "$tmp/t1.svg" --csv "$tmp/t1.csv" >"$tmp/r1" || fail "run 1"
"$VOLSCHED" sim "$scn/einstein_resume.scn" --days 2 --seed 7 --json \
    --timeline "$tmp/t2.svg" --csv "$tmp/t2.csv" >"$tmp/r2" || fail "run 2"
cmp -s "$tmp/r1" "$tmp/r2" || fail "figures differ between identical runs"
cmp -s "$tmp/t1.svg" "$tmp/t2.svg" || fail "SVG differs between identical runs"
cmp -s "$tmp/t1.csv" "$tmp/t2.csv" || fail "CSV differs between identical runs"
head -1 "$tmp/t1.csv" | qgrep "^kind,cpu,project,job,start_h,end_h,missed$" || fail "csv header"
grep -q "^<svg " "$tmp/t1.svg" || fail "not an SVG"

# --compare: one column per policy; timelines get the policy in their name.
out=$("$VOLSCHED" sim "$scn/tight_deadline.scn" --days 3 --compare debt,shortfall,wrr \
      --timeline "$tmp/c.svg") || fail "compare"
grep -Eq "^figure +debt +shortfall +wrr$" <<<"$out" || fail "compare header: $out"
for p in debt shortfall wrr; do [ -s "$tmp/c-$p.svg" ] || fail "no c-$p.svg"; done

# Errors: line and column, exit 2.
printf 'P1(1, 2, .5)\nP2(1, 2)\n' >"$tmp/bad.scn"
err=$("$VOLSCHED" sim "$tmp/bad.scn" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad scenario exit $rc"
grep -q <<<"$err" "bad.scn:2:8:" || fail "error without line:col: $err"
"$VOLSCHED" sim "P1(1, 2, .5)" --policy fifo >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown policy exit $rc"
"$VOLSCHED" sim /no/such/file >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing file exit $rc"
"$VOLSCHED" sim >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no scenario exit $rc"
"$VOLSCHED" sim "P1(1, 2, .5)" --days -1 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad --days exit $rc"
"$VOLSCHED" sim "P1(1, 2, .5)" --timeline /no/such/dir/x.svg >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unwritable timeline exit $rc"
# The volunteer notation's errors: file:line:column, exit 2.
bad() {
    local text=$1 where=$2 what=$3
    printf '%b' "$text" >"$tmp/bad.scn"
    local err rc
    err=$("$VOLSCHED" sim "$tmp/bad.scn" 2>&1)
    rc=$?
    [ $rc -eq 2 ] || fail "bad scenario '$text': exit $rc"
    grep -q -- "bad.scn:$where: .*$what" <<<"$err" || fail "bad scenario '$text': $err"
}
bad 'P1(1, 24, 1)\nP2(1, 24, 1, threads = 2)\n' 2:14 "unknown project option 'threads'"
bad 'P1(1, 24, 1)\nbogus = 1\n' 2:1 "unknown parameter 'bogus'"
bad 'NCPUS = 2\nP1(1, 24, 1, ncpus = 4)\n' 2:14 "ncpus = 4 is more than NCPUS = 2"
bad 'P1(1, 24, 1, nowork = 8-12)\nduration = 10\n' 1:14 "nowork ends after"
bad 'P1(1, 24, 1)\nP2(1, 24, -0.5)\n' 2:11 "cannot be negative"
bad 'P1(1, 24, 1, nowork = 8)\n' 1:24 "D1-D2"

# Old option names (docs/simulator.md, "Deprecated names"): the scenario runs
# with the same figures as with the names of now, and one warning line per
# old name, at its first use, names the file, the line and the new name.
printf 'P1(1, 24, 1, spread = 0.3)\nP2(2, 48, 1, spread = 0.2)\nserver_deadline_check = on\n' \
    >"$tmp/old.scn"
printf 'P1(1, 24, 1, job_spread = 0.3)\nP2(2, 48, 1, job_spread = 0.2)\nserver_edf_check = on\n' \
    >"$tmp/now.scn"
"$VOLSCHED" sim "$tmp/old.scn" --days 3 --json --no-progress >"$tmp/old.json" 2>"$tmp/old.err" ||
    fail "old names: exit $?"
"$VOLSCHED" sim "$tmp/now.scn" --days 3 --json --no-progress >"$tmp/now.json" 2>"$tmp/now.err" ||
    fail "new names: exit $?"
cmp -s "$tmp/old.json" "$tmp/now.json" || fail "old and new names give different figures"
[ -s "$tmp/now.err" ] && fail "new names warn: $(cat "$tmp/now.err")"
[ "$(wc -l <"$tmp/old.err")" -eq 2 ] || fail "old names: not one warning each: $(cat "$tmp/old.err")"
grep -q "^volsched sim: .*old.scn:1:14: warning: 'spread' is deprecated, use 'job_spread'$" \
    "$tmp/old.err" || fail "spread warning: $(cat "$tmp/old.err")"
grep -q "old.scn:3:1: warning: 'server_deadline_check' is deprecated, use 'server_edf_check'$" \
    "$tmp/old.err" || fail "server_deadline_check warning: $(cat "$tmp/old.err")"
err=$("$VOLSCHED" sim 'P1(1, 24, 1) spread = .1' --days 1 2>&1 >/dev/null) || fail "inline old name"
grep -q "^volsched sim: <scenario>:1:14: warning: 'spread'" <<<"$err" || fail "inline warning: $err"
# An error after an old name: both lines, exit 2.
printf 'P1(1, 24, 1, spread = 0.3)\nP2(1, 24)\n' >"$tmp/bad.scn"
err=$("$VOLSCHED" sim "$tmp/bad.scn" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "old name then error: exit $rc"
grep -q "bad.scn:1:14: warning: 'spread'" <<<"$err" || fail "warning before an error: $err"
grep -q "bad.scn:2:9: P2: missing" <<<"$err" || fail "error after a warning: $err"
# The examples use the names of now: nothing on stderr.
while IFS= read -r f; do
    "$VOLSCHED" sim "$f" --days 1 --no-progress >/dev/null 2>"$tmp/ex.err" || fail "$f: exit $?"
    [ -s "$tmp/ex.err" ] && fail "$f: $(cat "$tmp/ex.err")"
done < <(find "$scn" -name '*.scn')
echo "ok: sim"
