#!/usr/bin/env python3
"""Compares what boinccmd printed against two clients, command by command,
for test_client_boinccmd_all.sh.

usage: boinccmd_compare.py COMMANDS OURS_DIR THEIRS_DIR ALLOWED
       boinccmd_compare.py --xml OPS OURS_DIR THEIRS_DIR ALLOWED

COMMANDS lists the commands run (one a line; line i's outputs are OURS_DIR/i
and THEIRS_DIR/i, stdout and stderr together). Each output is reduced to
its shape: a "key: value" line to its indentation and key, numbers to N,
message lines ("12: date [project] text") to "N: <message>", then taken as
a set of lines. Prints each line one client printed and the other did not,
as "COMMAND<TAB>missing|extra<TAB>LINE" (missing: Debian's client printed
it, ours did not). ALLOWED holds such lines (and comments after '#'): the
differences docs/client.md explains. Exits 1 when a difference is not in
ALLOWED; lines of ALLOWED no longer seen are printed as "stale: ...".

With --xml, OPS lists GUI RPC requests and the outputs are the raw reply
bodies (gui_rpc.py): each is reduced to the set of its element paths
("host_info/coprocs"), values aside, and the differences are printed as
"xml OP<TAB>missing|extra<TAB>PATH".
"""
import re
import sys
import xml.etree.ElementTree as ET

XML = sys.argv[1] == "--xml"
if XML:
    sys.argv.pop(1)
cmds_file, ours, theirs, allowed_file = sys.argv[1:5]
NUM = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


def shape(text):
    out = set()
    for line in text.splitlines():
        if not line.strip():
            continue
        if re.match(r"^\d+: \S+ \S+ (\(\w+\) )?\[", line):
            out.add("N: <message>")
            continue
        m = re.match(r"^(\s*)([A-Za-z][^:]*?):(\s|$)", line)
        if m and not line.lstrip().startswith("http"):
            out.add(m.group(1) + NUM.sub("N", m.group(2)) + ":")
        else:
            out.add(NUM.sub("N", line.rstrip()))
    return out


def paths(text):
    try:
        root = ET.fromstring("<r>" + re.sub(r"<\?xml[^>]*\?>", "", text) + "</r>")
    except ET.ParseError as e:
        return {f"(not XML: {e})"}
    out = set()

    def walk(n, pre):
        for ch in n:
            p = pre + ch.tag
            out.add(p)
            walk(ch, p + "/")

    walk(root, "")
    return out


cmds = [c.rstrip("\n") for c in open(cmds_file)]
allowed = set()
for raw in open(allowed_file):
    line = raw.split("#", 1)[0].rstrip()
    if line:
        allowed.add(line)
seen, bad = set(), []
for i, cmd in enumerate(cmds):
    reduce = paths if XML else shape
    o = reduce(open(f"{ours}/{i}", errors="replace").read())
    t = reduce(open(f"{theirs}/{i}", errors="replace").read())
    verb = cmd.split()[0] + (" " + cmd.split()[1] if cmd.split()[0] in ("--task", "--project", "--acct_mgr", "--file_transfer", "--set_run_mode", "--set_network_mode", "--set_gpu_mode") and len(cmd.split()) > 1 and not cmd.split()[1].startswith("http") else "")
    if verb.split()[0] in ("--task", "--project", "--file_transfer"):
        verb = verb.split()[0] + " " + cmd.split()[-1]
    if XML:
        verb = "xml " + re.match(r"<(\w+)", cmd).group(1)
    for kind, lines in (("missing", t - o), ("extra", o - t)):
        for line in sorted(lines):
            d = f"{verb}\t{kind}\t{line}"
            print(d)
            seen.add(d)
            if d not in allowed:
                bad.append(d)
for a in sorted(x for x in allowed - seen if x.startswith("xml ") == XML):
    print("stale: " + a)
if bad:
    print(f"{len(bad)} differences not in {allowed_file}:")
    for b in bad:
        print("  " + b)
    sys.exit(1)
