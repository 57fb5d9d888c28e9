#!/usr/bin/env bash
# volsched explain: the seed example's answers, nested and top-level results,
# the three policies, and clear refusals (exit 2) of bad snapshots.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}"
fail() { echo "FAIL: $*"; exit 1; }
ex="$VS_SOURCE_DIR/examples/explain"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check FILE EXPR...: every python expression over the parsed JSON `j` is true.
check() {
    local file=$1; shift
    python3 - "$file" "$@" <<'PY' || fail "check failed on $file"
import json, sys
j = json.load(open(sys.argv[1]))
for expr in sys.argv[2:]:
    if not eval(expr):
        print("false:", expr)
        print(json.dumps(j, indent=1)[:3000])
        sys.exit(1)
PY
}
close='lambda a, b: abs(a - b) < 1e-6'

# The seed 000 example: A2 ends at 4, A1 at 8, shortfall(A)=4, shortfall(B)=0,
# total_shortfall=2; work fetch asks A for the whole total_shortfall.
"$VOLSCHED" explain "$ex/seed_example.json" --json --policy shortfall > "$tmp/seed.json" ||
    fail "seed exit $?"
check "$tmp/seed.json" \
    "($close)(j['results']['A2']['finish'], 4)" \
    "($close)(j['results']['A1']['finish'], 8)" \
    "($close)(j['projects']['A']['shortfall'], 4)" \
    "($close)(j['projects']['B']['shortfall'], 0)" \
    "($close)(j['total_shortfall'], 2)" \
    "j['projects']['A']['deadlines_missed'] == 0" \
    "j['results']['B1']['deadline_missed'] is False" \
    "j['schedule'] == ['A1', 'B1']" \
    "j['work_fetch']['project'] == 'A'" \
    "($close)(j['work_fetch']['requests']['A'], 2)" \
    "($close)(j['work_fetch']['requests']['B'], 0)" \
    "j['policy'] == 'shortfall'"

# The default policy is fair: the same schedule (seed 000's scheduler).
"$VOLSCHED" explain "$ex/seed_example.json" --json > "$tmp/fair.json" || fail "fair exit $?"
check "$tmp/fair.json" "j['policy'] == 'fair'" "j['schedule'] == ['A1', 'B1']"

# CPUs, not results: on 4 CPUs, A's 2-CPU jobs at most 1 at once, so one
# A job and two of B's (every policy).
cat >"$tmp/mt.json" <<'JSON'
{"ncpus": 4, "min_queue": 60, "sched_period": 3600, "on_frac": 1, "active_frac": 1,
 "projects": [
  {"name": "A", "resource_share": 1, "job_ncpus": 2, "max_concurrent": 1, "results": [
    {"name": "A1", "remaining": 3600, "deadline": 86400},
    {"name": "A2", "remaining": 3600, "deadline": 86400},
    {"name": "A3", "remaining": 3600, "deadline": 86400}]},
  {"name": "B", "resource_share": 1, "results": [
    {"name": "B1", "remaining": 3600, "deadline": 86400},
    {"name": "B2", "remaining": 3600, "deadline": 86400},
    {"name": "B3", "remaining": 3600, "deadline": 86400}]}]}
JSON
for p in fair shortfall debt wrr; do
    "$VOLSCHED" explain "$tmp/mt.json" --json --policy $p > "$tmp/mt-$p.json" || fail "mt $p exit"
    check "$tmp/mt-$p.json" "sorted(j['schedule']) == ['A1', 'B1', 'B2']"
done

# Seed 002 on the same queue: work_before_minq and a different choice.
"$VOLSCHED" explain "$ex/seed_example.json" --json --policy debt > "$tmp/debt.json" || fail "debt exit"
check "$tmp/debt.json" \
    "($close)(j['total_work_before_minq'], 18)" \
    "j['policy'] == 'debt'" \
    "j['work_fetch']['project'] == 'B'"

# The readable table says the same.
"$VOLSCHED" explain "$ex/seed_example.json" --policy shortfall > "$tmp/seed.txt" || fail "table exit"
grep -q '^total_shortfall 2 s' "$tmp/seed.txt" || fail "table: no total_shortfall 2"
grep -q '^schedule: A1 B1$' "$tmp/seed.txt" || fail "table: schedule"
grep -q '^work fetch: ask A for 2 s' "$tmp/seed.txt" || fail "table: work fetch"

# Nested results, a deadline in danger: EDF runs fold_17 and preempts the
# climate model (which checkpointed since the scheduler last ran); the old
# client (wrr) ignores the deadline.
"$VOLSCHED" explain "$ex/deadline_trouble.json" --json --policy shortfall > "$tmp/dl.json" || fail "dl exit"
check "$tmp/dl.json" \
    "j['results']['fold_17']['deadline_missed'] is True" \
    "j['projects']['proteins']['deadlines_missed'] == 1" \
    "j['schedule'] == ['fold_17']" \
    "j['results']['fold_17']['scheduled'] == 'edf'" \
    "{'action': 'suspend_remove_from_memory', 'result': 'climate_model_1'} in j['actions']" \
    "j['work_fetch']['project'] == 'proteins'" \
    "j['work_fetch']['requests']['primes'] == 0"
"$VOLSCHED" explain "$ex/deadline_trouble.json" --json --policy wrr > "$tmp/wrr.json" || fail "wrr exit"
check "$tmp/wrr.json" "j['schedule'] == ['climate_model_1']" "j['actions'] == []"

