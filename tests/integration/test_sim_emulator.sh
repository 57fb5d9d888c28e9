#!/usr/bin/env bash
# The default policy against BOINC's client emulator
# (figures from ../shared/docs/boinc-emulator-figures.md) on every one of
# its scenarios (examples/scenarios/emulator/). A row passes when
# wasted_frac_reported (and wasted_frac, below), idle and share violation
# are each no worse than the emulator's plus 0.005, and, where the
# emulator's share violation is 0.25 or more, at most max(0.1, half of it).
# a_120d and a_120d_p2first (the same scenario, projects listed in another
# order) must give identical figures.
#
# The share rule has no exception for c_stress (the issue's "cannot get
# near 0" is why the limit is half the emulator's rather than 0.1): its
# rows are held to max(0.1, 0.800 / 2) and max(0.1, 0.810 / 2).
#
# Rows in KNOWN_FAIL are not met yet (said in docs/simulator.md); they are
# printed, and the test fails if one of them starts passing (so the list
# is kept honest) or if any other row fails. c_stress_20d_avail cannot be
# met on our host model (docs/simulator.md, scripts/avail_bound.py): its
# least wasteful project alone, with the CPU to itself and no buffer,
# already wastes more than the row allows. That is checked at the end, so
# that the reason given stays true.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}"
dir="$VS_SOURCE_DIR/examples/scenarios/emulator"
KNOWN_FAIL=" c_stress_20d_avail "
# name wasted idle share_violation (the emulator's)
rows="a_30d 0 0 1.000
a_120d 0.0049 0 0.302
a_120d_p2first 0.0457 0 0.695
b_20d 0.0025 0 0.264
b_20d_smallbuf 0 0 0.308
c_stress_20d 0.0042 0 0.800
c_stress_20d_avail 0.0021 0.0033 0.810
d_fetch_buf10d 0 0 1.000
e_projects_2 0 0 0.002
e_projects_5 0 0 0.017
e_projects_10 0 0 0.031
e_projects_20 0 0 0.051
e_projects_40 0 0 0.977
e_projects_80 0 0 1.475"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
judge() { # name pass|fail detail
    case "$KNOWN_FAIL" in
    *" $1 "*) if [ "$2" = pass ]; then echo "FAIL: $1 passes now; drop it from KNOWN_FAIL"; bad=1;
              else echo "known fail: $1 $3"; fi ;;
    *) if [ "$2" = pass ]; then echo "pass: $1 $3"; else echo "FAIL: $1 $3"; bad=1; fi ;;
    esac
}
while read -r name ew ei es; do
    "$VOLSCHED" sim "$dir/$name.scn" --json --no-progress > "$tmp/$name.json" ||
        { echo "FAIL: $name: exit $?"; bad=1; continue; }
    verdict=$(python3 - "$tmp/$name.json" "$ew" "$ei" "$es" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ew, ei, es = map(float, sys.argv[2:5])
w, i, s = j["wasted_frac_reported"], j["idle_frac"], j["share_violation"]
# The emulator runs every late job to its end and reports it; fair leaves a
# job it can no longer finish in time (never reported, so not in w): its
# CPU counts in wasted_frac, which must meet the same limit.
wa = j["wasted_frac"]
ok = max(w, wa) <= ew + 0.005 and i <= ei + 0.005 and s <= es + 0.005
if es >= 0.25:
    ok = ok and s <= max(0.1, es / 2)
print(("pass" if ok else "fail") + f" wasted {w:.4f} (all late {wa:.4f}; emulator {ew}) idle {i:.4f} ({ei}) share_violation {s:.3f} ({es})")
PY
)
    judge "$name" "${verdict%% *}" "${verdict#* }"
done <<< "$rows"
# Project order: the same scenario listed in another order, the same figures
# (c_stress_20d_avail's ten projects backwards too: sums of ten projects'
# figures must not depend on their order).
same() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for j in (a, b):
    j.pop("projects", None)
sys.exit(0 if a == b else 1)
PY
}
if same "$tmp/a_120d.json" "$tmp/a_120d_p2first.json"; then judge order pass "a_120d == a_120d_p2first"
else judge order fail "a_120d != a_120d_p2first"; fi
python3 - "$dir/c_stress_20d_avail.scn" >"$tmp/rev.scn" <<'PY'
import re, sys
text = "".join(l for l in open(sys.argv[1]) if not l.startswith("#"))
projects = re.findall(r"\w+\([^)]*\)", text)
print(" ".join(reversed(projects)), re.sub(r"\w+\([^)]*\)", "", text).strip())
PY
"$VOLSCHED" sim "$tmp/rev.scn" --json --no-progress >"$tmp/rev.json" || { echo "FAIL: rev"; bad=1; }
if same "$tmp/c_stress_20d_avail.json" "$tmp/rev.json"; then judge order pass "c_stress_20d_avail backwards"
else judge order fail "c_stress_20d_avail backwards"; fi
# Why c_stress_20d_avail is a known failure: S09 (the project that wastes
# least a CPU hour) alone on its host, one job at a time, already wastes
# more than the row's limit, 0.0021 + 0.005 (seed 1: 0.0189).
"$VOLSCHED" sim "S09(0.4, 1.5, 1) NCPUS=1 min_queue=0 duration=20 on_frac=0.8 active_frac=0.9" \
    --json --no-progress >"$tmp/s09.json" || { echo "FAIL: S09 alone"; bad=1; }
if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["wasted_frac"] > 0.0071 else 1)' \
    "$tmp/s09.json"; then
    echo "known: S09 alone on c_stress_20d_avail's host wastes" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wasted_frac"])' "$tmp/s09.json")" \
        "> 0.0071"
else
    echo "FAIL: S09 alone wastes no more than c_stress_20d_avail's limit: the reason given" \
        "for its known failure (docs/simulator.md) no longer holds"
    bad=1
fi
[ $bad -eq 0 ] || exit 1
echo "ok: emulator acceptance (known failures listed above)"
