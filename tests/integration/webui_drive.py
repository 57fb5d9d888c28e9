#!/usr/bin/env python3
"""Drives the client's web page in headless Chromium through the DevTools
protocol (a small WebSocket client of its own: the standard library has
none), for test_client_webui.sh.

usage: webui_drive.py URL TASK OUTDIR

Opens URL (with #token=...), waits until the task table lists TASK, prints
the task names shown and TASK's progress, clicks its Suspend button, waits
until its row says "suspended by user", saves OUTDIR/webui.png and prints
"suspended". With TASK "-": waits 3 s and prints the status line and
whether the tables are shown (a page without the right token).
"""
import base64
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
import urllib.request

url, task, outdir = sys.argv[1:4]
os.makedirs(outdir, exist_ok=True)
chrome = subprocess.Popen(
    ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
     f"--user-data-dir={outdir}/chrome", "--remote-debugging-port=0", "--window-size=1280,1000",
     "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def die(msg):
    print("webui_drive: " + msg, file=sys.stderr)
    chrome.kill()
    sys.exit(1)


port = None
t0 = time.time()
while port is None and time.time() - t0 < 60:
    line = chrome.stderr.readline()
    m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
    if m:
        port = int(m.group(1))
if port is None:
    die("chromium did not start")
page = next(t for t in json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
            if t["type"] == "page")
path = page["webSocketDebuggerUrl"].split(f":{port}", 1)[1]
ws = socket.create_connection(("127.0.0.1", port), timeout=60)
key = base64.b64encode(os.urandom(16)).decode()
ws.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
           .encode())
head = b""
while b"\r\n\r\n" not in head:
    head += ws.recv(1)
if b" 101 " not in head.split(b"\r\n")[0]:
    die("websocket handshake: " + head.decode(errors="replace"))


def recv_exact(n):
    b = b""
    while len(b) < n:
        c = ws.recv(n - len(b))
        if not c:
            die("devtools connection closed")
        b += c
    return b


def send_frame(text):
    data = text.encode()
    mask = os.urandom(4)
    n = len(data)
    hdr = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                           bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                           bytes([0x80 | 127]) + struct.pack(">Q", n))
    ws.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def recv_message():
    msg = b""
    while True:
        b0, b1 = recv_exact(2)
        n = b1 & 127
        if n == 126:
            n = struct.unpack(">H", recv_exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", recv_exact(8))[0]
        msg += recv_exact(n)
        if b0 & 0x80:
            return json.loads(msg)


ids = [0]


def send(method, **params):
    ids[0] += 1
    send_frame(json.dumps({"id": ids[0], "method": method, "params": params}))
    while True:
        m = recv_message()
        if m.get("id") == ids[0]:
            return m


def js(expr):
    r = send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
    return r.get("result", {}).get("result", {}).get("value")


def until(expr, what, secs=30):
    for _ in range(secs * 4):
        if js(f"!!({expr})"):
            return
        time.sleep(0.25)
    die(f"page never showed {what}; status: " + str(js("document.getElementById('status') && document.getElementById('status').textContent")))


send("Page.enable")
send("Page.navigate", url=url)
if task == "-":
    time.sleep(3)
    print("status: " + str(js("document.getElementById('status').textContent")))
    print("main shown: " + str(js("!document.getElementById('main').hidden")).lower())
else:
    row = f"document.querySelector('tr[data-task=\"{task}\"]')"
    until(row, "the task " + task)
    print("tasks: " + js("[...document.querySelectorAll('#tasks tr[data-task]')].map((r) => r.dataset.task).join(' ')"))
    print("progress: " + str(js(f"{row}.querySelector('progress').value")))
    js(f"{row}.querySelector('button[data-op=\"suspend\"]').click()")
    until(f"{row} && {row}.querySelector('.state').textContent === 'suspended by user'",
          "the task suspended")
    shot = send("Page.captureScreenshot", format="png")
    open(f"{outdir}/webui.png", "wb").write(base64.b64decode(shot["result"]["data"]))
    print("suspended")
ws.close()
chrome.terminate()
try:
    chrome.wait(10)
except subprocess.TimeoutExpired:
    chrome.kill()
