#!/usr/bin/env bash
# The command-line surface: every subcommand answers --help with exit 0 and a
# usage line; an unknown command or option is refused with exit 2.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
fail() { echo "FAIL: $*"; exit 1; }

out=$("$VOLSCHED" --help) || fail "--help exit $?"
grep -q <<<"$out" '^usage: volsched' || fail "--help prints no usage"
cmds=$(echo "$out" | awk '/^Commands:/{on=1; next} on && /^  [a-z_]/{print $1}')
[ -n "$cmds" ] || fail "no commands listed"
for c in $cmds; do
    h=$("$VOLSCHED" "$c" --help) || fail "$c --help exit $?"
    grep -q <<<"$h" "usage: volsched" || fail "$c --help prints no usage"
done
"$VOLSCHED" no-such-command >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown command exit $rc, want 2"
"$VOLSCHED" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no command exit $rc, want 2"
"$VOLSCHED" version --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad option exit $rc, want 2"
echo "ok: $(echo $cmds | wc -w) commands"
