#!/usr/bin/env python3
"""A middleman on loopback for the https-stripping tests
(test_client_https_pin.sh): it relays HTTP requests to a server's plain
listener, logs each one (and the account key its body carries, if any),
and rewrites the master page to name another scheduler URL.

usage: strip_relay.py --listen PORT --upstream HOST:PORT --log FILE
                      --master-path PATH --sched URL [--when FILE]
                      [--tls CERT KEY]

--sched URL     the scheduler URL the rewritten master page names (its
                <link rel="boinc_scheduler"> and <scheduler> elements)
--when FILE     rewrite only while FILE exists (default: always)
--tls CERT KEY  listen with TLS (a middleman with a certificate the client
                trusts, or a project page that names http)

Each request is one log line: "METHOD PATH auth=KEY" (auth=- when the body
has no <authenticator>). The relay writes "ready" to the log when it listens.
"""
import argparse
import http.client
import os
import re
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

AUTH_RE = re.compile(rb"<authenticator>\s*([^<\s]*)\s*</authenticator>")
SCHED_RE = [
    (re.compile(rb'(<link rel="boinc_scheduler" href=")[^"]*(">)'), rb"\g<1>%s\g<2>"),
    (re.compile(rb"(<scheduler>)[^<]*(</scheduler>)"), rb"\g<1>%s\g<2>"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--master-path", required=True)
    ap.add_argument("--sched", required=True)
    ap.add_argument("--when")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    a = ap.parse_args()
    up_host, up_port = a.upstream.rsplit(":", 1)
    lock = threading.Lock()
    log = open(a.log, "a", buffering=1)

    def note(line):
        with lock:
            log.write(line + "\n")

    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def relay(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            m = AUTH_RE.search(body)
            note("%s %s auth=%s" % (self.command, self.path,
                                     m.group(1).decode(errors="replace") if m else "-"))
            hdrs = {k: v for k, v in self.headers.items()
                    if k.lower() not in ("host", "connection", "content-length",
                                         "accept-encoding")}
            try:
                c = http.client.HTTPConnection(up_host, int(up_port), timeout=60)
                c.request(self.command, self.path, body=body if n else None, headers=hdrs)
                r = c.getresponse()
                data = r.read()
                status, reason, rh = r.status, r.reason, r.getheaders()
                c.close()
            except OSError as e:
                data, status, reason, rh = str(e).encode(), 502, "Bad Gateway", []
            path = self.path.split("?")[0]
            if (self.command == "GET" and path in (a.master_path, a.master_path + "index.html")
                    and (not a.when or os.path.exists(a.when))):
                for rx, rep in SCHED_RE:
                    data = rx.sub(rep % a.sched.encode(), data)
                note("rewrote the master page to name %s" % a.sched)
            self.send_response(status, reason)
            for k, v in rh:
                if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = relay
        do_POST = relay
        do_HEAD = relay

    srv = ThreadingHTTPServer(("127.0.0.1", a.listen), Relay)
    srv.daemon_threads = True
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    note("ready")
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
