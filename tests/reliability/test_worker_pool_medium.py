"""Chaos at medium scale with the worker pool: the streams big enough to be normalised in worker
processes (reservation details) are read through every fault but churn, and the lake equals a
fault-free, in-process load of the same world, key by key (`make chaos`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.runner import SandboxSettings, run_sandbox
from tests.reliability.conftest import Figures
from tests.reliability.harness import SLOW_SECONDS, Target, compare, run_extraction, snapshot
from tests.reliability.test_fault_matrix import SINGLE_RATES

# Two medium loads (~2 min each on an idle 2-core machine) need more than the 300 s default.
pytestmark = [pytest.mark.sandbox, pytest.mark.chaos, pytest.mark.timeout(1500)]

SEED = 11
TIMEOUT = 30.0
# Rates per request; a medium run makes ~1,900. Kept low so the retries fit in minutes.
FAULTS = {
    name: min(rate, 0.01)
    for name, rate in SINGLE_RATES.items()
    if name not in ("churn", "malformed", "slow")
}


def test_the_worker_pool_at_medium_scale_loses_nothing(tmp_path: Path, figures: Figures) -> None:
    settings = SandboxSettings(seed=SEED, scale="medium", slow_seconds=SLOW_SECONDS)
    with run_sandbox(settings) as sandbox:
        target = Target.of(sandbox)
        # No "slow" fault here, so the client keeps its production timeout: at medium scale on a
        # busy 2-core machine an availability window can take longer than the matrix's 1 s.
        run_extraction(target, tmp_path / "reference", normalise_workers=0, timeout=TIMEOUT)
        sandbox.faults.configure(FAULTS, seed=SEED)
        sandbox.reset_stats()
        result = run_extraction(target, tmp_path / "pool", normalise_workers=2, timeout=TIMEOUT)
        stats = sandbox.stats()
        sandbox.faults.configure({})
    used = {name: r.normalise_workers for name, r in result.reports.items() if r.normalise_workers}
    assert used.get("reservations") == 2, used  # the pool did the reservation details
    injected = stats["faults"]["injected"]
    comparison = compare(snapshot(tmp_path / "pool"), snapshot(tmp_path / "reference"))
    figures.add_run(
        "worker pool, medium scale, all faults but churn/malformed/slow",
        comparison,
        faults=FAULTS,
        injected=injected,
        peak=int(stats["peakInFlightPerClient"]),
        limit=settings.max_concurrency,
    )
    assert sum(injected.values()) > 0, injected
    assert comparison.ok, comparison.summary()
