#!/usr/bin/env bash
# How the admin subcommands (init, app add, user add, team add, status) read
# their options, all through one parser (src/cli/cli_util.c): -h, -help and
# --help print usage to stdout and exit 0; an unknown option or one missing
# its argument prints "unknown or incomplete option 'ARG'" and usage to
# stderr and exits 2; long options also work with one dash and as unique
# prefixes; --plan-class and --plan_class are one option, and getopt_long_only
# finds any prefix of two names ambiguous ("--plan", "--pl"); a bad number is
# refused as soon as it is read, before a later --help.
set -euo pipefail
: "${VOLSCHED:?set VOLSCHED to the volsched binary}"
V=$VOLSCHED
T=$(mktemp -d /tmp/vs_cliopt_XXXXXX)
trap 'rm -rf "$T"' EXIT
P=$T/proj
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect STATUS CMD...: runs CMD, checks its exit status; output in $T/out, $T/err.
expect() {
    local want=$1; shift
    set +e; "$@" >"$T/out" 2>"$T/err"; local got=$?; set -e
    [ "$got" = "$want" ] || { cat "$T/err" >&2; fail "'$*' exited $got, want $want"; }
}
has() { grep -qF -- "$2" "$T/$1" || { cat "$T/$1" >&2; fail "$1 lacks '$2'"; }; }
empty() { [ ! -s "$T/$1" ] || { cat "$T/$1" >&2; fail "$1 not empty"; }; }

for c in init "app add" "user add" "team add" status; do
    for h in -h -help --help; do
        # shellcheck disable=SC2086
        expect 0 $V $c $h
        has out "usage: volsched ${c}"
        empty err
    done
    # shellcheck disable=SC2086
    expect 2 $V $c --no-such-option
    has err "volsched ${c}: unknown or incomplete option '--no-such-option'"
    has err "usage: volsched ${c}"
    empty out
done
# an option without its argument
expect 2 $V status --project
has err "volsched status: unknown or incomplete option '--project'"
expect 2 $V user add --name
has err "volsched user add: unknown or incomplete option '--name'"
# the groups' own entry: no subcommand, help, unknown subcommand
for g in app user team; do
    expect 2 $V $g
    has err "usage: volsched $g add"
    expect 0 $V $g --help
    has out "usage: volsched $g add"
    expect 2 $V $g remove
    if [ "$g" = user ]; then
        has err "volsched user: unknown subcommand 'remove' (known: add, set, show)"
    else
        has err "volsched $g: unknown subcommand 'remove' (known: add)"
    fi
done

# one dash, prefixes
expect 0 $V init "$P" -name Opt --ur http://127.0.0.1:18081/opt/
grep -q '<master_url>http://127.0.0.1:18081/opt/</master_url>' "$P/config.xml" || fail "--ur"
expect 0 $V team add -proj "$P" --nam red --js
has out '{"id":1,"name":"red"}'
expect 0 $V user add --proj "$P" -name ann --te red -json
grep -Eq '^\{"id":1,"authenticator":"[0-9a-f]{32}"\}$' "$T/out" || fail "user add --json: $(cat "$T/out")"
expect 0 $V status -p "$P" -j
has out '"project"'

# app add: aliases, ambiguity, numbers checked in order
cp /bin/true "$T/prog"
A=(app add --project "$P" --name a --platform x86_64-pc-linux-gnu)
expect 0 $V "${A[@]}" --version 101 --plan-class gpu "$T/prog"
has out "app a version 101 (x86_64-pc-linux-gnu, gpu)"
expect 0 $V "${A[@]}" --version 102 --plan_class gpu2 "$T/prog"
has out "(x86_64-pc-linux-gnu, gpu2)"
for amb in --pl --plan; do
    expect 2 $V "${A[@]}" --version 103 $amb gpu "$T/prog"
    has err "unknown or incomplete option '$amb'"
done
expect 2 $V "${A[@]}" --version 103 --avg-ncpus 0 "$T/prog"
has err "volsched app add: --avg-ncpus: 0 is below 0.0001"
expect 2 $V "${A[@]}" --avg-ncpus x --help
has err "volsched app add: --avg-ncpus: 'x' is not a number"
empty out
expect 0 $V "${A[@]}" --version 104 --avg 2 "$T/prog"
[ "$(sqlite3 "$P/volsched.db" 'SELECT avg_ncpus FROM app_version WHERE version_num=104')" = 2.0 ] \
    || fail "--avg 2 not stored"

# serve --mod N I (BOINC's sharding): refused before anything starts unless
# N >= 2 and 0 <= I < N, and documented in --help.
for bad in "3 3" "3 -1" "1 0" "x 1" "3"; do
    # shellcheck disable=SC2086
    expect 2 $V serve --project "$P" --mod $bad
    has err "volsched serve: --mod takes two numbers N I"
done
expect 0 $V serve --help
has out "--mod N I"
has out "id % N == I"
echo "ok"
