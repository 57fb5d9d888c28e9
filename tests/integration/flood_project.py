#!/usr/bin/env python3
"""A project that floods the client, on 127.0.0.1, for test_client_limits.sh.

usage: flood_project.py PORT MODE STATS_FILE [ARGS]

GET  /p/              a master page whose scheduler is /p/cgi
POST /p/cgi           a scheduler reply, by MODE:
   flood BATCH RPCS   each of the first RPCS replies brings BATCH new tasks
                      (each with its own workunit), BATCH more workunits no
                      task names and BATCH/10 files nothing names (URLs under
                      /junk/); next_rpc_delay 1 keeps the client calling.
                      Later replies bring nothing.
   disk NJOBS MB      one reply: NJOBS tasks, each with its own MB-MiB input
                      (/big/N), and 20 files nothing names of 4 MiB down to
                      64 KiB (/junk/N). Later replies bring nothing.
GET  /app             503 (the app never arrives, so no task runs)
GET  /big/N, /junk/N  the declared number of zero bytes
STATS_FILE (JSON, rewritten after each request): rpcs, results_sent,
other_results (how many <other_result> the last request listed),
junk_gets, big_gets.
"""
import json
import threading
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
MODE = sys.argv[2]
STATS = sys.argv[3]
ARGS = [int(a) for a in sys.argv[4:]]
BASE = "http://127.0.0.1:%d" % PORT
PLAT = "x86_64-pc-linux-gnu"
MIB = 1 << 20
# short tasks: their queue is long in number, not in time, so the honest
# project's server still finds its job can meet its deadline beside them
FPOPS = "1e8"
JUNK_SIZES = [4 * MIB, 2 * MIB, 1 * MIB, 512 << 10, 256 << 10, 128 << 10, 64 << 10] * 3

stats = {"rpcs": 0, "results_sent": 0, "other_results": 0, "junk_gets": 0, "big_gets": 0}
sizes = {}


LOCK = threading.Lock()


def save():
    # the handlers run on threads of their own (the client downloads several
    # files at once): one writer at a time, or one's rename loses the other's
    # file and that request ends in an empty reply
    with LOCK:
        with open(STATS + ".tmp", "w") as f:
            json.dump(stats, f)
        os.replace(STATS + ".tmp", STATS)


HEAD = f"""<scheduler_reply>
<scheduler_version>700</scheduler_version>
<project_name>flood</project_name>
<app><name>f</name></app>
<file_info><name>flood_app</name><url>{BASE}/app</url><executable/><nbytes>100</nbytes>
<file_signature>
00
.
</file_signature></file_info>
<app_version><app_name>f</app_name><version_num>1</version_num><platform>{PLAT}</platform>
<file_ref><file_name>flood_app</file_name><main_program/></file_ref></app_version>
"""


def task(name, ref=""):
    return (f"<workunit><name>{name}</name><app_name>f</app_name>"
            f"<rsc_fpops_est>{FPOPS}</rsc_fpops_est>{ref}</workunit>\n"
            f"<result><name>{name}_0</name><wu_name>{name}</wu_name>"
            f"<report_deadline>2000000000</report_deadline><platform>{PLAT}</platform>"
            f"<version_num>1</version_num></result>\n")


def junk(i, size):
    sizes[f"junk_{i}"] = size
    return (f"<file_info><name>junk_{i}</name><url>{BASE}/junk/junk_{i}</url>"
            f"<nbytes>{size}</nbytes></file_info>\n")


def reply():
    n = stats["rpcs"]
    out = [HEAD]
    if MODE == "flood" and n <= ARGS[1]:
        batch = ARGS[0]
        out.append("<next_rpc_delay>1</next_rpc_delay>\n")
        for i in range(batch):
            out.append(task(f"f{n}_{i}"))
            out.append(f"<workunit><name>spare{n}_{i}</name><app_name>f</app_name>"
                       f"<rsc_fpops_est>{FPOPS}</rsc_fpops_est></workunit>\n")
        for i in range(batch // 10):
            out.append(junk(f"{n}_{i}", 1000))
        stats["results_sent"] += batch
    elif MODE == "disk" and n == 1:
        njobs, mb = ARGS
        for i in range(njobs):
            sizes[f"big_{i}"] = mb * MIB
            out.append(f"<file_info><name>big_{i}</name><url>{BASE}/big/big_{i}</url>"
                       f"<nbytes>{mb * MIB}</nbytes></file_info>\n")
            out.append(task(f"d{i}", f"<file_ref><file_name>big_{i}</file_name>"
                                     f"<open_name>in</open_name></file_ref>"))
        for i, size in enumerate(JUNK_SIZES):
            out.append(junk(i, size))
        stats["results_sent"] += njobs
    else:
        out.append("<request_delay>5</request_delay>\n")
    out.append("</scheduler_reply>\n")
    return "".join(out).encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="text/xml"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream(self, size):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        chunk = b"\0" * 65536
        while size > 0:
            k = min(size, len(chunk))
            self.wfile.write(chunk[:k])
            size -= k

    def do_GET(self):
        parts = [p for p in self.path.split("/") if p]
        if parts == ["p"]:
            page = f'<html><head><link rel="boinc_scheduler" href="{BASE}/p/cgi"></head></html>\n'
            return self.send(200, page.encode(), "text/html")
        if len(parts) == 2 and parts[0] in ("junk", "big") and parts[1] in sizes:
            with LOCK:
                stats[parts[0] + "_gets"] += 1
            save()
            return self.stream(sizes[parts[1]])
        return self.send(503, b"busy\n", "text/plain")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        stats["rpcs"] += 1
        stats["other_results"] = len(re.findall(rb"<other_result>", body))
        r = reply()
        save()
        return self.send(200, r)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up mid-file: its business


save()
Server(("127.0.0.1", PORT), H).serve_forever()
