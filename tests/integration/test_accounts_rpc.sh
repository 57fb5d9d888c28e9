#!/usr/bin/env bash
# The account web RPCs (issue 36) with curl, as account managers and hostile
# callers use them, against a real `volsched serve`:
#  - bad input: over-long and non-UTF-8 names, HTML in a name, e-mails
#    without '@', a short password hash, a NUL byte: each a BOINC error
#    with its number and a clear message, and no account made; SQL
#    metacharacters are stored literally;
#  - account managers: am_get_info returns what am_set_info set (name,
#    country, venue, global prefs, team), a bad am_set_info changes nothing,
#    create_team / team_lookup / show_user, am_set_host_info's venue is in
#    the next scheduler reply; a weak key attaches and schedules but cannot
#    read or change the account;
#  - invitation codes: without the right one no account is made;
#    get_project_config.php says so, with min_passwd_length and the terms
#    of use (terms_of_use.txt, escaped);
#  - 10,000 lookup_account calls from one address: all but the burst are
#    refused (429) unchecked and logged, while another address is served.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
[ -n "${VS_TRACE:-}" ] && set -x
W=$(mktemp -d /tmp/vs_accounts_rpc.XXXXXX)
SPID=""
finish() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then kill -TERM "$SPID"; wait "$SPID"; fi
    rm -rf "$W"
}
trap finish EXIT
fail() {
    echo "FAIL: $*"
    tail -20 "$W/serve.log" 2>/dev/null
    exit 1
}
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
URL="http://127.0.0.1:$PORT/acct/"
"$VOLSCHED" init "$W/p" --name "Accounts" --url "$URL" >/dev/null || fail "init"
printf '#!/bin/sh\necho hi > out\n' > "$W/app.sh"
"$VOLSCHED" app add --project "$W/p" --name app --platform x86_64-pc-linux-gnu --version 1 "$W/app.sh" >/dev/null || fail "app add"
db="$W/p/volsched.db"
start_serve() {
    "$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" --foreground > "$W/serve.log" 2>&1 &
    SPID=$!
    for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && return 0; sleep 0.2; done
    fail "server did not start"
}
stop_serve() { kill -TERM "$SPID"; wait "$SPID" || fail "server exit status $?"; SPID=""; }
start_serve

md5() { printf '%s' "$1" | md5sum | cut -c1-32; }
users() { sqlite3 "$db" "select count(*) from user"; }
# rpc NAME ARGS...: the reply of GET ${URL}NAME.php with the curl -d arguments.
rpc() { local n=$1; shift; curl -sG "${URL}$n.php" "$@"; }
want_error() { # want_error NUM MSG-PART reply
    printf '%s' "$3" | qgrep "<error_num>$1</error_num>" || fail "want error $1, got: $3"
    printf '%s' "$3" | qgrep "$2" || fail "want a message with '$2', got: $3"
}

