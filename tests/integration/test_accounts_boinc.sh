#!/usr/bin/env bash
# Volunteers join on their own (issue 36), with Debian's real boinc-client
# and boinccmd against `volsched serve`:
#  - boinccmd --create_account returns an account key (the client's own
#    create_account / create_account_poll GUI RPCs and web RPC), the store
#    keeps a salted PBKDF2 of the password, never the client's md5;
#  - --lookup_account with the right password returns the same key; a wrong
#    password, a taken e-mail, an unknown e-mail and a bad e-mail give the
#    client's own messages for BOINC's error numbers;
#  - --project_attach with the new key: the client computes jobs and
#    reports them, recorded for the new account;
#  - global preferences set by an account manager (am_set_info, with a
#    "work" venue at 50% of the CPUs) and the host's venue (am_set_host_info)
#    reach the client's global_prefs.xml at its next scheduler RPC, and the
#    client obeys them (it says "max CPUs used: 1" and runs one task at once);
#  - with <disable_account_creation> the project says so and the client
#    reports "account creation disabled".
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-480}
RC_WORK_PREFIX=vs_accounts_boinc
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

demo_make_project 8 2000000 || fail "could not create the project"
demo_serve || fail "server did not start"
DEMO_NO_ATTACH=1 DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>' \
    demo_client_start || fail "client did not start"
db="$WORK/project/volsched.db"
EMAIL=New.Volunteer@Example.org
PW='correct horse 9'

# ---- create, look up, refuse --------------------------------------------
out=$(demo_bcmd --create_account "$URL" "$EMAIL" "$PW" "New Volunteer" 2>&1)
KEY=$(printf '%s\n' "$out" | sed -n 's/^account key: \([0-9a-f]*\)$/\1/p')
[ ${#KEY} = 32 ] || fail "create_account gave no account key: $out"
row=$(sqlite3 "$db" "select name, email_addr, passwd_hash from user where authenticator='$KEY'")
case "$row" in
    "New Volunteer|new.volunteer@example.org|pbkdf2-sha256\$"*) ;;
    *) fail "stored account: '$row'" ;;
esac
md5=$(printf '%s%s' "$PW" "new.volunteer@example.org" | md5sum | cut -c1-32)
sqlite3 "$db" "select passwd_hash from user" | qgrep "$md5" && fail "the client's md5 is stored as it is"

out=$(demo_bcmd --lookup_account "$URL" "$EMAIL" "$PW" 2>&1)
grep -qx <<<"$out" "account key: $KEY" || fail "lookup_account: $out"
expect_poll() { # expect_poll MESSAGE boinccmd-args...: the client's own text for the error
    local want=$1
    shift
    local o
    o=$(demo_bcmd "$@" 2>&1)
    grep -qx <<<"$o" "poll status: $want" || fail "boinccmd $1: want '$want', got: $o"
}
expect_poll "bad password" --lookup_account "$URL" "$EMAIL" "wrong password"
expect_poll "database lookup not unique" --create_account "$URL" "$EMAIL" "another pw" "Someone"
expect_poll "no database rows found in lookup/enumerate" --lookup_account "$URL" nobody@example.org x
expect_poll "bad email address" --create_account "$URL" "no-at-sign" "pw123456" "Nobody"
# The same e-mail and password again (a retried wizard) gets the same account.
out=$(demo_bcmd --create_account "$URL" "$EMAIL" "$PW" "New Volunteer" 2>&1)
grep -qx <<<"$out" "account key: $KEY" || fail "create_account again: $out"
[ "$(sqlite3 "$db" "select count(*) from user")" = 2 ] || fail "users: $(sqlite3 "$db" 'select name from user')"

# ---- attach with the new key; jobs computed and reported ----------------
rc_attach_key "$KEY"
uid=$RC_UID
done_n=$RC_DONE
hostid=$(sed -n 's:.*<hostid>\([0-9]*\)</hostid>.*:\1:p' "$BOINC_DIR"/client_state.xml | head -1)
[ "$(sqlite3 "$db" "select userid from host where id=$hostid")" = "$uid" ] || fail "host $hostid is not the new account's"

# ---- preferences from the project reach the client and are obeyed -------
now=$(date +%s)
PREFS="<global_preferences>
<mod_time>$now</mod_time>
<run_if_user_active>1</run_if_user_active>
<max_ncpus_pct>100</max_ncpus_pct>
<venue name=\"work\">
<run_if_user_active>1</run_if_user_active>
<max_ncpus_pct>50</max_ncpus_pct>
<work_buf_min_days>0</work_buf_min_days>
<work_buf_additional_days>0.001</work_buf_additional_days>
</venue>
</global_preferences>"
reply=$(curl -sfG "${URL}am_set_info.php" --data-urlencode "account_key=$KEY" \
    --data-urlencode "global_prefs=$PREFS")
grep -q '<success/>' <<<"$reply" || fail "am_set_info: $reply"
reply=$(curl -sfG "${URL}am_set_host_info.php" -d "account_key=$KEY" -d "hostid=$hostid" -d venue=work)
grep -q '<success/>' <<<"$reply" || fail "am_set_host_info: $reply"
rc_wait_prefs "<mod_time>$now</mod_time>"
grep -q 'venue name="work"' "$BOINC_DIR/global_prefs.xml" || fail "global_prefs.xml lacks the venue"
grep -q '<host_venue>work</host_venue>' "$BOINC_DIR/client_state.xml" || fail "the client did not take the host's venue"
# Obeyed: one task at a time from now on (two CPUs, work available).
sleep 3
max_run=0
for _ in $(seq 1 10); do
    n=$(demo_tasks_running)
    [ "$n" -gt "$max_run" ] && max_run=$n
    sleep 1
done
[ "$max_run" -le 1 ] || fail "$max_run tasks ran at once with max_ncpus_pct 50 of 2 CPUs"

# ---- creation disabled ----------------------------------------------------
demo_serve_stop || fail "server did not stop cleanly"
sed -i 's:</config>:  <disable_account_creation>1</disable_account_creation>\n</config>:' \
    "$WORK/project/config.xml"
demo_serve || fail "server did not restart"
curl -sf "${URL}get_project_config.php" | qgrep '<account_creation_disabled/>' ||
    fail "get_project_config.php does not say creation is disabled"
expect_poll "account creation disabled" --create_account "$URL" other@example.org "pw123456" "Other"
out=$(demo_bcmd --lookup_account "$URL" "$EMAIL" "$PW" 2>&1)
grep -qx <<<"$out" "account key: $KEY" || fail "lookup_account with creation off: $out"
[ "$(sqlite3 "$db" "select count(*) from user")" = 2 ] || fail "an account was made while disabled"

demo_client_stop
demo_serve_stop || fail "server exit status after SIGTERM"
echo "ok: boinccmd made account $uid, its host $hostid reported $done_n results; prefs (venue work, 50% CPUs) reached global_prefs.xml and held the client to 1 task; creation-disabled, bad password, taken and unknown e-mail answered as the client expects"
