#!/usr/bin/env python3
"""Slow and greedy clients against a real `volsched serve` on loopback, for
tests/integration/test_http_limits.sh. Standard library only.

    http_attack.py HOST PORT SCHED_PATH AUTH LOG CONFIG_JSON

CONFIG_JSON names the server's limits: head_timeout, per_address,
max_connections, trusted (a trusted proxy's address). Loopback accepts any
127.0.0.0/8 source address, so each "client address" is a bind() to one.
Prints one line per check and exits 1 at the first failure.
"""
import http.client
import json
import re
import select
import socket
import sys
import time

HOST, PORT, SCHED, AUTH, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
CFG = json.loads(sys.argv[6])
HEAD_T = CFG["head_timeout"]
PER_ADDR = CFG["per_address"]
MAXC = CFG["max_connections"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def ok(msg):
    print("ok:", msg)
    sys.stdout.flush()


def request_body(host_cpid):
    return (
        "<scheduler_request>\n<authenticator>%s</authenticator>\n<hostid>0</hostid>\n"
        "<rpc_seqno>0</rpc_seqno>\n<core_client_major_version>7</core_client_major_version>\n"
        "<core_client_minor_version>20</core_client_minor_version>\n"
        "<core_client_release>5</core_client_release>\n"
        "<platform_name>x86_64-pc-linux-gnu</platform_name>\n"
        "<work_req_seconds>0</work_req_seconds>\n"
        "<host_info>\n<host_cpid>%s</host_cpid>\n<p_ncpus>2</p_ncpus>\n<p_fpops>1e9</p_fpops>\n"
        "<m_nbytes>1e10</m_nbytes>\n<d_free>1e11</d_free>\n</host_info>\n</scheduler_request>\n"
        % (AUTH, host_cpid)
    ).encode()


class BoundConn(http.client.HTTPConnection):
    """An HTTP connection from a chosen loopback source address."""

    def __init__(self, src, timeout=10):
        super().__init__(HOST, PORT, timeout=timeout, source_address=(src, 0))


def honest_rpc(src, tag):
    """One scheduler RPC on its own connection; returns its seconds."""
    t0 = time.monotonic()
    c = BoundConn(src)
    c.request("POST", SCHED, body=request_body(tag), headers={"Content-Type": "text/xml"})
    r = c.getresponse()
    data = r.read()
    c.close()
    dt = time.monotonic() - t0
    if r.status != 200 or b"<scheduler_reply>" not in data:
        fail("honest RPC from %s: status %d, %r" % (src, r.status, data[:200]))
    return dt


def open_raw(src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.setblocking(False)
    try:
        s.connect((HOST, PORT))
    except BlockingIOError:
        pass
    return s


def closed_by_server(s, wait):
    """True when the server ends s (EOF or reset) within wait seconds."""
    end = time.monotonic() + wait
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return False
        try:
            if s.recv(4096) == b"":
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except BlockingIOError:
            continue


def metrics():
    c = http.client.HTTPConnection(HOST, PORT, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(volsched_http_[a-z_]+(?:\{[^}]*\})?) (\d+)$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def wait_open(n_expected, wait=5):
    end = time.monotonic() + wait
    while time.monotonic() < end:
        if metrics()["volsched_http_open_connections"] <= n_expected:
            return True
        time.sleep(0.2)
    return False


# 1. More connections from one address than the limit: the excess is closed
# at once, the rest stay open.
socks = [open_raw("127.0.0.9") for _ in range(PER_ADDR + 10)]
time.sleep(0.5)
closed = [s for s in socks if closed_by_server(s, 0.05)]
if len(closed) != 10:
    fail("%d of %d connections from one address closed, expected 10" % (len(closed), len(socks)))
ok("per-address limit: %d kept, 10 refused at once" % PER_ADDR)
for s in socks:
    s.close()
if not wait_open(1):
    fail("the closed connections were not freed")

# 2. Slowloris: many addresses drip request heads one byte a second, a few
# drip a body; honest RPCs are answered meanwhile and the slow ones are
# closed by the head deadline.
n_addr = max(1, (MAXC - 40) // PER_ADDR)
slow = []
for a in range(n_addr):
    for _ in range(PER_ADDR):
        slow.append(open_raw("127.0.1.%d" % (a + 1)))
body_slow = []
for i in range(3):
    s = socket.create_connection((HOST, PORT), source_address=("127.0.2.1", 0))
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" % SCHED).encode())
    s.setblocking(False)
    body_slow.append(s)
t_start = time.monotonic()
head = b"POST " + SCHED.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: " + b"b" * 200
times = []
for step in range(HEAD_T + 1):
    for s in slow + body_slow:
        try:
            s.send(head[step:step + 1] if s in slow else b"x")
        except OSError:
            pass
    times.append(honest_rpc("127.0.0.5", "honest%d" % step))
    time.sleep(max(0.0, t_start + step + 1 - time.monotonic()))
worst = max(times)
if worst > 2.0:
    fail("an honest RPC took %.2f s beside %d slow connections" % (worst, len(slow)))
ok("%d honest RPCs beside %d slow-drip connections, slowest %.3f s" % (len(times), len(slow), worst))
deadline = t_start + HEAD_T + 2.5
left = [s for s in slow if not closed_by_server(s, max(0.05, deadline - time.monotonic()))]
if left:
    fail("%d of %d slow connections still open %.1f s after they started"
         % (len(left), len(slow), time.monotonic() - t_start))
ok("all %d slow heads closed within %.1f s (head timeout %d s)"
   % (len(slow), time.monotonic() - t_start, HEAD_T))
left = [s for s in body_slow if not closed_by_server(s, max(0.05, deadline + 1 - time.monotonic()))]
if left:
    fail("%d slow bodies still open" % len(left))
ok("slow bodies closed")
for s in slow + body_slow:
    s.close()
if not wait_open(1):
    fail("slow connections not freed")

# 3. A full server refuses new connections at once rather than queueing them.
full = []
a = 0
while len(full) < MAXC:
    for _ in range(PER_ADDR):
        if len(full) < MAXC:
            full.append(open_raw("127.0.3.%d" % (a + 1)))
    a += 1
time.sleep(1.0)
extra = [open_raw("127.0.4.%d" % (i + 1)) for i in range(5)]
t0 = time.monotonic()
refused = [s for s in extra if closed_by_server(s, 1.0)]
if len(refused) != 5:
    fail("%d of 5 connections over max_connections refused within 1 s" % len(refused))
ok("full server (%d open): 5 more refused in %.3f s" % (MAXC, time.monotonic() - t0))
for s in full + extra:
    s.close()
if not wait_open(1):
    fail("the full server's connections were not freed")
honest_rpc("127.0.0.5", "after_full")
ok("served again once the connections left")

# 4. Keep-alive: one connection answers several scheduler RPCs and a page.
before = metrics()["volsched_http_connections_total"]
c = BoundConn("127.0.0.6")
for i in range(3):
    c.request("POST", SCHED, body=request_body("keepalive%d" % i))
    r = c.getresponse()
    data = r.read()
    if r.status != 200 or b"<scheduler_reply>" not in data:
        fail("keep-alive RPC %d: %d" % (i, r.status))
    if r.getheader("Connection", "").lower() == "close":
        fail("the server closed a scheduler RPC's connection")
c.request("GET", "/metrics")
text = c.getresponse().read().decode()
c.close()
after = int(re.search(r"^volsched_http_connections_total (\d+)$", text, re.M).group(1))
if after - before != 1:
    fail("3 RPCs and a page took %d new connections, expected 1" % (after - before))
ok("keep-alive: 3 scheduler RPCs and /metrics on one connection")

# 5. X-Forwarded-For: believed from the trusted proxy only; the proxy is
# exempt from the per-address limit.
for src, xff in ((CFG["trusted"], "198.51.100.7"), ("127.0.0.3", "192.0.2.99")):
    c = BoundConn(src)
    c.request("GET", "/demo/xff_probe_" + src, headers={"X-Forwarded-For": xff})
    c.getresponse().read()
    c.close()
time.sleep(0.3)
log = open(LOG).read()
if not re.search(r"xff_probe_%s from 198\.51\.100\.7:" % re.escape(CFG["trusted"]), log):
    fail("the trusted proxy's X-Forwarded-For was not used")
if "192.0.2.99" in log or not re.search(r"xff_probe_127\.0\.0\.3 from 127\.0\.0\.3:", log):
    fail("an untrusted peer's X-Forwarded-For was believed")
ok("X-Forwarded-For: trusted proxy's used, untrusted peer's ignored")
proxy = [open_raw(CFG["trusted"]) for _ in range(PER_ADDR + 5)]
time.sleep(0.5)
if any(closed_by_server(s, 0.05) for s in proxy):
    fail("a trusted proxy's connections were limited per address")
ok("trusted proxy: %d connections, no per-address limit" % len(proxy))
for s in proxy:
    s.close()

# 6. Every limit hit was counted.
m = metrics()
want = {
    'volsched_http_limit_total{limit="per_address"}': 10,
    'volsched_http_limit_total{limit="head_timeout"}': len(slow),
    'volsched_http_limit_total{limit="body_min_rate"}': 3,
    'volsched_http_limit_total{limit="max_connections"}': 5,
}
for k, v in want.items():
    if m.get(k, -1) < v:
        fail("%s = %s, expected at least %d" % (k, m.get(k), v))
if m.get("volsched_http_forwarded_total", 0) < 1:
    fail("forwarded requests not counted")
ok("limits counted: " + ", ".join("%s=%d" % (k.split('"')[1], m[k]) for k in want))
