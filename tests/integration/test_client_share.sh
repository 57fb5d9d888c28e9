#!/usr/bin/env bash
# Two projects with resource shares 2:1 (BOINC's way: <resource_share> in
# each account file's project preferences) on one 2-CPU client, many short
# jobs each, for RUN seconds: the CPU time of each project's finished tasks
# must be within 10% of 2:1 (the wall time the policy accounts is printed
# too). The shares come only from
# the policy (vs_cpolicy_step's debts and work fetch); the client has no
# logic of its own for them.
set -uo pipefail
RUN=${RUN:-150}
VSC_WORK_PREFIX=vs_client_share
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

C="$WORK/client"
vsc_client_dir "$C"
declare -A URLS
for p in alpha beta; do
    vsc_project "$p" || fail "could not create project $p"
    vsc_jobs primes 150 2e9 "1000000000 1001000000" || fail "create_work $p"   # ~1 s CPU each
    vsc_serve || fail "server $p did not start"
    "$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach $p"
    share=$([ "$p" = alpha ] && echo 200 || echo 100)
    acct="$C/account_127.0.0.1_${PORT}_$p.xml"
    sed -i "s|</account>|<project_preferences><resource_share>$share</resource_share></project_preferences></account>|" "$acct"
    URLS[$p]=$URL
done
vsc_run "$C" || fail "client did not start"
sleep "$RUN"
kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
vsc_stop
json=$("$VOLSCHED" client --dir "$C" status --json) || fail "client status --json"
read -r ea eb ca cb < <(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
by = {p["resource_share"]: p for p in d["projects"]}
print(by[200]["elapsed_time"], by[100]["elapsed_time"], by[200]["cpu_time"], by[100]["cpu_time"])')
echo "wall CPU time: share 200 -> ${ea}s, share 100 -> ${eb}s; CPU time ${ca}s / ${cb}s"
python3 - "$ca" "$cb" <<'PY' || fail "the 2:1 share is off by more than 10% (CPU ${ca}s : ${cb}s)"
import sys
a, b = float(sys.argv[1]), float(sys.argv[2])
assert a > 8 and b > 4, "too little work done"
r = a / b
print("ratio %.3f (want 2 +- 10%%)" % r)
sys.exit(0 if abs(r / 2 - 1) <= 0.10 else 1)
PY
echo "ok: shares 2:1 gave CPU time ${ca}s : ${cb}s (wall ${ea}s : ${eb}s)"
