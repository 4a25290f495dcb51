"""Each sandbox fault alone and all together: the lake ends equal to the fault-free run.

After every faulted run, each lake table's current state (the lake's reader, lineage ignored)
must equal the fault-free reference: nothing lost, nothing duplicated, nothing changed. The
`churn` fault changes the world while it is read, so its run is compared with the world before
and after (every record that existed throughout must be there, each in one of its versions).
The `malformed` fault damages copies of records, which must go to quarantine with a reason, so
its run is compared with "fault-free minus quarantined keys". The sandbox's peak concurrency
per client must never pass its limit (it answers 429 past it, which would count as throttled).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.faults import FAULT_NAMES
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.reliability.conftest import SCALE, SEED, Figures
from tests.reliability.harness import (
    SLOW_SECONDS,
    Snapshot,
    Target,
    compare,
    quarantined,
    run_extraction,
    snapshot,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("reliability")]

# Rates are per request; a small-scale run makes ~190 requests. 429 and 503 carry Retry-After:
# 1 s, so their rates stay low enough for the run to finish in seconds while still firing.
SINGLE_RATES: dict[str, float] = {
    "storm_429": 0.05,
    "http_500": 0.1,
    "http_502": 0.1,
    "http_503": 0.05,
    "drop": 0.1,
    "truncate": 0.1,
    "slow": 0.03,
    "token_expire": 0.1,
    "churn": 0.2,
    "malformed": 0.1,
}
ALL_TOGETHER = {name: min(rate, 0.03) for name, rate in SINGLE_RATES.items()}
CI_ALL_TOGETHER = dict.fromkeys(FAULT_NAMES, 0.01)
assert set(SINGLE_RATES) == set(FAULT_NAMES)

# The default suite serves every fault in one run; each fault alone, at a higher rate, is in
# `make chaos` (the two that were here too: each whole run costs ~10 CPU s of the CI budget).
CI_CASES = [
    pytest.param(CI_ALL_TOGETHER, 13, id="all-together"),
    pytest.param({"http_500": 0.05}, 11, id="http_500", marks=pytest.mark.chaos),
    pytest.param({"truncate": 0.03}, 12, id="truncate", marks=pytest.mark.chaos),
]
CHAOS_CASES = [
    *(
        pytest.param({name: rate}, seed, id=f"{name}-seed{seed}", marks=pytest.mark.chaos)
        for name, rate in SINGLE_RATES.items()
        for seed in (1, 2)
    ),
    *(
        pytest.param(ALL_TOGETHER, seed, id=f"all-together-seed{seed}", marks=pytest.mark.chaos)
        for seed in (1, 2, 3)
    ),
]


def _faulted_run(
    sandbox: SandboxHandle, data_dir: Path, faults: dict[str, float], fault_seed: int
) -> dict[str, object]:
    sandbox.faults.configure(faults, seed=fault_seed)
    sandbox.reset_stats()
    try:
        run_extraction(Target.of(sandbox), data_dir)
    finally:
        stats = sandbox.stats()
        sandbox.faults.configure({})
    return stats


def check_faulted_run(
    faults: dict[str, float],
    fault_seed: int,
    *,
    shared: SandboxHandle,
    reference: Snapshot,
    tmp_path: Path,
    figures: Figures,
    name: str,
) -> None:
    data_dir = tmp_path / "faulted"
    after: Snapshot | None = None
    if "churn" in faults:  # the world changes: a world of its own, read again afterwards
        from sandbox.world import World

        settings = SandboxSettings(seed=SEED, scale=SCALE, slow_seconds=SLOW_SECONDS)
        with run_sandbox(settings, world=World(seed=SEED, scale=SCALE)) as own:
            stats = _faulted_run(own, data_dir, faults, fault_seed)
            run_extraction(Target.of(own), tmp_path / "after")
        after = snapshot(tmp_path / "after")
        limit = settings.max_concurrency
    else:
        stats = _faulted_run(shared, data_dir, faults, fault_seed)
        limit = shared.settings.max_concurrency

    got = snapshot(data_dir)
    quarantine = quarantined(data_dir)
    result = compare(
        got, reference, after, quarantine=quarantine if "malformed" in faults else None
    )
    injected = stats["faults"]["injected"]  # type: ignore[index]
    figures.add_run(
        name,
        result,
        faults=faults,
        injected=injected,
        quarantined=quarantine.records,
        peak=int(stats["peakInFlightPerClient"]),
        limit=limit,  # type: ignore[call-overload]
    )
    figures.quarantined_without_reason += quarantine.without_reason

    assert sum(injected.values()) > 0, f"no fault fired: {stats['faults']}"
    if name == "all-together":  # the default suite's one fault run serves the common ones
        fired = {f for f, n in injected.items() if n}
        assert {"http_500", "truncate", "drop", "malformed"} <= fired, injected
    assert result.ok, result.summary()
    if "malformed" in faults:
        assert quarantine.records > 0 or injected.get("malformed", 0) == 0
        assert quarantine.without_reason == 0
    else:
        assert quarantine.records == 0, dict(quarantine.reasons)
    assert stats["peakInFlightPerClient"] <= limit, stats
    assert stats["throttled"] == 0, stats


@pytest.mark.parametrize(("faults", "fault_seed"), [*CI_CASES, *CHAOS_CASES])
def test_fault_leaves_the_lake_equal_to_the_fault_free_run(
    faults: dict[str, float],
    fault_seed: int,
    sandbox: SandboxHandle,
    reference: Snapshot,
    tmp_path: Path,
    figures: Figures,
    request: pytest.FixtureRequest,
) -> None:
    check_faulted_run(
        faults,
        fault_seed,
        shared=sandbox,
        reference=reference,
        tmp_path=tmp_path,
        figures=figures,
        name=request.node.callspec.id,
    )
