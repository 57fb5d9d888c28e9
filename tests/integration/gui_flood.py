#!/usr/bin/env python3
"""Hostile GUI RPC peers on 127.0.0.1, for test_client_gui_guard.sh.

usage: gui_flood.py PORT idle N
       gui_flood.py PORT noread PASSWORD

idle:   opens N connections and sends nothing.
noread: two connections with a small receive buffer that never read a reply:
        one authenticated with PASSWORD (auth1/auth2) sends 6,000 get_state
        requests (~370 KB: their replies, ~770 bytes each, more than the
        kernel's buffers hold, up to tcp_wmem's 4 MB; the requests left over
        fit the client's 256 KB request buffer), one not authenticated sends
        them as fast as the client takes them.
Then, until killed, prints "closed K of N" each time the number of its
connections the client has closed changes (seen from the kernel's TCP state
or a refused send, without reading: a read would unstall a non-reader).
"""
import hashlib
import socket
import struct
import sys
import time

PORT = int(sys.argv[1])
MODE = sys.argv[2]
TCP_CLOSE, TCP_CLOSE_WAIT = 7, 8


def say(msg):
    print(msg, flush=True)


def connect(rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", PORT))
    return s


def request(op):
    return f"<boinc_gui_rpc_request>\n{op}\n</boinc_gui_rpc_request>\n\003".encode()


def reply(s):
    buf = b""
    while not buf.endswith(b"\003"):
        b = s.recv(4096)
        if not b:
            raise OSError("closed during authentication")
        buf += b
    return buf.decode()


def closed(s):
    state = struct.unpack("B", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1))[0]
    return state in (TCP_CLOSE, TCP_CLOSE_WAIT)


conns = []
dead = set()
if MODE == "idle":
    for _ in range(int(sys.argv[3])):
        conns.append(connect())
else:
    password = sys.argv[3]
    authed = connect(4096)
    authed.sendall(request("<auth1/>"))
    nonce = reply(authed).split("<nonce>")[1].split("</nonce>")[0]
    h = hashlib.md5((nonce + password).encode()).hexdigest()
    authed.sendall(request(f"<auth2>\n<nonce_hash>{h}</nonce_hash>\n</auth2>"))
    if "<authorized/>" not in reply(authed):
        sys.exit("authentication failed")
    conns = [authed, connect(4096)]
    for s in conns:
        s.setblocking(False)
REQ = request("<get_state/>")
left = [REQ * 6000, None]  # what each still sends; None: requests without end
say(f"open {len(conns)}")
last = -1
while True:
    for i, s in enumerate(conns):
        if MODE != "noread" or s in dead or left[i] == b"":
            continue
        data = left[i] if left[i] is not None else REQ * 200
        try:
            sent = s.send(data)
            if left[i] is not None:
                left[i] = data[sent:]
        except BlockingIOError:
            pass
        except OSError:
            dead.add(s)
    n = sum(1 for s in conns if s in dead or closed(s))
    if n != last:
        say(f"closed {n} of {len(conns)}")
        last = n
    time.sleep(0.2)
