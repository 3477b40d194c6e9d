"""A headless Chromium driven over the DevTools protocol on a pipe.

Used to screenshot a view (``fuseflow view --screenshot``), to test the page in a real browser
and to time it (``bench/bench_view.py``). Chromium's ``--remote-debugging-pipe`` reads
protocol messages on its file descriptor 3 and writes replies on 4, each a JSON text ending
in a NUL byte, so no driver program and no network port are needed.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import tempfile
import time
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """Chromium is missing, failed, or a page did not answer in time."""


def find_chromium() -> str:
    """The path of a Chromium (or Chrome) executable on ``PATH``."""
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    raise BrowserError(f"no Chromium found on PATH (looked for {', '.join(CHROMIUM_NAMES)}); "
                       "install it, e.g. 'apt-get install chromium'")


class Browser:
    """One headless Chromium with one page; use as a context manager.

    ``width`` x ``height`` is the page's viewport in CSS pixels; ``timeout`` bounds every wait
    in seconds.
    """

    def __init__(self, executable: str | None = None, width: int = 1400, height: int = 900,
                 timeout: float = 60.0):
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="fuseflow-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # The child's 3 and 4 are set with dup2 from descriptors above them, so one dup2
        # cannot overwrite the source of the other.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)]
        argv = [executable or find_chromium(), *CHROMIUM_FLAGS,
                f"--user-data-dir={self._profile.name}", f"--window-size={width},{height}",
                "about:blank"]
        try:
            self._pid = os.posix_spawn(argv[0], argv, dict(os.environ), file_actions=[
                (os.POSIX_SPAWN_DUP2, high[0], 3), (os.POSIX_SPAWN_DUP2, high[1], 4),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        finally:
            for fd in (to_browser_r, from_browser_w, *high):
                os.close(fd)
        self._out, self._in = to_browser_w, from_browser_r
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []
        self._session = None
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self.send("Target.attachToTarget",
                                      {"targetId": target, "flatten": True})["sessionId"]
            self.send("Page.enable")
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, method: str, params: dict | None = None) -> dict:
        """Sends one protocol command to the page (or the browser before a page exists) and
        returns its result."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if self._session is not None:
            message["sessionId"] = self._session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data):]
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def _receive(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise BrowserError(f"Chromium did not answer within {self.timeout:g} s")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the DevTools pipe (did it crash?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_event(self, method: str) -> dict:
        """Waits for the page event ``method`` (one already received counts) and returns it."""
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method:
                    return self._events.pop(i)
            reply = self._receive()
            if "method" in reply:
                self._events.append(reply)

    def open(self, url_or_path) -> float:
        """Loads a URL or a file as a new document and waits for its load event; returns the
        seconds from navigation to the load event."""
        url = url_or_path if "://" in str(url_or_path) else Path(url_or_path).resolve().as_uri()
        # From the same page, a URL differing only in its fragment would not load anew.
        self._navigate("about:blank")
        start = time.perf_counter()
        self._navigate(url)
        return time.perf_counter() - start

    def _navigate(self, url: str) -> None:
        self._events.clear()
        reply = self.send("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise BrowserError(f"cannot open {url}: {reply['errorText']}")
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises are awaited)."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True})
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"JavaScript error: {text}")
        return reply["result"].get("value")

    def click(self, x: float, y: float, count: int = 1) -> None:
        """A left mouse click (``count`` 2: a double click) at page coordinates."""
        for n in range(1, count + 1):
            for kind in ("mousePressed", "mouseReleased"):
                self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                                       "button": "left", "clickCount": n})

    def type_text(self, text: str) -> None:
        """Types ``text`` into the focused element."""
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path) -> Path:
        """Saves a PNG of the viewport."""
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Closes the browser and removes its profile."""
        if getattr(self, "_pid", None) is None:
            return
        try:
            self._session = None
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        for fd in (self._out, self._in):
            os.close(fd)
        deadline = time.monotonic() + 10
        while os.waitpid(self._pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
                break
            time.sleep(0.05)
        self._pid = None
        self._profile.cleanup()
