#!/usr/bin/env bash
# The volunteers' web site with curl, as a browser and as a thief with a
# copied cookie, against a real `volsched serve` (issue 36's follow-up):
#  - sessions end on the server: after logging out, a copy of the cookie
#    taken while logged in opens nothing (the account page sends it to the
#    login page); a new password set through am_set_info ends every session
#    of the account; deleting the account ends its sessions;
#  - saving the computing preferences of one set keeps every element the
#    form does not show (an account manager's day_prefs and network limits,
#    an unknown element, another venue, the other sets' values) and gives
#    a newer mod_time;
#  - <enable_delete_account>: absent (BOINC's default) the site offers no
#    deletion and a POST to delete.php changes nothing; 1 deletes as BOINC's
#    "obfuscate"; 2 and 3 (BOINC's wipe and project-defined methods) stop
#    `volsched serve` at start with a message that says why.
set -uo pipefail
qgrep() { grep "$@" >/dev/null; }
[ -n "${VS_TRACE:-}" ] && set -x
W=$(mktemp -d /tmp/vs_site_sessions.XXXXXX)
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
URL="http://127.0.0.1:$PORT/site/"
"$VOLSCHED" init "$W/p" --name "Sessions" --url "$URL" >/dev/null || fail "init"
db="$W/p/volsched.db"
start_serve() {
    "$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" --foreground > "$W/serve.log" 2>&1 &
    SPID=$!
    for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && return 0; sleep 0.2; done
    fail "server did not start"
}
stop_serve() { kill -TERM "$SPID"; wait "$SPID" || fail "server exit status $?"; SPID=""; }
set_config() { # set_config TAG VALUE (replaces an earlier one)
    sed -i "/<$1>/d" "$W/p/config.xml"
    sed -i "s:</config>:  <$1>$2</$1>\n</config>:" "$W/p/config.xml"
}

# The CSRF token of the page PATH fetched with the cookie jar JAR.
csrf() { curl -s -b "$1" -c "$1" "${URL}$2" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1; }
# post JAR PATH ARGS...: the status of a form POST (with its CSRF token).
post() {
    local jar=$1 path=$2
    shift 2
    local tok from=$path
    [ "$path" = logout.php ] && from=home.php # logout is a button on every page
    tok=$(csrf "$jar" "$from")
    [ -n "$tok" ] || fail "no CSRF token on $path"
    curl -s -o "$W/last.html" -w '%{http_code}' -b "$jar" -c "$jar" "${URL}$path" -d "csrf=$tok" "$@"
}
# home JAR: the status of the account page with that cookie jar (200 logged
# in, 303 to the login page otherwise).
home() { curl -s -o "$W/home.html" -w '%{http_code}' -b "$1" "${URL}home.php"; }
signup() { # signup JAR EMAIL NAME
    [ "$(post "$1" signup.php -d "email_addr=$2" -d "user_name=$3" -d passwd=secret-pw-1 \
        -d passwd2=secret-pw-1)" = 303 ] || fail "sign-up of $2: $(cat "$W/last.html")"
}
# The session cookie's value in a jar (the thief's copy).
cookie_of() { awk '$6 == "vs_site" { print $7 }' "$1"; }

start_serve
# ---- logging out ends the session; a copy of the cookie is refused ------
signup "$W/a.jar" ann@example.org Ann
[ "$(home "$W/a.jar")" = 200 ] || fail "not logged in after sign-up"
qgrep 'id="key"' "$W/home.html" || fail "no account key on the account page"
stolen=$(cookie_of "$W/a.jar")
[ -n "$stolen" ] || fail "no session cookie"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: vs_site=$stolen" "${URL}home.php")" = 200 ] ||
    fail "the copied cookie does not work while logged in"
[ "$(sqlite3 "$db" "select count(*) from site_session s join user u on u.id = s.userid where u.email_addr = 'ann@example.org'")" = 1 ] ||
    fail "no session row"
