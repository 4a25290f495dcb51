"""The incremental benchmark's sandbox: the simulated service in a child process on a free
loopback port with a fixed latency per request, its admin calls, the resource that reads it and
the ingest settings of its business date (bench/incremental.py).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import httpx

from assets.settings import IngestSettings
from pipelines.resources import ReservationServiceResource

STARTUP_TIMEOUT = 900.0


@dataclass
class Sandbox:
    process: subprocess.Popen[bytes]
    root: str
    secret: str = field(repr=False)

    @property
    def base_url(self) -> str:
        return self.root + "/service/v2"

    def admin(self, method: str, path: str, **params: Any) -> Any:
        response = httpx.request(method, f"{self.root}/_admin{path}", params=params, timeout=600)
        response.raise_for_status()
        return response.json()

    def resource(self) -> ReservationServiceResource:
        return ReservationServiceResource(
            base_url=self.base_url,
            client_id="reservoir-sandbox",
            client_secret=self.secret,
            scope="SBX",
        )

    def today(self) -> date:
        return datetime.fromisoformat(self.admin("GET", "/health")["now"]).date()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_sandbox(scale: str, seed: int, latency_ms: float) -> Sandbox:
    port = _free_port()
    secret = secrets.token_urlsafe(16)
    cmd = [
        sys.executable,
        "-m",
        "sandbox.runner",
        "--port",
        str(port),
        "--scale",
        scale,
        "--seed",
        str(seed),
        "--latency-ms",
        str(latency_ms),
        f"--client-secret={secret}",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    sb = Sandbox(proc, f"http://127.0.0.1:{port}", secret)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the sandbox exited during startup")
        try:
            sb.admin("GET", "/health")
            return sb
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("the sandbox did not start in time")


def ingest_settings(sb: Sandbox) -> IngestSettings:
    return IngestSettings(today=sb.today())
