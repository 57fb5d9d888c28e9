"""A small Chrome DevTools Protocol client over a WebSocket written with the
standard library only (the test machines have no websocket module): enough
to drive a headless Chromium through a site's pages as a person would
(navigate, fill fields, click, read the page, take screenshots)."""
import base64
import http.client
import json
import os
import socket
import struct
import time
import urllib.parse


class WebSocket:
    def __init__(self, url, timeout=30):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OSError("websocket handshake: connection closed")
            head += chunk
        line = head.split(b"\r\n", 1)[0]
        if b" 101 " not in line:
            raise OSError("websocket handshake refused: %r" % line)
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        n = len(data)
        hdr = bytes([0x81])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            op = b0 & 0x0F
            if op == 9:  # ping
                continue
            if op in (0, 1, 2):
                msg += payload
                if b0 & 0x80:
                    return msg.decode()
            elif op == 8:
                raise OSError("websocket closed by peer")


class Page:
    """One tab of a Chromium started with --remote-debugging-port=port."""

    def __init__(self, port):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/json/list")
        targets = json.loads(c.getresponse().read())
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events = []
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == my:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_load(self, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            for i, e in enumerate(self.events):
                if e.get("method") == "Page.loadEventFired":
                    del self.events[: i + 1]
                    time.sleep(0.1)
                    return
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError("page did not load")

    def goto(self, url):
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_load()

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def fill(self, elem_id, value):
        self.js(f"document.getElementById({json.dumps(elem_id)}).value = {json.dumps(value)}")

    def click_and_wait(self, selector):
        """Clicks the element (a person's click: a form submits, a link
        navigates) and waits for the next page."""
        self.events.clear()
        self.js(f"document.querySelector({json.dumps(selector)}).click()")
        self.wait_load()

    def url(self):
        return self.js("location.href")

    def text(self, selector):
        return self.js(f"(e => e ? e.textContent : null)(document.querySelector({json.dumps(selector)}))")

    def html(self):
        return self.js("document.documentElement.outerHTML")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
