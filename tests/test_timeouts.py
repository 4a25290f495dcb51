"""The suite's timeout is a hang check stretched by the host's load (tests/timeouts.py): on a
quiet host a test over the limit is stopped at the limit; on a loaded one a slow test gets up to
`MAX_STRETCH` times the limit, and one that hangs is still stopped then. A tiny suite in a
subprocess, its host's load faked per test."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.inner_pytest import run_pytest_in
from tests.timeouts import MAX_STRETCH

SUITE = """
import os
import time

import pytest


def _load(monkeypatch, per_core):
    cores = len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "getloadavg", lambda: (per_core * cores,) * 3)


@pytest.mark.timeout(0.5)
def test_over_the_limit_on_a_quiet_host(monkeypatch):
    _load(monkeypatch, 0.5)
    time.sleep(1.5)


@pytest.mark.timeout(0.5)
def test_over_the_limit_on_a_loaded_host(monkeypatch):
    _load(monkeypatch, 100)  # more than MAX_STRETCH
    time.sleep(1.2)


@pytest.mark.timeout(0.5)
def test_a_hang_on_a_loaded_host(monkeypatch):
    _load(monkeypatch, 100)
    time.sleep(30)
"""


def test_the_timeout_stretches_with_the_load_and_still_stops_a_hang(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text(SUITE)
    started = time.monotonic()
    done = run_pytest_in(
        tmp_path,
        *("-p", "no:xdist", "-p", "tests.timeouts", "-rA"),
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )
    took = time.monotonic() - started
    out = done.stdout
    assert "PASSED test_tiny.py::test_over_the_limit_on_a_loaded_host" in out, out + done.stderr
    assert "FAILED test_tiny.py::test_over_the_limit_on_a_quiet_host - Failed: Timeout" in out, out
    assert "FAILED test_tiny.py::test_a_hang_on_a_loaded_host - Failed: Timeout" in out, out
    # the hang (a 30 s sleep) was stopped at MAX_STRETCH times its 0.5 s limit, not slept out
    assert took < 25, (took, MAX_STRETCH)
