#!/usr/bin/env bash
# Three ways an operator's files could be lost or misused, against a real `volsched serve` on loopback and
# the real command line:
#  12. a job naming the app version's file as its input ends (cancelled) and
#      the file deleter runs: the app file is still in the download
#      hierarchy and downloads over HTTP; an input staged for three jobs
#      stays (and downloads) until the third ends, then is deleted;
#  13. create_work and app add refuse an input that is a symbolic link (to
#      /etc/passwd) with a message naming it and stage nothing;
#      --follow-symlinks allows it;
#  14. create_work refuses a workunit name beginning with '-' (on the
#      command line and on --stdin lines), app add such an app name.
# PARTS (default "13 14 12") runs some of them only.
set -uo pipefail
PARTS=${PARTS:-13 14 12}
: "${VOLSCHED:?VOLSCHED must name the built binary}" "${VS_SOURCE_DIR:?}"
for tool in curl sqlite3 python3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' is not installed"; exit 1; }
done
WORK=$(mktemp -d /tmp/vs_srvfiles.XXXXXX)
# shellcheck source=../../scripts/lib_demo.sh
. "$VS_SOURCE_DIR/scripts/lib_demo.sh"
SERVE_PID=""
keep=0
finish() {
    demo_serve_stop >/dev/null 2>&1
    if [ "$keep" = 1 ]; then echo "(work dir kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap finish EXIT
fail() {
    echo "FAIL: $*"
    [ -f "$WORK/serve.log" ] && { echo "---- serve.log (last 20 lines) ----"; tail -20 "$WORK/serve.log"; }
    keep=1
    exit 1
}
V="$VOLSCHED"
P="$WORK/project"
PORT=$(demo_free_port)
URL="http://127.0.0.1:$PORT/files/"
q() { sqlite3 "$P/volsched.db" "$1"; }
# expect STATUS CMD...: runs CMD (stderr to $WORK/err), checks its exit status.
expect() {
    local want=$1 got
    shift
    "$@" >"$WORK/out" 2>"$WORK/err"
    got=$?
    [ "$got" = "$want" ] || fail "$* exited $got, want $want: $(cat "$WORK/err")"
}

"$V" init "$P" --name files --url "$URL" >/dev/null || fail "init"
printf '#!/bin/sh\necho "the app"\n' > "$WORK/prog"
chmod 755 "$WORK/prog"

cw() { "$V" create_work --project "$P" --appname prog "$@"; }
APPFILE=prog_100_x86_64-pc-linux-gnu
expect 0 "$V" app add --project "$P" --name prog --platform x86_64-pc-linux-gnu --version 100 \
    "$WORK/prog"
appfile=$(find "$P/download" -name "$APPFILE" -type f)
[ -n "$appfile" ] || fail "the app file is not in the download hierarchy"

part13() {
    ln -s "$WORK/prog" "$WORK/prog_link"
    expect 2 "$V" app add --project "$P" --name prog --platform x86_64-pc-linux-gnu \
        --version 101 "$WORK/prog_link"
    grep -q "prog_link is a symbolic link" "$WORK/err" \
        || fail "app add: no message naming the link: $(cat "$WORK/err")"
    [ -z "$(find "$P/download" -name 'prog_101*')" ] || fail "app add staged a file through a link"
    ln -s /etc/passwd "$WORK/innocent.txt"
    expect 2 cw --wu_name pw "$WORK/innocent.txt"
    grep -q "innocent.txt is a symbolic link" "$WORK/err" && grep -q -- "--follow-symlinks" "$WORK/err" \
        || fail "create_work through a link: $(cat "$WORK/err")"
    [ -z "$(find "$P/download" -name innocent.txt)" ] || fail "the link's target was staged"
    [ "$(q "select count(*) from workunit where name = 'pw'")" = 0 ] || fail "a workunit was made through a link"
    mkdir "$WORK/realdir" && echo data > "$WORK/realdir/data.txt" && ln -s "$WORK/realdir" "$WORK/linkdir"
    expect 2 cw --wu_name thru "$WORK/linkdir/data.txt"
    grep -q "linkdir is a symbolic link" "$WORK/err" || fail "a link in the path: $(cat "$WORK/err")"
    expect 0 cw --wu_name pw --follow-symlinks "$WORK/innocent.txt"
    local staged
    staged=$(find "$P/download" -name innocent.txt -type f)
    [ -n "$staged" ] && cmp -s "$staged" /etc/passwd || fail "--follow-symlinks did not stage the target"
    expect 0 "$V" app add --project "$P" --name prog --platform x86_64-pc-linux-gnu --version 101 \
        --follow-symlinks "$WORK/prog_link"
}

part14() {
    expect 2 "$V" app add --project "$P" --name -x --platform x86_64-pc-linux-gnu --version 100 \
        "$WORK/prog"
    grep -q "may not begin with '-'" "$WORK/err" || fail "app add -x: $(cat "$WORK/err")"
    echo x > "$WORK/x.in"
    expect 2 cw --wu_name --error "$WORK/x.in"
    grep -q "may not begin with '-'" "$WORK/err" || fail "--wu_name --error: $(cat "$WORK/err")"
    printf -- '--wu_name -e %s\n' "$WORK/x.in" > "$WORK/lines"
    expect 2 cw --stdin < "$WORK/lines"
    grep -q "may not begin with '-'" "$WORK/err" || fail "a --stdin line named -e: $(cat "$WORK/err")"
    [ "$(q "select count(*) from workunit where name like '-%'")" = 0 ] || fail "a '-' name was stored"
}

# The download URL of file $2 in workunit $1 (what a client fetches).
url_of() { q "select xml_doc from workunit where name='$1'" | sed -n "s:.*<url>\(.*/$2\)</url>.*:\1:p" | head -1; }
# end_wu WU: cancels it, then waits until the file deleter has dealt with it.
end_wu() {
    "$V" job cancel --project "$P" "$1" >/dev/null || fail "job cancel $1"
    local _
    for _ in $(seq 1 150); do
        [ "$(q "select file_delete_state from workunit where name='$1'")" = 2 ] && return 0
        sleep 0.2
    done
    fail "$1: files not dealt with within 30 s (state $(q "select file_delete_state||'/'||assimilate_state from workunit where name='$1'"))"
}

part12() {
    local shared APPURL SHURL code i _
    expect 0 cw --wu_name uses_app "$APPFILE"
    echo "shared" > "$WORK/shared.dat"
    printf 'sh_1 %s\nsh_2 shared.dat\nsh_3 shared.dat\n' "$WORK/shared.dat" |
        sed 's/^/--wu_name /' > "$WORK/lines"
    expect 0 cw --stdin < "$WORK/lines"
    shared=$(find "$P/download" -name shared.dat -type f)
    [ -n "$shared" ] || fail "shared.dat not staged"
    APPURL=$(url_of uses_app "$APPFILE")
    SHURL=$(url_of sh_1 shared.dat)
    [ -n "$APPURL" ] && [ -n "$SHURL" ] || fail "no download URLs in the workunits"

    "$V" serve --project "$P" --listen "127.0.0.1:$PORT" --daemon-interval 200 >"$WORK/serve.log" 2>&1 &
    SERVE_PID=$!
    for _ in $(seq 1 50); do curl -sf "$URL" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -sf "$URL" >/dev/null || fail "server did not come up"
    curl -sf -o "$WORK/got" "$APPURL" && cmp -s "$WORK/got" "$WORK/prog" || fail "app file not downloadable at first"

    end_wu uses_app
    [ -f "$appfile" ] || fail "the file deleter removed the app version's file"
    curl -sf -o "$WORK/got" "$APPURL" && cmp -s "$WORK/got" "$WORK/prog" \
        || fail "the app file no longer downloads after its job ended"
    for i in 1 2; do
        end_wu "sh_$i"
        [ -f "$shared" ] || fail "shared.dat deleted after sh_$i, two jobs still use it"
        curl -sf -o "$WORK/got" "$SHURL" && cmp -s "$WORK/got" "$WORK/shared.dat" \
            || fail "shared.dat no longer downloads after sh_$i"
    done
    end_wu sh_3
    [ ! -e "$shared" ] || fail "shared.dat kept after its last job ended"
    code=$(curl -s -o /dev/null -w '%{http_code}' "$SHURL")
    [ "$code" = 404 ] || fail "shared.dat after its last job: HTTP $code, want 404"
    [ -f "$appfile" ] || fail "the app file is gone at the end"
    grep -q 'inputs kept in use' "$P/log/file_deleter.log" || fail "the file deleter's log does not say inputs were kept"
    demo_serve_stop || fail "serve did not stop cleanly"
}

for part in $PARTS; do "part$part"; done
echo "ok: parts $PARTS: the app file and a shared input kept while used (deleted after the last job), links and '-' names refused"
