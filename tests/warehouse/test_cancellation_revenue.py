"""The cancellation measures: the worked example of docs/metrics.md ("a cancelled booking")."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import duckdb

from tests.warehouse.scenarios import COMPANY_ID, LOCATION_ID, Batch
from warehouse.build import build_warehouse
from warehouse.checks import run_check

RID = 1


def _example(batch: Batch) -> Batch:
    """Booked 2026-10-20 (475.00 paid), cancelled 2026-11-01 keeping 227.50 of its 455.00."""
    batch.reference(units=2).reservation(
        RID,
        "2026-12-16",
        "2026-12-20",
        status=-12,
        unit_id=1000,
        booked="2026-10-20T10:00:00",
        cancelled="2026-11-01T09:30:00",
    )
    # the bill after the cancellation: the compensation replaced the booked items
    batch.tables["bill_lines"].clear()
    comp = "227.50"
    batch.bill_line(
        RID,
        bill_line_type=190,
        reserved_resource_id=RID * 10,
        description="Cancellation compensation",
        value=comp,
        total=comp,
        vat_rate=9.0,
        start_date="2026-12-16",
        end_date="2026-12-20",
    )
    for code, total in ((40, comp), (60, "18.78"), (70, comp), (80, comp), (90, "0"), (120, "0")):
        batch.bill_line(RID, bill_line_type=code, total=total)
    t = batch.tables
    t["journal_reports"] += [
        {
            "journal_report_id": k,
            "company_id": COMPANY_ID,
            "report_number": k,
            "type": "MUTATION_REPORT",
            "period_from": first,
            "period_to": last,
            "currency_code": "EUR",
        }
        for k, first, last in ((1, "2026-10-01", "2026-10-31"), (2, "2026-11-01", "2026-11-30"))
    ]
    entries = [  # (report, date, ledger, credit incl. VAT; negative = debit)
        (1, "2026-10-20", "8000", "380.00"),
        (1, "2026-10-20", "8100", "75.00"),
        (1, "2026-10-20", "1750", "20.00"),
        (2, "2026-11-01", "8000", "-380.00"),
        (2, "2026-11-01", "8100", "-75.00"),
        (2, "2026-11-01", "1750", "-20.00"),
        (2, "2026-11-01", "8300", "227.50"),
    ]
    for k, (report, day, ledger, amount) in enumerate(entries, start=1):
        value = Decimal(amount)
        t["journal_entries"].append(
            {
                "journal_entry_id": k,
                "report_id": report,
                "mutation_date": day,
                "reservation_id": RID,
                "location_id": LOCATION_ID,
                "ledger_number": ledger,
                "second_ledger_number": "1300",
                "credit_vat_included": max(value, Decimal(0)),
                "debit_vat_included": max(-value, Decimal(0)),
            }
        )
    return batch


def test_the_worked_example_of_a_cancelled_booking(lake, query, tmp_path) -> None:
    _example(Batch()).flush(lake, kind="full")
    result = build_warehouse(tmp_path)
    assert query(
        "select revenue_class, line_class from core.fct_bill_lines where bill_line_type = 190"
    ) == [("cancellation", "item")]
    assert query(
        "select room_revenue, total_revenue, cancellation_revenue from core.fct_reservations"
    ) == [(Decimal("0.00"), Decimal("0.00"), Decimal("227.50"))]

    rows = query(
        "select month_start, currency_code, reservations_created, reservations_cancelled, "
        "cancellations, cancelled_value, retained_cancellation_revenue, retained_share "
        "from marts.cancellations_monthly order by month_start"
    )
    assert rows == [
        (date(2026, 10, 1), "EUR", 1, 1, 0, Decimal("0.00"), Decimal("0.00"), None),
        (date(2026, 11, 1), "EUR", 0, 0, 1, Decimal("455.00"), Decimal("227.50"), 0.5),
    ]

    nights = query(
        "select date_day, room_revenue_gross, total_revenue_gross, cancellation_revenue, adr_gross "
        "from marts.revenue_daily where cancellation_revenue <> 0 order by date_day"
    )
    assert [(str(d), str(c)) for d, _r, _t, c, _a in nights] == [
        ("2026-12-16", "56.88"),
        ("2026-12-17", "56.88"),
        ("2026-12-18", "56.87"),
        ("2026-12-19", "56.87"),
    ]
    assert {(r, t, a) for _d, r, t, _c, a in nights} == {(Decimal("0.00"), Decimal("0.00"), None)}

    recon = query(
        "select month_start, bill_revenue, journal_revenue, cumulative_difference "
        "from marts.revenue_reconciliation order by month_start"
    )
    assert recon == [
        (date(2026, 10, 1), Decimal("0.00"), Decimal("455.00"), Decimal("-455.00")),
        (date(2026, 11, 1), Decimal("227.50"), Decimal("-227.50"), Decimal("0.00")),
    ]
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        for check in ("revenue_reconciles_with_journals", "bill_items_equal_total"):
            assert run_check(con, check).passed, check
    finally:
        con.close()
