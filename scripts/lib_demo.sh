# shellcheck shell=bash
# Helpers shared by scripts/demo.sh and tests/integration/test_real_client.sh:
# build a small demo project with the examples/primes app, serve it, and run
# Debian's boinc-client against it in a private directory on loopback.
#
# Everything started here is recorded by pid and stopped by pid
# (demo_stop_all); nothing is killed by name.
#
# Caller sets: VOLSCHED (binary), PRIMES (the example app binary), WORK (an
# empty scratch directory). Functions set: PORT, URL, AUTH, SERVE_PID,
# BOINC_DIR, BOINC_PID, RPC_PORT, RPC_PW.

demo_free_port() {
    python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()'
}

# demo_make_project NJOBS STEP: a project with NJOBS prime-counting jobs,
# job i counting the primes in [1e9 + i*STEP, 1e9 + (i+1)*STEP) (1e6 numbers: ~1.3 s CPU).
demo_make_project() {
    local njobs=$1 step=$2 base=1000000000
    PORT=$(demo_free_port)
    URL="http://127.0.0.1:$PORT/demo/"
    "$VOLSCHED" init "$WORK/project" --name "volsched demo" --url "$URL" >/dev/null || return 1
    "$VOLSCHED" app add --project "$WORK/project" --name primes \
        --platform x86_64-pc-linux-gnu --version 100 "$PRIMES" >/dev/null || return 1
    AUTH=$("$VOLSCHED" user add --project "$WORK/project" --name volunteer) || return 1
    mkdir -p "$WORK/inputs"
    local i lines=""
    for i in $(seq 1 "$njobs"); do
        echo "$((base + (i - 1) * step)) $((base + i * step))" > "$WORK/inputs/primes_in_$i"
        lines+="--wu_name primes_job_$i $WORK/inputs/primes_in_$i"$'\n'
    done
    # ~20 s estimates at the client's default 1 GFLOPS, one day to report.
    printf '%s' "$lines" | "$VOLSCHED" create_work --project "$WORK/project" --appname primes \
        --rsc_fpops_est 2e10 --rsc_fpops_bound 2e14 --delay_bound 86400 --stdin >/dev/null
}

demo_serve() {
    "$VOLSCHED" serve --project "$WORK/project" --listen "127.0.0.1:$PORT" --foreground \
        >"$WORK/serve.log" 2>&1 &
    SERVE_PID=$!
    local _
    for _ in $(seq 1 50); do
        curl -sf "$URL" >/dev/null 2>&1 && return 0
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.2
    done
    echo "server did not come up:"; cat "$WORK/serve.log"
    return 1
}

demo_bcmd() { (cd "$BOINC_DIR" && boinccmd --host "127.0.0.1:$RPC_PORT" --passwd "$RPC_PW" "$@"); }

