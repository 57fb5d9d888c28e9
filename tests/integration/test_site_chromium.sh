#!/usr/bin/env bash
# The volunteers' web site (issue 36) in headless Chromium, driven over the
# DevTools protocol as a person would use it (site_browser.py), with
# Debian's real boinc-client doing the work in between:
#  - from the master page's "Join" link, sign up (a typo in the second
#    password first: refused); the account page shows the key;
#  - the real client attaches with that key and returns results;
#  - log out, a wrong password refused, log in; the account page lists the
#    host and its successful results; join a team made by another
#    volunteer (its name has '&'); change the preferences (50% of the
#    CPUs); a form without its CSRF token is refused and changes nothing;
#    log out;
#  - the preferences reach the client's global_prefs.xml at its next RPC
#    and it applies them ("max CPUs used: 1").
# Screenshots are kept in $VS_BINARY_DIR/site_screens/ to be looked at.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
LIMIT=${LIMIT:-480}
RC_WORK_PREFIX=vs_site_chromium
# shellcheck source=lib_real_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_real_client.sh"
command -v chromium >/dev/null || fail "chromium is not installed (deps/debian-packages.txt)"
CHPID=""
stop_chromium() {
    if [ -n "$CHPID" ] && kill -0 "$CHPID" 2>/dev/null; then kill -TERM "$CHPID"; wait "$CHPID" 2>/dev/null; fi
    CHPID=""
}
trap 'stop_chromium; finish' EXIT

demo_make_project 6 1000000 || fail "could not create the project"
demo_serve || fail "server did not start"
db="$WORK/project/volsched.db"

# Another volunteer's team, made with the account RPCs.
TEAM='Night Owls & Co'
H=$(printf '%s' "owl-pw-123owl@example.org" | md5sum | cut -c1-32)
OWL=$(curl -sfG "${URL}create_account.php" -d email_addr=owl@example.org -d passwd_hash="$H" \
    -d user_name=Owl | sed -n 's:.*<authenticator>\(.*\)</authenticator>.*:\1:p')
[ -n "$OWL" ] || fail "create_account for the team's founder"
curl -sfG "${URL}create_team.php" -d account_key="$OWL" --data-urlencode "name=$TEAM" \
    --data-urlencode "description=We compute at night & \"day\"" | qgrep '<success/>' || fail "create_team"

CDP=$(demo_free_port)
chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chrome" \
    --remote-debugging-port="$CDP" --window-size=1200,1000 about:blank > "$WORK/chrome.log" 2>&1 &
CHPID=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$CDP/json/version" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$CDP/json/version" >/dev/null || fail "chromium did not start: $(tail -5 "$WORK/chrome.log")"
SHOTS="$WORK/shots"
mkdir -p "$SHOTS"
B="$VS_SOURCE_DIR/tests/integration/site_browser.py"
EMAIL=Sam@Example.org
NAME='Sam <the> "cruncher"'
NAME=${NAME//[<>]/}
PW='a long enough pw'
KEY=$(cd "$VS_SOURCE_DIR/tests/integration" && timeout 120 python3 "$B" signup "$CDP" "$URL" "$SHOTS" "$EMAIL" "$NAME" "$PW") ||
    fail "sign-up in the browser: $KEY"
[ "$(sqlite3 "$db" "select name from user where authenticator='$KEY'")" = "$NAME" ] || fail "the site's key is not the account's"

DEMO_NO_ATTACH=1 DEMO_CC_OPTIONS='<report_results_immediately>1</report_results_immediately>' \
    demo_client_start || fail "client did not start"
rc_attach_key "$KEY"
uid=$RC_UID
n=$RC_DONE

out=$(cd "$VS_SOURCE_DIR/tests/integration" && timeout 180 python3 "$B" after "$CDP" "$URL" "$SHOTS" "$EMAIL" "$NAME" "$PW" "$TEAM" 2>&1) ||
    fail "the site in the browser: $out"
teamid=$(sqlite3 "$db" "select id from team where name='Night Owls & Co'")
[ "$(sqlite3 "$db" "select teamid from user where id=$uid")" = "$teamid" ] || fail "not in the team in the store"
[ "$(sqlite3 "$db" "select nusers from team where id=$teamid")" = 2 ] || fail "team nusers"

# The preferences set in the browser reach the real client and are applied.
rc_wait_prefs '<max_ncpus_pct>50</max_ncpus_pct>'

stop_chromium
rm -rf "$VS_BINARY_DIR/site_screens"
cp -r "$SHOTS" "$VS_BINARY_DIR/site_screens"
for f in "$SHOTS"/*.png; do
    python3 -c 'import sys,struct; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; w,h=struct.unpack(">II",d[16:24]); assert w>=800 and h>=600,(w,h)' "$f" ||
        fail "$f is not a screenshot of the page"
done
demo_client_stop
demo_serve_stop || fail "server exit status after SIGTERM"
echo "ok: signed up, worked ($n results), logged out and in, joined '$TEAM', prefs reached the client; $(ls "$SHOTS" | wc -l) screenshots in $VS_BINARY_DIR/site_screens"
