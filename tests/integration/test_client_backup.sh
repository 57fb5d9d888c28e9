#!/usr/bin/env bash
# A backup project: resource share 0 (BOINC's way: <resource_share>0</...>
# in its account file's project preferences) beside a main project of
# share 100, on a 2-CPU client with the default policy (VSC_POLICY:
# another). BOINC's rule, the policy's: a backup project is fetched from,
# and its tasks run, only when the other projects cannot keep a CPU busy.
#  - boinccmd --get_project_status shows the share 0, and the policy's
#    answer (`volsched client explain --json`) gives it a share fraction of 0;
#  - while the main project has work for both CPUs (MAIN jobs of ~8 s, all
#    its server has), the backup project asks for no work and runs nothing:
#    in the client's log, nothing of it from when the main project first
#    runs on both CPUs (and the backup project's first RPC, a new
#    project's 1 s request, BOINC's too) to the start of the main
#    project's last task;
#  - once the main project has none, the backup project gets work and its
#    tasks finish (at least 2);
#  - the 0 is kept in client_state.xml: with the share gone from the account
#    file, the restarted client still has 0;
#  - a negative or non-numeric share in the account file is refused with a
#    message, the kept share stays.
# Run time: ~60 s.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_backup
VSC_NCPUS=2
MAIN=${MAIN:-8}
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

C="$WORK/client"
vsc_client_dir "$C"
# proj NAME SHARE NJOBS "INPUT"
proj() {
    vsc_project "$1" || fail "could not create project $1"
    sed -i "s|<host_in_progress_per_cpu>[0-9]*</host_in_progress_per_cpu>|<host_in_progress_per_cpu>0</host_in_progress_per_cpu>|; s|<daily_result_quota>[0-9]*</daily_result_quota>|<daily_result_quota>0</daily_result_quota>|" "$WORK/$1/config.xml"
    # job names differ between the projects (explain wants them unique)
    VSC_JOB_TAG="_$1" vsc_jobs boincapp "$3" 1e9 "$4" 1e30 3600 || fail "create_work $1"
    vsc_serve || fail "server $1 did not start"
    "$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach $1"
    ACCT="$C/account_127.0.0.1_${PORT}_$1.xml"
    sed -i "s|</account>|<project_preferences><resource_share>$2</resource_share></project_preferences></account>|" "$ACCT"
}
# ~8 s and ~4 s of wall time each ("sleep": whatever the machine's load)
proj main 100 "$MAIN" "16 500 sleep"
proj backup 0 10 "8 500 sleep"
URL_BACKUP=$URL ACCT_BACKUP=$ACCT

vsc_run "$C" || fail "client did not start"
vsc_bcmd --get_project_status | awk -v u="$URL_BACKUP" '/master URL: /{m=($3==u)} m && /resource share: 0.0*$/{f=1} END{exit !f}' \
    || fail "boinccmd --get_project_status does not show the backup project's share 0"
"$VOLSCHED" client --dir "$C" explain --json > "$WORK/explain.json" 2>/dev/null ||
    fail "client explain --json"
python3 - "$WORK/explain.json" "$URL_BACKUP" <<'PY' || fail "the policy does not see the backup project's share 0"
import json, sys
d = json.load(open(sys.argv[1]))
frs = d["projects"][sys.argv[2]]["frs"]
print("policy: the backup project's fraction of the resource share %g" % frs)
sys.exit(0 if frs == 0 else 1)
PY

done_backup() { [ "$(grep -c '\[backup\] Computation for task .* finished' "$C/client.log")" -ge 2 ]; }
for _ in $(seq 1 90); do done_backup && break; sleep 1; done
done_backup || fail "the backup project's tasks did not finish after the main project ran out"
kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
vsc_stop

# The log in order: the backup project's events against the main project's.
python3 - "$C/client.log" "$MAIN" <<'PY' || fail "the backup project got work or CPU time while the main project kept the CPUs busy"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
nmain = int(sys.argv[2])
ev = []
for i, l in enumerate(lines):
    m = re.search(r"\[(main|backup)\] (.*)", l)
    if m:
        ev.append((i, m.group(1), m.group(2)))
starts = [i for i, p, t in ev if p == "main" and t.startswith("Starting task")]
assert len(starts) == nmain, "main started %d tasks, not %d" % (len(starts), nmain)
last_main = starts[-1]
# from when the main project first runs on both CPUs (before, its first
# jobs may still be downloading: a CPU idle then is one for the backup)
busy = starts[1]
first_rpc = next(i for i, p, t in ev if p == "backup" and t.startswith("Scheduler request completed"))
assert first_rpc < last_main, "the backup project's first RPC came after the main project's work"
bad = [lines[i] for i, p, t in ev
       if p == "backup" and max(first_rpc, busy) < i < last_main
       and (t.startswith("Requesting new tasks") or t.startswith("Starting task"))]
for b in bad:
    print("too early:", b)
later = [i for i, p, t in ev if p == "backup" and i > last_main and t.startswith("Requesting new tasks")]
print("main busy on both CPUs from log line %d to its last start at %d; backup's first RPC at %d;"
      " backup work requests after: %d" % (busy, last_main, first_rpc, len(later)))
assert later, "the backup project never asked for work after the main project ran out"
sys.exit(1 if bad else 0)
PY

# The 0 is the state file's: the account file no longer says it.
sed -i "s|<project_preferences>.*</project_preferences>||" "$ACCT_BACKUP"
grep -q "resource_share" "$ACCT_BACKUP" && fail "could not take the share out of the account file"
share=$("$VOLSCHED" client --dir "$C" status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print({p["master_url"]: p["resource_share"] for p in d["projects"]}[sys.argv[1]])' "$URL_BACKUP") ||
    fail "client status --json"
[ "$share" = 0 ] || fail "the state file did not keep the share 0 (got $share)"

# A negative and a non-numeric share are refused, with a message; 0 stays.
for bad in -5 lots; do
    sed -i "s|</account>|<project_preferences><resource_share>$bad</resource_share></project_preferences></account>|" "$ACCT_BACKUP"
    vsc_run "$C" || fail "client did not start"
    sleep 1
    vsc_bcmd --get_messages 0 | qgrep "Ignoring resource share '$bad'" || fail "no message for the share '$bad'"
    vsc_bcmd --get_project_status | awk -v u="$URL_BACKUP" '/master URL: /{m=($3==u)} m && /resource share: 0.0*$/{f=1} END{exit !f}' \
        || fail "the share '$bad' was not refused"
    vsc_stop
    sed -i "s|<project_preferences>.*</project_preferences>||" "$ACCT_BACKUP"
done
echo "PASS: backup project (share 0) fetched from and run only when the main project left a CPU idle; 0 kept; -5 and 'lots' refused"
