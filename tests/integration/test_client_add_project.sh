#!/usr/bin/env bash
# The BOINC Manager's "Add project" path through `volsched client` against a
# real volsched project (`volsched serve`, issue 36's account web RPCs), with
# Debian's boinccmd and, side by side, Debian's boinc-client 7.20 pointed at
# the same project:
#  - the wizard's GUI RPCs, sent raw on one connection to each client:
#    get_project_config + get_project_config_poll, create_account +
#    create_account_poll, lookup_account + lookup_account_poll; the requests
#    answer <success/>, the polls say -204 while the project has not
#    answered and then give the same reply as Debian's client gives (the
#    project's configuration, the account key);
#  - boinccmd --get_project_config, --create_account, --lookup_account print
#    the same through our client as through Debian's (the "operation in
#    progress" lines aside: how many there are is timing);
#  - the project's refusals come back through our client as Debian's shows
#    them: a wrong password (-206, "bad password"), an e-mail another
#    account has (-137, "database lookup not unique"), account creation
#    disabled by the operator (-208, "account creation disabled");
#  - boinccmd --project_attach with the key the wizard got: the client
#    fetches a job of that project for the new account, runs it and the
#    project records the result as that account's.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_addp
VSC_NCPUS=1
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
command -v boinc >/dev/null || fail "Debian's boinc-client is not installed (bash scripts/setup.sh)"
trap 'demo_client_stop; vsc_finish' EXIT
RPC="$VS_SOURCE_DIR/tests/integration/gui_rpc.py"

vsc_project addp || fail "could not create the project"
vsc_jobs boincapp 2 1e9 "10 200" || fail "create_work" # ~2 s each
vsc_serve || fail "server did not start"

C="$WORK/client"
vsc_client_dir "$C"
vsc_run "$C" || fail "client did not start"
OUR_PORT=$RPC_PORT OUR_PW=$RPC_PW
DEMO_NO_ATTACH=1 DEMO_CC_OPTIONS="<ncpus>1</ncpus>" demo_client_start ||
    fail "Debian's client did not start"
ours() { (cd "$C" && boinccmd --host "127.0.0.1:$OUR_PORT" --passwd "$OUR_PW" "$@"); }
theirs() { demo_bcmd "$@"; }

# reply N (from 0) of a raw GUI RPC exchange printed by gui_rpc.py
nth() { awk -v n="$1" '/^----$/{i++; next} i==n'; }
# a reply as XML elements, one a line, without the XML declaration
norm() { grep -v '^<?xml' | tr -d '\n' | sed -e 's/>[[:space:]]*</>\n</g' | sed -e 's/^[[:space:]]*//'; }
# the raw exchange on one client: the request, a poll at once, the poll
# repeated until the project has answered
wizard() { # wizard WHO REQUEST POLL
    local port=$OUR_PORT pw=$OUR_PW
    [ "$1" = theirs ] && port=$RPC_PORT pw=$RPC_PW
    python3 "$RPC" "$port" "$pw" "$2" "$3" "poll:$3"
}
same_reply() { # same_reply WHAT: the final poll replies of $o_ours / $o_theirs
    local a b
    a=$(nth 2 <<<"$o_ours" | norm)
    b=$(nth 2 <<<"$o_theirs" | norm)
    [ "$a" = "$b" ] || fail "$1: our client's reply differs from Debian's:
ours:
$a
Debian's:
$b"
}

# ---- get_project_config(_poll) --------------------------------------------
REQ="<get_project_config><url>$URL</url></get_project_config>"
o_ours=$(wizard ours "$REQ" "<get_project_config_poll/>") || fail "GUI RPC to ours: $o_ours"
o_theirs=$(wizard theirs "$REQ" "<get_project_config_poll/>") || fail "GUI RPC to Debian's: $o_theirs"
[ "$(nth 0 <<<"$o_ours")" = "<success/>" ] || fail "get_project_config answered: $(nth 0 <<<"$o_ours")"
grep -q "<name>addp</name>" <<<"$(nth 2 <<<"$o_ours")" || fail "project config: $o_ours"
grep -q "<min_passwd_length>" <<<"$(nth 2 <<<"$o_ours")" || fail "no min_passwd_length: $o_ours"
same_reply get_project_config_poll

