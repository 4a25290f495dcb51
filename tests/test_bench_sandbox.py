"""The benchmarks' sandbox (`bench/sandbox_process.py`): a world served by a child process with
the settings a benchmark gives it, its admin calls, and the CPU and peak memory of its own
processes (the server's, then each encode worker's), gone after the block."""

from __future__ import annotations

import os

import httpx
import pytest

from bench.sandbox_process import start_sandbox

pytestmark = [pytest.mark.sandbox]


def test_serves_with_the_benchmark_settings_and_reports_its_own_processes() -> None:
    with start_sandbox("small", seed=7, latency_ms=0, encode_cache_mb=8, encode_workers=1) as sb:
        process = sb.process
        assert process.pid != os.getpid()
        token = httpx.post(
            sb.base_url + "/authenticate",
            data={
                "grantType": "client_credentials",
                "clientId": sb.served.client_id,
                "clientSecret": sb.secret,
                "scope": sb.served.scope,
            },
            timeout=30,
        )
        assert token.status_code == 200
        stats = sb.stats()
        assert stats["requests"] == 1
        assert stats["encodeCache"]["maxBytes"] == 8 * 2**20
        assert stats["encodeCache"]["pool"]["workers"] == 1
        sb.reset()
        assert sb.stats()["requests"] == 0

        cpu = sb.cpu_by_process()
        assert len(cpu) == 2  # the server's process, then its one encode worker
        assert cpu[0] > 0  # the server generated the world: CPU of the child, not of this process
        assert sb.cpu_seconds() == pytest.approx(sum(sb.cpu_by_process()), abs=0.5)
        peak = sb.peak_rss_mb()
        assert len(peak) == 2 and all(mb > 0 for mb in peak)
        assert sb.today().isoformat() == sb.admin("GET", "/health")["now"][:10]
    assert process.poll() is not None  # stopped with the block
