#!/usr/bin/env bash
# Checks that every C file is formatted as .clang-format says.
# With --fix, reformats them in place instead.
set -uo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'bench/*.c' 'examples/*.c' 2>/dev/null)
[ -n "$files" ] || { echo "format-check: no files"; exit 0; }
if [ "${1:-}" = "--fix" ]; then
    clang-format -i $files
    exit 0
fi
if clang-format --dry-run --Werror $files; then
    echo "format-check: $(echo "$files" | wc -w) files formatted"
else
    echo "format-check: run scripts/format-check.sh --fix"
    exit 1
fi
