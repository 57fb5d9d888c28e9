#!/usr/bin/env bash
# The volsched client obeys the <venue> section of the global preferences
# for its host's venue (issue 36's follow-up; BOINC's GLOBAL_PREFS::parse
# with the host venue): the account's prefs allow 100% of the CPUs at the
# top level and 50% in <venue name="work">; the host's venue is set to
# work (am_set_host_info). After its next scheduler RPC the client says it
# uses the work section and runs one task at a time on two CPUs; when the
# venue is taken away again (a reply with a new <host_venue> and no prefs)
# it goes back to the top level and runs two.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_venue
VSC_NCPUS=2
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

vsc_project vp || fail "could not create the project"
vsc_jobs primes 14 1e10 "1000000000 1004000000" || fail "create_work"
vsc_serve || fail "server did not start"
vsc_client_dir "$WORK/c"
vsc_run "$WORK/c" || fail "client did not start"
vsc_bcmd --project_attach "$URL" "$AUTH" >/dev/null || fail "attach"

wait_running() { # wait_running OP N SECONDS
    local _
    for _ in $(seq 1 "$3"); do [ "$(vsc_running)" "$1" "$2" ] && return 0; sleep 1; done
    return 1
}
wait_running -ge 2 60 || fail "the client never ran 2 tasks on 2 CPUs"

hostid=$(vsc_store "select id from host limit 1")
[ -n "$hostid" ] || fail "no host row"
curl -sfG "${URL}am_set_host_info.php" -d account_key="$AUTH" -d hostid="$hostid" -d venue=work |
    grep -q '<success/>' || fail "am_set_host_info"
now=$(date +%s)
reply=$(curl -sfG "${URL}am_set_info.php" -d account_key="$AUTH" --data-urlencode \
    "global_prefs=<global_preferences>
<mod_time>$now</mod_time>
<max_ncpus_pct>100</max_ncpus_pct>
<venue name=\"home\"><max_ncpus_pct>100</max_ncpus_pct></venue>
<venue name=\"work\">
<max_ncpus_pct>50</max_ncpus_pct>
</venue>
</global_preferences>")
grep -q '<success/>' <<<"$reply" || fail "am_set_info: $reply"
vsc_bcmd --project "$URL" update >/dev/null
ok=0
for _ in $(seq 1 30); do
    grep -q "<mod_time>$now</mod_time>" "$WORK/c/global_prefs.xml" 2>/dev/null && { ok=1; break; }
    sleep 1
done
[ "$ok" = 1 ] || fail "the project's prefs did not reach global_prefs.xml"
vsc_bcmd --get_messages 0 > "$WORK/msgs" 2>/dev/null
grep -q 'using the preferences of venue "work"' "$WORK/msgs" ||
    fail "the client does not say it uses the work section: $(tail -5 "$WORK/msgs")"
grep -q '<host_venue>work</host_venue>' "$WORK/c/client_state.xml" ||
    fail "the host venue is not in client_state.xml"
# Running tasks finish (no preemption when the CPUs shrink); then one at a time.
wait_running -le 1 150 || fail "still 2 tasks running 150 s after the work section's 50%"
m=$(vsc_max_running 15)
[ "$m" -le 1 ] || fail "$m tasks ran at once with the work section's max_ncpus_pct 50 of 2 CPUs"

# The venue taken away: the top level (100%) applies again.
curl -sfG "${URL}am_set_host_info.php" -d account_key="$AUTH" -d hostid="$hostid" -d venue= |
    grep -q '<success/>' || fail "am_set_host_info (no venue)"
vsc_bcmd --project "$URL" update >/dev/null
wait_running -ge 2 90 || fail "the client did not go back to 2 tasks without a venue"
[ "$(vsc_store "select count(*) from result where server_state=2")" -ge 1 ] ||
    fail "no work left to see the limits on"
vsc_stop
echo "ok: the work venue's section held the client to 1 task, the top level to 2"
