#!/usr/bin/env bash
# Preferences set for an account on the project (issue 36: the web site or
# an account manager's am_set_info) reach the volsched client too: after
# its next scheduler RPC its global_prefs.xml holds them, and it starts one
# task at a time on two CPUs with max_ncpus_pct 50 where it ran two before.
# (That prefs older than the client's are not sent: test_accounts_rpc.sh.)
set -uo pipefail
VSC_WORK_PREFIX=vs_client_pprefs
VSC_NCPUS=2
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

vsc_project pp || fail "could not create the project"
# Long enough to be seen running (primes over 4e6 numbers: a few seconds each).
vsc_jobs primes 12 1e10 "1000000000 1004000000" || fail "create_work"
vsc_serve || fail "server did not start"
vsc_client_dir "$WORK/c"
vsc_run "$WORK/c" || fail "client did not start"
vsc_bcmd --project_attach "$URL" "$AUTH" >/dev/null || fail "attach"

ok=0
for _ in $(seq 1 60); do [ "$(vsc_running)" -ge 2 ] && { ok=1; break; }; sleep 1; done
[ "$ok" = 1 ] || fail "the client never ran 2 tasks on 2 CPUs"

now=$(date +%s)
reply=$(curl -sfG "${URL}am_set_info.php" -d account_key="$AUTH" --data-urlencode \
    "global_prefs=<global_preferences>
<mod_time>$now</mod_time>
<max_ncpus_pct>50</max_ncpus_pct>
</global_preferences>")
grep -q '<success/>' <<<"$reply" || fail "am_set_info: $reply"
vsc_bcmd --project "$URL" update >/dev/null
ok=0
for _ in $(seq 1 30); do
    grep -q "<mod_time>$now</mod_time>" "$WORK/c/global_prefs.xml" 2>/dev/null && { ok=1; break; }
    sleep 1
done
[ "$ok" = 1 ] || fail "the project's prefs did not reach global_prefs.xml: $(cat "$WORK/c/global_prefs.xml")"
# The volsched client lets the tasks running finish (it does not preempt
# one when the CPUs shrink, as BOINC's does); then it starts one at a time.
ok=0
for _ in $(seq 1 150); do [ "$(vsc_running)" -le 1 ] && { ok=1; break; }; sleep 1; done
[ "$ok" = 1 ] || fail "still 2 tasks running 150 s after max_ncpus_pct 50"
m=$(vsc_max_running 20)
[ "$m" -le 1 ] || fail "$m tasks ran at once with max_ncpus_pct 50 of 2 CPUs"
[ "$(vsc_store "select count(*) from result where server_state=4 or outcome=1")" -ge 3 ] ||
    fail "no work left to see the limit on"
vsc_stop
echo "ok: the account's prefs reached the volsched client's global_prefs.xml and held it to 1 task"
