#!/usr/bin/env bash
# The layers as the linker sees them (src/layers.txt, docs/architecture.md):
#  1. a layer's library takes symbols only from the layers it says it uses;
#  2. a program (unit test, benchmark, fuzz replay) is linked with the
#     system libraries of its layers only: a policy test's link line has
#     neither libpq, SQLite nor libmicrohttpd, and its binary needs none.
# Usage: test_link_layers.sh BUILD_DIR (a Ninja build, as every preset's;
# CTest passes it).
set -uo pipefail
build=${1:?usage: test_link_layers.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
status=0
fail() { echo "FAIL: $*"; status=1; }

declare -A uses
while IFS='|' read -r name used _; do
    name=$(echo "$name" | tr -d ' ')
    [[ -z "$name" || "$name" == \#* ]] && continue
    uses[$name]=" $(echo "$used" | tr -s ' ' | sed 's/^ //; s/ $//; s/^-$//') "
done < "$src/src/layers.txt"

# 1. Which library defines each global symbol, then whom each library asks
# (one nm per library: "U sym" for what it asks, "addr T sym" for what it has).
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
declare -A owner
for lib in "$build"/libvs_*.a; do
    l=$(basename "$lib" .a); l=${l#libvs_}
    [ -n "${uses[$l]+x}" ] || continue
    nm -g "$lib" 2>/dev/null > "$tmp/$l"
    while read -r sym; do owner[$sym]=$l; done < <(awk 'NF == 3 && $2 ~ /[TDBRCV]/ {print $3}' "$tmp/$l")
done
[ ${#owner[@]} -gt 100 ] || fail "no layer libraries with symbols under $build"
nlib=0
for f in "$tmp"/*; do
    l=$(basename "$f")
    nlib=$((nlib + 1))
    while read -r sym; do
        o=${owner[$sym]:-}
        [ -z "$o" ] || [ "$o" = "$l" ] && continue
        case "${uses[$l]}" in *" $o "*) ;; *) fail "layer $l uses $sym of layer $o" ;; esac
    done < <(awk '$1 == "U" {print $2}' "$f" | sort -u)
done
echo "layer libraries checked: $nlib"

# 2. Link lines. programs.txt (written by cmake/layers.cmake): target layers...
closure() { # the layers $@ reach through uses
    local todo=("$@") seen=" " l u
    while [ ${#todo[@]} -gt 0 ]; do
        l=${todo[0]}; todo=("${todo[@]:1}")
        case "$seen" in *" $l "*) continue ;; esac
        seen="$seen$l "
        for u in ${uses[$l]:-}; do todo+=("$u"); done
    done
    echo "$seen"
}
# Each program's link libraries, from the Ninja build file (one read).
declare -A linkline
while IFS=$'\t' read -r t libs; do linkline[$t]=$libs; done < <(awk '
    /^build [^:]*: C_EXECUTABLE_LINKER/ { t = $2; sub(/:$/, "", t); sub(/^.*\//, "", t) }
    /^  LINK_LIBRARIES = / && t != "" { sub(/^  LINK_LIBRARIES = /, ""); print t "\t" $0; t = "" }' \
    "$build/build.ninja")
npol=0; nprog=0
while read -r target layers; do
    [ -x "$build/$target" ] || continue
    nprog=$((nprog + 1))
    reach=$(closure $layers)
    line=${linkline[$target]:-}
    [ -n "$line" ] || { fail "$target: no link line in build.ninja"; continue; }
    needed=$(readelf -d "$build/$target" | awk '/NEEDED/ {print $NF}')
    check() { # system library pattern, the layer that may bring it
        case "$reach" in *" $2 "*) return ;; esac
        if echo "$line" | grep -qE "$1"; then fail "$target ($layers) links $1 (of layer $2)"; fi
        if echo "$needed" | grep -qE "$1"; then fail "$target ($layers) needs $1 (of layer $2)"; fi
    }
    check 'libpq|-lpq\b' store
    check 'sqlite3' store
    check 'microhttpd' server
    if [ "$reach" = " policy common " ] || [ "$reach" = " common policy " ]; then
        npol=$((npol + 1))
        for l in store server client config proto sim popsim; do
            echo "$line" | grep -q "libvs_$l\.a" && fail "$target (a policy test) links vs_$l"
        done
    fi
done < "$build/layers/programs.txt"
echo "programs checked: $nprog, of which policy-only: $npol"
[ "$nprog" -gt 0 ] && [ "$npol" -gt 0 ] || fail "nothing to check (programs.txt, policy tests)"
[ $status -eq 0 ] && echo "link layers: ok"
exit $status
