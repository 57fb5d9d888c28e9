#!/usr/bin/env bash
# One volunteer, one CPID on every project (issue 39), with Debian's real
# boinc-client: two volsched projects, A and B, each with an account of the
# same e-mail address (A's the older). The client attaches to A, learns
# A's cross_project_id from A's reply, then attaches to B: its requests to
# B carry A's id (BOINC's client sends the oldest CPID of the projects
# with the same e-mail hash), B's scheduler adopts it (BOINC's
# authenticate_user), and B's db_dump then exports the same CPID as A's,
# md5(A's cross_project_id + e-mail), so the statistics sites add the two
# projects' credit up. Before the change B kept its own id and exported
# another CPID.
set -uo pipefail
LIMIT=${LIMIT:-120}
RC_WORK_PREFIX=vs_cpid
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"
EMAIL=volunteer@example.org
B_PID=
finish_both() {
    if [ -n "$B_PID" ] && kill -0 "$B_PID" 2>/dev/null; then
        kill -TERM "$B_PID" 2>/dev/null
        wait "$B_PID" 2>/dev/null
    fi
    finish
}
trap finish_both EXIT

# make_project DIR NAME PORT: a project with one account of $EMAIL and
# some credit (db_dump exports users with credit only).
make_project() {
    "$VOLSCHED" init "$1" --name "$2" --url "http://127.0.0.1:$3/$4/" >/dev/null || return 1
    "$VOLSCHED" user add --project "$1" --name volunteer --email "$EMAIL" || return 1
    sqlite3 "$1/volsched.db" \
        "UPDATE \"user\" SET total_credit = 10, expavg_credit = 1, expavg_time = strftime('%s','now')" ||
        return 1
}
cpid_of() { # the CPID of the one user in DIR's export
    "$VOLSCHED" db_dump --project "$1" >/dev/null || fail "db_dump of $1"
    python3 -c "import gzip,sys,xml.etree.ElementTree as E
print(E.fromstring(gzip.open(sys.argv[1]).read()).find('user').findtext('cpid'))" "$1/stats/user.gz"
}
xpid_of() { sqlite3 -cmd ".timeout 5000" "$1/volsched.db" "SELECT cross_project_id FROM \"user\""; }

PORT=$(demo_free_port)
URL="http://127.0.0.1:$PORT/pa/"
A="$WORK/project" # lib_demo's serve and fail() use $WORK/project
AUTH=$(make_project "$A" "cpid A" "$PORT" pa) || fail "could not create project A"
# A's account is a day older: the client prefers the oldest CPID.
sqlite3 "$A/volsched.db" "UPDATE \"user\" SET create_time = create_time - 86400" || fail "sqlite3"
B_PORT=$(demo_free_port)
B_URL="http://127.0.0.1:$B_PORT/pb/"
B="$WORK/pb"
B_AUTH=$(make_project "$B" "cpid B" "$B_PORT" pb) || fail "could not create project B"

a_xpid=$(xpid_of "$A")
b_xpid=$(xpid_of "$B")
[ ${#a_xpid} = 32 ] && [ ${#b_xpid} = 32 ] && [ "$a_xpid" != "$b_xpid" ] ||
    fail "the projects' accounts should have two different ids: '$a_xpid' '$b_xpid'"
a_cpid=$(cpid_of "$A")
b_before=$(cpid_of "$B")
want=$(printf '%s%s' "$a_xpid" "$EMAIL" | md5sum | cut -d' ' -f1)
[ "$a_cpid" = "$want" ] || fail "A exports CPID $a_cpid, want md5(cross_project_id + email) $want"
[ "$b_before" != "$a_cpid" ] || fail "B exports A's CPID before the client came"

demo_serve || fail "server A did not start"
"$VOLSCHED" serve --project "$B" --listen "127.0.0.1:$B_PORT" --foreground >"$WORK/serve_b.log" 2>&1 &
B_PID=$!
for _ in $(seq 1 50); do curl -sf "$B_URL" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "$B_URL" >/dev/null || fail "server B did not start: $(tail -5 "$WORK/serve_b.log")"

DEMO_NO_ATTACH=1 demo_client_start || fail "client did not start"
# wait_rpc NAME: until the client's log shows a completed RPC to project NAME.
wait_rpc() {
    local t0
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "$LIMIT" ]; do
        grep -F "[$1] Scheduler request completed" "$BOINC_DIR/client.log" >/dev/null && return 0
        sleep 1
    done
    fail "no completed scheduler request to '$1' within ${LIMIT}s"
}
demo_bcmd --project_attach "$URL" "$AUTH" >/dev/null 2>&1 || fail "attach A"
wait_rpc "cpid A"
demo_bcmd --project_attach "$B_URL" "$B_AUTH" >/dev/null 2>&1 || fail "attach B"
wait_rpc "cpid B"

# B's account took A's id from the client's request.
t0=$(date +%s)
while [ "$(xpid_of "$B")" != "$a_xpid" ] && [ $(( $(date +%s) - t0 )) -lt 30 ]; do sleep 1; done
[ "$(xpid_of "$B")" = "$a_xpid" ] ||
    fail "B's account did not adopt A's cross_project_id: $(xpid_of "$B"), A's $a_xpid
$(grep -i cross_project "$WORK/serve_b.log")"
grep -F "adopts the cross_project_id" "$WORK/serve_b.log" >/dev/null ||
    fail "B's log does not say it adopted the id"
[ "$(xpid_of "$A")" = "$a_xpid" ] || fail "A's account changed its id"
b_after=$(cpid_of "$B")
[ "$b_after" = "$a_cpid" ] || fail "B exports CPID $b_after, A exports $a_cpid: not one volunteer"
echo "ok: B's exported CPID went from $b_before to A's $a_cpid"

# The client keeps B's id from B's replies: after another RPC its state
# holds A's id for B too.
n=$(grep -cF "[cpid B] Scheduler request completed" "$BOINC_DIR/client.log")
demo_bcmd --project "$B_URL" update >/dev/null || fail "update B"
for _ in $(seq 1 60); do
    [ "$(grep -cF "[cpid B] Scheduler request completed" "$BOINC_DIR/client.log")" -gt "$n" ] && break
    sleep 1
done
demo_client_stop # writes client_state.xml
python3 - "$BOINC_DIR/client_state.xml" "$B_URL" "$a_xpid" <<'PY' || fail "the client's state for B"
import sys, xml.etree.ElementTree as E
st, url, want = sys.argv[1:]
for p in E.parse(st).getroot().iter("project"):
    if p.findtext("master_url") == url:
        got = p.findtext("cross_project_id")
        print(f"client_state.xml: B's cross_project_id {got}")
        sys.exit(0 if got == want else 1)
sys.exit(1)
PY
echo "ok: one CPID for the volunteer on both projects"
