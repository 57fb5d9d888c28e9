#!/usr/bin/env bash
# `volsched serve` reads config.xml and config_aux.xml through the one config
# reader at start: a bad value or malformed file stops it with file:line and
# the reason (exit 2, nothing served); an unknown tag is only a warning; the
# config `volsched init` writes reads without any warning; a standard BOINC
# config.xml gives one "BOINC option not supported" line and nothing else.
set -uo pipefail
: "${VOLSCHED:?VOLSCHED must name the built binary}"
fail() { echo "FAIL: $*"; [ -f "${W:-}/serve.log" ] && tail -20 "$W/serve.log"; exit 1; }
W=$(mktemp -d /tmp/vs_serve_cfg.XXXXXX)
SPID=""
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then kill -TERM "$SPID"; wait "$SPID"; fi
    rm -rf "$W"
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
"$VOLSCHED" init "$W/p" --name "Cfg Test" --url "http://127.0.0.1:$PORT/t/" >/dev/null || fail "init"
cp "$W/p/config.xml" "$W/good.xml"

# A negative limit on line 4: file, line, reason; exit 2.
sed 's|<config>|<config>\n\n<max_wus_in_progress>-1</max_wus_in_progress>|' "$W/good.xml" > "$W/p/config.xml"
LINE=$(grep -n '<max_wus_in_progress>-1' "$W/p/config.xml" | cut -d: -f1)
"$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" > "$W/out" 2>&1
RC=$?
[ $RC -eq 2 ] || fail "bad config.xml: exit $RC, want 2"
grep -q "config.xml:$LINE: <max_wus_in_progress> must not be negative (-1)" "$W/out" || { cat "$W/out"; fail "no file:line:reason"; }

# Malformed XML.
printf '<boinc>\n<config>\n<long_name>x</long_name>\n</boinc>\n' > "$W/p/config.xml"
"$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" > "$W/out" 2>&1
[ $? -eq 2 ] || fail "malformed config.xml not exit 2"
grep -q "config.xml:[0-9]*: malformed XML" "$W/out" || { cat "$W/out"; fail "no malformed XML message"; }

# A bad config_aux.xml stops it too.
cp "$W/good.xml" "$W/p/config.xml"
printf '<config>\n<max_jobs_in_progress>\n<app>\n<cpu_limit><jobs>1</jobs></cpu_limit>\n</app>\n</max_jobs_in_progress>\n</config>\n' > "$W/p/config_aux.xml"
"$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" > "$W/out" 2>&1
[ $? -eq 2 ] || fail "bad config_aux.xml not exit 2"
grep -q "config_aux.xml:3: <app> needs <app_name>" "$W/out" || { cat "$W/out"; fail "no config_aux message"; }
rm "$W/p/config_aux.xml"

# The init config plus an unknown tag: it starts, and warns about that tag only.
sed 's|<config>|<config>\n<dbname>boinc</dbname>|' "$W/good.xml" > "$W/p/config.xml"
"$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" --foreground > "$W/serve.log" 2>&1 &
SPID=$!
for _ in $(seq 1 100); do grep -q "serving" "$W/serve.log" && break; sleep 0.1; done
grep -q "serving" "$W/serve.log" || fail "did not start"
LINE=$(grep -n '<dbname>' "$W/p/config.xml" | cut -d: -f1)
grep -q "config.xml:$LINE: unknown tag <dbname> ignored" "$W/serve.log" || fail "no warning for the unknown tag"
[ "$(grep -c 'unknown tag' "$W/serve.log")" -eq 1 ] || fail "init's own tags warned about"
kill -TERM "$SPID"; wait "$SPID"; SPID=""

# A standard BOINC config.xml (make_project's tags, paths and URLs made
# this project's): no unknown tag, ONE line naming the unsupported options.
sed -e "s|/home/boincadm/projects/test|$W/p|g" -e "s|http://127.0.0.1/test_cgi/|http://127.0.0.1:$PORT/t/|" \
    -e "s|http://127.0.0.1/test/|http://127.0.0.1:$PORT/t/|" \
    "${VS_SOURCE_DIR:-$(dirname "$0")/../..}/tests/data/boinc/config_make_project.xml" > "$W/p/config.xml"
"$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" --foreground > "$W/boinc.log" 2>&1 &
SPID=$!
for _ in $(seq 1 100); do grep -q "serving" "$W/boinc.log" && break; sleep 0.1; done
grep -q "serving" "$W/boinc.log" || { cat "$W/boinc.log" >&2; fail "did not start on a BOINC config.xml"; }
! grep -q 'unknown tag' "$W/boinc.log" || { cat "$W/boinc.log" >&2; fail "unknown tags in a BOINC config.xml"; }
[ "$(grep -c 'BOINC option not supported' "$W/boinc.log")" -eq 1 ] || { cat "$W/boinc.log" >&2; fail "not one unsupported-options line"; }
grep -q 'BOINC option not supported, ignored: .*<nowork_skip> (line 50)' "$W/boinc.log" || fail "nowork_skip not listed"
kill -TERM "$SPID"; wait "$SPID"; SPID=""
echo "serve config: ok"
