"""A refresh that moves the business date a day: occupancy reads the as-of date only through its
allotment-held nights, so it is maintained by key (the nights whose still-held allotment moved)
instead of rebuilt whole, and equals a whole rebuild of the same lake on the new date."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import duckdb

from tests.incremental.helpers import mart_differences, reference_build
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
    batch.allotment("2025-01-01", "2025-01-20")
    batch.flush(lake, kind="full")
    data_dir = tmp_path
    build_warehouse(data_dir, as_of=date(2025, 1, 5))
    before = _held(data_dir / "warehouse.duckdb")

    result = update_warehouse(data_dir, as_of=date(2025, 1, 6))

    # the stored pickup recomputes the nights the new date reaches (its rows keep no date);
    # occupancy keys the nights whose held allotment moved from its changed rows
    assert result.refreshed.get("core.fct_allotment_pickup_weeks") == "keys"
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
    whole = reference_build(reference, as_of=date(2025, 1, 6))
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


def test_allotment_pickup_keeps_its_snapshots_over_a_new_date_and_recomputes_the_nights_reached(
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
    batch.allotment("2025-01-08", "2025-01-29")
    batch.flush(lake, kind="full")
    data_dir = tmp_path
    build_warehouse(data_dir, as_of=date(2025, 1, 5))
    # a mark on the night of reservation 8 (no day between the two dates reaches it): a night
    # recomputed would lose it, a stored row the new date does not reach keeps it
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"))
    try:
        con.execute(
            "update core.fct_allotment_pickup_weeks set held_nights = 99 "
            "where stay_date = '2025-01-24' and weeks_back = 0"
        )
        # and one on the night reservation 5 reaches, five weeks back: the new date reaches
        # that night in its newest snapshot only, so the row five weeks back stays as stored
        con.execute(
            "update core.fct_allotment_pickup_weeks set held_nights = 98 "
            "where stay_date = '2025-01-14' and weeks_back = 5"
        )
    finally:
        con.close()

    result = update_warehouse(data_dir, as_of=date(2025, 1, 6))

    assert result.refreshed.get("core.fct_allotment_pickup_weeks") == "keys"
    assert result.refreshed.get("marts.occupancy_daily") == "keys"
    after = _pickup(data_dir / "warehouse.duckdb")
    assert {a for a, _ in after} == {date(2025, 1, 6) - timedelta(days=7 * k) for k in range(13)}
    assert after[(date(2025, 1, 6), date(2025, 1, 24))][0] == 99  # moved, not recomputed
    assert after[(date(2024, 12, 2), date(2025, 1, 14))][0] == 98  # the week the move left

    reference = tmp_path.with_name(f"{tmp_path.name}-whole")
    reference.mkdir()
    (reference / "lake").symlink_to(data_dir / "lake")
    whole = reference_build(reference, as_of=date(2025, 1, 6))
    expected = _pickup(whole.path)
    assert expected[(date(2025, 1, 6), date(2025, 1, 24))][0] == 2
    differing = {k for k in expected if expected[k] != after.get(k)} | (set(after) - set(expected))
    assert differing == {
        (date(2025, 1, 6), date(2025, 1, 24)),
        (date(2024, 12, 2), date(2025, 1, 14)),
    }
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
            "update core.fct_allotment_pickup_weeks set held_nights = 2 "
            "where stay_date = '2025-01-24' and weeks_back = 0 "
            "or stay_date = '2025-01-14' and weeks_back = 5"
        )
    finally:
        con.close()
    for schema in SCHEMAS:
        assert mart_differences(data_dir / "warehouse.duckdb", whole.path, schema) == {}, schema


def test_allotment_pickup_within_a_day_recomputes_only_the_snapshots_a_stay_reaches(
    lake: Lake, tmp_path: Path
) -> None:
    """Within a day a stay night counts in a snapshot only from its booking date on, so a
    booking or a cancellation keys the weeks back whose snapshot it can reach (one booked or
    cancelled on the as-of date: the newest only), not every snapshot of its night."""
    batch = (
        Batch()
        .reference(units=4)
        .reservation(1, "2025-01-01", "2025-01-31", unit_id=1000, channel=GBP_CHANNEL)
        .reservation(8, "2025-01-24", "2025-01-26", unit_id=1002, booked="2024-12-20T09:00:00")
    )
    batch.allotment("2025-01-08", "2025-01-29")
    batch.flush(lake, kind="full")
    data_dir = tmp_path
    build_warehouse(data_dir, as_of=date(2025, 1, 6))
    # marks on the snapshots the hour's stays cannot reach: reservation 8's night two weeks
    # back (cancelled on the as-of date: the newest snapshot only), reservation 9's (booked on
    # it) three weeks back, reservation 10's (landing late, booked on 29 December: the two
    # newest snapshots) three weeks back
    marks = {("2025-01-24", 2): 97, ("2025-01-25", 3): 98, ("2025-01-27", 3): 99}
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"))
    try:
        for (night, weeks), held in marks.items():
            con.execute(
                "update core.fct_allotment_pickup_weeks set held_nights = $1 "
                "where stay_date = $2 and weeks_back = $3",
                [held, night, weeks],
            )
    finally:
        con.close()
    (
        Batch()
        .reservation(
            8,
            "2025-01-24",
            "2025-01-26",
            unit_id=1002,
            booked="2024-12-20T09:00:00",
            status=-12,
            cancelled="2025-01-06T08:00:00",
        )
        .reservation(9, "2025-01-25", "2025-01-27", unit_id=1001, booked="2025-01-06T09:00:00")
        .reservation(10, "2025-01-27", "2025-01-28", unit_id=1003, booked="2024-12-29T09:00:00")
        .flush(lake)
    )

    result = update_warehouse(data_dir, as_of=date(2025, 1, 6))

    assert result.refreshed.get("core.fct_allotment_pickup_weeks") == "keys"
    after = _pickup(data_dir / "warehouse.duckdb")
    for (night, weeks), held in marks.items():
        snapshot = date(2025, 1, 6) - timedelta(days=7 * weeks)
        assert after[(snapshot, date.fromisoformat(night))][0] == held, (night, weeks)
    reference = tmp_path.with_name(f"{tmp_path.name}-whole")
    reference.mkdir()
    (reference / "lake").symlink_to(data_dir / "lake")
    whole = reference_build(reference, as_of=date(2025, 1, 6))
    expected = _pickup(whole.path)
    # the snapshots the stays reach: 8 no longer counted as of the as-of date but still a week
    # before, 9 counted as of the as-of date only (on the 25th, in 8's place), 10 as of it and a
    # week before
    assert expected[(date(2025, 1, 6), date(2025, 1, 24))][1] == 0
    assert expected[(date(2024, 12, 30), date(2025, 1, 24))][1] == 1
    assert expected[(date(2025, 1, 6), date(2025, 1, 25))][1] == 1
    assert expected[(date(2024, 12, 30), date(2025, 1, 25))][1] == 1
    assert expected[(date(2024, 12, 30), date(2025, 1, 27))][1] == 1
    assert expected[(date(2024, 12, 23), date(2025, 1, 27))][1] == 0
    # the marks aside, every table equals a whole rebuild
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"))
    try:
        for night, weeks in marks:
            con.execute(
                "update core.fct_allotment_pickup_weeks set held_nights = 2 "
                "where stay_date = $1 and weeks_back = $2",
                [night, weeks],
            )
    finally:
        con.close()
    for schema in SCHEMAS:
        assert mart_differences(data_dir / "warehouse.duckdb", whole.path, schema) == {}, schema


PICKUP_COLUMNS = [
    ("as_of_date", "DATE"),
    ("stay_date", "DATE"),
    ("location_id", "BIGINT"),
    ("accommodation_type_id", "BIGINT"),
    ("distribution_channel_id", "BIGINT"),
    ("release_date", "DATE"),
    ("held_nights", "BIGINT"),
    ("picked_up_nights", "BIGINT"),
    ("released_nights", "BIGINT"),
    ("still_held_nights", "BIGINT"),
]


def _columns(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> list[tuple[str, str]]:
    return [
        (c, t)
        for c, t in con.execute(
            "select column_name, data_type from information_schema.columns "
            "where table_schema = $1 and table_name = $2 order by ordinal_position",
            [schema, name],
        ).fetchall()
    ]


def test_allotment_pickup_is_a_view_of_the_snapshots_stored_without_their_date(
    lake: Lake, tmp_path: Path
) -> None:
    """The published mart keeps its columns and rows; its rows are stored by weeks back from
    the as-of date, so a new date rewrites none that the days between do not reach (the view
    adds the date): no stored row carries a date that a move would have to update."""
    batch = Batch().reference(units=2).reservation(1, "2025-01-08", "2025-01-12", unit_id=1000)
    batch.allotment("2025-01-08", "2025-01-15", quantity=1, release_days=3)
    batch.flush(lake, kind="full")
    built = build_warehouse(tmp_path, as_of=date(2025, 1, 5))
    update_warehouse(tmp_path, as_of=date(2025, 1, 7))
    con = duckdb.connect(str(built.path), read_only=True)
    try:
        kinds = con.execute(
            "select table_name, table_type from information_schema.tables "
            "where table_schema || '.' || table_name in "
            "('marts.allotment_pickup', 'core.fct_allotment_pickup_weeks') order by 1"
        ).fetchall()
        assert kinds == [
            ("allotment_pickup", "VIEW"),
            ("fct_allotment_pickup_weeks", "BASE TABLE"),
        ]
        assert _columns(con, "marts", "allotment_pickup") == PICKUP_COLUMNS
        stored = _columns(con, "core", "fct_allotment_pickup_weeks")
        assert stored == [("weeks_back", "INTEGER"), *PICKUP_COLUMNS[1:]]
        weeks = con.execute(
            "select distinct as_of_date from marts.allotment_pickup order by 1"
        ).fetchall()
        assert [w for (w,) in weeks] == [
            date(2025, 1, 7) - timedelta(days=7 * k) for k in range(12, -1, -1)
        ]
    finally:
        con.close()
