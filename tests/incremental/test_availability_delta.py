"""The availability horizon lands only what differs from the lake, and the lake stays equal to a
fresh full load: per changed type, for the whole horizon (many types changed, a new business
date), with a type removed, and under the removal guard."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from assets.guard import RemovalRefused
from assets.modes import apply_changes
from assets.run_report import RunReport
from assets.settings import IngestSettings
from lake.store import Lake
from lake.tables import TABLES as LAKE_TABLES
from tests.incremental.fakes import IncrementalFakeService, event, fixture, opener
from tests.incremental.helpers import lake_differences

TODAY = date(2026, 6, 1)
# 3 types: one event is a third of them; a share of 0.5 reads the changed type alone
PER_TYPE = IngestSettings(today=TODAY, horizon_days=3, availability_full_share=0.5)
WHOLE = replace(PER_TYPE, availability_full_share=0.25)
TABLES = ("availability", "availability_prices")


def _equals_a_full_load(
    lake: Lake, data: dict[str, Any], settings: IngestSettings, tmp: Path
) -> None:
    fresh = Lake(tmp / "fresh" / "lake")
    apply_changes(fresh, opener(data), settings)  # the bootstrap: a full load
    assert lake_differences(lake, fresh, TABLES) == {}  # the availability tables alone


def _landed(report: RunReport) -> dict[str, int]:
    rep = report.landed.get("availability")
    if rep is None or rep.skipped:
        return {}
    return {**{t: n for t, n in rep.rows.items() if n}, "tombstones": rep.tombstones}


def _change(data: dict[str, Any], event_id: int, resource: int, day: date, **fields: Any) -> None:
    data.setdefault("availability_changes", {})[(resource, day.isoformat(), 2)] = fields
    data["events"].append(_about_type(event_id, resource))


def _about_type(event_id: int, resource: int) -> dict[str, Any]:
    return {**event(event_id, "AVAILABILITY_EVENT", resource), "entityType": "ACCOMMODATIONTYPE"}


@pytest.mark.parametrize("settings", [PER_TYPE, WHOLE], ids=["per-type", "whole-horizon"])
def test_only_the_changed_record_lands(tmp_path: Path, settings: IngestSettings) -> None:
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), settings)
    batches = set(lake.current("availability").column("_batch_id").to_pylist())

    price = [{"rateTypeId": 1, "currencyCode": "EUR", "price": 150.0}]
    _change(data, 50, 12, TODAY + timedelta(days=1), availableUnits=1, prices=price)
    report = apply_changes(lake, opener(data), settings)

    # one record with its one price; every other record keeps the batch it had
    assert _landed(report) == {"availability": 1, "availability_prices": 1, "tombstones": 0}
    assert report.diffs["availability"]["differing"] == 1
    assert report.diffs["availability"]["scope"] == (1 if settings is PER_TYPE else "horizon")
    current = lake.current("availability")
    moved = current.filter(
        pc.invert(pc.is_in(current.column("_batch_id"), pa.array(sorted(batches))))
    )
    assert [
        (r["resource_id"], r["arrival_date"], r["available_units"]) for r in moved.to_pylist()
    ] == [(12, TODAY + timedelta(days=1), 1)]
    _equals_a_full_load(lake, data, settings, tmp_path)

    # an event that changed nothing the lake holds lands nothing
    data["events"].append(_about_type(51, 11))
    again = apply_changes(lake, opener(data), settings)
    assert _landed(again) == {}
    assert again.diffs["availability"]["differing"] == 0


def test_a_new_business_date_lands_the_new_day_and_tombstones_the_past_one(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), WHOLE)
    next_day = replace(WHOLE, today=TODAY + timedelta(days=1))
    report = apply_changes(lake, opener(data), next_day)

    # 3 types x 2 durations: the new last arrival date lands, the passed one is tombstoned (the
    # root's rows count both)
    assert _landed(report) == {"availability": 12, "availability_prices": 6, "tombstones": 6}
    assert report.landed["availability"].batch_kind == "delta"
    dates = set(lake.current("availability").column("arrival_date").to_pylist())
    assert dates == {TODAY + timedelta(days=d) for d in (1, 2, 3)}
    _equals_a_full_load(lake, data, next_day, tmp_path)


def test_a_removed_type_loses_its_availability(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), PER_TYPE)
    data["accommodation_types"] = [t for t in data["accommodation_types"] if t["resourceId"] != 13]
    data["events"].append(event(60, "ACCOMMODATION_TYPE_EVENT", 13, "DELETE"))
    report = apply_changes(lake, opener(data), PER_TYPE)

    # its 3 dates x 2 durations, nothing else
    assert _landed(report) == {"availability": 6, "tombstones": 6}
    assert 13 not in lake.current("availability").column("resource_id").to_pylist()
    _equals_a_full_load(lake, data, PER_TYPE, tmp_path)


def test_the_whole_horizon_is_guarded_like_a_full_batch(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), WHOLE)
    before = lake.current("availability").num_rows
    # the service answers for one type of three while the type list is unchanged
    data["availability_changes"] = {}
    data["events"].append(_about_type(70, 11))
    kept = data["accommodation_types"]
    data["accommodation_types"] = kept[:1]  # what the availability read iterates in the fake
    try:
        with pytest.raises(RemovalRefused, match="'availability'"):
            apply_changes(lake, opener(data), WHOLE)
    finally:
        data["accommodation_types"] = kept
    assert lake.current("availability").num_rows == before


@pytest.mark.parametrize("apart", [100, 1], ids=["one-by-one", "one-pass"])
def test_several_changed_types_are_read_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, apart: int
) -> None:
    """Two types of three changed: each is read with its `resourceId` (the endpoint takes one)
    rather than every type's horizon, unless more changed than `availability_types_apart`
    (then one pass, the others' records dropped); the same records land either way."""
    settings = replace(PER_TYPE, availability_full_share=1.0, availability_types_apart=apart)
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), settings)
    asked: list[int | None] = []
    read = IncrementalFakeService.availability

    def spy(self: IncrementalFakeService, *args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("resource_id"))
        return read(self, *args, **kwargs)

    monkeypatch.setattr(IncrementalFakeService, "availability", spy)
    price = [{"rateTypeId": 1, "currencyCode": "EUR", "price": 150.0}]
    _change(data, 50, 12, TODAY + timedelta(days=1), availableUnits=1, prices=price)
    _change(data, 51, 13, TODAY + timedelta(days=2), availableUnits=0, prices=price)
    report = apply_changes(lake, opener(data), settings)

    assert sorted(asked, key=repr) == ([12, 13] if apart > 1 else [None])
    assert _landed(report) == {"availability": 2, "availability_prices": 2, "tombstones": 0}
    assert report.diffs["availability"]["scope"] == 2
    # the two types' records read (3 dates x 2 durations each), none of the third type's
    assert report.diffs["availability"]["read"] == 12
    monkeypatch.undo()
    _equals_a_full_load(lake, data, settings, tmp_path)
    # the compare's read of those types' current rows is the current state, filtered
    for table in TABLES:
        whole = lake.current(table)
        some = whole.filter(pc.is_in(whole.column("resource_id"), pa.array([12, 13], pa.int64())))
        only = lake.current_where(table, "resource_id", [12, 13])
        key = [(k, "ascending") for k in lake_key(table)]
        assert only.sort_by(key).equals(some.sort_by(key))
        assert only.num_rows == some.num_rows > 0


def lake_key(table: str) -> list[str]:
    return list(LAKE_TABLES[table].key)
