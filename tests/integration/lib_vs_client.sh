# shellcheck shell=bash
# Set-up shared by the tests that run `volsched client` against `volsched
# serve` on loopback (test_client_*.sh). Not named test_*.sh, so CTest does
# not run it on its own. Source it after setting VSC_WORK_PREFIX (the stem
# of the work directory's name under /tmp).
#
# It checks the tools and the example apps, makes $WORK, sources
# scripts/lib_demo.sh (demo_free_port, demo_serve, demo_serve_stop),
# stops everything it started on exit, by pid (keeping $WORK after a
# failure), and defines:
#   vsc_project NAME             init + app add primes and boincapp + user add, in $WORK/NAME
#                                (sets PROJ, PORT, URL, AUTH; serve it with vsc_serve)
#   vsc_jobs APP N FPOPS TEXT [BOUND [DELAY]]  N jobs of APP in $PROJ (NAME_job_i)
#   vsc_serve                    serves $PROJ on $PORT (sets SERVE_PID; several allowed)
#   vsc_client_dir DIR [XML]     a client data dir with test prefs (XML: extra
#                                global_prefs_override elements; the buffer:
#                                work_buf_min_days VSC_BUF_DAYS, default 0.0005,
#                                work_buf_additional_days VSC_EXTRA_DAYS, default 0); apps keep normal
#                                priority (<no_priority_change>, VSC_NO_PRIO=0: nice 19
#                                + SCHED_IDLE as by default), so other load on the
#                                machine does not starve the tests' apps; the scheduler
#                                RPC backoff's bounds are 2-10 s (VSC_RETRY_MIN/MAX)
#   vsc_run DIR                  starts `volsched client run --foreground` (sets VSC_PID, RPC_PORT)
#   vsc_bcmd ARGS...             Debian's boinccmd against that client
#   vsc_wait_executing [SECS]    waits (90 s) until a task is EXECUTING; prints its name
#   vsc_benchmark DIR            runs the client in DIR until its benchmark is in the
#                                state file, stops it, prints p_fpops (empty: none)
#   vsc_kill9                    kill -9 the client (its apps are left behind)
#   vsc_stop                     boinccmd --quit, then TERM/KILL by pid
#   vsc_store SQL                sqlite3 on $PROJ's store
#   vsc_flood MODE ARGS...       starts flood_project.py (a project that floods the client)
#                                on a free port (sets FURL, STATS); stat_of KEY reads its counters
#   fail MSG                     prints MSG and the client's and servers' log tails, exits 1
: "${VOLSCHED:?VOLSCHED must name the built binary}"
: "${VS_SOURCE_DIR:?}" "${VS_BINARY_DIR:?}" "${VSC_WORK_PREFIX:?}"
PRIMES="$VS_BINARY_DIR/examples/primes"
BOINCAPP="$VS_BINARY_DIR/examples/boincapp"

for tool in boinccmd curl python3 sqlite3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' is not installed (bash scripts/setup.sh)"; exit 1; }
done
[ -x "$PRIMES" ] || { echo "FAIL: example app not built: $PRIMES"; exit 1; }
[ -x "$BOINCAPP" ] || { echo "FAIL: example app not built: $BOINCAPP (libboinc-app-dev missing?)"; exit 1; }

WORK=$(mktemp -d "/tmp/$VSC_WORK_PREFIX.XXXXXX")
# shellcheck source=../../scripts/lib_demo.sh
. "$VS_SOURCE_DIR/scripts/lib_demo.sh"
VSC_PID=""
VSC_DIR=""
SERVE_PIDS=""
keep=0

