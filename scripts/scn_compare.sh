#!/usr/bin/env bash
# Compares what two builds make of every example scenario: for each
# examples/scenarios/**/*.scn (`volsched sim --json` under each policy) and
# examples/popsim/*.pop (`volsched popsim --json`, both host models), the
# old binary on the old tree's file, the new binary on the new tree's file
# and the new binary on the old tree's file must print the same bytes. Run
# it when a change to the scenario languages must not change what a
# scenario means, e.g. against the base commit built outside the worktree:
#
#   git archive BASE | tar -x -C /tmp/base && (cd /tmp/base && cmake --preset dev &&
#       cmake --build build/dev --target volsched)
#   scripts/scn_compare.sh /tmp/base/build/dev/volsched /tmp/base build/dev/volsched .
#
# The new binary's stderr on the new tree's files must be empty (no
# deprecated names left in the examples); on the old tree's files its
# deprecation warnings are counted and shown.
set -uo pipefail
[ $# -eq 4 ] || { echo "usage: $0 OLD_BIN OLD_TREE NEW_BIN NEW_TREE" >&2; exit 2; }
# Absolute paths: the file list is read from inside the old tree.
old_bin=$(realpath "$1") old_tree=$(realpath "$2") new_bin=$(realpath "$3") new_tree=$(realpath "$4")
[ "$old_bin" != "$new_bin" ] || { echo "$0: the two binaries are one file" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=0 runs=0 bad=0 warnings=0

# run BIN FILE OUT KIND ARGS...: stdout and the exit status to OUT, stderr to OUT.err
run() {
    local bin=$1 file=$2 out=$3 kind=$4
    shift 4
    "$bin" "$kind" "$file" "$@" --json --no-progress >"$out" 2>"$out.err"
    echo "rc=$?" >>"$out"
}

compare() { # compare KIND REL ARGS...
    local kind=$1 rel=$2
    shift 2
    local of="$old_tree/$rel" nf="$new_tree/$rel"
    [ -f "$of" ] || { echo "NOTE: $rel is new (no old version to compare)"; return; }
    [ -f "$nf" ] || { echo "FAIL: $rel is gone from the new tree"; bad=1; return; }
    run "$old_bin" "$of" "$tmp/a" "$kind" "$@"
    run "$new_bin" "$nf" "$tmp/b" "$kind" "$@"
    run "$new_bin" "$of" "$tmp/c" "$kind" "$@"
    runs=$((runs + 1))
    if ! grep -q '^rc=0$' "$tmp/a" || ! grep -q '^{' "$tmp/a"; then
        echo "FAIL: $rel ($kind $*): the old binary gave no figures"; bad=1
    fi
    if ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "FAIL: $rel ($kind $*): the new binary on the new file differs"; bad=1
    fi
    if ! cmp -s "$tmp/a" "$tmp/c"; then
        echo "FAIL: $rel ($kind $*): the new binary on the old file differs"; bad=1
    fi
    if [ -s "$tmp/b.err" ]; then
        echo "FAIL: $rel ($kind $*): stderr on the new file:"; sed 's/^/    /' "$tmp/b.err"; bad=1
    fi
    if [ -s "$tmp/c.err" ]; then
        warnings=$((warnings + $(wc -l <"$tmp/c.err")))
        sed 's/^/    old file: /' "$tmp/c.err"
    fi
}

cd "$old_tree" || exit 2
for rel in $(find examples/scenarios -name '*.scn' | sort); do
    files=$((files + 1))
    for p in fair shortfall debt wrr; do
        compare sim "$rel" --policy "$p"
    done
done
for rel in $(find examples/popsim -name '*.pop' | sort); do
    files=$((files + 1))
    compare popsim "$rel"
    compare popsim "$rel" --model full --days 5
done
echo "old: $old_bin, new: $new_bin"
echo "$files scenario files, $runs comparisons, $warnings deprecation warnings on the old files"
[ $bad -eq 0 ] || exit 1
echo "ok: byte-identical"
