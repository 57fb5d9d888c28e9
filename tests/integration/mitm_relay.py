#!/usr/bin/env python3
"""A network middleman on loopback for test_client_signing.sh.

usage: mitm_relay.py PORT UPSTREAM_PORT MODE PAYLOAD_DIR

It relays a real `volsched serve` project (http://127.0.0.1:UPSTREAM_PORT):
the master page (its scheduler link rewritten to the relay) and scheduler
requests, changing only the scheduler replies, by MODE:
   addlib   every workunit gets one more input, libz.so.1 (copy_file), served
            by the relay from PAYLOAD_DIR/libz.so.1: a library with a
            constructor, on the old client's LD_LIBRARY_PATH
   outapp   every workunit gets an input opened as "payload" (copy_file, from
            PAYLOAD_DIR/payload) and every result an output of the same open
            name whose file is the app version's main program: the old
            client copied the input over the verified app after the task
   inapp    every workunit gets the app version's main program as an input
            (its URL the relay's payload): an input in the app's place
   inout    every workunit's first input is also named as an output of its
            result
   slotname every workunit gets an input opened in the slot under the app's
            main program's name (a wrapper would run its worker from there)
   none     nothing changed
Every reply it changed is counted in PAYLOAD_DIR/changed (one line each).
"""
import re
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, UP, MODE, PAY = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
UPBASE = "http://127.0.0.1:%d" % UP
BASE = "http://127.0.0.1:%d" % PORT


def payload_info(name, path_name):
    import hashlib
    data = open("%s/%s" % (PAY, path_name), "rb").read()
    return ("<file_info>\n<name>%s</name>\n<url>%s/payload/%s</url>\n"
            "<nbytes>%d</nbytes>\n<md5_cksum>%s</md5_cksum>\n</file_info>\n"
            % (name, BASE, path_name, len(data), hashlib.md5(data).hexdigest()))


def main_program(text):
    for av in re.findall(r"<app_version>.*?</app_version>", text, re.S):
        for fr in re.findall(r"<file_ref>.*?</file_ref>", av, re.S):
            if "<main_program/>" in fr:
                return re.search(r"<file_name>(.*?)</file_name>", fr).group(1)
    return None


def change(text):
    if "<workunit>" not in text:
        return text
    if MODE == "addlib":
        text = text.replace("<workunit>", payload_info("libz.so.1", "libz.so.1") + "<workunit>", 1)
        text = text.replace("</workunit>", "<file_ref>\n<file_name>libz.so.1</file_name>\n"
                            "<open_name>libz.so.1</open_name>\n<copy_file/>\n</file_ref>\n"
                            "</workunit>")
    elif MODE == "outapp":
        app = main_program(text)
        if not app:
            return text
        text = text.replace("<workunit>", payload_info("payload_src", "payload") + "<workunit>", 1)
        text = text.replace("</workunit>", "<file_ref>\n<file_name>payload_src</file_name>\n"
                            "<open_name>payload</open_name>\n<copy_file/>\n</file_ref>\n"
                            "</workunit>")
        text = text.replace("</result>", "<file_ref>\n<file_name>%s</file_name>\n"
                            "<open_name>payload</open_name>\n<copy_file/>\n</file_ref>\n"
                            "</result>" % app)
    elif MODE == "inapp":
        app = main_program(text)
        if not app:
            return text
        text = text.replace("</workunit>", "<file_ref>\n<file_name>%s</file_name>\n"
                            "<open_name>payload</open_name>\n<copy_file/>\n</file_ref>\n"
                            "</workunit>" % app)
    elif MODE == "slotname":
        app = main_program(text)
        if not app:
            return text
        text = text.replace("<workunit>", payload_info("payload_src", "payload") + "<workunit>", 1)
        text = text.replace("</workunit>", "<file_ref>\n<file_name>payload_src</file_name>\n"
                            "<open_name>%s</open_name>\n<copy_file/>\n</file_ref>\n"
                            "</workunit>" % app)
    elif MODE == "inout":
        wus = re.findall(r"<workunit>.*?</workunit>", text, re.S)
        if not wus:
            return text
        first = re.search(r"<file_ref>\s*<file_name>(.*?)</file_name>", wus[0])
        if not first:
            return text
        text = text.replace("</result>", "<file_ref>\n<file_name>%s</file_name>\n"
                            "<open_name>again</open_name>\n</file_ref>\n</result>"
                            % first.group(1), 1)
    else:
        return text
    with open(PAY + "/changed", "a") as f:
        f.write(MODE + "\n")
    return text


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="text/xml"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/payload/"):
            name = self.path[len("/payload/"):]
            if "/" in name:
                return self.send(404, b"no")
            try:
                return self.send(200, open("%s/%s" % (PAY, name), "rb").read(),
                                 "application/octet-stream")
            except OSError:
                return self.send(404, b"no")
        try:
            body = urllib.request.urlopen(UPBASE + self.path, timeout=20).read()
        except Exception:
            return self.send(502, b"upstream")
        # the scheduler link of the master page points at the relay
        body = body.replace(UPBASE.encode(), BASE.encode())
        self.send(200, body, "text/html")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = self.rfile.read(n)
        r = urllib.request.Request(UPBASE + self.path, data=req, method="POST",
                                   headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            body = urllib.request.urlopen(r, timeout=30).read()
        except Exception:
            return self.send(502, b"upstream")
        self.send(200, change(body.decode("utf-8", "replace")).encode())


ThreadingHTTPServer(("127.0.0.1", PORT), H).serve_forever()
