"""Every run mode lands through the one landing engine, with the same worker-pool setting.

A probe on `assets.landing.Landing` records each landing that commits: the full extract, the
bootstrap, an event-feed delta, a webhook refresh and the nightly sweep (with its reservation-id
reconciliation) all go through it, and every table a run reports as landed was committed by it.
With `normalise_workers=1` every mode's streams are normalised in the worker pool; with 0, none.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from assets import page_queue, workers
from assets.full import land_full
from assets.landing import Landing, LandReport
from assets.modes import apply_changes, refresh_reservations, sweep
from assets.run_report import RunReport
from assets.settings import IngestSettings
from lake.store import Lake
from tests.incremental.fakes import changed_reservation, event, fixture
from tests.incremental.id_fakes import id_opener as opener

TODAY = date(2026, 6, 1)


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, LandReport]]:
    """(stream, report) of every landing that committed, in order."""
    committed: list[tuple[str, LandReport]] = []
    commit = Landing.commit

    def spy(self: Landing) -> LandReport:
        report = commit(self)
        committed.append((self.spec.name, report))
        return report

    monkeypatch.setattr(Landing, "commit", spy)
    return committed


def _modes(lake: Lake, data: dict[str, Any], settings: IngestSettings) -> Iterator[RunReport]:
    """Each run mode once, against a service whose world changes between them."""
    yield land_full(lake, opener(data), settings)
    yield apply_changes(lake, opener(data), settings)  # no cursor yet: the bootstrap
    data["reservation_details"] = [
        changed_reservation(1, status=12) if r["reservationId"] == 1 else r
        for r in data["reservation_details"]
    ]
    data["events"].append(event(3, "RESERVATION_EVENT", 1))
    yield apply_changes(lake, opener(data), settings)  # the event feed
    yield refresh_reservations(lake, opener(data), settings, [1, 2])  # webhook pushes
    data["reservation_details"] = [
        changed_reservation(4, status=-12, modifiedDate="2026-01-06T00:00:00.000")
        if r["reservationId"] == 4
        else r
        for r in data["reservation_details"]
    ]
    yield sweep(lake, opener(data), settings)  # modified since, reference lists, ids


def test_every_run_mode_lands_through_the_one_engine(
    tmp_path: Path, probe: list[tuple[str, LandReport]]
) -> None:
    settings = IngestSettings(today=TODAY, horizon_days=3, normalise_workers=0)
    lake = Lake(tmp_path / "lake")
    seen_modes = []
    for report in _modes(lake, fixture(), settings):
        seen_modes.append(report.mode)
        committed = {name: rep for name, rep in probe}
        probe.clear()
        assert committed, report.mode
        # Every table the run says it landed was committed by a Landing of this run.
        landed_by_engine = {t for rep in committed.values() for t, n in rep.rows.items() if n}
        assert report.tables <= landed_by_engine, report.mode
        for name, rep in report.landed.items():
            if not rep.skipped:
                assert committed.get(name) is rep, (report.mode, name)
    assert seen_modes == ["full", "bootstrap", "incremental", "webhook", "sweep"]


@pytest.mark.parametrize("setting", [1, 0])
def test_normalise_workers_is_honoured_in_every_mode(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    probe: list[tuple[str, LandReport]],
    setting: int,
) -> None:
    monkeypatch.setattr(page_queue, "WORKER_MIN_BYTES", -1)  # the pool from the first page
    pools: list[int] = []
    shared = workers.shared_pool

    def spy(count: int) -> Any:
        pools.append(count)
        return shared(count)

    monkeypatch.setattr(workers, "shared_pool", spy)
    settings = IngestSettings(today=TODAY, horizon_days=3, normalise_workers=setting)
    lake = Lake(tmp_path / "lake")
    for report in _modes(lake, fixture(), settings):
        used = {name: rep.normalise_workers for name, rep in probe if rep.records}
        probe.clear()
        assert used, report.mode
        assert set(used.values()) == {setting}, (report.mode, used)
    assert set(pools) == ({1} if setting else set())
