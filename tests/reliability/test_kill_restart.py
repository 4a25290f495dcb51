"""Runs killed with SIGKILL at random points, then restarted: nothing lost, nothing doubled.

A killed writer leaves only uncommitted temp files (parts are renamed when a table's batch
commits), so after a restart every table's current state must equal the fault-free reference.
The CI form kills the small driver script once; the chaos form kills it at several random
points in a row before restarting, and does the same to `reservoir run` itself.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from assets.catalogue import SPECS
from sandbox.runner import SandboxHandle
from tests.reliability.conftest import Figures
from tests.reliability.harness import (
    ROOT,
    Snapshot,
    Target,
    compare,
    drive_command,
    quarantined,
    run_cli,
    snapshot,
    tmp_files,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("reliability")]
SPEC_NAMES = [s.name for s in SPECS]
RUN_TIMEOUT = 600.0


def _kill_driver_at(env: dict[str, str], spec: str, delay: float) -> bool:
    """Start the driver, SIGKILL it `delay` s after it starts `spec`; False if it finished."""
    proc = subprocess.Popen(
        drive_command(),
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.strip() == f"spec {spec}":
                time.sleep(delay)
                break
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
        return killed
    finally:
        proc.stdout.close()
        proc.wait(timeout=RUN_TIMEOUT)


def _finish(env: dict[str, str]) -> None:
    done = subprocess.run(
        drive_command(),
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("done ")


def _check(
    name: str,
    data_dir: Path,
    reference: Snapshot,
    figures: Figures,
    killed: int,
    sandbox: SandboxHandle,
) -> None:
    result = compare(snapshot(data_dir), reference)
    stats = sandbox.stats()
    limit = sandbox.settings.max_concurrency
    figures.add_run(
        name,
        result,
        faults={"sigkill": 1.0},
        killed=killed,
        peak=int(stats["peakInFlightPerClient"]),
        limit=limit,
    )
    assert result.ok, result.summary()
    assert quarantined(data_dir).records == 0
    assert stats["peakInFlightPerClient"] <= limit
    assert stats["throttled"] == 0


@pytest.mark.parametrize(
    "kills",
    [pytest.param(1, id="one-kill"), pytest.param(5, id="five-kills", marks=pytest.mark.chaos)],
)
def test_killed_driver_restarts_to_the_fault_free_state(
    kills: int,
    sandbox: SandboxHandle,
    reference: Snapshot,
    tmp_path: Path,
    figures: Figures,
) -> None:
    rng = random.Random(9000 + kills)
    env = Target.of(sandbox).env(tmp_path)
    sandbox.faults.configure({})
    sandbox.reset_stats()
    killed = 0
    for _ in range(kills):
        # The big streams (journal entries, reservations) are where a kill lands mid-table.
        spec = rng.choice([*SPEC_NAMES, "journal_entries", "reservations", "reservations"])
        killed += _kill_driver_at(env, spec, rng.uniform(0.0, 0.6))
    assert killed, "the driver finished before every kill"
    _finish(env)
    _check(f"driver-{kills}-kills", tmp_path, reference, figures, killed, sandbox)
    # A killed writer's temp parts are invisible to readers; they are counted, not asserted.
    figures.cases[-1]["tmp_files_left"] = len(tmp_files(tmp_path))


@pytest.mark.chaos
@pytest.mark.slow
def test_killed_reservoir_run_restarts_to_the_fault_free_state(
    sandbox: SandboxHandle,
    reference: Snapshot,
    tmp_path: Path,
    figures: Figures,
) -> None:
    """`reservoir run` itself, killed at random times (seconds into the run), then run again."""
    rng = random.Random(4242)
    env = Target.of(sandbox).env(tmp_path)
    sandbox.faults.configure({})
    sandbox.reset_stats()
    killed = 0
    for _ in range(4):
        proc = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "reservoir"), "run", "-q", "--mode", "full"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            proc.wait(timeout=rng.uniform(3.0, 20.0))
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            killed += 1
    done = run_cli(["run", "-q", "--mode", "full"], env, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    _check("reservoir-run-kills", tmp_path, reference, figures, killed, sandbox)
    figures.cases[-1]["tmp_files_left"] = len(tmp_files(tmp_path))
