#!/usr/bin/env bash
# Recent averages decay while nothing is earned (issue 39; BOINC's
# update_stats): a user, their team and their computer, last credited a
# week ago with a recent average of 100, and a second user credited just
# now with 60. `volsched serve` decays every average to now at its start
# (then daily) before writing the statistics exports: the idle user, team
# and computer show 50 on the site's leaderboards (top_users.php,
# top_teams.php, top_hosts.php by recent average, the busy user now ranked
# first) and in stats/user.gz, team.gz and host.gz, and the log says so.
# With <update_stats_interval_hours>0</update_stats_interval_hours> the
# averages stay as stored; `volsched update_stats` decays them by hand. Before the decay was built every page and
# export showed 100.
set -uo pipefail
qgrep() { grep "$@" >/dev/null; }
: "${VOLSCHED:?VOLSCHED must name the built binary}"
for tool in sqlite3 python3 curl; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed"; exit 1; }
done
V=$VOLSCHED
W=$(mktemp -d /tmp/vs_credit_decay.XXXXXX)
SPID=
stop_serve() {
    [ -n "$SPID" ] && { kill -TERM "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; }
    SPID=
}
cleanup() { stop_serve; rm -rf "$W"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$W/serve.log" 2>/dev/null; exit 1; }
P="$W/p"
db="$P/volsched.db"
q() { sqlite3 -cmd ".timeout 10000" "$db" "$1"; }
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()')
URL="http://127.0.0.1:$PORT/dc/"

$V init "$P" --url "$URL" >/dev/null || fail "init"
$V team add --project "$P" --name Idlers >/dev/null || fail "team add"
$V user add --project "$P" --name idle --email idle@example.org --team 1 >/dev/null || fail "user add"
$V user add --project "$P" --name busy --email busy@example.org >/dev/null || fail "user add"
q "INSERT INTO host(id, userid, create_time, p_vendor, p_model, os_name, os_version)
   VALUES (1, 1, 1700000000, 'GenuineIntel', 'Xeon', 'Linux', '6.1')" || fail "host"

# idle: a week without credit; busy: credited now.
seed() {
    local week_ago=$(( $(date +%s) - 7 * 86400 ))
    q "UPDATE \"user\" SET total_credit = 500, expavg_credit = 100, expavg_time = $week_ago WHERE name = 'idle';
       UPDATE \"user\" SET total_credit = 100, expavg_credit = 60, expavg_time = strftime('%s','now') WHERE name = 'busy';
       UPDATE team SET total_credit = 500, expavg_credit = 100, expavg_time = $week_ago;
       UPDATE host SET total_credit = 500, expavg_credit = 100, expavg_time = $week_ago" || fail "seed"
}
serve() {
    rm -rf "$P/stats"
    : > "$W/serve.log"
    $V serve --project "$P" --listen "127.0.0.1:$PORT" --foreground >"$W/serve.log" 2>&1 &
    SPID=$!
    for _ in $(seq 1 150); do [ -f "$P/stats/tables.xml" ] && break; sleep 0.2; done
    [ -f "$P/stats/tables.xml" ] || fail "serve wrote no statistics exports"
    for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.2; done
}
# export_avg FILE KIND ID: the expavg_credit of one row of an export
export_avg() {
    python3 -c "import gzip,sys,xml.etree.ElementTree as E
for e in E.fromstring(gzip.open(sys.argv[1]).read()).iter(sys.argv[2]):
    if e.findtext('id') == sys.argv[3]: print(e.findtext('expavg_credit'))" "$P/stats/$1" "$2" "$3"
}
# page_avgs PAGE: 'name-or-id avg' per row of a leaderboard by recent average, in order
page_avgs() {
    curl -sf "${URL}$1?sort_by=expavg_credit" | python3 -c "import re,sys
for row in re.findall(r'<tr><td>\d+</td><td>(.*?)</td><td class=\"num\">([0-9.]+)</td>', sys.stdin.read()):
    print(re.sub(r'<[^>]*>', '', row[0]), row[1])"
}
near() { # what got want
    python3 -c "import sys; sys.exit(0 if abs(float('$2') - $3) <= 0.01 else 1)" 2>/dev/null ||
        fail "$1: got '$2', want $3"
}

seed
serve
qgrep 'update_stats: recent averages decayed to now' "$W/serve.log" || fail "no update_stats log line"
near "user.gz idle" "$(export_avg user.gz user 1)" 50
near "user.gz busy" "$(export_avg user.gz user 2)" 60
near "team.gz" "$(export_avg team.gz team 1)" 50
near "host.gz" "$(export_avg host.gz host 1)" 50
near "store" "$(q "SELECT expavg_credit FROM \"user\" WHERE name = 'idle'")" 50
users=$(page_avgs top_users.php)
[ "$(printf '%s\n' "$users" | head -1)" = "busy 60.00" ] || fail "top_users.php: busy should lead: $users"
[ "$(printf '%s\n' "$users" | sed -n 2p)" = "idle 50.00" ] || fail "top_users.php: idle should show 50: $users"
[ "$(page_avgs top_teams.php)" = "Idlers 50.00" ] || fail "top_teams.php: $(page_avgs top_teams.php)"
[ "$(page_avgs top_hosts.php)" = "1 50.00" ] || fail "top_hosts.php: $(page_avgs top_hosts.php)"
echo "ok: a week idle shows half its average: export and leaderboards 50, the busy user leads"
stop_serve

# The tag turns it off: the averages stay as stored.
seed
# (init wrote the default, 24)
sed -i 's:<update_stats_interval_hours>24<:<update_stats_interval_hours>0<:' "$P/config.xml"
qgrep '<update_stats_interval_hours>0<' "$P/config.xml" || fail "config.xml has no <update_stats_interval_hours>"
serve
near "user.gz idle, decay off" "$(export_avg user.gz user 1)" 100
[ "$(page_avgs top_users.php | head -1)" = "idle 100.00" ] || fail "top_users.php with the decay off: $(page_avgs top_users.php)"
qgrep 'update_stats:' "$W/serve.log" && fail "update_stats ran with <update_stats_interval_hours>0"
stop_serve
echo "ok: <update_stats_interval_hours>0</update_stats_interval_hours> keeps the stored averages"

# By hand: `volsched update_stats` (the tag is the daemon's only).
seed
out=$($V update_stats --project "$P") || fail "update_stats: $out"
# (busy, credited this very second, may already be at now: 1 or 2 users)
[[ "$out" =~ ^decayed\ the\ recent\ averages\ of\ [12]\ users,\ 1\ hosts,\ 1\ teams\ to\ now$ ]] ||
    fail "update_stats said: $out"
near "store after update_stats" "$(q "SELECT expavg_credit FROM \"user\" WHERE name = 'idle'")" 50
near "team after update_stats" "$(q "SELECT expavg_credit FROM team")" 50
$V update_stats --project "$P" extra >/dev/null 2>&1 && fail "update_stats took an extra argument"
echo "ok: volsched update_stats decays by hand"