# Bad input: exit 2 and a message naming the problem.
# Two projects may send results of the same name (a BOINC client keeps
# results per project): both are explained, each shown as "NAME (PROJECT)";
# a result called like one of those made names is refused as ambiguous.
cat > "$tmp/same.json" <<'EOF2'
{"ncpus": 2, "min_queue": 600, "sched_period": 3600, "on_frac": 1, "active_frac": 1,
 "projects": [{"name": "A", "resource_share": 1, "results": [
                {"name": "wu_1_0", "remaining": 500, "deadline": 9000},
                {"name": "x", "remaining": 500, "deadline": 9000}]},
              {"name": "B", "resource_share": 1, "results": [
                {"name": "wu_1_0", "remaining": 700, "deadline": 8000}]}]}
EOF2
"$VOLSCHED" explain "$tmp/same.json" --json > "$tmp/same.out" || fail "same names: exit $?"
check "$tmp/same.out" 'sorted(j["results"]) == ["wu_1_0 (A)", "wu_1_0 (B)", "x"]' \
    'j["results"]["wu_1_0 (B)"]["project"] == "B"' \
    'j["results"]["wu_1_0 (A)"]["project"] == "A"' \
    'sorted(j["schedule"]) == ["wu_1_0 (A)", "wu_1_0 (B)"]'
"$VOLSCHED" explain "$tmp/same.json" > "$tmp/same.txt" || fail "same names table: exit $?"
grep -q '^schedule: wu_1_0 (A) wu_1_0 (B)$' "$tmp/same.txt" || { cat "$tmp/same.txt"; fail "same names: table schedule"; }

bad() {
    local name=$1 want=$2 json=$3
    printf '%s' "$json" > "$tmp/$name.json"
    "$VOLSCHED" explain "$tmp/$name.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] || fail "$name: exit $rc, want 2"
    grep -q -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "$name: message lacks '$want'"; }
}
host='"ncpus": 1, "min_queue": 10, "sched_period": 60, "on_frac": 1, "active_frac": 1'
bad missing_ncpus 'missing key "ncpus"' '{"min_queue": 10, "sched_period": 60, "on_frac": 1, "active_frac": 1, "projects": []}'
bad missing_projects 'missing key "projects"' "{$host}"
bad negative_remaining '"remaining" must be >= 0' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1}], \"results\": [{\"name\": \"r\", \"project\": \"A\", \"remaining\": -5, \"deadline\": 10}]}"
bad negative_queue '"min_queue" must be >= 0' '{"ncpus": 1, "min_queue": -1, "sched_period": 60, "on_frac": 1, "active_frac": 1, "projects": []}'
bad unknown_project 'unknown project "B"' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1}], \"results\": [{\"name\": \"r\", \"project\": \"B\", \"remaining\": 5, \"deadline\": 10}]}"
bad unknown_key 'unknown key "remainin"' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1, \"results\": [{\"name\": \"r\", \"remainin\": 5, \"deadline\": 10}]}]}"
bad missing_deadline 'missing key "deadline"' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1, \"results\": [{\"name\": \"r\", \"remaining\": 5}]}]}"
bad dup_result 'duplicate result name "r" in project "A"' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1, \"results\": [{\"name\": \"r\", \"remaining\": 5, \"deadline\": 9}, {\"name\": \"r\", \"remaining\": 5, \"deadline\": 9}]}]}"
bad ambiguous 'result name "r (B)" is ambiguous' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1, \"results\": [{\"name\": \"r\", \"remaining\": 5, \"deadline\": 9}, {\"name\": \"r (B)\", \"remaining\": 5, \"deadline\": 9}]}, {\"name\": \"B\", \"resource_share\": 1, \"results\": [{\"name\": \"r\", \"remaining\": 5, \"deadline\": 9}]}]}"
bad negative_share '"resource_share" must be >= 0' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": -1}]}"
bad half_limit '"max_concurrent" must be a whole number' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1, \"max_concurrent\": 1.5}]}"
bad negative_ncpus '"job_ncpus" must be >= 0' "{$host, \"projects\": [{\"name\": \"A\", \"resource_share\": 1, \"job_ncpus\": -2}]}"
bad wrong_type '"ncpus" must be a number' '{"ncpus": "two", "min_queue": 10, "sched_period": 60, "on_frac": 1, "active_frac": 1, "projects": []}'
bad bad_frac '"on_frac" must be in (0, 1]' '{"ncpus": 1, "min_queue": 10, "sched_period": 60, "on_frac": 1.5, "active_frac": 1, "projects": []}'
bad syntax 'invalid JSON' '{"ncpus": 1,'
bad not_object 'must be a JSON object' '[1, 2]'
"$VOLSCHED" explain "$tmp/does-not-exist.json" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "missing file: exit $rc"
grep -q 'cannot read' "$tmp/err" || fail "missing file: message"
"$VOLSCHED" explain "$ex/seed_example.json" --policy fifo 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "bad policy: exit $rc"
grep -q "unknown policy 'fifo'" "$tmp/err" || fail "bad policy: message"
"$VOLSCHED" explain 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "no file: exit $rc"
"$VOLSCHED" explain --help | qgrep 'usage: volsched explain' || fail "--help"
echo "ok: explain"
