#!/usr/bin/env python3
"""Wrong operator passwords against /ops/ from many connections, while the
master page is timed (test_ops_login.sh).

usage: ops_flood.py HOST PORT MASTER_PATH [--conns N] [--secs S] [--samples N]

Times the master page without a flood (baseline), then with N connections
sending GET /ops/ with a wrong password as fast as they are answered, and
prints one JSON object: the master page's latency quantiles (ms) in both
phases and the flood's answers by status (and whether 429s carried
Retry-After).
"""
import argparse
import base64
import http.client
import json
import threading
import time


def master_times(host, port, path, n, stop=None):
    """n GETs of the master page on one kept-alive connection: seconds each."""
    c = http.client.HTTPConnection(host, port, timeout=30)
    out = []
    for _ in range(n):
        if stop is not None and stop.is_set():
            break
        t0 = time.perf_counter()
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        out.append(time.perf_counter() - t0)
        assert r.status == 200, r.status
        time.sleep(0.005)
    c.close()
    return out


def q(xs, f):
    xs = sorted(xs)
    return round(1000 * xs[min(len(xs) - 1, int(f * len(xs)))], 3) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("path")
    ap.add_argument("--conns", type=int, default=30)
    ap.add_argument("--secs", type=float, default=4.0)
    ap.add_argument("--samples", type=int, default=150)
    a = ap.parse_args()

    base = master_times(a.host, a.port, a.path, a.samples)

    auth = "Basic " + base64.b64encode(b"op:not the password").decode()
    stop = threading.Event()
    counts = {}
    retry_after = {"with": 0, "without": 0}
    lock = threading.Lock()

    def flood():
        c = None
        while not stop.is_set():
            try:
                if c is None:
                    c = http.client.HTTPConnection(a.host, a.port, timeout=30)
                c.request("GET", "/ops/", headers={"Authorization": auth})
                r = c.getresponse()
                r.read()
                with lock:
                    counts[r.status] = counts.get(r.status, 0) + 1
                    if r.status == 429:
                        retry_after["with" if r.getheader("Retry-After") else "without"] += 1
                if r.getheader("Connection", "").lower() == "close":
                    c.close()
                    c = None
            except (OSError, http.client.HTTPException):
                with lock:
                    counts["error"] = counts.get("error", 0) + 1
                if c is not None:
                    c.close()
                c = None
        if c is not None:
            c.close()

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(a.conns)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # the flood is under way
    t_end = time.time() + a.secs
    flooded = []
    while time.time() < t_end:
        flooded += master_times(a.host, a.port, a.path, 10)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    print(json.dumps({
        "base_p50_ms": q(base, 0.5), "base_p90_ms": q(base, 0.9),
        "flood_p50_ms": q(flooded, 0.5), "flood_p90_ms": q(flooded, 0.9),
        "samples": [len(base), len(flooded)],
        "flood": {str(k): v for k, v in counts.items()},
        "retry_after": retry_after,
    }))


if __name__ == "__main__":
    main()
