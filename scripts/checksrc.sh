#!/usr/bin/env bash
# checksrc: the banned-function check (curl's idea). Fails when a C file under
# src/, include/, tests/ or bench/ calls a function we do not allow, or calls
# raw malloc/calloc/realloc/free outside the allocator module.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
files=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'bench/*.c' 2>/dev/null)
[ -n "$files" ] || files=$(find src include tests bench -name '*.[ch]' 2>/dev/null)
strip_comments() { sed -e 's://.*$::' -e 's:/\*.*\*/::g' "$1"; }
for f in $files; do
    out=$(strip_comments "$f" | grep -nE '(^|[^_a-zA-Z0-9.>])(sprintf|vsprintf|strcpy|strcat|gets|atoi|atol|atof|strtok)[[:space:]]*\(' )
    if [ -n "$out" ]; then
        echo "$f: banned function:"; echo "$out" | sed 's/^/    /'; status=1
    fi
    case "$f" in src/common/alloc.c) continue ;; esac
    out=$(strip_comments "$f" | grep -nE '(^|[^_a-zA-Z0-9.>])(malloc|calloc|realloc|free)[[:space:]]*\(' )
    if [ -n "$out" ]; then
        echo "$f: raw allocation (use vs_xmalloc/vs_free from volsched/alloc.h):"
        echo "$out" | sed 's/^/    /'; status=1
    fi
done
[ $status -eq 0 ] && echo "checksrc: $(echo "$files" | wc -w) files clean"
exit $status
