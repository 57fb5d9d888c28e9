#!/usr/bin/env bash
# Every command of `boinccmd --help`, run against `volsched client` and
# against Debian's boinc-client 7.20 in the same state (both attached to one
# volsched project, each with tasks running; the account commands against
# acct_stub.py, a project's web RPCs as BOINC's PHP answers them). What
# boinccmd prints is compared by shape (boinccmd_compare.py: keys, lines,
# numbers aside): every difference must be one of boinccmd_diffs.txt,
# which docs/client.md ("boinccmd against volsched and BOINC") explains.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_bcall
VSC_NCPUS=1
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
command -v boinc >/dev/null || fail "Debian's boinc-client is not installed (bash scripts/setup.sh)"
trap 'demo_client_stop; vsc_finish' EXIT

vsc_project bcall || fail "could not create the project"
vsc_jobs boincapp 6 4e11 "100 250" || fail "create_work"   # they run for the whole test
vsc_serve || fail "server did not start"
SPORT=$(demo_free_port)
python3 "$VS_SOURCE_DIR/tests/integration/acct_stub.py" "$SPORT" "$WORK/stub.log" &
SERVE_PIDS="$SERVE_PIDS $!"
SURL="http://127.0.0.1:$SPORT/stub/"

C="$WORK/client"
vsc_client_dir "$C"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"
OUR_PORT=$RPC_PORT OUR_PW=$RPC_PW
DEMO_CC_OPTIONS="<ncpus>1</ncpus>" demo_client_start || fail "Debian's client did not start"
ours() { (cd "$C" && boinccmd --host "127.0.0.1:$OUR_PORT" --passwd "$OUR_PW" "$@"); }
theirs() { demo_bcmd "$@"; }

running() { "$1" --get_tasks 2>/dev/null | awk '/^   name: /{n=$2} /active_task_state: EXECUTING/{print n; exit}'; }
t0=$(date +%s)
until [ -n "$(running ours)" ] && [ -n "$(running theirs)" ]; do
    [ $(( $(date +%s) - t0 )) -lt 120 ] || fail "no task running in both clients (ours: $(running ours), theirs: $(running theirs))"
    sleep 2
done
OT=$(running ours) TT=$(running theirs)

