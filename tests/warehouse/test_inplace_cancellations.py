"""Cancellations from what each reservation adds: `core.fct_cancellation_reservations` by
reservation, its sums per month x location x currency (`core.fct_cancellation_cells`,
maintained by adding the changed reservations' rows) and the mart maintained by month from the
cells that moved. The booking of docs/metrics.md's worked example, then its cancellation with
the journal's reversal: each refresh equals a whole rebuild of the same lake."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_cancellation_revenue import RID, _example
from tests.warehouse.test_inplace import _differences_from_a_whole_rebuild
from warehouse.build import build_warehouse
from warehouse.inplace import update_warehouse

AS_OF = date(2026, 11, 2)
MART = "marts.cancellations_monthly"
COLUMNS = (
    "month_start, reservations_created, reservations_cancelled, reservations_on_the_books, "
    "avg_lead_time_days, arrivals, alos, cancellations, cancelled_value, "
    "retained_cancellation_revenue, retained_share"
)


def _booked() -> Batch:
    """The worked example before its cancellation: booked 2026-10-20, on the books, its
    October report booking the revenue; a second stay booked in November beside it."""
    batch = _example(Batch())
    t = batch.tables
    t["reservations"][0].update(status=21, cancel_date=None)
    t["bill_lines"].clear()
    t["journal_reports"] = t["journal_reports"][:1]
    t["journal_entries"] = [e for e in t["journal_entries"] if e["report_id"] == 1]
    batch.bill_line(RID, bill_line_type=10, resource_type="ACCOMMODATIONTYPE", total="455.00")
    batch.bill_line(RID, bill_line_type=70, total="455.00")
    return batch.reservation(2, "2026-12-01", "2026-12-05", unit_id=1001, booked="2026-11-01")


def test_cancellations_follow_the_changed_reservations(
    lake: Lake, tmp_path: Path, query: Any
) -> None:
    _booked().flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=AS_OF)
    rows = query(f"select {COLUMNS} from {MART} order by month_start")
    assert rows == [
        (date(2026, 10, 1), 1, 0, 1, 57.0, 0, None, 0, Decimal("0.00"), Decimal("0.00"), None),
        (date(2026, 11, 1), 1, 0, 1, 30.0, 0, None, 0, Decimal("0.00"), Decimal("0.00"), None),
        (date(2026, 12, 1), 0, 0, 0, None, 2, 4.0, 0, Decimal("0.00"), Decimal("0.00"), None),
    ], rows

    # cancelled on 2026-11-01 keeping 227.50, the November report reversing the booking
    _example(Batch()).flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.fct_cancellation_reservations") == "keys", result.refreshed
    assert result.refreshed.get("core.fct_cancellation_cells") == "sums", result.refreshed
    assert result.refreshed.get(MART) == "keys", result.refreshed
    rows = query(f"select {COLUMNS} from {MART} order by month_start")
    assert rows == [
        (date(2026, 10, 1), 1, 1, 0, None, 0, None, 0, Decimal("0.00"), Decimal("0.00"), None),
        (
            date(2026, 11, 1),
            1,
            0,
            1,
            30.0,
            0,
            None,
            1,
            Decimal("455.00"),
            Decimal("227.50"),
            0.5,
        ),
        (date(2026, 12, 1), 0, 0, 0, None, 1, 4.0, 0, Decimal("0.00"), Decimal("0.00"), None),
    ], rows
    assert _differences_from_a_whole_rebuild(tmp_path, "cancelled", AS_OF) == {}
