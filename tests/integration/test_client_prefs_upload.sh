#!/usr/bin/env bash
# A client's newer global preferences become the account's (issue 36's
# follow-up; BOINC's handle_global_prefs), with Debian's real boinc-client:
#  - the account's prefs (am_set_info) reach the client, which learns the
#    project's <email_hash> from the reply;
#  - the client's global_prefs.xml is given a newer mod_time and another
#    max_ncpus_pct (as when another project of the same account sent newer
#    ones): at its next scheduler RPC the server stores them as the
#    account's (and logs it), and am_get_info answers them;
#  - preferences older than the account's are not stored: the reply carries
#    the account's, which replace the client's global_prefs.xml.
set -uo pipefail
qgrep() { grep "$@" >/dev/null; }
RC_WORK_PREFIX=vs_client_prefs_upload
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"

demo_make_project 2 1000000 || fail "could not create the project"
demo_serve || fail "server did not start"
db="$WORK/project/volsched.db"
EMAIL=pat@example.org
H=$(printf '%s' "pat-pw-123$EMAIL" | md5sum | cut -c1-32)
KEY=$(curl -sfG "${URL}create_account.php" -d email_addr="$EMAIL" -d passwd_hash="$H" \
    -d user_name=Pat | sed -n 's:.*<authenticator>\(.*\)</authenticator>.*:\1:p')
[ -n "$KEY" ] || fail "create_account"
uid=$(sqlite3 "$db" "select id from user where authenticator='$KEY'")
t1=$(( $(date +%s) - 1000 ))
curl -sfG "${URL}am_set_info.php" -d account_key="$KEY" --data-urlencode "global_prefs=<global_preferences>
<mod_time>$t1</mod_time>
<max_ncpus_pct>50</max_ncpus_pct>
</global_preferences>" | qgrep '<success/>' || fail "am_set_info"

DEMO_NO_ATTACH=1 demo_client_start || fail "client did not start"
demo_bcmd --project_attach "$URL" "$KEY" >/dev/null 2>&1 || fail "project_attach"
wait_file() { # wait_file FILE PATTERN WHAT
    local _
    for _ in $(seq 1 60); do qgrep -F "$2" "$1" 2>/dev/null && return 0; sleep 1; done
    fail "$3: $(cat "$1" 2>/dev/null | head -30)"
}
wait_file "$BOINC_DIR/global_prefs.xml" "<mod_time>$t1</mod_time>" "the account's prefs did not reach the client"
want_hash=$(printf '%s' "$EMAIL" | md5sum | cut -c1-32)
wait_file "$BOINC_DIR/client_state.xml" "<email_hash>$want_hash</email_hash>" "the client has not the project's email_hash"

# ---- newer on the client: stored as the account's ----------------------
demo_client_stop
t2=$(date +%s)
sed -i "s:<mod_time>$t1</mod_time>:<mod_time>$t2</mod_time>:;s:<max_ncpus_pct>50</max_ncpus_pct>:<max_ncpus_pct>25</max_ncpus_pct>:" \
    "$BOINC_DIR/global_prefs.xml"
qgrep '<max_ncpus_pct>25</max_ncpus_pct>' "$BOINC_DIR/global_prefs.xml" || fail "edit global_prefs.xml"
DEMO_NO_ATTACH=1 demo_client_start || fail "client did not restart"
demo_bcmd --project "$URL" update >/dev/null 2>&1
ok=0
for _ in $(seq 1 60); do
    gp=$(sqlite3 "$db" "select global_prefs from user where id = $uid")
    if qgrep -F "<mod_time>$t2" <<<"$gp" && qgrep -F '<max_ncpus_pct>25</max_ncpus_pct>' <<<"$gp"; then
        ok=1
        break
    fi
    sleep 1
done
[ "$ok" = 1 ] || fail "the client's newer prefs were not stored as the account's: $gp"
qgrep "stored as the account's" "$WORK/serve.log" || fail "no log line for the stored prefs"
curl -sfG "${URL}am_get_info.php" -d account_key="$KEY" | qgrep -F '&lt;max_ncpus_pct&gt;25' ||
    curl -sfG "${URL}am_get_info.php" -d account_key="$KEY" | qgrep -F '<max_ncpus_pct>25' ||
    fail "am_get_info does not answer the stored prefs"

# ---- older on the client: not stored, the account's sent back -----------
demo_client_stop
t0=$(( t1 - 500 ))
sed -i "s:<mod_time>[0-9.]*</mod_time>:<mod_time>$t0</mod_time>:;s:<max_ncpus_pct>25</max_ncpus_pct>:<max_ncpus_pct>10</max_ncpus_pct>:" \
    "$BOINC_DIR/global_prefs.xml"
qgrep '<max_ncpus_pct>10</max_ncpus_pct>' "$BOINC_DIR/global_prefs.xml" || fail "edit global_prefs.xml (older)"
DEMO_NO_ATTACH=1 demo_client_start || fail "client did not restart (2)"
demo_bcmd --project "$URL" update >/dev/null 2>&1
wait_file "$BOINC_DIR/global_prefs.xml" '<max_ncpus_pct>25</max_ncpus_pct>' \
    "the account's newer prefs did not replace the client's older ones"
gp=$(sqlite3 "$db" "select global_prefs from user where id = $uid")
qgrep -F '<max_ncpus_pct>10<' <<<"$gp" && fail "older prefs were stored: $gp"
qgrep -F "<mod_time>$t2" <<<"$gp" || fail "the account's prefs changed: $gp"
demo_stop_all
echo "PASS"
