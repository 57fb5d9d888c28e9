#!/usr/bin/env bash
# Transfers against `volsched serve`, with the data directory on a small
# tmpfs (4 MB; mounting needs root, as the suite runs):
#  - upload resume: a task's output is computed while the network mode is
#    "never"; the first half of it is put in the server's upload directory
#    (as an upload cut off midway leaves it); with the network back the
#    client asks get_file_size, sends only the rest ("Resuming upload"), and
#    the server's file is the app's output byte for byte; the job validates.
#  - a full disk: a job whose 8 MB input cannot fit gets "Disk full while
#    downloading F: ..." in the log and in --get_messages, nothing of it is
#    left on the disk, and the client goes on: the other jobs complete.
set -uo pipefail
# grep -q stops reading at the first match, so under pipefail the writer may
# die of SIGPIPE and fail the check: qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }
VSC_WORK_PREFIX=vs_client_xfer
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"

MNT="$WORK/small"
mkdir -p "$MNT"
mount -t tmpfs -o size=4m tmpfs "$MNT" || fail "cannot mount a 4 MB tmpfs on $MNT (this test needs root)"
trap 'vsc_stop; umount -l "$MNT" 2>/dev/null; vsc_finish' EXIT

vsc_project xfer || fail "could not create the project"
# the server keeps uploads an hour after assimilation: the test reads it
sed -i 's|<delete_delay_hours>0</delete_delay_hours>|<delete_delay_hours>1</delete_delay_hours>|' "$PROJ/config.xml"
grep -q '<delete_delay_hours>1<' "$PROJ/config.xml" || fail "could not set delete_delay_hours"
# a 1 MB disk bound: the server checks it against the client's free disk
VSC_CW_ARGS="--rsc_disk_bound 1e6" vsc_jobs primes 3 2e9 "1000000000 1000500000" \
    || fail "create_work primes"   # ~0.5 s each
head -c 8000000 /dev/urandom > "$PROJ.inputs/big_in"
printf -- '--wu_name big_job %s\n' "$PROJ.inputs/big_in" | "$VOLSCHED" create_work --project "$PROJ" \
    --appname primes --rsc_fpops_est 2e9 --rsc_fpops_bound 1e15 --delay_bound 86400 \
    --rsc_disk_bound 1e6 --stdin >/dev/null \
    || fail "create_work big_job"
vsc_serve || fail "server did not start"
C="$MNT/client"
# BOINC's default disk_min_free_gb (0.1 GB) is more than this disk: with it,
# the server sends nothing and the client fetches nothing (test_client_disk.sh)
vsc_client_dir "$C" "<disk_min_free_gb>0</disk_min_free_gb>"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach"
vsc_run "$C" || fail "client did not start"

wait_for() { # SECONDS COMMAND...
    local t=$1 t0
    shift
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "$t" ]; do "$@" && return 0; sleep 0.5; done
    return 1
}
# the network goes off as soon as the first task runs: its output stays here
started() { grep -q "Starting task primes_job_" "$C/client.log"; }
wait_for 60 started || fail "no task started"
vsc_bcmd --set_network_mode never || fail "set_network_mode never"
finished() { grep -q "Computation for task primes_job_.* finished" "$C/client.log"; }
wait_for 60 finished || fail "no task finished"
sleep 1
T=$(grep -o "Computation for task primes_job_[0-9]*_0 finished" "$C/client.log" | head -1 | awk '{print $4}')
pdir="$C/projects/127.0.0.1_${PORT}_xfer"
out=$(find "$pdir" -maxdepth 1 -name "${T}_r*_0" | head -1)
[ -n "$out" ] && [ -s "$out" ] || fail "no output file of $T in $pdir"
grep -q "Started upload of $(basename "$out")" "$C/client.log" && fail "uploaded with the network mode never"
name=$(basename "$out")
size=$(stat -c %s "$out")
want=$(md5sum < "$out" | cut -d' ' -f1)
# where the server keeps it (BOINC's dir_hier_path, fanout from config.xml)
fanout=$(sed -n 's:.*<uldl_dir_fanout>\([0-9]*\)</uldl_dir_fanout>.*:\1:p' "$PROJ/config.xml")
updir=$(sed -n 's:.*<upload_dir>\(.*\)</upload_dir>.*:\1:p' "$PROJ/config.xml")
srv="$updir/$(python3 -c 'import hashlib,sys; print("%x" % (int(hashlib.md5(sys.argv[1].encode()).hexdigest()[1:8], 16) % int(sys.argv[2])))' "$name" "$fanout")/$name"
mkdir -p "$(dirname "$srv")"
half=$((size / 2))
[ "$half" -gt 0 ] || fail "output of $T too small to split ($size bytes)"
head -c "$half" "$out" > "$srv"
vsc_bcmd --set_network_mode auto || fail "set_network_mode auto"
resumed() { grep -q "Resuming upload of $name" "$C/client.log"; }
wait_for 30 resumed || fail "no 'Resuming upload of $name' (get_file_size not honoured)"
up() { grep -q "Finished upload of $name" "$C/client.log"; }
wait_for 30 up || fail "upload of $name did not finish"
got=$(md5sum < "$srv" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the server's $name ($(stat -c %s "$srv") bytes) is not the output ($size bytes)"
valid() { [ "$(vsc_store "select count(*) from result where name='$T' and validate_state=1")" = 1 ]; }
wait_for 60 valid || fail "$T did not validate after the resumed upload"

# the full disk: the big input never fits; the small jobs all complete
full() { vsc_bcmd --get_messages 0 | qgrep "Disk full while downloading big_in: it needs"; }
wait_for 30 full || fail "no 'Disk full while downloading big_in' in --get_messages"
grep -q "Disk full while downloading big_in: it needs" "$C/client.log" || fail "no disk-full message in the log"
small_done() { [ "$(vsc_store "select count(*) from workunit where name like 'primes_job_%' and assimilate_state=2")" = 3 ]; }
wait_for 90 small_done || fail "the other jobs did not complete beside the full disk"
kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
[ -e "$pdir/big_in" ] && fail "a partial big_in was left on the full disk ($(stat -c %s "$pdir/big_in") bytes)"
vsc_stop
echo "ok: upload resumed at byte $half of $size (server file identical, validated); disk full reported, other jobs completed"
