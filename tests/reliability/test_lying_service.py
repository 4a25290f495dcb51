"""The service lies; the lake does not.

Full extractions through `lying_proxy` (a real HTTP proxy in front of the sandbox): wrong totals
and envelopes lose nothing (the lake equals the fault-free load); a list that silently ends
early is refused by the removal guard against a loaded lake, which keeps every row.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assets.guard import RemovalRefused
from lake.store import Lake
from sandbox.runner import SandboxHandle
from service.errors import ServiceError
from tests.reliability.conftest import Figures
from tests.reliability.harness import Snapshot, Target, compare, run_extraction, snapshot
from tests.reliability.lying_proxy import DATA_LIES, LIES, lying_proxy

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("reliability")]

CI_LIES = ("own-count", "bare-array")


def _lies() -> list[object]:
    return [
        pytest.param(name, marks=() if name in CI_LIES else pytest.mark.chaos, id=name)
        for name in LIES
    ]


@pytest.mark.parametrize("lie", _lies())
def test_wrong_totals_and_envelopes_lose_nothing(
    lie: str, sandbox: SandboxHandle, reference: Snapshot, tmp_path: Path, figures: Figures
) -> None:
    sandbox.faults.configure({})
    with lying_proxy(sandbox.base_url, LIES[lie]) as (url, counts):
        target = Target(url, sandbox.client_id, sandbox.client_secret, sandbox.scope)
        run_extraction(target, tmp_path / "data")
    _judge(figures, f"lying proxy: {lie}", lie, counts, tmp_path / "data", reference)


@pytest.mark.parametrize("lie", list(DATA_LIES))
def test_a_list_that_ends_early_is_refused_against_a_loaded_lake(
    lie: str,
    sandbox: SandboxHandle,
    reference_dir: Path,
    reference: Snapshot,
    tmp_path: Path,
    figures: Figures,
) -> None:
    sandbox.faults.configure({})
    data = tmp_path / "data"
    shutil.copytree(reference_dir, data)
    with lying_proxy(sandbox.base_url, DATA_LIES[lie]) as (url, counts):
        target = Target(url, sandbox.client_id, sandbox.client_secret, sandbox.scope)
        # Refused twice over: the list ends far short of the service's own count, and landing
        # it would remove most of the lake's reservations (the removal guard).
        with pytest.raises((ServiceError, RemovalRefused), match="reservations"):
            run_extraction(target, data)
    _judge(figures, f"lying proxy: {lie} (refused)", lie, counts, data, reference)


@pytest.mark.parametrize("lie", list(DATA_LIES))
def test_a_list_that_ends_early_is_refused_on_a_first_load(
    lie: str, sandbox: SandboxHandle, tmp_path: Path
) -> None:
    """No lake to compare with: the service's own count on the first page shows the cut."""
    sandbox.faults.configure({})
    with lying_proxy(sandbox.base_url, DATA_LIES[lie]) as (url, counts):
        target = Target(url, sandbox.client_id, sandbox.client_secret, sandbox.scope)
        with pytest.raises(ServiceError, match="ended after"):
            run_extraction(target, tmp_path / "data")
    assert counts.get("lies", 0) > 0
    assert Lake(tmp_path / "data" / "lake").files("reservations") == []  # nothing landed


def _judge(
    figures: Figures, name: str, lie: str, counts: dict[str, int], data: Path, reference: Snapshot
) -> None:
    """The proxy lied, and the lake equals the fault-free load (recorded in the figures)."""
    assert counts.get("lies", 0) > 0
    result = compare(snapshot(data), reference)
    faults = {f"lie:{lie}": 1.0}
    figures.add_run(name, result, faults=faults, injected={f"lie:{lie}": counts["lies"]})
    assert result.ok, result.summary()
