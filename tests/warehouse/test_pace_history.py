"""Pace from history: on the books as of a past date follows the version in force then
(docs/metrics.md, "Pace from history"), and today's status before a reservation's history."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from tests.warehouse.scenarios import Batch
from warehouse.build import build_warehouse

STAY = "2025-03-07"
JAN_5, JAN_10, FEB_1 = "2025-01-05T09:00:00", "2025-01-10T09:00:00", "2025-02-01T12:00:00"
# how a refresh within the day maintains booking pace: its nights by reservation, the cells by
# adding what changed, the mart by as-of date x stay date (a changed cell keys its own row, the
# row a week later and the row 364 days later in both dates)
PACE_CHAIN = {
    "core.fct_pace_night_spans": "keys",
    "core.fct_pace_on_the_books": "sums",
    "marts.booking_pace": "keys",
}


def _version(
    batch: Batch,
    rid: int,
    departure: str,
    *,
    status: int,
    booked: str,
    modified: str,
    arrival: str = STAY,
    cancelled: str | None = None,
) -> None:
    """One version of reservation `rid` (on unit 1000 + rid), modified at `modified`."""
    batch.reservation(
        rid,
        arrival,
        departure,
        status=status,
        booked=booked,
        cancelled=cancelled,
        unit_id=1000 + rid,
    )
    batch.tables["reservations"][-1]["modified_date"] = modified


def _booked_in_january(batch: Batch) -> None:
    """1: OPTIONAL (held) from Jan 10; 2: PROVISIONAL from Jan 5."""
    _version(batch, 1, "2025-03-09", status=11, booked=JAN_10, modified=JAN_10)
    _version(batch, 2, "2025-03-09", status=12, booked=JAN_5, modified=JAN_5)


def _decided_on_february_1(batch: Batch) -> None:
    """1 confirmed, 2 declined (a decline has no cancelDate)."""
    _version(batch, 1, "2025-03-09", status=12, booked=JAN_10, modified=FEB_1)
    _version(batch, 2, "2025-03-09", status=-10, booked=JAN_5, modified=FEB_1)


def _pace(query: Any, stay_date: str) -> dict[str, tuple[int, ...]]:
    rows = query(
        "select as_of_date, otb_nights, otb_nights_from_history, "
        "otb_nights_from_current_status, otb_nights_by_current_status "
        "from marts.booking_pace where stay_date = cast($1 as date) "
        "and as_of_date between date '2025-01-04' and date '2025-02-22' order by 1",
        [stay_date],
    )
    return {a.isoformat(): tuple(r) for a, *r in rows}


def test_on_the_books_follows_the_version_in_force(lake, query, tmp_path: Path) -> None:
    first = Batch().reference(units=5)
    _booked_in_january(first)  # 1 held, 2 provisional; both decided on Feb 1
    # 3: PROVISIONAL from Jan 12 for two nights, extended by a night on Feb 15
    jan_12 = "2025-01-12T09:00:00"
    _version(first, 3, "2025-03-09", status=12, booked=jan_12, modified=jan_12)
    first.flush(lake, kind="full")

    second = Batch()
    _decided_on_february_1(second)
    _version(
        second,
        3,
        "2025-03-10",
        status=12,
        booked="2025-01-12T09:00:00",
        modified="2025-02-15T08:00:00",
    )
    second.flush(lake, kind="delta")

    build_warehouse(
        tmp_path, as_of=date(2025, 3, 1), reporting_range=(date(2025, 3, 1), date(2025, 3, 31))
    )

    # (otb, from history, from today's status, by today's status for every as-of date)
    assert _pace(query, "2025-03-07") == {
        # before every history: today's status; only 1 and 3 are on the books now, and
        # neither was booked yet
        "2025-01-04": (0, 0, 0, 0),
        # 2 on the books (history); 1 only held; 3 not booked yet. Today's status would count
        # 1 (booked and on the books now) and not 2 (declined now)
        "2025-01-11": (1, 1, 0, 1),
        "2025-01-18": (2, 2, 0, 2),
        "2025-01-25": (2, 2, 0, 2),
        # Feb 1: 1 confirmed, 2 declined
        "2025-02-01": (2, 2, 0, 2),
        "2025-02-08": (2, 2, 0, 2),
        "2025-02-15": (2, 2, 0, 2),
        "2025-02-22": (2, 2, 0, 2),
    }
    # the night 3 gained on Feb 15 counts from then; today's status counts it from booking
    assert _pace(query, "2025-03-09") == {
        "2025-01-04": (0, 0, 0, 0),
        "2025-01-11": (0, 0, 0, 0),
        "2025-01-18": (0, 0, 0, 1),
        "2025-01-25": (0, 0, 0, 1),
        "2025-02-01": (0, 0, 0, 1),
        "2025-02-08": (0, 0, 0, 1),
        "2025-02-15": (1, 1, 0, 1),
        "2025-02-22": (1, 1, 0, 1),
    }


def test_a_single_version_gives_todays_rule(lake, query, tmp_path: Path) -> None:
    """A fresh full load records one version: before it took effect today's status decides,
    so otb_nights equals otb_nights_by_current_status on every row."""
    batch = Batch().reference(units=5)
    _version(batch, 1, "2025-03-09", status=12, booked=JAN_10, modified=FEB_1)
    feb_3 = "2025-02-03T10:00:00"
    _version(batch, 2, "2025-03-09", status=-12, booked=JAN_5, modified=feb_3, cancelled=feb_3)
    batch.flush(lake, kind="full")
    build_warehouse(
        tmp_path, as_of=date(2025, 3, 1), reporting_range=(date(2025, 3, 1), date(2025, 3, 31))
    )
    assert _pace(query, "2025-03-07") == {
        "2025-01-04": (0, 0, 0, 0),
        "2025-01-11": (2, 0, 2, 2),
        "2025-01-18": (2, 0, 2, 2),
        "2025-01-25": (2, 0, 2, 2),
        "2025-02-01": (2, 1, 1, 2),
        "2025-02-08": (1, 1, 0, 1),
        "2025-02-15": (1, 1, 0, 1),
        "2025-02-22": (1, 1, 0, 1),
    }
    assert query(
        "select count(*) from marts.booking_pace "
        "where otb_nights <> otb_nights_by_current_status "
        "or otb_room_revenue <> otb_room_revenue_by_current_status"
    ) == [(0,)]


def test_a_refresh_in_place_goes_by_reservation_and_equals_a_whole_rebuild(
    lake, query, tmp_path: Path
) -> None:
    """The second batch confirms one booking, declines another and cancels a stay of last year:
    the refresh in place goes by reservation (their nights and as-of spans), adds their new
    nights to the on-the-books cells and subtracts their old ones, and lays the cells on the
    grid again (the cancelled stay's night is the STLY of a stay date no other change touches):
    every row, the path-dependent columns included, is what a whole rebuild of the same lake
    gives."""
    from tests.incremental.helpers import mart_differences, reference_build
    from warehouse.inplace import update_warehouse

    as_of = date(2025, 3, 1)
    first = Batch().reference(units=5)
    _booked_in_january(first)
    # last year's stay on 2024-03-07, 364 days before 2025-03-06, which nobody books this year
    dec_1 = "2023-12-01T09:00:00"
    last_year = {"arrival": "2024-03-07", "booked": dec_1}
    _version(first, 4, "2024-03-08", status=21, modified=dec_1, **last_year)
    first.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=as_of)

    def stly(stay_date: str, as_of_date: str) -> list[tuple[int, ...]]:
        return query(
            "select stly_otb_nights, pace_nights from marts.booking_pace "
            "where stay_date = cast($1 as date) and as_of_date = cast($2 as date)",
            [stay_date, as_of_date],
        )

    assert stly("2025-03-06", "2025-02-22") == [(1, -1)]  # last year 4 was on the books
    assert stly(STAY, "2025-02-22") == [(0, 1)]  # 2 on the books, 1 only held

    second = Batch()
    _decided_on_february_1(second)
    jan_2 = "2024-01-02T09:00:00"
    _version(second, 4, "2024-03-08", status=-12, modified=jan_2, cancelled=jan_2, **last_year)
    second.flush(lake, kind="delta")
    result = update_warehouse(tmp_path, as_of=as_of)
    how = {q: result.refreshed.get(q) for q in PACE_CHAIN}
    assert how == PACE_CHAIN, result.refreshed

    # last year as of 2024-02-24 (and 2024-01-27), 4 was cancelled since 2024-01-02
    assert stly("2025-03-06", "2025-02-22") == [(0, 0)]
    assert stly("2025-03-06", "2025-01-25") == [(0, 0)]
    # as of 2025-02-22: 1 confirmed, 2 declined (history); as of 2025-01-25: 2 on the books
    assert stly(STAY, "2025-02-22") == [(0, 1)]
    assert stly(STAY, "2025-01-25") == [(0, 1)]
    reference = tmp_path.with_name(f"{tmp_path.name}-whole")
    reference.mkdir()
    (reference / "lake").symlink_to(tmp_path / "lake")
    whole = reference_build(reference, as_of=as_of)
    for schema in ("core", "marts"):  # the cells too: none left at 0 nights
        assert mart_differences(tmp_path / "warehouse.duckdb", whole.path, schema) == {}, schema


def test_a_cancelled_night_without_a_cancellation_date_never_counts(
    lake, query, tmp_path: Path
) -> None:
    """A reservation cancelled without a cancellation date was on the books as of no date
    (docs/metrics.md; the truth's rule): booking pace is what it is without it. DuckDB's
    `least` skips a null, which once counted such a night from its booking date to the night."""
    batch = Batch().reference(units=5)
    _version(batch, 1, "2025-03-09", status=21, booked=JAN_10, modified=FEB_1)
    _version(batch, 2, "2025-03-09", status=-12, booked=JAN_5, modified="2025-02-03T10:00:00")
    batch.flush(lake, kind="full")
    build_warehouse(
        tmp_path, as_of=date(2025, 3, 1), reporting_range=(date(2025, 3, 1), date(2025, 3, 31))
    )
    (cancelled,) = query(
        "select count(*) from core.fct_stay_nights where reservation_id = 2 "
        "and is_cancelled and cancelled_on is null"
    )
    assert cancelled == (2,)  # the two nights exist, cancelled, without a date
    assert _pace(query, "2025-03-07") == {
        "2025-01-04": (0, 0, 0, 0),
        "2025-01-11": (1, 0, 1, 1),
        "2025-01-18": (1, 0, 1, 1),
        "2025-01-25": (1, 0, 1, 1),
        "2025-02-01": (1, 1, 0, 1),
        "2025-02-08": (1, 1, 0, 1),
        "2025-02-15": (1, 1, 0, 1),
        "2025-02-22": (1, 1, 0, 1),
    }


def test_a_refresh_keys_the_pickup_of_the_snapshot_a_week_after_a_changed_cell(
    lake, query, tmp_path: Path
) -> None:
    """A booking date corrected from Jan 10 to Jan 20 (one version, so today's status decides
    before it): the cells of the snapshots Jan 11 and Jan 18 lose the night, that of Jan 25
    keeps it, but its pickup over Jan 18 moves from 0 to 1. The mart is maintained by as-of date
    x stay date, so the changed cells must key the row a week later too; equal to a whole
    rebuild."""
    from tests.incremental.helpers import mart_differences, reference_build
    from warehouse.inplace import update_warehouse

    as_of = date(2025, 3, 1)
    first = Batch().reference(units=5)
    _version(first, 1, "2025-03-09", status=12, booked=JAN_10, modified=FEB_1)
    # another stay booked before both dates: the calendar's first day stays where it is
    _version(first, 2, "2025-03-16", status=12, booked=JAN_5, modified=JAN_5, arrival="2025-03-14")
    first.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=as_of)

    def pace(as_of_date: str) -> list[tuple[int, ...]]:
        return query(
            "select otb_nights, pickup_nights from marts.booking_pace "
            "where stay_date = cast($1 as date) and as_of_date = cast($2 as date)",
            [STAY, as_of_date],
        )

    assert [pace(a) for a in ("2025-01-11", "2025-01-18", "2025-01-25")] == [
        [(1, 1)],
        [(1, 0)],
        [(1, 0)],
    ]
    second = Batch()
    _version(second, 1, "2025-03-09", status=12, booked="2025-01-20T09:00:00", modified=FEB_1)
    second.flush(lake, kind="delta")
    result = update_warehouse(tmp_path, as_of=as_of)
    assert result.refreshed.get("marts.booking_pace") == "keys", result.refreshed
    assert [pace(a) for a in ("2025-01-11", "2025-01-18", "2025-01-25")] == [
        [(0, 0)],
        [(0, 0)],
        [(1, 1)],
    ]
    reference = tmp_path.with_name(f"{tmp_path.name}-whole")
    reference.mkdir()
    (reference / "lake").symlink_to(tmp_path / "lake")
    whole = reference_build(reference, as_of=as_of)
    assert mart_differences(tmp_path / "warehouse.duckdb", whole.path, "marts") == {}