[ "$(post "$W/a.jar" logout.php)" = 303 ] || fail "logout"
[ "$(home "$W/a.jar")" = 303 ] || fail "still logged in after logging out"
code=$(curl -s -o "$W/stolen.html" -w '%{http_code}' -H "Cookie: vs_site=$stolen" "${URL}home.php")
[ "$code" = 303 ] || fail "the cookie copied before logout still opens the account (status $code)"
qgrep 'Account key' "$W/stolen.html" && fail "the account page shown to a stolen cookie"
qgrep "its session has ended" "$W/serve.log" || fail "no log line for the refused cookie"
[ "$(sqlite3 "$db" "select count(*) from site_session")" = 0 ] || fail "the session row outlived the logout"
# A forged form with the stolen cookie changes nothing either.
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: vs_site=$stolen" "${URL}prefs.php" \
    -d venue= -d max_ncpus_pct=7 -d csrf=0000)
[ "$(sqlite3 "$db" "select count(*) from user where global_prefs like '%<max_ncpus_pct>7<%'")" = 0 ] ||
    fail "a stolen cookie saved preferences"

# ---- a new password (am_set_info) ends every session of the account ----
[ "$(post "$W/a.jar" login.php -d email_addr=ann@example.org -d passwd=secret-pw-1)" = 303 ] || fail "login"
[ "$(post "$W/a2.jar" login.php -d email_addr=ann@example.org -d passwd=secret-pw-1)" = 303 ] || fail "second login"
[ "$(home "$W/a.jar")" = 200 ] && [ "$(home "$W/a2.jar")" = 200 ] || fail "two sessions"
key=$(sed -n 's:.*<code id="key">\([0-9a-f]*\)</code>.*:\1:p' "$W/home.html")
[ -n "$key" ] || fail "no key"
newh=$(printf '%s' "new-secret-2ann@example.org" | md5sum | cut -c1-32)
curl -sG "${URL}am_set_info.php" -d account_key="$key" -d password_hash="$newh" | qgrep '<success/>' ||
    fail "am_set_info password"
[ "$(home "$W/a.jar")" = 303 ] || fail "a session outlived the new password"
[ "$(home "$W/a2.jar")" = 303 ] || fail "the other session outlived the new password"
[ "$(post "$W/a.jar" login.php -d email_addr=ann@example.org -d passwd=new-secret-2)" = 303 ] ||
    fail "login with the new password"
[ "$(home "$W/a.jar")" = 200 ] || fail "not logged in with the new password"

# ---- saving preferences keeps what the form does not edit ---------------
uid=$(sqlite3 "$db" "select id from user where email_addr='ann@example.org'")
sqlite3 "$db" "update user set global_prefs = '<global_preferences>
<mod_time>1000</mod_time>
<max_ncpus_pct>80</max_ncpus_pct>
<max_bytes_sec_down>12345</max_bytes_sec_down>
<day_prefs><day_of_week>1</day_of_week><start_hour>8</start_hour><end_hour>17</end_hour></day_prefs>
<some_future_pref>kept &amp; sound</some_future_pref>
<venue name=\"work\">
<max_ncpus_pct>25</max_ncpus_pct>
<start_hour>9</start_hour>
</venue>
<venue name=\"lab\"><max_ncpus_pct>5</max_ncpus_pct></venue>
</global_preferences>' where id = $uid"
[ "$(post "$W/a.jar" prefs.php -d venue=home -d max_ncpus_pct=50 -d cpu_usage_limit=90 \
    -d disk_max_used_gb=0 -d disk_max_used_pct=80 -d disk_min_free_gb=1 -d work_buf_min_days=0.5 \
    -d work_buf_additional_days=1 -d run_on_batteries=1)" = 303 ] || fail "save the home set: $(cat "$W/last.html")"
gp=$(sqlite3 "$db" "select global_prefs from user where id = $uid")
for want in '<max_bytes_sec_down>12345</max_bytes_sec_down>' '<start_hour>8</start_hour>' \
    '<some_future_pref>kept &amp; sound</some_future_pref>' '<venue name="lab"><max_ncpus_pct>5</max_ncpus_pct></venue>' \
    '<max_ncpus_pct>80</max_ncpus_pct>' '<max_ncpus_pct>25</max_ncpus_pct>' '<start_hour>9</start_hour>' \
    '<venue name="home">' '<max_ncpus_pct>50</max_ncpus_pct>'; do
    printf '%s' "$gp" | qgrep -F "$want" || fail "after saving the home set, $want is lost: $gp"
