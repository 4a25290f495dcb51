"""A refresh that moves the business date a day: occupancy reads the as-of date only through its
allotment-held nights, so it is maintained by key (the nights whose still-held allotment moved)
instead of rebuilt whole, and equals a whole rebuild of the same lake on the new date."""

from __future__ import annotations

from datetime import date, timedelta
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

    assert (
        result.refreshed.get("marts.allotment_pickup") == "keys"
    )  # its snapshots moved with the date
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


def _pickup(path: Path) -> dict[tuple[date, date], tuple[int, int, int]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(
            "select as_of_date, stay_date, held_nights, picked_up_nights, released_nights "
            "from marts.allotment_pickup where accommodation_type_id = $1",
            [TYPE_ID],
        ).fetchall()
    finally:
        con.close()
    return {(a, s): (int(h), int(p), int(r)) for a, s, h, p, r in rows}


def test_allotment_pickup_moves_its_snapshots_with_the_date_and_recomputes_the_nights_reached(
    lake: Lake, tmp_path: Path
) -> None:
    # an allotment of 2 web-channel units over three weeks, released 7 days before each night;
    # on the days the 13 snapshots move to (the new date and each week before it): reservation 5
    # is booked on the new date, reservation 6 a week before it, reservation 7 was cancelled two
    # weeks before it (booked earlier: the old snapshot two weeks back still counts it, the new
    # one does not); reservation 8 was booked on none of them
    batch = (
        Batch()
        .reference(units=4)
        .reservation(1, "2025-01-01", "2025-01-31", unit_id=1000, channel=GBP_CHANNEL)
        .reservation(5, "2025-01-14", "2025-01-16", unit_id=1001, booked="2025-01-06T09:00:00")
        .reservation(6, "2025-01-17", "2025-01-19", unit_id=1001, booked="2024-12-30T09:00:00")
        .reservation(
            7,
            "2025-01-20",
            "2025-01-22",
            unit_id=1002,
            booked="2024-12-01T09:00:00",
            status=-12,
            cancelled="2024-12-23T10:00:00",
        )
        .reservation(8, "2025-01-24", "2025-01-26", unit_id=1002, booked="2024-12-20T09:00:00")
    )
    batch.tables["allotments"].append(
        {
            "allotment_id": 70,
            "resource_id": TYPE_ID,
            "distribution_channel_id": EUR_CHANNEL,
            "start_date": "2025-01-08",
            "end_date": "2025-01-29",
            "quantity": 2,
            "release_days": 7,
        }
    )
    batch.flush(lake, kind="full")
    data_dir = tmp_path
    build_warehouse(data_dir, as_of=date(2025, 1, 5))
    # a mark on the night of reservation 8 (no day between the two dates reaches it): a night
    # recomputed would lose it, a snapshot moved with the date keeps it
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"))
    try:
        con.execute(
            "update marts.allotment_pickup set held_nights = 99 "
            "where stay_date = '2025-01-24' and as_of_date = '2025-01-05'"
        )
    finally:
        con.close()

    result = update_warehouse(data_dir, as_of=date(2025, 1, 6))

    assert result.refreshed.get("marts.allotment_pickup") == "keys"
    assert result.refreshed.get("marts.occupancy_daily") == "keys"
    after = _pickup(data_dir / "warehouse.duckdb")
    assert {a for a, _ in after} == {date(2025, 1, 6) - timedelta(days=7 * k) for k in range(13)}
    assert after[(date(2025, 1, 6), date(2025, 1, 24))][0] == 99  # moved, not recomputed

    reference = tmp_path.with_name(f"{tmp_path.name}-whole")
    reference.mkdir()
    (reference / "lake").symlink_to(data_dir / "lake")
    whole = build_warehouse(reference, as_of=date(2025, 1, 6))
    expected = _pickup(whole.path)
    assert expected[(date(2025, 1, 6), date(2025, 1, 24))][0] == 2
    differing = {k for k in expected if expected[k] != after.get(k)} | (set(after) - set(expected))
    assert differing == {(date(2025, 1, 6), date(2025, 1, 24))}
    # the days between reached these nights: picked up as of the new date (5), a week before
    # (6), no longer counted two weeks before (7: cancelled then), released on the new date (13)
    assert expected[(date(2025, 1, 6), date(2025, 1, 14))][1] == 1
    assert expected[(date(2024, 12, 30), date(2025, 1, 17))][1] == 1
    assert expected[(date(2024, 12, 23), date(2025, 1, 20))][1] == 0
    assert expected[(date(2024, 12, 16), date(2025, 1, 20))][1] == 1
    assert expected[(date(2025, 1, 6), date(2025, 1, 13))][2] == 2
    # the mark aside, every table equals a whole rebuild
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"))
    try:
        con.execute(
            "update marts.allotment_pickup set held_nights = 2 "
            "where stay_date = '2025-01-24' and as_of_date = '2025-01-06'"
        )
    finally:
        con.close()
    for schema in SCHEMAS:
        assert mart_differences(data_dir / "warehouse.duckdb", whole.path, schema) == {}, schema