# ---- bad input: a clear error each, nothing stored ----------------------
H=$(md5 "pw123456a@example.org")
n0=$(users)
want_error -1 "user_name: too long" "$(rpc create_account -d email_addr=a@example.org -d passwd_hash="$H" -d user_name="$(printf 'x%.0s' $(seq 300))")"
want_error -188 "too long" "$(rpc create_account -d email_addr=a@example.org -d passwd_hash="$H" -d user_name="$(printf 'y%.0s' $(seq 100))")"
want_error -188 "not valid UTF-8" "$(rpc create_account -d email_addr=a@example.org -d passwd_hash="$H" -d user_name=ab%FF%FEcd)"
want_error -188 "HTML" "$(rpc create_account -d email_addr=a@example.org -d passwd_hash="$H" --data-urlencode 'user_name=<script>x</script>')"
want_error -188 "number" "$(rpc create_account -d email_addr=a@example.org -d passwd_hash="$H" -d user_name=12345)"
want_error -205 "invalid syntax" "$(rpc create_account -d email_addr=no-at.example.org -d passwd_hash="$H" -d user_name=Ann)"
want_error -205 "invalid syntax" "$(rpc create_account --data-urlencode 'email_addr=a"b@example.org' -d passwd_hash="$H" -d user_name=Ann)"
want_error -206 "not 32" "$(rpc create_account -d email_addr=a@example.org -d passwd_hash=abc -d user_name=Ann)"
want_error -1 "NUL" "$(rpc create_account -d email_addr=a@example.org -d passwd_hash="$H" -d user_name=a%00b)"
[ "$(users)" = "$n0" ] || fail "a refused request made an account"
# SQL metacharacters are a name like any other.
SQLNAME="Robert'); DROP TABLE \"user\";--"
reply=$(rpc create_account -d email_addr=A@Example.org -d passwd_hash="$H" --data-urlencode "user_name=$SQLNAME")
KEY=$(printf '%s' "$reply" | sed -n 's:.*<authenticator>\([0-9a-f]*\)</authenticator>.*:\1:p')
[ ${#KEY} = 32 ] || fail "create_account: $reply"
[ "$(sqlite3 "$db" "select name from user where authenticator='$KEY'")" = "$SQLNAME" ] || fail "name not stored literally"
[ "$(users)" = $((n0 + 1)) ] || fail "users: $(users)"
reply=$(rpc lookup_account -d email_addr=a@example.org -d passwd_hash="$H")
grep -q <<<"$reply" "<authenticator>$KEY</authenticator>" || fail "lookup: $reply"
# A name another account has: -137.
want_error -137 "not unique" "$(rpc create_account -d email_addr=b@example.org -d passwd_hash="$H" --data-urlencode "user_name=$SQLNAME")"

# ---- account managers -----------------------------------------------------
PREFS="<global_preferences>
<mod_time>1700000000</mod_time>
<max_ncpus_pct>50</max_ncpus_pct>
</global_preferences>"
reply=$(rpc am_set_info -d account_key="$KEY" --data-urlencode "name=Ann & Bob" -d country=Germany \
    -d venue=home --data-urlencode "global_prefs=$PREFS")
grep -q '<am_set_info_reply>' <<<"$reply" || fail "am_set_info: $reply"
info=$(rpc am_get_info -d account_key="$KEY")
for want in '<success/>' '<name>Ann+%26+Bob</name>' '<country>Germany</country>' '<venue>home</venue>' \
    '<max_ncpus_pct>50</max_ncpus_pct>' '<teamid>0</teamid>'; do
    grep -qF <<<"$info" "$want" || fail "am_get_info lacks $want: $info"
done
WEAK=$(printf '%s' "$info" | sed -n 's:.*<weak_auth>\([0-9]*_[0-9a-f]*\)</weak_auth>.*:\1:p')
[ -n "$WEAK" ] || fail "no weak_auth: $info"
# A bad am_set_info changes nothing (the name in it is not applied either).
want_error -1 "Invalid global preferences" "$(rpc am_set_info -d account_key="$KEY" -d name=Changed --data-urlencode 'global_prefs=<global_preferences><unclosed></global_preferences>')"
want_error -1 "venue" "$(rpc am_set_info -d account_key="$KEY" -d name=Changed -d venue=moon)"
[ "$(sqlite3 "$db" "select name from user where authenticator='$KEY'")" = "Ann & Bob" ] || fail "a refused am_set_info changed the name"
want_error -136 "Not found" "$(rpc am_get_info -d account_key=0123456789abcdef0123456789abcdef)"
# A weak key never reads or changes the account.
want_error -136 "Not found" "$(rpc am_get_info -d account_key="$WEAK")"
want_error -136 "Not found" "$(rpc am_set_info -d account_key="$WEAK" -d name=Weak)"

# Teams.
reply=$(rpc create_team -d account_key="$KEY" --data-urlencode "name=Team <b>" )
want_error -1 "HTML" "$reply"
reply=$(rpc create_team -d account_key="$KEY" --data-urlencode "name=Crunchers & Co" -d description=hello)
TEAM=$(printf '%s' "$reply" | sed -n 's:.*<team_id>\([0-9]*\)</team_id>.*:\1:p')
[ -n "$TEAM" ] || fail "create_team: $reply"
want_error -137 "" "$(rpc create_team -d account_key="$KEY" --data-urlencode "name=Crunchers & Co")"
reply=$(rpc team_lookup -d format=xml -d team_name=crunch)
grep -q <<<"$reply" "<name>Crunchers &amp; Co</name>" || fail "team_lookup: $reply"
grep -q <<<"$reply" "<id>$TEAM</id>" || fail "team_lookup id: $reply"
info=$(rpc am_get_info -d account_key="$KEY")
grep -q <<<"$info" "<teamid>$TEAM</teamid>" || fail "not in the team: $info"
grep -q <<<"$info" "<teamfounder/>" || fail "not the founder: $info"
[ "$(sqlite3 "$db" "select nusers from team where id=$TEAM")" = 1 ] || fail "nusers after join"
rpc am_set_info -d account_key="$KEY" -d teamid=0 | qgrep '<success/>' || fail "leave team"
[ "$(sqlite3 "$db" "select nusers||' '||(select teamid from user where authenticator='$KEY') from team where id=$TEAM")" = "0 0" ] || fail "nusers after leaving"

# The weak key attaches and schedules: a scheduler request with it is
# answered for this account, and makes a host.
uid=$(sqlite3 "$db" "select id from user where authenticator='$KEY'")
sed "s/0123456789abcdef0123456789abcdef/$WEAK/" "$VS_SOURCE_DIR/tests/data/boinc/sched_request_01.xml" > "$W/req.xml"
reply=$(curl -sf --data-binary @"$W/req.xml" "${URL}cgi-bin/cgi") || fail "scheduler POST"
grep -q <<<"$reply" "<userid>$uid</userid>" || fail "weak key not accepted: $reply"
hostid=$(printf '%s' "$reply" | sed -n 's:.*<hostid>\([0-9]*\)</hostid>.*:\1:p')
[ "$(sqlite3 "$db" "select userid from host where id=$hostid")" = "$uid" ] || fail "host of the weak key"
# The account's prefs are newer than the request's: they are in the reply.
grep -q '<max_ncpus_pct>50</max_ncpus_pct>' <<<"$reply" || fail "account prefs not sent: $reply"
# The client's own prefs are newer than the account's: none in the reply.
grep -q '<mod_time>0.000000</mod_time>' "$W/req.xml" || fail "request fixture has no prefs mod_time"
sed -e "s:<mod_time>0.000000</mod_time>:<mod_time>$(date +%s).000000</mod_time>:" \
    -e "s:<hostid>0</hostid>:<hostid>$hostid</hostid>:" -e "s:<rpc_seqno>0</rpc_seqno>:<rpc_seqno>1</rpc_seqno>:" \
    "$W/req.xml" > "$W/req_newer.xml"
reply=$(curl -sf --data-binary @"$W/req_newer.xml" "${URL}cgi-bin/cgi") || fail "scheduler POST (newer prefs)"
grep -q <<<"$reply" "<userid>$uid</userid>" || fail "newer-prefs request: $reply"
grep -q '<global_preferences>' <<<"$reply" && fail "older account prefs sent to a client with newer ones"
# show_user: with the key, hosts and venue; by id, neither.
reply=$(rpc show_user -d format=xml -d auth="$KEY")
grep -q <<<"$reply" "<id>$hostid</id>" || fail "show_user hosts: $reply"
reply=$(rpc show_user -d format=xml -d userid="$uid")
grep -q <<<"$reply" "<venue>" && fail "show_user by id shows the venue: $reply"
grep -q <<<"$reply" "<name>Ann &amp; Bob</name>" || fail "show_user by id: $reply"
# am_set_host_info: the next reply carries the venue.
reply=$(rpc am_set_host_info -d account_key="$KEY" -d hostid="$hostid" -d venue=school)
grep -q '<success/>' <<<"$reply" || fail "am_set_host_info: $reply"
want_error -136 "" "$(rpc am_set_host_info -d account_key="$KEY" -d hostid=999 -d venue=work)"
sed -e "s/0123456789abcdef0123456789abcdef/$KEY/" -e "s:<hostid>0</hostid>:<hostid>$hostid</hostid>:" \
    -e "s:<rpc_seqno>0</rpc_seqno>:<rpc_seqno>1</rpc_seqno>:" \
    "$VS_SOURCE_DIR/tests/data/boinc/sched_request_01.xml" > "$W/req2.xml"
grep -q "<hostid>$hostid</hostid>" "$W/req2.xml" || fail "request fixture has no <hostid>0</hostid>"
reply=$(curl -sf --data-binary @"$W/req2.xml" "${URL}cgi-bin/cgi") || fail "second scheduler POST"
grep -q '<host_venue>school</host_venue>' <<<"$reply" || fail "venue not in the reply: $reply"

# ---- invitation codes -----------------------------------------------------
stop_serve
sed -i 's:</config>:  <invite_code>open-sesame</invite_code>\n  <min_passwd_length>9</min_passwd_length>\n</config>:' "$W/p/config.xml"
printf 'Be nice & compute <only> what you want.\n' > "$W/p/terms_of_use.txt"
start_serve
pc=$(curl -sf "${URL}get_project_config.php")
for want in '<invite_code_required/>' '<account_creation_disabled/>' '<min_passwd_length>9</min_passwd_length>' \
    'Be nice &amp; compute &lt;only&gt; what you want.'; do
    grep -qF <<<"$pc" "$want" || fail "get_project_config.php lacks $want: $pc"
done
printf '%s' "$pc" | python3 -c 'import sys, xml.dom.minidom as m; m.parseString(sys.stdin.read())' ||
    fail "get_project_config.php is not well-formed XML: $pc"
H2=$(md5 "pw123456c@example.org")
want_error -1 "Invalid invitation code" "$(rpc create_account -d email_addr=c@example.org -d passwd_hash="$H2" -d user_name=Cat -d invite_code=wrong)"
want_error -1 "Invalid invitation code" "$(rpc create_account -d email_addr=c@example.org -d passwd_hash="$H2" -d user_name=Cat)"
reply=$(rpc create_account -d email_addr=c@example.org -d passwd_hash="$H2" -d user_name=Cat -d invite_code=open-sesame)
grep -q '<authenticator>' <<<"$reply" || fail "right invitation code: $reply"

# ---- 10,000 lookups from one address ---------------------------------------
res=$(python3 "$VS_SOURCE_DIR/tests/integration/accounts_flood.py" 127.0.0.1 "$PORT" /acct/ 10000 4 \
    c@example.org "$H2") || fail "flood script"
echo "flood: $res"
python3 - "$res" <<'PY' || fail "flood figures: $res"
import json, sys
r = json.loads(sys.argv[1])
f, o = r["flood"], r["other"]
assert f.get("200", 0) <= 30, f          # the burst (account_rpc_burst), minus what the test spent
assert f.get("429", 0) >= 9970, f
assert sum(f.values()) == 10000, f
assert o["ok"] >= 3 and o["bad"] == 0, o  # the other address is served all along
assert o["max_s"] < 5.0, o  # 0.1 s here; 1.8 s under ASAN on a loaded machine
PY
grep -q "account: 127.0.0.1 spent its 30 account requests" "$W/serve.log" || fail "throttle not logged"
stop_serve
echo "ok: bad input refused with BOINC's errors, account managers' RPCs agree, weak key schedules only, invitation codes, $res"
