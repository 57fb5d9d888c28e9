#!/usr/bin/env bash
# Every command that reads a project's configuration reads it through the one
# reader (src/config/): an unknown tag in config.xml or config_aux.xml is the
# same "FILE:LINE: unknown tag <x> ignored" warning from app add, user add,
# team add, create_work, status and serve, and a bad value is the same
# "FILE:LINE: reason" error from each of them, with nothing done.
set -uo pipefail
: "${VOLSCHED:?set VOLSCHED to the volsched binary}"
V=$VOLSCHED
T=$(mktemp -d /tmp/vs_cfgcmd_XXXXXX)
SPID=""
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then kill -TERM "$SPID"; wait "$SPID"; fi
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
P=$T/proj
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
"$V" init "$P" --name "Cfg" --url "http://127.0.0.1:$PORT/c/" >/dev/null || fail "init"
cp "$P/config.xml" "$T/good.xml"
cp "$P/config_aux.xml" "$T/good_aux.xml"
cp /bin/true "$T/prog"
printf 'hello\n' > "$T/in.txt"
"$V" app add --project "$P" --name upper --platform x86_64-pc-linux-gnu --version 101 "$T/prog" \
    >/dev/null || fail "app add on the init project"

VER=200
# Each command line, run from the project with its stdout and stderr kept.
run_all() { # runs every command; its exit status in $T/<n>.rc, its line in $T/<n>.cmd
    local i=0
    VER=$((VER + 1))
    while IFS= read -r line; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        (cd "$P" && eval "$V $line") >"$T/$i.out" 2>"$T/$i.err"
        echo $? >"$T/$i.rc"
        echo "$line" >"$T/$i.cmd"
    done <<'EOF'
app add --name upper --platform x86_64-pc-linux-gnu --version $VER "$T/prog"
user add --name "u$VER"
team add --name "t$VER"
create_work --appname upper "$T/in.txt"
status
status --json
EOF
    N=$i
}

# An unknown tag in each file: every command succeeds and warns, with file
# and line, about exactly those two tags.
sed 's|<config>|<config>\n<dbname>boinc</dbname>|' "$T/good.xml" > "$P/config.xml"
sed 's|</config>|<extra_section/>\n</config>|' "$T/good_aux.xml" > "$P/config_aux.xml"
L1=$(grep -n '<dbname>' "$P/config.xml" | cut -d: -f1)
L2=$(grep -n '<extra_section/>' "$P/config_aux.xml" | cut -d: -f1)
run_all
for i in $(seq 1 "$N"); do
    c=$(cat "$T/$i.cmd")
    [ "$(cat "$T/$i.rc")" = 0 ] || { cat "$T/$i.err" >&2; fail "'$c' exited $(cat "$T/$i.rc") with an unknown tag"; }
    grep -q "WARN $P/config.xml:$L1: unknown tag <dbname> ignored" "$T/$i.err" \
        || { cat "$T/$i.err" >&2; fail "'$c': no config.xml:$L1 warning"; }
    grep -q "WARN $P/config_aux.xml:$L2: unknown tag <extra_section> ignored" "$T/$i.err" \
        || { cat "$T/$i.err" >&2; fail "'$c': no config_aux.xml:$L2 warning"; }
    [ "$(grep -c 'unknown tag' "$T/$i.err")" = 2 ] || { cat "$T/$i.err" >&2; fail "'$c': other warnings"; }
done
"$V" serve --project "$P" --listen "127.0.0.1:$PORT" --foreground > "$T/serve.log" 2>&1 &
SPID=$!
for _ in $(seq 1 100); do grep -q "serving" "$T/serve.log" && break; sleep 0.1; done
grep -q "serving" "$T/serve.log" || { cat "$T/serve.log" >&2; fail "serve did not start"; }
grep -q "WARN $P/config.xml:$L1: unknown tag <dbname> ignored" "$T/serve.log" || fail "serve: no config.xml warning"
grep -q "WARN $P/config_aux.xml:$L2: unknown tag <extra_section> ignored" "$T/serve.log" || fail "serve: no config_aux.xml warning"
kill -TERM "$SPID"; wait "$SPID"; SPID=""

# The configuration init writes: no command warns at all.
cp "$T/good.xml" "$P/config.xml"
cp "$T/good_aux.xml" "$P/config_aux.xml"
run_all
for i in $(seq 1 "$N"); do
    [ "$(cat "$T/$i.rc")" = 0 ] || fail "'$(cat "$T/$i.cmd")' failed on the init config"
    ! grep -q "WARN" "$T/$i.err" || { cat "$T/$i.err" >&2; fail "'$(cat "$T/$i.cmd")' warned on the init config"; }
done

# A bad value in config.xml, then in config_aux.xml: every command stops with
# the same file:line: reason (and a failure status), serve with exit 2.
WUS=$(sqlite3 "$P/volsched.db" 'SELECT count(*) FROM workunit')
check_bad() { # $1: file; $2: the message after "FILE:LINE: "; $3: line
    run_all
    for i in $(seq 1 "$N"); do
        c=$(cat "$T/$i.cmd")
        [ "$(cat "$T/$i.rc")" != 0 ] || fail "'$c' accepted a bad $1"
        grep -qF "volsched ${c%% --*}: $P/$1:$3: $2" "$T/$i.err" \
            || { cat "$T/$i.err" >&2; fail "'$c': no '$1:$3: $2'"; }
        ! grep -q "bad configuration" "$T/$i.err" || fail "'$c': the old message"
    done
    "$V" serve --project "$P" --listen "127.0.0.1:$PORT" > "$T/out" 2>&1
    [ $? = 2 ] || fail "serve with a bad $1: not exit 2"
    grep -qF "volsched serve: $P/$1:$3: $2" "$T/out" || { cat "$T/out" >&2; fail "serve: no '$1:$3: $2'"; }
}
sed 's|<config>|<config>\n\n<daily_result_quota>-3</daily_result_quota>|' "$T/good.xml" > "$P/config.xml"
check_bad config.xml "<daily_result_quota> must not be negative (-3)" \
    "$(grep -n '<daily_result_quota>-3' "$P/config.xml" | cut -d: -f1)"
cp "$T/good.xml" "$P/config.xml"
printf '<config>\n<max_jobs_in_progress>\n<project>\n<cpu_limit><jobs>x</jobs></cpu_limit>\n</project>\n</max_jobs_in_progress>\n</config>\n' > "$P/config_aux.xml"
check_bad config_aux.xml "<jobs> must be an integer, not 'x'" 4
[ "$(sqlite3 "$P/volsched.db" 'SELECT count(*) FROM workunit')" = "$WUS" ] || fail "a job was created with a bad config"
echo "config commands: ok"
