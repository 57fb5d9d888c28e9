#!/usr/bin/env python3
"""A GUI RPC client for the tests: sends requests to a BOINC-compatible client
(ours or Debian's boinc-client) and prints each reply's body.

usage: gui_rpc.py PORT PASSWORD REQUEST...

Authenticates (auth1/auth2, md5(nonce + password)) unless PASSWORD is "-",
then sends each REQUEST (the XML inside <boinc_gui_rpc_request>) on the same
connection, printing the reply between <boinc_gui_rpc_reply> and its end,
followed by a line "----". Exits 1 when the client closes the connection.
A REQUEST "sleep:S" waits S seconds instead; "poll:REQ" sends REQ every
0.25 s while its reply says error_num -204 (in progress), 60 s at most, and
prints the last reply.
"""
import hashlib
import socket
import sys
import time


def rpc(s, op):
    s.sendall(f"<boinc_gui_rpc_request>\n{op}\n</boinc_gui_rpc_request>\n\003".encode())
    buf = b""
    while not buf.endswith(b"\003"):
        b = s.recv(65536)
        if not b:
            sys.exit("gui_rpc.py: connection closed")
        buf += b
    text = buf[:-1].decode("utf-8", "replace")
    head, tail = "<boinc_gui_rpc_reply>", "</boinc_gui_rpc_reply>"
    i, j = text.find(head), text.rfind(tail)
    return text[i + len(head):j].strip("\n") if i >= 0 and j > i else text


def main():
    port, pw = int(sys.argv[1]), sys.argv[2]
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    if pw != "-":
        nonce = rpc(s, "<auth1/>").split("<nonce>")[1].split("</nonce>")[0]
        h = hashlib.md5((nonce + pw).encode()).hexdigest()
        if "<authorized/>" not in rpc(s, f"<auth2><nonce_hash>{h}</nonce_hash></auth2>"):
            sys.exit("gui_rpc.py: unauthorized")
    for op in sys.argv[3:]:
        if op.startswith("sleep:"):
            time.sleep(float(op[6:]))
            continue
        if op.startswith("poll:"):
            for _ in range(240):
                r = rpc(s, op[5:])
                if "<error_num>-204</error_num>" not in r:
                    break
                time.sleep(0.25)
            print(r)
            print("----", flush=True)
            continue
        print(rpc(s, op))
        print("----", flush=True)


main()