# ---- create_account(_poll), lookup_account(_poll) ---------------------------
EMAIL=Wizard.User@Example.org
PW='wizard pass 7'
H=$(printf '%s%s' "$PW" "wizard.user@example.org" | md5sum | cut -c1-32)
REQ="<create_account><url>$URL</url><email_addr>$EMAIL</email_addr><passwd_hash>$H</passwd_hash><user_name>Wizard User</user_name><team_name></team_name></create_account>"
o_ours=$(wizard ours "$REQ" "<create_account_poll/>") || fail "GUI RPC to ours: $o_ours"
[ "$(nth 0 <<<"$o_ours")" = "<success/>" ] || fail "create_account answered: $(nth 0 <<<"$o_ours")"
KEY=$(nth 2 <<<"$o_ours" | sed -n 's:.*<authenticator>\([0-9a-f]*\)</authenticator>.*:\1:p')
[ ${#KEY} = 32 ] || fail "create_account_poll gave no account key: $o_ours"
[ "$(vsc_store "select name from user where authenticator='$KEY'")" = "Wizard User" ] ||
    fail "the project has no account 'Wizard User' with key $KEY"
# Debian's client asking the same (a retried wizard): the same account
o_theirs=$(wizard theirs "$REQ" "<create_account_poll/>") || fail "GUI RPC to Debian's: $o_theirs"
same_reply create_account_poll
REQ="<lookup_account><url>$URL</url><email_addr>$EMAIL</email_addr><passwd_hash>$H</passwd_hash></lookup_account>"
o_ours=$(wizard ours "$REQ" "<lookup_account_poll/>") || fail "GUI RPC to ours: $o_ours"
o_theirs=$(wizard theirs "$REQ" "<lookup_account_poll/>") || fail "GUI RPC to Debian's: $o_theirs"
grep -q "<authenticator>$KEY</authenticator>" <<<"$(nth 2 <<<"$o_ours")" || fail "lookup_account_poll: $o_ours"
same_reply lookup_account_poll

# ---- the same through boinccmd, ours and Debian's -----------------------------
# both print the same, "operation in progress" lines aside
both() { # both WANT-PATTERN ARGS...: boinccmd ARGS on each client
    local want=$1 a b
    shift
    a=$(ours "$@" 2>&1 | grep -v '^poll status: operation in progress$')
    b=$(theirs "$@" 2>&1 | grep -v '^poll status: operation in progress$')
    [ "$a" = "$b" ] || fail "boinccmd $1 through our client:
$a
through Debian's:
$b"
    grep -qx -- "$want" <<<"$a" || fail "boinccmd $1: want '$want', got: $a"
}
both "name: addp" --get_project_config "$URL"
both "account key: $KEY" --lookup_account "$URL" "$EMAIL" "$PW"
both "account key: $KEY" --create_account "$URL" "$EMAIL" "$PW" "Wizard User"
both "poll status: bad password" --lookup_account "$URL" "$EMAIL" "not the password"
both "poll status: database lookup not unique" --create_account "$URL" "$EMAIL" "another pw 1" "Someone"
# the error numbers in our client's poll replies
err_of() { python3 "$RPC" "$OUR_PORT" "$OUR_PW" "$1" "poll:$2" | nth 1; }
BAD=$(printf '%s%s' "not the password" "wizard.user@example.org" | md5sum | cut -c1-32)
r=$(err_of "<lookup_account><url>$URL</url><email_addr>$EMAIL</email_addr><passwd_hash>$BAD</passwd_hash></lookup_account>" \
    "<lookup_account_poll/>")
grep -q '<error_num>-206</error_num>' <<<"$r" || fail "wrong password: $r"
r=$(err_of "<create_account><url>$URL</url><email_addr>$EMAIL</email_addr><passwd_hash>$BAD</passwd_hash><user_name>X</user_name></create_account>" \
    "<create_account_poll/>")
grep -q '<error_num>-137</error_num>' <<<"$r" || fail "taken e-mail: $r"
[ "$(vsc_store "select count(*) from user")" = 2 ] || fail "users: $(vsc_store 'select name from user')"

# ---- attach with the wizard's key: a job fetched, run, reported ---------------
ours --project_attach "$URL" "$KEY" || fail "project_attach"
UID_NEW=$(vsc_store "select id from user where authenticator='$KEY'")
t0=$(date +%s)
until [ "$(vsc_store "select count(*) from result where userid=$UID_NEW and server_state=5 and outcome=1")" -ge 1 ]; do
    [ $(($(date +%s) - t0)) -lt 180 ] || fail "no result of the new account $UID_NEW came back in 180 s"
    kill -0 "$VSC_PID" 2>/dev/null || fail "the client died"
    sleep 2
done
st=$(ours --get_project_status)
grep -qx '   name: addp' <<<"$st" || fail "the project is not listed: $st"
grep -qx '   user_name: Wizard User' <<<"$st" || fail "the project's user name is not the new account's: $st"

# ---- account creation disabled by the operator --------------------------------
kill -TERM "$SERVE_PID" && wait "$SERVE_PID" 2>/dev/null
sed -i 's:</config>:  <disable_account_creation>1</disable_account_creation>\n</config>:' "$PROJ/config.xml"
vsc_serve || fail "server did not restart"
both "poll status: account creation disabled" --create_account "$URL" other@example.org "pw123456" "Other"
r=$(err_of "<create_account><url>$URL</url><email_addr>other@example.org</email_addr><passwd_hash>$BAD</passwd_hash><user_name>Other</user_name></create_account>" \
    "<create_account_poll/>")
grep -q '<error_num>-208</error_num>' <<<"$r" || fail "creation disabled: $r"
both "account key: $KEY" --lookup_account "$URL" "$EMAIL" "$PW"
[ "$(vsc_store "select count(*) from user")" = 2 ] || fail "an account was made while creation was disabled"
grep -q 'Fetching configuration file from' "$C/client.log" || fail "no log line for the wizard's fetches"
echo "PASS: the Add Project wizard's RPCs through volsched client against volsched serve reply as Debian's client's; account $UID_NEW attached and its job returned; -206, -137, -208 shown as Debian's client shows them"
