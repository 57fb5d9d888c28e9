#!/usr/bin/env python3
"""A project server that crawls, on 127.0.0.1, for test_client_slow_server.sh.

usage: slow_project.py PORT

GET  /NAME/             a master page whose scheduler is /NAME/cgi
POST /NAME/cgi          NAME "driprpc...": the reply below, one byte every 2 s
                        otherwise: a job of app "slow" with NFILES inputs, every
                        file (the app's too) at /NAME/file/FILE
GET  /NAME/file/FILE    FILE's FILE_BYTES bytes, one every 2 s (a Range
                        "bytes=N-" gets 206 and the rest, as slowly)
GET  /stat/NAME/FIELD    one of them as a number (a list: its length)
GET  /stats             JSON, per NAME: active (downloads being sent now),
                        max_active (the most at once: a download counts from
                        its request to its client hanging up, less GRACE_S,
                        for the client's next request may come a moment before
                        this server sees the hang-up), started, ended, ranges
                        (Range offsets asked), rpcs (scheduler requests),
                        rpc_active
"""
import hashlib
import json
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
BASE = "http://127.0.0.1:%d" % PORT
PLAT = "x86_64-pc-linux-gnu"
NFILES = 6
FILE_BYTES = 200
DRIP_S = 2.0
GRACE_S = 0.5

lock = threading.Lock()
stats = {}


def st(name):
    return stats.setdefault(name, {"active": 0, "max_active": 0, "started": 0, "ended": 0,
                                   "ranges": [], "rpcs": 0, "rpc_active": 0, "spans": []})


def most_at_once(spans):
    """The most downloads in flight at any start (an end counts GRACE_S early)."""
    best = 0
    for s0, _ in spans:
        n = sum(1 for a, b in spans if a <= s0 and (b is None or b - GRACE_S > s0))
        best = max(best, n)
    return best


def content(fname):
    return (fname.encode() * (FILE_BYTES // len(fname) + 1))[:FILE_BYTES]


def job(name):
    files, refs = [], []
    app = name + "_app"
    files.append(f"<file_info><name>{app}</name><url>{BASE}/{name}/file/{app}</url>"
                 f"<executable/><nbytes>{FILE_BYTES}</nbytes>"
                 f"<md5_cksum>{hashlib.md5(content(app)).hexdigest()}</md5_cksum></file_info>")
    for i in range(1, NFILES + 1):
        f = f"{name}_in_{i}"
        files.append(f"<file_info><name>{f}</name><url>{BASE}/{name}/file/{f}</url>"
                     f"<nbytes>{FILE_BYTES}</nbytes>"
                     f"<md5_cksum>{hashlib.md5(content(f)).hexdigest()}</md5_cksum></file_info>")
        refs.append(f"<file_ref><file_name>{f}</file_name><open_name>in{i}</open_name></file_ref>")
    return f"""<scheduler_reply>
<scheduler_version>700</scheduler_version>
<project_name>{name}</project_name>
<request_delay>3600</request_delay>
<app><name>slow</name></app>
{chr(10).join(files)}
<app_version><app_name>slow</app_name><version_num>1</version_num><platform>{PLAT}</platform>
<file_ref><file_name>{app}</file_name><main_program/></file_ref></app_version>
<workunit><name>{name}_wu</name><app_name>slow</app_name><rsc_fpops_est>1e9</rsc_fpops_est>
{chr(10).join(refs)}
</workunit>
<result><name>{name}_wu_0</name><wu_name>{name}_wu</wu_name><report_deadline>2000000000</report_deadline>
<platform>{PLAT}</platform><version_num>1</version_num></result>
</scheduler_reply>
""".encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, body, ctype="text/xml", code=200, extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def drip(self, body):
        """One byte every DRIP_S seconds; False as soon as the client hangs up."""
        for i in range(len(body)):
            try:
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                r, _, _ = select.select([self.connection], [], [], DRIP_S)
                if r and not self.connection.recv(1, socket.MSG_PEEK):
                    return False
            except OSError:
                return False
        return True

    def do_GET(self):
        parts = [p for p in self.path.split("/") if p]
        if parts == ["stats"] or (len(parts) == 3 and parts[0] == "stat"):
            with lock:
                out = {}
                for k, v in stats.items():
                    out[k] = {f: x for f, x in v.items() if f != "spans"}
                    out[k]["max_active"] = most_at_once(v["spans"])
                if parts[0] == "stat":
                    x = out.get(parts[1], {}).get(parts[2], 0)
                    body = str(len(x) if isinstance(x, list) else x).encode()
                else:
                    body = json.dumps(out).encode()
            self.send(body, "application/json")
            self.wfile.write(body)
            return
        if len(parts) == 3 and parts[1] == "file":
            name, fname = parts[0], parts[2]
            body, code, extra = content(fname), 200, []
            rng = self.headers.get("Range", "")
            with lock:
                s = st(name)
                if rng.startswith("bytes="):
                    off = int(rng[6:].split("-")[0])
                    s["ranges"].append(off)
                    extra = [("Content-Range", f"bytes {off}-{len(body) - 1}/{len(body)}")]
                    body, code = body[off:], 206
                s["started"] += 1
                s["active"] += 1
                span = [time.monotonic(), None]
                s["spans"].append(span)
            self.close_connection = True
            try:
                self.send(body, "application/octet-stream", code, extra)
                self.drip(body)
            finally:
                with lock:
                    s["active"] -= 1
                    s["ended"] += 1
                    span[1] = time.monotonic()
            return
        name = parts[0] if parts else "x"
        page = f'<html><head><link rel="boinc_scheduler" href="{BASE}/{name}/cgi"></head></html>\n'
        body = page.encode()
        self.send(body, "text/html")
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        parts = [p for p in self.path.split("/") if p]
        name = parts[0] if parts else "x"
        body = job(name)
        with lock:
            s = st(name)
            s["rpcs"] += 1
            s["rpc_active"] += 1
        self.close_connection = True
        try:
            self.send(body)
            if name.startswith("driprpc"):
                self.drip(body)
            else:
                self.wfile.write(body)
        finally:
            with lock:
                s["rpc_active"] -= 1


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up on a drip: that is the point


Server(("127.0.0.1", PORT), H).serve_forever()
