"""A dimension's change reaches the reservations it names by key (`core.fct_reservations`'
headers for `core.dim_accommodation_types`, `core.dim_locations` and
`core.dim_distribution_channels`): a type moved to another park, a park moved to another
company and a channel's currency each key the reservations that read them, and the refresh
equals a whole rebuild; a type that changed in nothing its reservations read keys none of them
(the day's relisted reference lists land whole when anything in them differs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import (
    COMPANY_ID,
    EUR_CHANNEL,
    LOCATION_ID,
    Batch,
    accommodation_type,
)
from tests.warehouse.test_inplace import AS_OF, _differences_from_a_whole_rebuild, _first_state_copy
from warehouse.inplace import update_warehouse

RESERVATIONS = "core.fct_reservations"


def _keyed(data_dir: Path) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(
            f"select reservation_id, location_id, company_id, currency_code from {RESERVATIONS} "
            "order by reservation_id"
        ).fetchall()
    finally:
        con.close()


def test_a_type_moved_to_another_park_keys_its_reservations(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path
) -> None:
    _first_state_copy(first_state, lake, tmp_path)
    batch = Batch()
    batch.tables["locations"].append(
        {"location_id": 2, "code": "PARK2", "name": "Park 2", "company_id": COMPANY_ID}
    )
    batch.tables["accommodation_types"].append(accommodation_type(location_id=2))
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get(RESERVATIONS) == "keys", result.refreshed
    assert {location for _, location, _, _ in _keyed(tmp_path)} == {2}
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_a_type_renamed_keys_no_reservation(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, replaced: list[str]
) -> None:
    """Its reservations read the type's park alone: a new name changes none of their rows, and
    none of them is read again (no key, so no row of the table is replaced)."""
    _first_state_copy(first_state, lake, tmp_path)
    before = _keyed(tmp_path)
    batch = Batch()
    batch.tables["accommodation_types"].append(accommodation_type(name="Bungalow for four"))
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.dim_accommodation_types") == "whole", result.refreshed
    assert not [t for t in replaced if "fct_reservations" in t], replaced
    assert _keyed(tmp_path) == before
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_a_park_moved_to_another_company_keys_its_reservations(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path
) -> None:
    _first_state_copy(first_state, lake, tmp_path)
    batch = Batch()
    batch.tables["companies"].append(
        {"company_id": 2, "code": "C2", "name": "Company 2", "currency_code": "EUR"}
    )
    batch.tables["locations"].append(
        {"location_id": LOCATION_ID, "code": "PARK", "name": "Park", "company_id": 2}
    )
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get(RESERVATIONS) == "keys", result.refreshed
    assert {company for _, _, company, _ in _keyed(tmp_path)} == {2}
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_a_channels_currency_keys_its_reservations(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path
) -> None:
    _first_state_copy(first_state, lake, tmp_path)
    batch = Batch()
    batch.tables["distribution_channels"].append(
        {
            "distribution_channel_id": EUR_CHANNEL,
            "code": "WEB",
            "name": "Web",
            "type": "DIRECT",
            "currency_code": "CHF",
            "commission_percentage": 0.0,
        }
    )
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get(RESERVATIONS) == "keys", result.refreshed
    assert {currency for _, _, _, currency in _keyed(tmp_path)} == {"CHF"}
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}