# Starts boinc in $WORK/boinc with short retry backoffs, small work buffers and
# prefs that keep it computing on a busy machine; attaches it to $URL.
# DEMO_CC_OPTIONS (optional) is extra XML for cc_config.xml's <options>,
# DEMO_LOG_FLAGS (optional) extra XML for its <log_flags>, DEMO_BOINC_ARGS
# (optional) more command-line options of boinc. With DEMO_NO_ATTACH=1 it
# only starts the client (the caller attaches).
demo_client_start() {
    BOINC_DIR="$WORK/boinc"
    mkdir -p "$BOINC_DIR"
    RPC_PORT=$(demo_free_port)
    RPC_PW=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$RPC_PW" > "$BOINC_DIR/gui_rpc_auth.cfg"
    chmod 600 "$BOINC_DIR/gui_rpc_auth.cfg"
    cat > "$BOINC_DIR/cc_config.xml" <<EOF
<cc_config>
  <log_flags>
    <task>1</task><file_xfer>1</file_xfer><sched_ops>1</sched_ops>
    <sched_op_debug>1</sched_op_debug><file_xfer_debug>1</file_xfer_debug>
    ${DEMO_LOG_FLAGS:-}
  </log_flags>
  <options>
    <skip_cpu_benchmarks>1</skip_cpu_benchmarks>
    <no_gpus>1</no_gpus>
    <no_info_fetch>1</no_info_fetch>
    <dont_contact_ref_site>1</dont_contact_ref_site>
    <ncpus>2</ncpus>
    ${DEMO_CC_OPTIONS:-}
  </options>
</cc_config>
EOF
    cat > "$BOINC_DIR/global_prefs_override.xml" <<'EOF'
<global_preferences>
   <run_if_user_active>1</run_if_user_active>
   <run_on_batteries>1</run_on_batteries>
   <suspend_cpu_usage>0</suspend_cpu_usage>
   <suspend_if_no_recent_input>0</suspend_if_no_recent_input>
   <max_ncpus_pct>100</max_ncpus_pct>
   <cpu_usage_limit>100</cpu_usage_limit>
   <work_buf_min_days>0</work_buf_min_days>
   <work_buf_additional_days>0.001</work_buf_additional_days>
   <disk_min_free_gb>0.01</disk_min_free_gb>
   <disk_max_used_pct>100</disk_max_used_pct>
</global_preferences>
EOF
    (cd "$BOINC_DIR" && exec boinc --dir "$BOINC_DIR" --gui_rpc_port "$RPC_PORT" \
        --skip_cpu_benchmarks --no_gpus \
        --sched_retry_delay_min 5 --sched_retry_delay_max 60 \
        --pers_retry_delay_min 5 --pers_retry_delay_max 60 \
        --master_fetch_interval 10 ${DEMO_BOINC_ARGS:-}) >"$BOINC_DIR/client.log" 2>&1 &
    BOINC_PID=$!
    local _
    for _ in $(seq 1 60); do
        demo_bcmd --client_version >/dev/null 2>&1 && break
        kill -0 "$BOINC_PID" 2>/dev/null || { echo "boinc exited:"; cat "$BOINC_DIR/client.log"; return 1; }
        sleep 0.5
    done
    [ "${DEMO_NO_ATTACH:-0}" = 1 ] && return 0
    demo_bcmd --project_attach "$URL" "$AUTH" >/dev/null 2>&1 || return 1
    sleep 1
    if grep -qE 'Invalid URL|Missing account key' "$BOINC_DIR/client.log"; then
        echo "the client refused the attach:"; grep -E 'Invalid URL|Missing account key' "$BOINC_DIR/client.log"
        return 1
    fi
}

# Counters read from the client's own log and GUI RPC.
demo_count() { grep -c -- "$1" "$BOINC_DIR/client.log" 2>/dev/null || true; }
demo_tasks_received() {
    grep -o 'Scheduler request completed: got [0-9]* new tasks' "$BOINC_DIR/client.log" 2>/dev/null \
        | awk '{s+=$5} END{print s+0}'
}
demo_tasks_running() { demo_bcmd --get_tasks 2>/dev/null | grep -c 'active_task_state: EXECUTING' || true; }

demo_progress_line() {
    local t=$1
    printf '[%3ss] tasks received %s | downloads finished %s | started %s | running now %s | finished %s\n' \
        "$t" "$(demo_tasks_received)" "$(demo_count 'Finished download of')" \
        "$(demo_count 'Starting task')" "$(demo_tasks_running)" \
        "$(demo_count 'Computation for task .* finished')"
}

# Children of a pid (app processes the client started), without procps.
demo_children_of() {
    local f
    for f in /proc/[0-9]*/status; do
        awk -v p="$1" '$1=="PPid:" && $2==p {found=1} END{exit !found}' "$f" 2>/dev/null \
            && basename "$(dirname "$f")"
    done
}

demo_client_stop() {
    [ -n "${BOINC_PID:-}" ] || return 0
    if kill -0 "$BOINC_PID" 2>/dev/null; then
        local kids _
        kids=$(demo_children_of "$BOINC_PID" | tr "\n" " " || true)
        demo_bcmd --quit >/dev/null 2>&1
        for _ in $(seq 1 20); do kill -0 "$BOINC_PID" 2>/dev/null || break; sleep 0.5; done
        if kill -0 "$BOINC_PID" 2>/dev/null; then kill -TERM "$BOINC_PID" 2>/dev/null; sleep 1; fi
        if kill -0 "$BOINC_PID" 2>/dev/null; then kill -KILL "$BOINC_PID" 2>/dev/null; fi
        wait "$BOINC_PID" 2>/dev/null || true
        for k in $kids; do
            if kill -0 "$k" 2>/dev/null; then kill -KILL "$k" 2>/dev/null || true; fi
        done
    fi
    BOINC_PID=""
    return 0
}

# Stops the server with SIGTERM and returns its exit status (0 = clean).
demo_serve_stop() {
    [ -n "${SERVE_PID:-}" ] || return 0
    local rc=0
    if kill -0 "$SERVE_PID" 2>/dev/null; then
        kill -TERM "$SERVE_PID" 2>/dev/null
        wait "$SERVE_PID" || rc=$?
    fi
    SERVE_PID=""
    return $rc
}

demo_stop_all() {
    demo_client_stop
    demo_serve_stop
}
