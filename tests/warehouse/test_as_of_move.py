"""A refresh that moves the business date a day: occupancy reads the as-of date only through its
allotment-held nights, so it is maintained by key (the nights whose still-held allotment moved)
instead of rebuilt whole, and equals a whole rebuild of the same lake on the new date."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from tests.incremental.helpers import mart_differences
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import EUR_CHANNEL, GBP_CHANNEL, TYPE_ID, Batch
from warehouse.build import build_warehouse
from warehouse.inplace import update_warehouse

SCHEMAS = ("staging", "core", "marts")


def _held(path: Path) -> dict[date, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(
            "select date_day, allotment_held_nights from marts.occupancy_daily "
            "where accommodation_type_id = $1 order by 1",
            [TYPE_ID],
        ).fetchall()
    finally:
        con.close()
    return {d: int(n) for d, n in rows}


def test_a_moved_as_of_date_keys_the_nights_whose_held_allotment_moved(
    lake: Lake, tmp_path: Path
) -> None:
    # reservation 1 (another channel) spans the reporting range (the calendar stays as it is); two units held for
    # the web channel, released 7 days before each night; reservation 5 is booked through that
    # channel on the new date, so it is picked up from the allotment only as of then
    batch = (
        Batch()
        .reference(units=4)
        .reservation(1, "2025-01-01", "2025-01-20", unit_id=1000, channel=GBP_CHANNEL)
        .reservation(
            5,
            "2025-01-14",
            "2025-01-16",
            unit_id=1001,
            channel=EUR_CHANNEL,
            booked="2025-01-06T09:00:00",
        )
    )
    batch.tables["allotments"].append(
        {
            "allotment_id": 70,
            "resource_id": TYPE_ID,
            "distribution_channel_id": EUR_CHANNEL,
            "start_date": "2025-01-01",
            "end_date": "2025-01-20",
            "quantity": 2,
            "release_days": 7,
        }
    )
    batch.flush(lake, kind="full")
    data_dir = tmp_path
    build_warehouse(data_dir, as_of=date(2025, 1, 5))
    before = _held(data_dir / "warehouse.duckdb")

    result = update_warehouse(data_dir, as_of=date(2025, 1, 6))

    assert result.refreshed.get("marts.allotment_pickup") == "keys"  # its snapshots moved with the date
    assert result.refreshed.get("marts.occupancy_daily") == "keys"
    after = _held(data_dir / "warehouse.duckdb")
    # the night released on the new date (13th: 6th + 7) holds nothing any more, the nights
    # reservation 5 picked up hold one unit fewer, the rest as before
    moved = {d for d in before if before[d] != after[d]}
    assert moved == {date(2025, 1, 13), date(2025, 1, 14), date(2025, 1, 15)}
    assert (before[date(2025, 1, 13)], after[date(2025, 1, 13)]) == (2, 0)
    assert (before[date(2025, 1, 14)], after[date(2025, 1, 14)]) == (2, 1)
    assert after[date(2025, 1, 16)] == 2

    reference = tmp_path.with_name(f"{tmp_path.name}-whole")
    reference.mkdir()
    (reference / "lake").symlink_to(data_dir / "lake")
    whole = build_warehouse(reference, as_of=date(2025, 1, 6))
    for schema in SCHEMAS:
        assert mart_differences(data_dir / "warehouse.duckdb", whole.path, schema) == {}, schema
