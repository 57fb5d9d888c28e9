#!/usr/bin/env bash
# volsched popsim from the command line: --help, the example studies run,
# --json with the documented keys, --csv/--svg files, byte-identical output
# for the same seed (and different for another), and bad input: errors with
# file:line:column and exit 2, bad options exit 2, unwritable output exit 1.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ex="$VS_SOURCE_DIR/examples/popsim"

"$VOLSCHED" popsim --help | qgrep "usage: volsched popsim" || fail "--help"
"$VOLSCHED" --help 2>&1 | qgrep "popsim" || fail "popsim not in volsched --help"

# Every example scenario parses and runs (shortened to a few days), with
# nothing on stderr (the examples use the option names of now).
for f in "$ex"/*.pop; do
    "$VOLSCHED" popsim "$f" --days 2 --no-progress >"$tmp/out" 2>"$tmp/err" || fail "$f did not run"
    grep -q "^results sent" "$tmp/out" || fail "$f: no table"
    [ -s "$tmp/err" ] && fail "$f: $(cat "$tmp/err")"
done

# Old option names (docs/popsim.md, "Deprecated names"): the same figures as
# the names of now (the old ones keep their unit, days), and one warning line
# per old name at its first use, with the file, the line and the new name.
printf 'hosts = 50 batch_size = 200\nbuffer = 0.25\nbuffer_extra = .5 buffer = .25\n' \
    >"$tmp/old.pop"
printf 'hosts = 50 batch_size = 200\nmin_queue = 6\nextra_queue = 12h\n' >"$tmp/now.pop"
"$VOLSCHED" popsim "$tmp/old.pop" --days 2 --json >"$tmp/old.json" 2>"$tmp/old.err" ||
    fail "old names: exit $?"
"$VOLSCHED" popsim "$tmp/now.pop" --days 2 --json >"$tmp/now.json" 2>"$tmp/now.err" ||
    fail "new names: exit $?"
cmp -s "$tmp/old.json" "$tmp/now.json" || fail "old and new names give different figures"
[ -s "$tmp/now.err" ] && fail "new names warn: $(cat "$tmp/now.err")"
[ "$(wc -l <"$tmp/old.err")" -eq 2 ] || fail "old names: not one warning each: $(cat "$tmp/old.err")"
grep -q "^volsched popsim: .*old.pop:2:1: warning: 'buffer' is deprecated, use 'min_queue' (in hours" \
    "$tmp/old.err" || fail "buffer warning: $(cat "$tmp/old.err")"
grep -q "old.pop:3:1: warning: 'buffer_extra' is deprecated, use 'extra_queue'" "$tmp/old.err" ||
    fail "buffer_extra warning: $(cat "$tmp/old.err")"

# --json: one object with the documented keys, and its books balance.
"$VOLSCHED" popsim "$ex/small.pop" --json >"$tmp/a.json" || fail "json run"
python3 - "$tmp/a.json" <<'PY' || fail "json check"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("makespan_h", "batch_makespan_mean_h", "wu_turnaround_p90_h", "results_sent",
          "results_valid", "results_invalid", "results_timed_out", "results_wasted",
          "deadline_misses", "cpu_hours_wasted", "bytes_per_valid", "rpc_rate_peak",
          "cache_hit_rate", "refused_deadline", "refused_workload"):
    assert k in d, k
assert d["results_sent"] == d["results_returned"] + d["results_timed_out"] \
    - d["results_late"] + d["results_in_flight_end"], d
assert d["workunits"] == d["workunits_valid"] + d["workunits_failed"] + d["workunits_open"]
assert d["workunits_open"] == 0 and d["makespan_h"] > 0, d
PY

# Same seed, same bytes; another seed, other figures.
"$VOLSCHED" popsim "$ex/small.pop" --seed 5 --json --csv "$tmp/t1.csv" --svg "$tmp/t1.svg" \
    >"$tmp/r1" || fail "run 1"
"$VOLSCHED" popsim "$ex/small.pop" --seed 5 --json --csv "$tmp/t2.csv" --svg "$tmp/t2.svg" \
    >"$tmp/r2" || fail "run 2"
"$VOLSCHED" popsim "$ex/small.pop" --seed 6 --json >"$tmp/r3" || fail "run 3"
cmp -s "$tmp/r1" "$tmp/r2" || fail "figures differ between identical runs"
cmp -s "$tmp/t1.csv" "$tmp/t2.csv" || fail "CSV differs between identical runs"
cmp -s "$tmp/t1.svg" "$tmp/t2.svg" || fail "SVG differs between identical runs"
cmp -s "$tmp/r1" "$tmp/r3" && fail "seed 6 gave seed 5's figures"
head -1 "$tmp/t1.csv" | qgrep "^hour,in_flight,returned,validated,rpcs$" || fail "csv header"
[ "$(wc -l <"$tmp/t1.csv")" -gt 24 ] || fail "csv has fewer than a day of hours"
grep -q "^<svg " "$tmp/t1.svg" || fail "not an SVG"
grep -q "<polyline" "$tmp/t1.svg" || fail "SVG draws nothing"

# The full host model from the command line and from the scenario: it
# runs, says so, balances its books, and gives the same bytes twice.
"$VOLSCHED" popsim "$ex/small.pop" --model full --days 3 --json --no-progress >"$tmp/f1" ||
    fail "--model full"
"$VOLSCHED" popsim "$ex/small.pop" --model full --days 3 --json --no-progress >"$tmp/f2" ||
    fail "--model full again"
cmp -s "$tmp/f1" "$tmp/f2" || fail "full model: figures differ between identical runs"
python3 - "$tmp/f1" <<'PY' || fail "full json check"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"] == "full (fair)", d["model"]
assert d["results_sent"] > 0
assert d["results_sent"] == d["results_returned"] + d["results_timed_out"] \
    - d["results_late"] + d["results_in_flight_end"], d
PY
printf 'hosts = 100\nmodel = full\n' >"$tmp/full.pop"
"$VOLSCHED" popsim "$tmp/full.pop" --days 1 --no-progress | qgrep "full (fair) host model" ||
    fail "model = full not used"
"$VOLSCHED" popsim "$tmp/full.pop" --days 1 --no-progress --model light |
    qgrep "light host model" || fail "--model light does not override the scenario"
printf 'hosts = 100\nmodel = heavy\n' >"$tmp/bad3.pop"
err=$("$VOLSCHED" popsim "$tmp/bad3.pop" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad model exit $rc"
grep -q <<<"$err" "bad3.pop:2:9: model wants one of: light, full" || fail "bad model: $err"
"$VOLSCHED" popsim "$ex/small.pop" --model heavy >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad --model exit $rc"

# Bad input.
printf 'hosts = 100\nncpus = choice(1: .5, 2)\n' >"$tmp/bad.pop"
err=$("$VOLSCHED" popsim "$tmp/bad.pop" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad scenario exit $rc"
grep -q <<<"$err" "bad.pop:2:24: expected ':' weight" || fail "error without file:line:col: $err"
printf 'hosts = 100\nquorum = 2\n' >"$tmp/bad2.pop"
err=$("$VOLSCHED" popsim "$tmp/bad2.pop" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown parameter exit $rc"
grep -q <<<"$err" "bad2.pop:2:1: unknown parameter 'quorum'" || fail "unknown parameter: $err"
head -c 2000000 /dev/zero | tr '\0' '#' >"$tmp/huge.pop"
"$VOLSCHED" popsim "$tmp/huge.pop" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "oversize scenario exit $rc"
"$VOLSCHED" popsim /no/such/file >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing file exit $rc"
"$VOLSCHED" popsim "$tmp" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "a directory as the scenario: exit $rc"
"$VOLSCHED" popsim >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no scenario exit $rc"
"$VOLSCHED" popsim "$ex/small.pop" --days 0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad --days exit $rc"
"$VOLSCHED" popsim "$ex/small.pop" --seed x >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad --seed exit $rc"
"$VOLSCHED" popsim "$ex/small.pop" --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown option exit $rc"
"$VOLSCHED" popsim "$ex/small.pop" --days 1 --svg /no/such/dir/x.svg >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unwritable svg exit $rc"
echo "ok"
