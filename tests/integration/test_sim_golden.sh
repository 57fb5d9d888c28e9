#!/usr/bin/env bash
# Decisions do not change by accident: `volsched sim --json` for every
# example scenario under every policy, 30 days, must match the outputs
# committed in tests/golden/sim/ byte for byte. Regenerate them (and say why
# in the commit) only when a change is meant to change decisions:
#   for f in examples/scenarios/*.scn; do for p in fair shortfall debt wrr; do
#     volsched sim $f --days 30 --policy $p --json --no-progress \
#       >tests/golden/sim/$(basename $f .scn)-$p.json; done; done
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}"
gold="$VS_SOURCE_DIR/tests/golden/sim"
n=0
bad=0
for f in "$VS_SOURCE_DIR"/examples/scenarios/*.scn; do
    b=$(basename "$f" .scn)
    for p in fair shortfall debt wrr; do
        [ -f "$gold/$b-$p.json" ] || { echo "FAIL: no golden output $b-$p.json"; bad=1; continue; }
        if ! "$VOLSCHED" sim "$f" --days 30 --policy "$p" --json --no-progress |
            cmp -s - "$gold/$b-$p.json"; then
            echo "FAIL: $b under $p differs from tests/golden/sim/$b-$p.json"
            bad=1
        fi
        n=$((n + 1))
    done
done
[ "$n" -ge 20 ] || { echo "FAIL: only $n scenario runs"; exit 1; }
[ $bad -eq 0 ] || exit 1
echo "ok: $n runs byte-identical"
