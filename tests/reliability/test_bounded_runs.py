"""A run that reaches its request budget stops with one line naming the setting, keeps what it
landed, and the next run completes the lake to exactly the fault-free load."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.runner import SandboxHandle
from tests.reliability.harness import Snapshot, Target, compare, run_cli, snapshot

# Two whole runs through `reservoir run` (~30 s of CI): `make chaos`. The default suite keeps the
# budget's stop and its message at the client (tests/service/test_bounded_work.py).
pytestmark = [pytest.mark.sandbox, pytest.mark.chaos, pytest.mark.xdist_group("reliability")]


def test_a_run_over_its_request_budget_stops_and_the_next_completes(
    sandbox: SandboxHandle, reference: Snapshot, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    env = Target.of(sandbox).env(data)
    stopped = run_cli(["run", "-q", "--mode", "full"], {**env, "RESERVOIR_MAX_REQUESTS": "40"})
    assert stopped.returncode != 0, stopped.stdout[-2000:]
    assert "RESERVOIR_MAX_REQUESTS" in stopped.stderr, stopped.stderr[-2000:]
    assert "Traceback" not in stopped.stderr + stopped.stdout

    done = run_cli(["run", "-q"], env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = compare(snapshot(data), reference)
    assert result.ok, result.summary()
