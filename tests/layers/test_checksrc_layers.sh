#!/usr/bin/env bash
# scripts/checksrc.sh refuses an include that runs upward or sideways
# between layers (src/layers.txt): each bad file below, alone in a scratch
# tree with the real src/layers.txt and include/volsched/, must fail the
# check with its reason; each good one must pass. (CI runs checksrc on the
# tree itself.)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/include/volsched" "$tmp/bench" "$tmp/tests/unit"
cp "$here/src/layers.txt" "$tmp/src/"
cp "$here"/include/volsched/*.h "$tmp/include/volsched/"
status=0

put() { # path, then the lines of the file
    local f=$1; shift
    mkdir -p "$(dirname "$tmp/$f")"
    printf '%s\n' "$@" > "$tmp/$f"
}
refused() { # path, what the message must say
    local out rc
    out=$(VS_CHECKSRC_ROOT=$tmp bash "$here/scripts/checksrc.sh" "$1" 2>&1); rc=$?
    if [ $rc -eq 0 ]; then
        echo "FAIL: $1 passed checksrc; want refused ($2)"; status=1
    elif ! grep -qF -- "$2" <<<"$out"; then
        echo "FAIL: $1 refused without \"$2\":"; echo "$out" | sed 's/^/    /'; status=1
    else
        echo "ok: $1 refused: $(head -1 <<<"$out")"
    fi
}
allowed() {
    local out
    if ! out=$(VS_CHECKSRC_ROOT=$tmp bash "$here/scripts/checksrc.sh" "$1" 2>&1); then
        echo "FAIL: $1 refused; want allowed:"; echo "$out" | sed 's/^/    /'; status=1
    else
        echo "ok: $1 allowed"
    fi
}

# Sideways into another layer's private header (popsim used sim's).
put src/popsim/pop_bad.c '#include "sim/host_sim.h"'
refused src/popsim/pop_bad.c 'a private header of layer sim'
# Upward: policy is pure and uses nothing but common.
put src/policy/server/bad.c '#include "volsched/store.h"'
refused src/policy/server/bad.c 'layer policy includes volsched/store.h of layer store'
put src/sim/bad.c '#include "volsched/popsim.h"'
refused src/sim/bad.c 'layer sim includes volsched/popsim.h of layer popsim'
# Sideways between two top layers.
put src/client/bad.c '#include "volsched/sched.h"'
refused src/client/bad.c 'layer client includes volsched/sched.h of layer server'
# The store's backend-neutral code names no database.
put src/store/store_bad.c '#include <sqlite3.h>'
refused src/store/store_bad.c 'includes <sqlite3.h>, which only'
put src/store/store_db_bad.h '#include <libpq-fe.h>'
refused src/store/store_db_bad.h 'includes <libpq-fe.h>, which only'
# A public header pulls in no private one.
put include/volsched/store_bad.h '#include "store/store_int.h"'
sed -i 's/^\(store  |[^|]*|.*\)$/\1 store_bad/' "$tmp/src/layers.txt"
refused include/volsched/store_bad.h 'a private header of layer store'
# A program uses the public headers only.
put bench/bench_bad.c '#include "server/sched_int.h"'
refused bench/bench_bad.c 'a private header of layer server'
# Every public header has a layer.
put include/volsched/orphan.h '#define VS_ORPHAN 1'
refused include/volsched/orphan.h 'a public header without a layer'
put src/cli/bad.c '#include "volsched/nosuch.h"'
refused src/cli/bad.c 'include/volsched/nosuch.h has no layer'

# What the layers may do.
put src/popsim/pop_good.c '#include <math.h>' '#include "popsim/pop_int.h"' \
    '#include "volsched/hsim.h"' '#include "volsched/server_policy.h"' '#include "volsched/alloc.h"'
allowed src/popsim/pop_good.c
put src/store/store_sqlite_good.c '#include <sqlite3.h>' '#include "store/store_int.h"'
allowed src/store/store_sqlite_good.c
put src/server/good.c '#include <microhttpd.h>' '#include "server/sched_int.h"' \
    '#include "volsched/store.h"' '#include "volsched/proto.h"'
allowed src/server/good.c
put src/cli/good.c '#include "volsched/store.h"' '#include "volsched/popsim.h"' '#include "cli_util.h"'
allowed src/cli/good.c
put tests/unit/test_good.c '#include <sqlite3.h>' '#include "server/sched_int.h"'
allowed tests/unit/test_good.c
exit $status
