"""The benchmarks' sandbox: the simulated service served by a child process of its own
(sandbox/process.py, so its CPU work does not share the benchmark's GIL) with a fixed latency per
request, and what a benchmark reads of it: its admin calls, its business date, the pipeline's
resource for it, and the CPU seconds and peak memory of its processes (Linux /proc).

    with start_sandbox("small", seed=7, latency_ms=50) as sandbox:
        sandbox.reset()
        ...
        sandbox.stats(), sandbox.cpu_seconds()
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from bench.proc import cpu_seconds, peak_rss_bytes
from sandbox.process import SandboxProcess, run_sandbox_process
from sandbox.settings import SandboxSettings

if TYPE_CHECKING:
    from pipelines.resources import ReservationServiceResource


@dataclass
class Sandbox:
    """A running sandbox as a benchmark reads it."""

    served: SandboxProcess

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.served.process

    @property
    def base_url(self) -> str:
        return self.served.base_url

    @property
    def secret(self) -> str:
        return self.served.client_secret

    def admin(self, method: str, path: str, **params: Any) -> Any:
        url = self.served.admin_url + path
        response = httpx.request(method, url, params=params, timeout=600)
        response.raise_for_status()
        return response.json()

    def stats(self) -> dict[str, Any]:
        return self.admin("GET", "/stats")

    def reset(self) -> None:
        self.admin("POST", "/stats/reset")

    def today(self) -> date:
        """The service's business date (its world's clock, never this machine's)."""
        return datetime.fromisoformat(self.admin("GET", "/health")["now"]).date()

    def resource(self) -> ReservationServiceResource:
        # imported here: Dagster (seconds to import) only for the benchmarks that run the pipeline
        from pipelines.resources import ReservationServiceResource

        return ReservationServiceResource(
            base_url=self.base_url,
            client_id=self.served.client_id,
            client_secret=self.secret,
            scope=self.served.scope,
        )

    def _pids(self) -> list[int]:
        """The sandbox's process and its encode workers (its live children)."""
        own = self.process.pid
        try:
            children = Path(f"/proc/{own}/task/{own}/children").read_text().split()
        except OSError:
            children = []
        return [own, *map(int, children)]

    def cpu_by_process(self) -> list[float]:
        """User + system CPU seconds so far of the sandbox's process, then of each worker."""
        out = []
        for pid in self._pids():
            try:
                out.append(cpu_seconds(pid))
            except OSError:
                continue
        return out

    def cpu_seconds(self) -> float:
        """User + system CPU of the sandbox's processes so far."""
        return sum(self.cpu_by_process())

    def peak_rss_mb(self) -> list[float]:
        """Peak resident memory (Linux `VmHWM`) of the sandbox's process, then of each worker."""
        out = []
        for pid in self._pids():
            try:
                out.append(peak_rss_bytes(pid) / 2**20)
            except OSError:
                continue
        return out


@contextlib.contextmanager
def start_sandbox(
    scale: str,
    *,
    seed: int,
    latency_ms: float,
    warm: bool = False,
    encode_cache_mb: float | None = None,
    encode_workers: int = 0,
) -> Iterator[Sandbox]:
    """Serve a generated world from a child process for the block; `encode_cache_mb` None: the
    sandbox's own default cache."""
    settings = SandboxSettings(
        seed=seed,
        scale=scale,
        latency_ms=latency_ms,
        warm_cache=warm,
        encode_workers=encode_workers,
    )
    if encode_cache_mb is not None:
        settings.encode_cache_bytes = int(encode_cache_mb * 2**20)
    with run_sandbox_process(settings) as served:
        yield Sandbox(served)
