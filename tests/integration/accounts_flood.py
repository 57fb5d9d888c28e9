#!/usr/bin/env python3
"""N lookup_account calls from one address (127.0.0.1) on THREADS kept-alive
connections, while another address (127.0.0.2) looks up its account with the
right password every 0.2 s. Prints one JSON line: the flood's answers by
HTTP status, the other address's answers and its slowest reply.

usage: accounts_flood.py HOST PORT PATH N THREADS EMAIL PASSWD_HASH
PATH is the master URL's path ("/demo/")."""
import http.client
import json
import sys
import threading
import time
import urllib.parse

host, port, path, n, nthreads, email, phash = sys.argv[1:8]
port, n, nthreads = int(port), int(n), int(nthreads)
counts = {}
lock = threading.Lock()
done = threading.Event()


def flood(k):
    c = http.client.HTTPConnection(host, port, timeout=30)
    for i in range(k):
        q = urllib.parse.urlencode({"email_addr": email, "passwd_hash": "%032x" % i})
        try:
            c.request("GET", path + "lookup_account.php?" + q)
            r = c.getresponse()
            r.read()
            st = r.status
        except (OSError, http.client.HTTPException):
            c.close()
            c = http.client.HTTPConnection(host, port, timeout=30)
            st = "error"
        with lock:
            counts[str(st)] = counts.get(str(st), 0) + 1
    c.close()


other = {"ok": 0, "bad": 0, "max_s": 0.0}


def bystander():
    q = urllib.parse.urlencode({"email_addr": email, "passwd_hash": phash})
    # At least three answers, however soon the flood is over.
    while not done.is_set() or other["ok"] + other["bad"] < 3:
        t0 = time.monotonic()
        try:
            c = http.client.HTTPConnection(host, port, timeout=30, source_address=("127.0.0.2", 0))
            c.request("GET", path + "lookup_account.php?" + q)
            r = c.getresponse()
            body = r.read().decode()
            c.close()
            good = r.status == 200 and "<authenticator>" in body
        except (OSError, http.client.HTTPException):
            good = False
        dt = time.monotonic() - t0
        other["ok" if good else "bad"] += 1
        other["max_s"] = max(other["max_s"], dt)
        time.sleep(0.5)


t0 = time.monotonic()
b = threading.Thread(target=bystander)
b.start()
ts = [threading.Thread(target=flood, args=(n // nthreads + (1 if i < n % nthreads else 0),))
      for i in range(nthreads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
done.set()
b.join()
print(json.dumps({"flood": counts, "other": other, "seconds": round(time.monotonic() - t0, 2)}))
