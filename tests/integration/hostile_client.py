#!/usr/bin/env python3
"""A hostile volunteer for tests/integration/test_hostile.sh (docs/security.md).

Talks BOINC's scheduler and data-server protocols to a real `volsched serve`
on loopback, with the standard library only. Subcommands:

  rpc SCHED AUTH HOSTID NCPUS SECS    one scheduler request; prints the reply
  junk UPLOAD N MIB                   N parallel uploads of MIB MiB each behind
                                      a forged certificate; prints the replies'
                                      status counts as JSON
  keys SCHED N                        N requests with wrong account keys;
                                      prints JSON: how many were refused after
                                      a lookup, how many throttled
  race UPLOAD REPLY N KIB             N parallel uploads of the first output
                                      file of the result in REPLY (a saved
                                      scheduler reply), each with different
                                      bytes, throttled so that they overlap;
                                      prints JSON: statuses and each body's MD5
"""
import hashlib
import http.client
import json
import os
import re
import sys
import threading
import time
import urllib.parse


def post(url, body_parts, total):
    """POSTs the concatenation of body_parts (bytes or generators of bytes)."""
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    c.putrequest("POST", u.path)
    c.putheader("Content-Type", "application/octet-stream")
    c.putheader("Content-Length", str(total))
    c.endheaders()
    try:
        for part in body_parts:
            if isinstance(part, bytes):
                c.send(part)
            else:
                for chunk in part:
                    c.send(chunk)
        r = c.getresponse()
        return r.status, r.read().decode("latin-1")
    except (BrokenPipeError, ConnectionResetError) as e:
        return 0, str(e)
    finally:
        c.close()


def rpc(sched, auth, hostid, ncpus, secs):
    req = f"""<scheduler_request>
<authenticator>{auth}</authenticator>
<hostid>{hostid}</hostid>
<rpc_seqno>{int(time.time())}</rpc_seqno>
<core_client_major_version>7</core_client_major_version>
<core_client_minor_version>20</core_client_minor_version>
<core_client_release>5</core_client_release>
<platform_name>x86_64-pc-linux-gnu</platform_name>
<work_req_seconds>{secs}</work_req_seconds>
<cpu_req_secs>{secs}</cpu_req_secs>
<cpu_req_instances>{ncpus}</cpu_req_instances>
<host_info>
<host_cpid>hostile{hostid}</host_cpid>
<p_ncpus>{ncpus}</p_ncpus>
<p_fpops>1e18</p_fpops>
<m_nbytes>1e15</m_nbytes>
<d_total>1e16</d_total>
<d_free>1e16</d_free>
</host_info>
</scheduler_request>
""".encode()
    status, text = post(sched, [req], len(req))
    return text


def header(name, sig, max_nbytes, nbytes, md5):
    return (f"""<data_server_request>
    <core_client_major_version>7</core_client_major_version>
    <core_client_minor_version>20</core_client_minor_version>
    <core_client_release>5</core_client_release>
<file_upload>
<file_info>
    <name>{name}</name>
    <max_nbytes>{max_nbytes}</max_nbytes>
    <xml_signature>
{sig}
    </xml_signature>
</file_info>
<nbytes>{nbytes}</nbytes>
<md5_cksum>{md5}</md5_cksum>
<offset>0</offset>
<data>
""").encode()


def status_of(text):
    m = re.search(r"<status>(-?\d+)</status>", text)
    return int(m.group(1)) if m else None


def junk(upload, n, mib):
    size = mib << 20
    block = os.urandom(1 << 20)
    hdr = header("forged_0", "0123456789abcdef" * 8 + "\n.", 1e12, size,
                 "0" * 32)

    def chunks():
        for _ in range(mib):
            yield block

    out = [None] * n

    def one(i):
        out[i] = post(upload, [hdr, chunks()], len(hdr) + size)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    counts = {}
    for http_status, text in out:
        key = f"{http_status}:{status_of(text)}"
        counts[key] = counts.get(key, 0) + 1
    msgs = sorted({m for _, t in out for m in re.findall(r"<message>(.*?)</message>", t)})
    print(json.dumps({"counts": counts, "messages": msgs, "seconds": round(time.time() - t0, 2)}))


def race(upload, reply_path, n, kib):
    reply = open(reply_path, encoding="latin-1").read()
    # The first output file: the <file_info> carrying an <xml_signature>.
    for fi in re.findall(r"<file_info>(.*?)</file_info>", reply, re.S):
        if "<xml_signature>" in fi:
            break
    else:
        sys.exit("no signed output file in the reply")
    name = re.search(r"<name>(.*?)</name>", fi).group(1)
    max_nbytes = re.search(r"<max_nbytes>(.*?)</max_nbytes>", fi).group(1)
    sig = re.search(r"<xml_signature>\n?(.*?)\s*</xml_signature>", fi, re.S).group(1)
    size = kib << 10
    bodies = [os.urandom(size) for _ in range(n)]
    md5s = [hashlib.md5(b).hexdigest() for b in bodies]
    out = [None] * n
    go = threading.Barrier(n)

    def slow(body):
        # 16 KiB every 20 ms: the uploads overlap by seconds.
        for k in range(0, len(body), 16384):
            yield body[k:k + 16384]
            time.sleep(0.02)

    def one(i):
        hdr = header(name, sig, max_nbytes, size, md5s[i])
        go.wait()
        out[i] = post(upload, [hdr, slow(bodies[i])], len(hdr) + size)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps({"name": name,
                      "status": [status_of(t) for _, t in out],
                      "md5": md5s}))


def keys(sched, n):
    refused = throttled = 0
    for i in range(n):
        text = rpc(sched, f"wrong{i}", 0, 1, 1)
        if "Too many invalid account keys" in text:
            throttled += 1
        elif "Invalid or missing account key" in text:
            refused += 1
    print(json.dumps({"refused": refused, "throttled": throttled}))


def main():
    cmd = sys.argv[1]
    if cmd == "rpc":
        sys.stdout.write(rpc(*sys.argv[2:7]))
    elif cmd == "junk":
        junk(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "keys":
        keys(sys.argv[2], int(sys.argv[3]))
    elif cmd == "race":
        race(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
