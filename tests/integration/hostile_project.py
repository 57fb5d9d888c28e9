#!/usr/bin/env python3
"""A hostile or broken "project" on 127.0.0.1 for test_client_bad_input.sh.

usage: hostile_project.py PORT

GET  /notboinc/            an HTML page with no scheduler link
GET  /MODE/                a master page whose scheduler is /MODE/cgi
POST /MODE/cgi             a scheduler reply, by MODE:
   badxml    malformed XML
   oversize  a 17 MB reply (over the client's 16 MB cap)
   dotdot    a file named ../../evil
   fileurl   an input whose only URL is file:///etc/passwd
   unsigned  an app file with no signature (served at /unsigned/app)
   wrongauth the server's answer to an unknown account key
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
BASE = "http://127.0.0.1:%d" % PORT
PLAT = "x86_64-pc-linux-gnu"


def job(mode, app_file, app_url, extra_file="", wu_ref="", signature=""):
    return f"""<scheduler_reply>
<scheduler_version>700</scheduler_version>
<project_name>hostile {mode}</project_name>
<request_delay>3600</request_delay>
<code_sign_key>
1024
00000000000000000000000000000000000000000000000000000000000000aa
.
</code_sign_key>
<app><name>h</name></app>
<file_info><name>{app_file}</name><url>{app_url}</url><executable/>{signature}</file_info>
{extra_file}
<app_version><app_name>h</app_name><version_num>1</version_num><platform>{PLAT}</platform>
<file_ref><file_name>{app_file}</file_name><main_program/></file_ref></app_version>
<workunit><name>{mode}_wu</name><app_name>h</app_name><rsc_fpops_est>1e9</rsc_fpops_est>{wu_ref}</workunit>
<result><name>{mode}_wu_0</name><wu_name>{mode}_wu</wu_name><report_deadline>2000000000</report_deadline>
<platform>{PLAT}</platform><version_num>1</version_num></result>
</scheduler_reply>
"""


def reply(mode):
    if mode == "badxml":
        return b"<scheduler_reply>\n<message>unterminated <oops>\n"
    if mode == "oversize":
        return b"<scheduler_reply>\n<message>" + b"x" * (17 << 20) + b"</message>\n</scheduler_reply>\n"
    if mode == "dotdot":
        return job(mode, "../../evil", BASE + "/unsigned/app").encode()
    if mode == "fileurl":
        extra = "<file_info><name>secret_in</name><url>file:///etc/passwd</url></file_info>"
        ref = "<file_ref><file_name>secret_in</file_name><open_name>in</open_name></file_ref>"
        return job(mode, "fileurl_app", BASE + "/unsigned/app", extra, ref,
                   "<file_signature>\n00\n.\n</file_signature>").encode()
    if mode == "unsigned":
        return job(mode, "unsigned_app", BASE + "/unsigned/app").encode()
    if mode == "wrongauth":
        return (b"<scheduler_reply>\n<scheduler_version>700</scheduler_version>\n"
                b"<message priority=\"high\">Invalid or missing account key</message>\n"
                b"<request_delay>3600</request_delay>\n</scheduler_reply>\n")
    return b"<scheduler_reply>\n</scheduler_reply>\n"


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send(self, body, ctype="text/xml"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = [p for p in self.path.split("/") if p]
        if parts == ["unsigned", "app"]:
            return self.send(b"#!/bin/sh\necho pwned > /tmp/vs_hostile_ran\n", "application/octet-stream")
        if parts == ["notboinc"]:
            return self.send(b"<html><body>Just a web page.</body></html>\n", "text/html")
        mode = parts[0] if parts else "x"
        page = f'<html><head><link rel="boinc_scheduler" href="{BASE}/{mode}/cgi"></head></html>\n'
        return self.send(page.encode(), "text/html")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        parts = [p for p in self.path.split("/") if p]
        return self.send(reply(parts[0] if parts else "x"))


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # the client hangs up on the oversize reply: that is the point


Server(("127.0.0.1", PORT), H).serve_forever()
