"""The removal guard: a full batch that would drop more than a share of a table's current
records is refused in every mode that lands full batches, naming the table; nothing of that
table is committed, and the lake stays as it was. A real mass deletion is confirmed by raising
the share; a moving window (availability by arrival date) is not a removal."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from assets.full import land_full
from assets.guard import RemovalRefused
from assets.modes import apply_changes
from assets.settings import IngestSettings
from lake.store import Lake
from tests.incremental.fakes import fixture
from tests.incremental.id_fakes import id_opener as opener

TODAY = date(2026, 6, 1)
SETTINGS = IngestSettings(today=TODAY, horizon_days=30, normalise_workers=0)


def _ids(lake: Lake, table: str, column: str) -> list[int]:
    return lake.current_ids(table, column)


@pytest.fixture
def loaded(tmp_path: Path) -> tuple[Lake, dict[str, Any]]:
    lake, data = Lake(tmp_path / "lake"), fixture()
    failures: dict[str, Exception] = {}
    land_full(lake, opener(data), SETTINGS, failures=failures)
    assert not failures
    assert len(_ids(lake, "reservations", "reservation_id")) == 5
    return lake, data


def test_a_full_read_that_drops_most_reservations_is_refused(
    loaded: tuple[Lake, dict[str, Any]],
) -> None:
    lake, data = loaded
    before = lake.current("reservations")
    children = lake.current("bill_lines").num_rows
    data["reservation_details"] = data["reservation_details"][:2]  # the service "lost" 3 of 5
    failures: dict[str, Exception] = {}
    land_full(lake, opener(data), SETTINGS, failures=failures)
    error = failures["reservations"]
    assert isinstance(error, RemovalRefused)
    assert "'reservations'" in str(error) and "3 of the lake's 5" in str(error)
    assert "RESERVOIR_MAX_REMOVED_SHARE" in str(error)
    assert lake.current("reservations").equals(before)
    assert lake.current("bill_lines").num_rows == children  # the children stayed too


def test_a_confirmed_mass_deletion_lands(loaded: tuple[Lake, dict[str, Any]]) -> None:
    lake, data = loaded
    data["reservation_details"] = data["reservation_details"][:2]
    failures: dict[str, Exception] = {}
    land_full(lake, opener(data), replace(SETTINGS, max_removed_share=1.0), failures=failures)
    assert not failures
    assert len(_ids(lake, "reservations", "reservation_id")) == 2


def test_a_removal_within_the_share_lands(loaded: tuple[Lake, dict[str, Any]]) -> None:
    lake, data = loaded
    data["reservation_details"] = data["reservation_details"][:3]  # 2 of 5 = 40 % < 50 %
    failures: dict[str, Exception] = {}
    land_full(lake, opener(data), SETTINGS, failures=failures)
    assert not failures
    assert len(_ids(lake, "reservations", "reservation_id")) == 3


def test_an_empty_full_read_is_refused(loaded: tuple[Lake, dict[str, Any]]) -> None:
    lake, data = loaded
    data["customers"] = []  # a 204 outage on the customer list
    failures: dict[str, Exception] = {}
    land_full(lake, opener(data), SETTINGS, failures=failures)
    assert isinstance(failures["customers"], RemovalRefused)
    assert len(_ids(lake, "customers", "customer_id")) == 5


def test_a_reference_list_read_on_a_new_day_is_guarded(
    loaded: tuple[Lake, dict[str, Any]],
) -> None:
    lake, data = loaded
    apply_changes(lake, opener(data), SETTINGS)  # the bootstrap: a cursor
    data["accommodation_types"] = data["accommodation_types"][:1]  # 2 of 3 gone at once
    with pytest.raises(RemovalRefused, match="accommodation_types"):
        apply_changes(lake, opener(data), replace(SETTINGS, today=TODAY + timedelta(days=1)))
    assert len(_ids(lake, "accommodation_types", "resource_id")) == 3


def test_a_moving_availability_window_is_not_a_removal(
    loaded: tuple[Lake, dict[str, Any]],
) -> None:
    lake, data = loaded
    later = replace(SETTINGS, today=TODAY + timedelta(days=25))  # 25 of 30 dates left behind
    failures: dict[str, Exception] = {}
    land_full(lake, opener(data), later, failures=failures)
    assert not failures, failures
    dates = lake.current("availability").column("arrival_date").to_pylist()
    assert min(dates) == TODAY + timedelta(days=25)
