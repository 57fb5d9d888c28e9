#!/usr/bin/env python3
"""A recording GUI RPC relay for the tests: listens on 127.0.0.1:PORT, passes
every connection on to a BOINC-compatible client on 127.0.0.1:TARGET and
writes each request and its reply, as one JSON line {"conn", "op", "request",
"reply"}, to LOG (op: the name of the request's first element).

usage: gui_rpc_record.py PORT TARGET LOG
"""
import json
import re
import socket
import sys
import threading

OP = re.compile(r"<boinc_gui_rpc_request>\s*<([A-Za-z_0-9]+)")
lock = threading.Lock()


def read_msg(s, buf):
    """One message ending in \\003 from s (buf: what was read past the last
    one); returns (message, rest) or (None, rest) at the end."""
    while b"\003" not in buf:
        b = s.recv(65536)
        if not b:
            return None, buf
        buf += b
    i = buf.index(b"\003")
    return buf[: i + 1], buf[i + 1:]


def relay(cs, n, target, log):
    try:
        ss = socket.create_connection(("127.0.0.1", target), timeout=120)
    except OSError:
        cs.close()
        return
    cbuf, sbuf = b"", b""
    try:
        while True:
            req, cbuf = read_msg(cs, cbuf)
            if req is None:
                break
            ss.sendall(req)
            rep, sbuf = read_msg(ss, sbuf)
            if rep is None:
                break
            cs.sendall(rep)
            text = req[:-1].decode("utf-8", "replace")
            m = OP.search(text)
            rec = {"conn": n, "op": m.group(1) if m else "?", "request": text,
                   "reply": rep[:-1].decode("utf-8", "replace")}
            with lock:
                with open(log, "a") as f:
                    f.write(json.dumps(rec) + "\n")
    except OSError:
        pass
    finally:
        cs.close()
        ss.close()


def main():
    port, target, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(16)
    n = 0
    while True:
        cs, _ = ls.accept()
        n += 1
        threading.Thread(target=relay, args=(cs, n, target, log), daemon=True).start()


main()