# Processes whose cwd is under $WORK: the apps a killed client left behind.
vsc_orphans() {
    local p cwd
    for p in /proc/[0-9]*; do
        cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
        case "$cwd" in "$WORK"/*) basename "$p" ;; esac
    done
}

vsc_finish() {
    vsc_stop
    local p
    for p in $SERVE_PIDS; do
        if kill -0 "$p" 2>/dev/null; then kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; fi
    done
    for p in $(vsc_orphans); do kill -KILL "$p" 2>/dev/null || true; done
    if [ "$keep" = 1 ]; then echo "(work dir kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap vsc_finish EXIT

fail() {
    echo "FAIL: $*"
    if [ -n "$VSC_DIR" ] && [ -f "$VSC_DIR/client.log" ]; then
        echo "---- client log (last 40 lines) ----"; tail -40 "$VSC_DIR/client.log"
    fi
    local l
    for l in "$WORK"/*.serve.log; do
        [ -f "$l" ] && { echo "---- $l (last 10 lines) ----"; tail -10 "$l"; }
    done
    keep=1
    exit 1
}

vsc_project() {
    local name=$1
    PROJ="$WORK/$name"
    PORT=$(demo_free_port)
    URL="http://127.0.0.1:$PORT/$name/"
    "$VOLSCHED" init "$PROJ" --name "$name" --url "$URL" >/dev/null || return 1
    "$VOLSCHED" app add --project "$PROJ" --name primes --platform x86_64-pc-linux-gnu \
        --version 100 "$PRIMES" >/dev/null || return 1
    "$VOLSCHED" app add --project "$PROJ" --name boincapp --platform x86_64-pc-linux-gnu \
        --version 100 --api-version 7.20.5 "$BOINCAPP" >/dev/null || return 1
    AUTH=$("$VOLSCHED" user add --project "$PROJ" --name volunteer) || return 1
}

# vsc_jobs APP N FPOPS "INPUT TEXT" [BOUND [DELAY]]: job i's input is the text
# with {i} replaced by i; BOUND is rsc_fpops_bound (default 1e15), DELAY the
# delay bound in seconds (default 86400). VSC_CW_ARGS: more create_work options.
vsc_jobs() {
    local app=$1 n=$2 fpops=$3 text=$4 bound=${5:-1e15} delay=${6:-86400} i lines="" tag=${VSC_JOB_TAG:-}
    mkdir -p "$PROJ.inputs"
    for i in $(seq 1 "$n"); do
        printf '%s\n' "${text//\{i\}/$i}" > "$PROJ.inputs/${app}${tag}_in_$i"
        lines+="--wu_name ${app}${tag}_job_$i $PROJ.inputs/${app}${tag}_in_$i"$'\n'
    done
    printf '%s' "$lines" | "$VOLSCHED" create_work --project "$PROJ" --appname "$app" \
        --rsc_fpops_est "$fpops" --rsc_fpops_bound "$bound" --delay_bound "$delay" \
        ${VSC_CW_ARGS:-} --stdin >/dev/null
}

vsc_serve() {
    local log="$WORK/$(basename "$PROJ").serve.log"
    "$VOLSCHED" serve --project "$PROJ" --listen "127.0.0.1:$PORT" --daemon-interval 200 \
        >"$log" 2>&1 &
    local pid=$! _
    SERVE_PIDS="$SERVE_PIDS $pid"
    SERVE_PID=$pid
    for _ in $(seq 1 50); do
        curl -sf "$URL" >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    echo "server did not come up:"; cat "$log"
    return 1
}

vsc_client_dir() {
    VSC_DIR=$1
    mkdir -p "$VSC_DIR"
    RPC_PW=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$RPC_PW" > "$VSC_DIR/gui_rpc_auth.cfg"
    chmod 600 "$VSC_DIR/gui_rpc_auth.cfg"
    cat > "$VSC_DIR/cc_config.xml" <<EOF
<cc_config>
  <options>
    <ncpus>${VSC_NCPUS:-2}</ncpus>
    <report_results_immediately>1</report_results_immediately>
    <no_priority_change>${VSC_NO_PRIO:-1}</no_priority_change>
    <sched_retry_delay_min>${VSC_RETRY_MIN:-2}</sched_retry_delay_min>
    <sched_retry_delay_max>${VSC_RETRY_MAX:-10}</sched_retry_delay_max>
    <pers_retry_delay_min>2</pers_retry_delay_min>
    <pers_retry_delay_max>10</pers_retry_delay_max>
  </options>
</cc_config>
EOF
    cat > "$VSC_DIR/global_prefs_override.xml" <<EOF
<global_preferences>
   <work_buf_min_days>${VSC_BUF_DAYS:-0.0005}</work_buf_min_days>
   <work_buf_additional_days>${VSC_EXTRA_DAYS:-0}</work_buf_additional_days>
   <disk_interval>1</disk_interval>
   ${2:-}
</global_preferences>
EOF
}

vsc_bcmd() { (cd "$VSC_DIR" && boinccmd --host "127.0.0.1:$RPC_PORT" --passwd "$RPC_PW" "$@"); }

# The client's tasks running now, and the most running over N one-second
# samples.
vsc_running() { vsc_bcmd --get_tasks 2>/dev/null | grep -c 'active_task_state: EXECUTING' || true; }
vsc_max_running() {
    local m=0 k _
    for _ in $(seq 1 "$1"); do
        k=$(vsc_running)
        [ "$k" -gt "$m" ] && m=$k
        sleep 1
    done
    echo "$m"
}

vsc_wait_executing() {
    local t0 n
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "${1:-90}" ]; do
        n=$(vsc_bcmd --get_tasks 2>/dev/null |
            awk '/^   name: /{n=$2} /active_task_state: EXECUTING/{print n; exit}')
        [ -n "$n" ] && { printf '%s\n' "$n"; return 0; }
        sleep 1
    done
    return 1
}

vsc_run() {
    VSC_DIR=$1
    local _ try from
    # A port found free can be taken by a test running beside this one
    # before the client binds it: then another port, a few times.
    for try in 1 2 3 4 5; do
        RPC_PORT=$(demo_free_port)
        from=$(($(cat "$VSC_DIR/client.log" 2>/dev/null | wc -l) + 1))
        "$VOLSCHED" client --dir "$VSC_DIR" run --foreground --gui_rpc_port "$RPC_PORT" \
            ${VSC_POLICY:+--policy "$VSC_POLICY"} >>"$VSC_DIR/client.log" 2>&1 &
        VSC_PID=$!
        for _ in $(seq 1 100); do
            vsc_bcmd --client_version >/dev/null 2>&1 && return 0
            if ! kill -0 "$VSC_PID" 2>/dev/null; then
                wait "$VSC_PID" 2>/dev/null
                if tail -n +"$from" "$VSC_DIR/client.log" |
                    grep "GUI RPC bind to port $RPC_PORT failed: Address already in use" >/dev/null; then
                    echo "(port $RPC_PORT taken meanwhile, try $try: another)"
                    continue 2
                fi
                echo "client exited:"; tail -20 "$VSC_DIR/client.log"; return 1
            fi
            sleep 0.1
        done
        echo "client GUI RPC did not answer"; return 1
    done
    echo "client could not bind a GUI RPC port in 5 tries"; return 1
}

vsc_benchmark() {
    vsc_run "$1" >&2 || return 1
    local fp="" _
    for _ in $(seq 1 100); do
        fp=$(sed -n 's:.*<p_fpops>\([0-9.e+]*\)</p_fpops>.*:\1:p' "$1/client_state.xml" 2>/dev/null | head -1)
        [ -n "$fp" ] && break
        sleep 0.1
    done
    vsc_stop
    printf '%s\n' "$fp"
}

vsc_kill9() {
    [ -n "$VSC_PID" ] || return 0
    kill -KILL "$VSC_PID" 2>/dev/null
    wait "$VSC_PID" 2>/dev/null
    VSC_PID=""
}

vsc_stop() {
    [ -n "$VSC_PID" ] || return 0
    if kill -0 "$VSC_PID" 2>/dev/null; then
        vsc_bcmd --quit >/dev/null 2>&1
        local _
        for _ in $(seq 1 100); do kill -0 "$VSC_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$VSC_PID" 2>/dev/null; then kill -TERM "$VSC_PID" 2>/dev/null; sleep 1; fi
        if kill -0 "$VSC_PID" 2>/dev/null; then kill -KILL "$VSC_PID" 2>/dev/null; fi
    fi
    wait "$VSC_PID" 2>/dev/null
    VSC_PID=""
    return 0
}

vsc_store() { sqlite3 "$PROJ/volsched.db" "$1"; }

vsc_flood() {
    local port _ mode=$1
    shift
    port=$(demo_free_port)
    STATS="$WORK/flood.json"
    FURL="http://127.0.0.1:$port/p/"
    python3 "$VS_SOURCE_DIR/tests/integration/flood_project.py" "$port" "$mode" "$STATS" "$@" &
    SERVE_PIDS="$SERVE_PIDS $!"
    for _ in $(seq 1 50); do curl -sf "$FURL" >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "flood_project.py did not come up"
    return 1
}
stat_of() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$STATS" "$1"; }

# Workunits of $PROJ done: assimilated with a canonical result.
vsc_wus_done() { vsc_store "select count(*) from workunit where assimilate_state=2 and canonical_resultid>0"; }
