"""`core.fct_allotment_stay_nights`, the stay nights `marts.allotment_pickup` counts (those an
allotment of their channel and type covers): maintained by reservation, and by the reservations
an allotment's moved range reaches; across a new business date it is left as it is while the
pickup recomputes the nights the days between reach from it. Each refresh equals a whole
rebuild of the same lake."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from tests.incremental.helpers import mart_differences, reference_build
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import GBP_CHANNEL, Batch
from warehouse.build import build_warehouse
from warehouse.inplace import update_warehouse

SCHEMAS = ("staging", "core", "marts")


def _covered(path: Path) -> list[tuple[int, date]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(
            "select reservation_id, night_date from core.fct_allotment_stay_nights order by 1, 2"
        ).fetchall()
    finally:
        con.close()
    return [(int(r), d) for r, d in rows]


def _equals_a_whole_rebuild(data_dir: Path, name: str, as_of: date) -> None:
    reference = data_dir.with_name(f"{data_dir.name}-{name}")
    reference.mkdir()
    (reference / "lake").symlink_to(data_dir / "lake")
    whole = reference_build(reference, as_of=as_of)
    for schema in SCHEMAS:
        assert mart_differences(data_dir / "warehouse.duckdb", whole.path, schema) == {}, (
            name,
            schema,
        )


def test_covered_stay_nights_follow_reservations_allotments_and_a_new_date(
    lake: Lake, tmp_path: Path
) -> None:
    # reservation 1 (another channel) spans the reporting range; the allotment covers the
    # 8th to the 19th for the web channel: reservation 5's nights are covered, reservation 6's
    # (the 22nd and 23rd) only once the allotment runs to the 25th, reservation 7 (a cancelled
    # one) is covered, reservation 8 (the tour operator's) never
    batch = (
        Batch()
        .reference(units=4)
        .reservation(1, "2025-01-01", "2025-01-31", unit_id=1000, channel=GBP_CHANNEL)
        .reservation(5, "2025-01-14", "2025-01-16", unit_id=1001, booked="2025-01-02T09:00:00")
        .reservation(6, "2025-01-22", "2025-01-24", unit_id=1001, booked="2025-01-03T09:00:00")
        .reservation(
            7,
            "2025-01-10",
            "2025-01-12",
            unit_id=1002,
            booked="2024-12-01T09:00:00",
            status=-12,
            cancelled="2025-01-06T10:00:00",
        )
        .reservation(8, "2025-01-16", "2025-01-18", unit_id=1002, channel=GBP_CHANNEL)
    )
    batch.allotment("2025-01-08", "2025-01-20")
    batch.flush(lake, kind="full")
    data_dir = tmp_path
    build_warehouse(data_dir, as_of=date(2025, 1, 5))
    nights = [
        (5, date(2025, 1, 14)),
        (5, date(2025, 1, 15)),
        (7, date(2025, 1, 10)),
        (7, date(2025, 1, 11)),
    ]
    assert _covered(data_dir / "warehouse.duckdb") == nights

    # the allotment runs five days longer: reservation 6's nights are keyed by it
    moved = Batch()
    moved.allotment("2025-01-08", "2025-01-25")
    moved.flush(lake)
    result = update_warehouse(data_dir, as_of=date(2025, 1, 5))
    assert result.refreshed.get("core.fct_allotment_stay_nights") == "keys"
    assert result.refreshed.get("core.fct_allotment_pickup_weeks") == "keys"
    added = [(6, date(2025, 1, 22)), (6, date(2025, 1, 23))]
    assert _covered(data_dir / "warehouse.duckdb") == sorted(nights + added)
    _equals_a_whole_rebuild(data_dir, "moved", date(2025, 1, 5))

    # a new business date with reservation 5 cancelled on it: the covered nights keep their
    # rows but for its new status (by reservation, not rebuilt whole: they read no date), and the
    # pickup recomputes the nights the new date reaches from them
    (
        Batch()
        .reservation(
            5,
            "2025-01-14",
            "2025-01-16",
            unit_id=1001,
            booked="2025-01-02T09:00:00",
            status=-12,
            cancelled="2025-01-06T08:00:00",
        )
        .flush(lake)
    )
    result = update_warehouse(data_dir, as_of=date(2025, 1, 6))
    assert result.refreshed.get("core.fct_allotment_stay_nights") == "keys"
    assert result.refreshed.get("core.fct_allotment_pickup_weeks") == "keys"
    assert _covered(data_dir / "warehouse.duckdb") == sorted(nights + added)
    _equals_a_whole_rebuild(data_dir, "new-date", date(2025, 1, 6))
