"""A headless chromium (Debian's) driven over the DevTools protocol with
Debian's python3-websocket: what the status page's browser test and its
benchmark (bench/status_page.sh) look through. Nothing here sleeps for an
event: waits poll with a deadline.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def wait_for(what, fn, deadline_s=20, every_s=0.1):
    """Calls fn until it returns something truthy; returns it, or None at the deadline."""
    end = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < end:
        try:
            last = fn()
        except Exception as e:  # not up yet: keep asking until the deadline
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every_s)
    print("gave up waiting for %s (last: %r)" % (what, last), flush=True)
    return None



class Browser:
    """One headless chromium and one page, over the DevTools protocol."""

    def __init__(self, workdir):
        self.profile = tempfile.mkdtemp(prefix="chromium-", dir=workdir)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            # chromium makes its singleton socket's directory under TMPDIR and
            # leaves it behind: inside the test's work directory it goes with it.
            env=dict(os.environ, TMPDIR=workdir))
        url = None
        end = time.monotonic() + 60
        while time.monotonic() < end and url is None:
            line = self.proc.stderr.readline()
            if not line:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                url = m.group(1)
        if url is None:
            raise RuntimeError("chromium did not start")
        port = int(re.search(r":(\d+)/", url).group(1))
        pages = wait_for("a page", lambda: [t for t in json.load(urllib.request.urlopen(
            "http://127.0.0.1:%d/json/list" % port, timeout=5)) if t["type"] == "page"], 20)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.errors = []  # console errors, exceptions and failed loads, as the browser reported them
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(domain + ".enable")

    def _note(self, msg):
        m, p = msg.get("method"), msg.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description")))
                                                                       for a in p.get("args", []))))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description", "")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.errors.append("log: %s (%s)" % (e.get("text"), e.get("url", "")))

    def call(self, method, **params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mine:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self._note(msg)

    def pump(self):
        """Takes in the events that came while no call was waiting."""
        self.ws.settimeout(0.05)
        try:
            while True:
                self._note(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(30)

    def eval(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %s: %s" % (expression, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def text(self):
        return self.eval("document.body.innerText") or ""

    def visible_text(self, selector):
        return self.eval("(e => e && !e.closest('[hidden]') ? e.innerText : '')(document.querySelector(%s))"
                         % json.dumps(selector)) or ""

    def open(self, url):
        self.call("Page.navigate", url=url)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
