#!/usr/bin/env python3
"""A project's account web RPCs as BOINC's PHP answers them (html/user/
get_project_config.php, lookup_account.php, create_account.php and
html/inc/xml.inc's xml_error), for the client-side forwarding tests.

usage: acct_stub.py PORT LOG

One account exists: vol@example.com, password "secret12" (its passwd_hash is
md5(password + lower-case email), as the clients compute it), authenticator
"stubauth_vol". create_account adds accounts (authenticator
"stubauth_new<N>"); a taken email gets ERR_DB_NOT_UNIQUE (-137). Every
reply waits 1.5 s (so a client's first poll sees the request in progress).
Each request's path and query are appended to LOG, one line each.
"""
import hashlib
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, LOG = int(sys.argv[1]), sys.argv[2]
HEADER = '<?xml version="1.0" encoding="ISO-8859-1" ?>\n'
ACCOUNTS = {"vol@example.com": (hashlib.md5(b"secret12vol@example.com").hexdigest(), "stubauth_vol")}
lock = threading.Lock()


def xml_error(num, msg):
    return f"{HEADER}<error>\n    <error_num>{num}</error_num>\n    <error_msg>{msg}</error_msg>\n</error>\n"


def account_out(auth):
    return f"{HEADER}<account_out>\n    <authenticator>{auth}</authenticator>\n</account_out>\n"


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
        with lock, open(LOG, "a") as f:
            f.write(self.path + "\n")
        time.sleep(1.5)
        page = u.path.rsplit("/", 1)[-1]
        base = f"http://127.0.0.1:{PORT}/stub/"
        if page == "get_project_config.php":
            body = (f"{HEADER}<project_config>\n    <name>Stub Project</name>\n"
                    f"    <master_url>{base}</master_url>\n    <web_rpc_url_base>{base}</web_rpc_url_base>\n"
                    "    <min_passwd_length>6</min_passwd_length>\n    <uses_username/>\n"
                    "    <platforms>\n        <platform>\n            <platform_name>x86_64-pc-linux-gnu"
                    "</platform_name>\n            <user_friendly_name>Linux running on an AMD x86_64 "
                    "or Intel EM64T CPU</user_friendly_name>\n        </platform>\n    </platforms>\n"
                    "</project_config>\n")
        elif page == "lookup_account.php":
            email = q.get("email_addr", "").lower()
            acct = ACCOUNTS.get(email)
            if not acct:
                body = xml_error(-136, "Not found")
            elif q.get("passwd_hash") != acct[0]:
                body = xml_error(-206, "Invalid password")
            else:
                body = account_out(acct[1])
        elif page == "create_account.php":
            email = q.get("email_addr", "").lower()
            if "@" not in email:
                body = xml_error(-205, "Invalid email address")
            elif len(q.get("passwd_hash", "")) != 32:
                body = xml_error(-1, "password hash length not 32")
            elif email in ACCOUNTS:
                body = xml_error(-137, "Database error: not unique")
            else:
                with lock:
                    auth = f"stubauth_new{len(ACCOUNTS)}"
                    ACCOUNTS[email] = (q["passwd_hash"], auth)
                body = account_out(auth)
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


ThreadingHTTPServer(("127.0.0.1", PORT), H).serve_forever()
