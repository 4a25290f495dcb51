"""A real headless Chromium driven over the DevTools protocol (no extra browser package): load a
page at a given width, run a script in it, take a screenshot."""

from __future__ import annotations

import base64
import itertools
import json
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

CHROMIUM = Path("/usr/bin/chromium")
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def _is_error(msg: dict[str, Any]) -> bool:
    """An uncaught exception, a log entry (failed loads, CSP refusals) or console.error."""
    method = msg.get("method")
    if method in ("Runtime.exceptionThrown", "Log.entryAdded"):
        return True
    return method == "Runtime.consoleAPICalled" and msg["params"].get("type") in ("error", "assert")


class Browser:
    """One page of a headless Chromium."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.console: list[str] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=120))
            if _is_error(msg):
                self.console.append(json.dumps(msg["params"])[:500])
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def size(self, width: int, height: int) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=width < 600,
        )

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.open_wait()

    def open_wait(self) -> None:
        """Wait until the page script has drawn every chart (it marks <html data-charts>)."""
        for _ in range(600):
            state = self.eval(
                "document.readyState === 'complete' && "
                "document.documentElement.hasAttribute('data-charts')"
            )
            if state:
                return
            time.sleep(0.1)
        raise AssertionError(f"the page did not finish drawing; console: {self.console}")

    def eval(self, expression: str) -> Any:
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in found:
            raise AssertionError(f"script failed: {found['exceptionDetails']}")
        return found["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


@contextmanager
def browser(profile: Path) -> Iterator[Browser]:
    proc = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--remote-debugging-port=0",
            "--remote-allow-origins=*",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        endpoint = None
        for line in proc.stderr:
            found = _LISTENING.search(line)
            if found:
                endpoint = found.group(1)
                break
        assert endpoint, "chromium did not open its DevTools endpoint"
        port = endpoint.split(":")[2].split("/")[0]
        pages = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=30).json()
        page = next(p for p in pages if p["type"] == "page")
        with connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=30) as ws:
            b = Browser(ws)
            b.call("Page.enable")
            b.call("Runtime.enable")
            b.call("Log.enable")
            yield b
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