done
mod=$(printf '%s' "$gp" | sed -n 's:.*<mod_time>\([0-9.]*\)</mod_time>.*:\1:p')
[ "$(printf '%s' "$gp" | grep -c '<mod_time>')" = 1 ] || fail "two mod_times: $gp"
python3 -c "import sys,time; sys.exit(0 if float('$mod') > time.time() - 60 else 1)" || fail "mod_time not bumped: $mod"
# The work set edited: its other element stays, its max_ncpus_pct changes;
# the top level keeps its own values.
[ "$(post "$W/a.jar" prefs.php -d venue=work -d max_ncpus_pct=40 -d cpu_usage_limit=100 \
    -d disk_max_used_gb=0 -d disk_max_used_pct=90 -d disk_min_free_gb=0.1 -d work_buf_min_days=0.1 \
    -d work_buf_additional_days=0.5)" = 303 ] || fail "save the work set"
gp=$(sqlite3 "$db" "select global_prefs from user where id = $uid")
work=$(printf '%s' "$gp" | tr -d '\n' | sed -n 's:.*<venue name="work">\(.*\)</venue>.*<venue name="lab">.*:\1:p')
printf '%s' "$work" | qgrep -F '<start_hour>9</start_hour>' || fail "the work set lost start_hour: $gp"
printf '%s' "$work" | qgrep -F '<max_ncpus_pct>40</max_ncpus_pct>' || fail "the work set not saved: $gp"
printf '%s' "$work" | qgrep -F '<max_ncpus_pct>25<' && fail "the old work value is still there: $gp"
printf '%s' "$gp" | qgrep -F '<max_ncpus_pct>80</max_ncpus_pct>' || fail "the top level changed: $gp"
printf '%s' "$gp" | qgrep -F '<max_bytes_sec_down>12345</max_bytes_sec_down>' || fail "lost on the second save: $gp"
python3 -c "import sys,xml.dom.minidom as m; m.parseString(sys.argv[1])" "$gp" || fail "not XML: $gp"

# ---- <enable_delete_account> absent: no deletion -------------------------
qgrep 'href="delete.php"' "$W/home.html" && fail "deletion offered with enable_delete_account absent"
[ "$(post "$W/a.jar" delete.php -d passwd=new-secret-2)" = 403 ] || fail "delete.php POST not refused"
qgrep "does not delete accounts" "$W/last.html" || fail "no message: $(cat "$W/last.html")"
[ "$(sqlite3 "$db" "select email_addr from user where id = $uid")" = ann@example.org ] || fail "deleted anyway"
stop_serve

# ---- 2 and 3 are refused at start, with the reason ----------------------
for m in 2 3; do
    set_config enable_delete_account "$m"
    out=$("$VOLSCHED" serve --project "$W/p" --listen "127.0.0.1:$PORT" --foreground 2>&1 &
        p=$!; sleep 3; kill -TERM $p 2>/dev/null; wait $p; echo "status $?")
    printf '%s' "$out" | qgrep "enable_delete_account>$m<" || fail "serve with method $m: $out"
    printf '%s' "$out" | qgrep 'use 1' || fail "no advice for method $m: $out"
    printf '%s' "$out" | qgrep 'status 0' && fail "serve ran with method $m: $out"
done

# ---- 1: deletion offered, done, and the account's sessions end -----------
set_config enable_delete_account 1
start_serve
[ "$(home "$W/a.jar")" = 200 ] || fail "the session did not outlive a restart of the server"
qgrep 'href="delete.php"' "$W/home.html" || fail "deletion not offered with enable_delete_account 1"
[ "$(post "$W/b.jar" login.php -d email_addr=ann@example.org -d passwd=new-secret-2)" = 303 ] || fail "login b"
other=$(cookie_of "$W/b.jar")
[ "$(post "$W/a.jar" delete.php -d passwd=new-secret-2)" = 200 ] || fail "delete: $(cat "$W/last.html")"
qgrep "Your account is deleted" "$W/last.html" || fail "no confirmation"
[ "$(sqlite3 "$db" "select email_addr from user where id = $uid")" = "" ] || fail "not deleted"
[ "$(sqlite3 "$db" "select count(*) from site_session where userid = $uid")" = 0 ] || fail "sessions outlived the account"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: vs_site=$other" "${URL}home.php")" = 303 ] ||
    fail "another session of the deleted account still opens"
stop_serve
echo "PASS"
