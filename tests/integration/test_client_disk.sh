#!/usr/bin/env bash
# The data directory on a 64 MiB tmpfs (mounting needs root, as the suite
# runs), two projects: a flooding one (flood_project.py "disk": 4 tasks each
# with its own 20 MiB input, and 21 files of 4 MiB down to 64 KiB that
# nothing names) and an honest `volsched serve` one with one small job.
# Preferences: BOINC's defaults but disk_min_free_gb 0.004 (the default
# 0.1 GB is more than this disk). Before the disk limits the client
# downloaded everything that still fitted, files nothing used included,
# until the file system was full (and its state writes failed). Now:
#  - the file system never fills: at most the allowed share of it is used
#    (disk_max_used_pct 90 of 64 MiB, less disk_min_free_gb);
#  - files nothing names are never downloaded ("Ignored ... files");
#  - the flooding project gets as much as its share allows and then
#    "Waiting for disk space to download big_N ...: this project uses ..."
#    (or the allowed total's message), and no more of its inputs arrive;
#  - the client keeps writing its state (no "Couldn't write state file"),
#    the scheduler requests carry the disk usage and share, GUI RPC
#    get_disk_usage has d_boinc and d_allowed, and the honest project's job
#    is run and validated. ~1 min.
set -uo pipefail
VSC_WORK_PREFIX=vs_client_disk
# shellcheck source=lib_vs_client.sh
. "$VS_SOURCE_DIR/tests/integration/lib_vs_client.sh"
SIZE=$((64 * 1024 * 1024))

MNT="$WORK/small"
mkdir -p "$MNT"
mount -t tmpfs -o size=64m tmpfs "$MNT" || fail "cannot mount a 64 MiB tmpfs on $MNT (this test needs root)"
trap 'vsc_stop; umount -l "$MNT" 2>/dev/null; vsc_finish' EXIT

vsc_project honest || fail "could not create the project"
VSC_CW_ARGS="--rsc_disk_bound 1e6" vsc_jobs primes 1 2e9 "1000000000 1000200000" || fail "create_work"
vsc_serve || fail "server did not start"
vsc_flood disk 4 20 || fail "the flooding project did not start"

C="$MNT/client"
vsc_client_dir "$C" "<disk_min_free_gb>0.004</disk_min_free_gb>"
"$VOLSCHED" client --dir "$C" attach "$FURL" "k" || fail "attach flood"
"$VOLSCHED" client --dir "$C" attach "$URL" "$AUTH" || fail "attach honest"
vsc_run "$C" || fail "client did not start"

used() { df -B1 --output=used "$MNT" | tail -1 | tr -d ' '; }
max_used=0
t0=$(date +%s)
waiting() { grep -q "\[flood\] Waiting for disk space to download big_" "$C/client.log"; }
while [ $(( $(date +%s) - t0 )) -lt 90 ]; do
    kill -0 "$VSC_PID" 2>/dev/null || fail "client died"
    u=$(used); [ "$u" -gt "$max_used" ] && max_used=$u
    [ "$(vsc_wus_done)" = 1 ] && waiting && [ $(( $(date +%s) - t0 )) -ge 20 ] && break
    sleep 0.2
done
u=$(used); [ "$u" -gt "$max_used" ] && max_used=$u
echo "peak use of the 64 MiB file system: $((max_used / 1048576)) MiB; flood inputs fetched: $(stat_of big_gets), unused files fetched: $(stat_of junk_gets)"
log="$C/client.log"
grep "Couldn't write state file" "$log" | head -3
grep -q "Couldn't write state file" "$log" && fail "state writes failed"
# 90% of the disk, less nothing: disk_max_used_pct is the tighter limit here
[ "$max_used" -le $((SIZE * 92 / 100)) ] || fail "the file system was filled to $((max_used * 100 / SIZE))%"
[ "$(stat_of junk_gets)" = 0 ] || fail "$(stat_of junk_gets) files nothing names were downloaded"
grep -q "\[flood\] Ignored 0 workunits no task of the reply names and 21 files nothing names" "$log" \
    || fail "no 'Ignored ... 21 files nothing names' message"
waiting || fail "no 'Waiting for disk space to download big_N' message for the flooding project"
grep "\[flood\] Waiting for disk space" "$log" | head -2
[ "$(stat_of big_gets)" -le 2 ] || fail "$(stat_of big_gets) inputs of 20 MiB were fetched for the flooding project (its share holds 2)"
[ "$(vsc_wus_done)" = 1 ] || fail "the honest project's job was not run and validated"
# the last scheduler request told its server the disk usage and share
req=$(ls "$C"/sched_request_127.0.0.1_"${PORT}"_honest.xml) || fail "no scheduler request file"
share=$(sed -n 's:.*<d_project_share>\([0-9.e+]*\)</d_project_share>.*:\1:p' "$req")
total=$(sed -n 's:.*<d_boinc_used_total>\([0-9.e+]*\)</d_boinc_used_total>.*:\1:p' "$req")
python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 0 < s < 64 * 2**20 and t > 40 * 2**20 else 1)" "${share:-0}" "${total:-0}" \
    || fail "the scheduler request's disk usage is off: d_project_share $share, d_boinc_used_total $total"
grep -q "<disk_min_free_gb>0.004" "$req" || fail "the request's working preferences lack disk_min_free_gb"
dus=$(vsc_bcmd --get_disk_usage) || fail "boinccmd --get_disk_usage"
grep -q "disk usage: 40" <<<"$dus" || fail "boinccmd --get_disk_usage lacks the flooding project's 40 MB: $dus"
# the raw reply (read-only from 127.0.0.1: no password): what boinctui needs
du=$(python3 - "$RPC_PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"<boinc_gui_rpc_request>\n<get_disk_usage/>\n</boinc_gui_rpc_request>\n\003")
buf = b""
while not buf.endswith(b"\003"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(buf.decode(errors="replace"))
PY
)
for tag in d_total d_free d_boinc d_allowed; do
    grep -q "<$tag>[0-9]" <<<"$du" || fail "get_disk_usage lacks <$tag>: $du"
done
# the state is still being written: a change now reaches the file
before=$(stat -c %y "$C/client_state.xml")
vsc_bcmd --project "$URL" suspend >/dev/null || fail "suspend"
written() { [ "$(stat -c %y "$C/client_state.xml")" != "$before" ]; }
for _ in $(seq 1 50); do written && break; sleep 0.2; done
written || fail "the state file was not written in 10 s after a change"
grep -q "<suspended_via_gui" "$C/client_state.xml" || fail "the state file lacks the suspension"
vsc_stop
echo "ok: peak use $((max_used * 100 / SIZE))% of the disk, $(stat_of big_gets) flood inputs, no unused file fetched, state kept, honest job done"
