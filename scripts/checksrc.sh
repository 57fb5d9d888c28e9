#!/usr/bin/env bash
# checksrc: the banned-function check (curl's idea). Fails when a C file under
# src/, include/, tests/ or bench/ calls a function we do not allow, or calls
# raw malloc/calloc/realloc/free outside the allocator module, or includes a
# header its layer may not use (src/layers.txt, docs/architecture.md).
# Usage: checksrc.sh [FILE...] (default: every C file of the tree). With
# VS_CHECKSRC_ROOT=DIR it checks the tree at DIR instead (its src/layers.txt;
# FILEs relative to DIR): how tests/layers/test_checksrc_layers.sh runs it.
set -uo pipefail
cd "${VS_CHECKSRC_ROOT:-$(dirname "$0")/..}" || exit 2
status=0
if [ $# -gt 0 ]; then
    files="$*"
else
    files=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'bench/*.c' 2>/dev/null)
    [ -n "$files" ] || files=$(find src include tests bench -name '*.[ch]' 2>/dev/null)
fi

# Includes, one awk pass over every file's #include lines. A file of layer L
# (src/L/..., or include/volsched/<h>.h with h given to L in src/layers.txt)
# may include: its own private headers, and "volsched/<h>.h" of L or of a
# layer L uses. A public header includes no private one. Benchmarks and fuzz
# targets are programs: public headers only; unit tests may look inside a
# layer (white-box). The databases', HTTP server's, HTTP client's and XML
# parser's headers belong to the one adapter of each (sys below): the
# store's backend-neutral code includes neither <sqlite3.h> nor <libpq-fe.h>.
inc_out=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' $files /dev/null | awk '
    FILENAME == "src/layers.txt" {
        if ($0 ~ /^[[:space:]]*(#|$)/) next
        split($0, f, "|"); name = f[1]; gsub(/[[:space:]]/, "", name)
        uses[name] = " " name " " f[2] " "; gsub(/[[:space:]]+/, " ", uses[name])
        n = split(f[3], hs, " "); for (i = 1; i <= n; i++) owner[hs[i]] = name
        next
    }
    function layer_of(file,   a, h) {
        if (file ~ /^src\/[a-z]+\//) { split(file, a, "/"); return a[2] }
        if (file ~ /^include\/volsched\/[a-z0-9_]+\.h$/) {
            h = file; sub(/^include\/volsched\//, "", h); sub(/\.h$/, "", h)
            return (h in owner) ? owner[h] : "?"
        }
        return ""
    }
    function bad(msg) { print file ":" line ": " msg; status = 1 }
    BEGIN {
        sys["sqlite3.h"] = "^src/store/store_sqlite"; who["sqlite3.h"] = "src/store/store_sqlite*"
        sys["libpq-fe.h"] = "^src/store/(store_pg|pg_int\\.h)"
        who["libpq-fe.h"] = "src/store/store_pg*, pg_int.h"
        sys["microhttpd.h"] = "^src/server/"; who["microhttpd.h"] = "src/server/"
        sys["curl/curl.h"] = "^src/client/"; who["curl/curl.h"] = "src/client/"
        sys["expat.h"] = "^src/common/xml_"; who["expat.h"] = "src/common/xml_*"
    }
    FILENAME != "-" {
        # the list of files checked: a public header needs a layer even
        # when it includes nothing
        file = $0; line = 1
        if (layer_of(file) == "?") bad("a public header without a layer: add it to src/layers.txt")
        next
    }
    {
        # file:line:#include ...
        i = index($0, ":"); file = substr($0, 1, i - 1); rest = substr($0, i + 1)
        i = index(rest, ":"); line = substr(rest, 1, i - 1); inc = substr(rest, i + 1)
        L = layer_of(file)
        if (L == "?") next
        if (match(inc, /<[^>]+>/)) {
            h = substr(inc, RSTART + 1, RLENGTH - 2)
            if ((h in sys) && file ~ /^(src|include)\// && file !~ sys[h])
                bad("includes <" h ">, which only " who[h] " may")
            next
        }
        if (!match(inc, /"[^"]+"/)) next
        t = substr(inc, RSTART + 1, RLENGTH - 2)
        if (t ~ /^volsched\/[a-z0-9_]+\.h$/) {
            h = t; sub(/^volsched\//, "", h); sub(/\.h$/, "", h)
            if (!(h in owner)) bad("include/" t " has no layer in src/layers.txt")
            else if (L != "" && index(uses[L], " " owner[h] " ") == 0)
                bad("layer " L " includes " t " of layer " owner[h] ", which it does not use" \
                    " (upward or sideways: src/layers.txt, docs/architecture.md)")
            next
        }
        split(t, a, "/")
        if (!(a[1] in uses) || index(t, "/") == 0) next
        if (file ~ /^tests\/unit\//) next
        if (a[1] != L || file ~ /^include\//)
            bad("includes " t ", a private header of layer " a[1] \
                " (what other layers use belongs in include/volsched/, src/layers.txt)")
    }
    END { exit status }' src/layers.txt <(printf '%s\n' $files) -) || status=1
[ -z "$inc_out" ] || echo "$inc_out"
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