# the replies themselves, element by element, of the GUI RPCs the Manager,
# boinctui and boinccmd read (on a connection of each client)
cat > "$WORK/ops" <<OPS
<exchange_versions><major>7</major><minor>20</minor><release>5</release></exchange_versions>
<get_state/>
<get_results><active_only>0</active_only></get_results>
<get_old_results/>
<get_project_status/>
<get_simple_gui_info/>
<get_cc_status/>
<get_host_info/>
<get_file_transfers/>
<get_disk_usage/>
<get_statistics/>
<get_daily_xfer_history/>
<get_proxy_settings/>
<acct_mgr_info/>
<acct_mgr_rpc_poll/>
<get_global_prefs_working/>
<get_all_projects_list/>
<get_newer_version/>
<get_screensaver_tasks/>
<get_project_init_status/>
<get_notices><seqno>0</seqno></get_notices>
<get_message_count/>
<get_messages><seqno>1000000</seqno></get_messages>
<get_project_config_poll/>
<lookup_account_poll/>
<no_such_op/>
OPS
mapfile -t OPS < "$WORK/ops"
mkdir -p "$WORK/xml_ours" "$WORK/xml_theirs"
RPC="$VS_SOURCE_DIR/tests/integration/gui_rpc.py"
python3 "$RPC" "$OUR_PORT" "$OUR_PW" "${OPS[@]}" > "$WORK/xml_ours/all" || fail "GUI RPC to ours"
python3 "$RPC" "$RPC_PORT" "$RPC_PW" "${OPS[@]}" > "$WORK/xml_theirs/all" || fail "GUI RPC to Debian's"
for who in ours theirs; do
    awk -v d="$WORK/xml_$who" 'BEGIN{n=0} /^----$/{n++; next} {print > (d "/" n)}' "$WORK/xml_$who/all"
    for i in $(seq 0 $((${#OPS[@]} - 1))); do touch "$WORK/xml_$who/$i"; done
done
python3 "$VS_SOURCE_DIR/tests/integration/boinccmd_compare.py" --xml "$WORK/ops" "$WORK/xml_ours" \
    "$WORK/xml_theirs" "$VS_SOURCE_DIR/tests/integration/boinccmd_diffs.txt" > "$WORK/xdiffs" ||
    xbad=1
grep '^stale: ' "$WORK/xdiffs" || true
# the configuration files come back as they are (each client has its own)
for f in cc_config global_prefs_override; do
    op="<get_$f/>"; [ $f = global_prefs_override ] && op="<get_global_prefs_override/>"
    got=$(python3 "$RPC" "$OUR_PORT" "$OUR_PW" "$op" | sed '$d')
    want=$(sed -e 's/^[[:space:]]*//;s/[[:space:]]*$//' "$C/$f.xml" | sed '/^$/d' | head -c 100000)
    [ "$(printf '%s' "$got" | sed -e 's/^[[:space:]]*//;s/[[:space:]]*$//' | sed '/^$/d')" = "$want" ] ||
        fail "get_$f is not $f.xml: $got"
done

# the commands; %T is the client's running task, %E a fresh email per client
cat > "$WORK/cmds" <<CMDS
--client_version
--get_cc_status
--get_daily_xfer_history
--get_disk_usage
--get_file_transfers
--get_host_info
--get_message_count
--get_messages
--get_notices
--get_project_status
--get_proxy_settings
--get_simple_gui_info
--get_state
--get_tasks
--get_old_tasks
--get_app_config $URL
--acct_mgr info
--get_project_config $SURL
--lookup_account $SURL vol@example.com secret12
--lookup_account $SURL vol@example.com wrongpass
--create_account $SURL %E pw123456 Volunteer
--create_account $SURL vol@example.com pw123456 Volunteer
--network_available
--read_cc_config
--read_global_prefs_override
--reset_host_info
--set_host_info testbox
--set_proxy_settings "" 0 "" "" "" 0 "" "" ""
--get_proxy_settings
--set_gpu_mode never 0
--set_network_mode always 0
--set_network_mode auto 0
--set_run_mode always 0
--set_run_mode auto 0
--task $URL %T suspend
--task $URL %T resume
--project $URL nomorework
--project $URL allowmorework
--project $URL suspend
--project $URL resume
--project $URL update
--project $URL detach_when_done
--project $URL dont_detach_when_done
--file_transfer $URL no_such_file retry
--file_transfer $URL no_such_file abort
--acct_mgr attach http://127.0.0.1:1/am/ name passwd
--join_acct_mgr http://127.0.0.1:1/am/ name passwd
--acct_mgr sync
--acct_mgr detach
--quit_acct_mgr
--run_graphics_app -1 run
--run_benchmarks
--quit
CMDS
mkdir -p "$WORK/ours" "$WORK/theirs"
i=0
while IFS= read -r line; do
    for who in ours theirs; do
        t=$OT port=$OUR_PORT pw=$OUR_PW dir=$C
        [ "$who" = theirs ] && t=$TT port=$RPC_PORT pw=$RPC_PW dir=$BOINC_DIR
        # the task running now (each job lasts about 25 s of CPU: the one
        # running at the start may have finished and been reported)
        case $line in *%T*) t=$(running "$who"); [ -n "$t" ] || t=${OT:-none} ;; esac
        l=${line//%T/$t}
        l=${l//%E/$who.$i@example.com}
        eval "set -- $l"
        (cd "$dir" && timeout 60 boinccmd --host "127.0.0.1:$port" --passwd "$pw" "$@") \
            > "$WORK/$who/$i" 2>&1 < /dev/null
        echo "exit $?" >> "$WORK/$who/$i"
    done
    i=$((i + 1))
done < "$WORK/cmds"

python3 "$VS_SOURCE_DIR/tests/integration/boinccmd_compare.py" "$WORK/cmds" "$WORK/ours" "$WORK/theirs" \
    "$VS_SOURCE_DIR/tests/integration/boinccmd_diffs.txt" > "$WORK/diffs" ||
    bad=1
[ -z "${xbad:-}" ] || { cat "$WORK/xdiffs"; echo "GUI RPC replies differ in shape (above)"; }
[ -z "${bad:-}" ] || { cat "$WORK/diffs"; echo "boinccmd prints differently (above)"; }
[ -z "${xbad:-}${bad:-}" ] || { keep=1; fail "unexplained differences from Debian's client"; }
grep '^stale: ' "$WORK/diffs" || true
echo "PASS: ${#OPS[@]} GUI RPC replies, $(grep -vc '^stale: ' "$WORK/xdiffs") differences; $(wc -l < "$WORK/cmds") boinccmd commands, $(grep -vc '^stale: ' "$WORK/diffs") differences, all explained"
