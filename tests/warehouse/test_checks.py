"""Each asset check passes on a good fixture and fails, with offending rows, on a bad one."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.warehouse.scenarios import COMPANY_ID, Batch
from warehouse.build import build_warehouse
from warehouse.checks import CHECKS, run_check, run_checks


def _journal(lake, amount: str) -> None:
    lake.write(
        "journal_reports",
        [{"journal_report_id": 1, "company_id": COMPANY_ID, "currency_code": "EUR"}],
    )
    lake.write(
        "journal_entries",
        [
            {
                "journal_entry_id": 1,
                "report_id": 1,
                "mutation_date": "2024-06-01",
                "ledger_number": "8000",
                "credit_vat_included": amount,
                "debit_vat_included": "0",
                "reservation_id": 1,
            }
        ],
        batch_id=sorted(p.name for p in (lake.root / "journal_reports").iterdir())[-1][:25],
    )


def _good(lake) -> None:
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-03", unit_id=1000).flush(
        lake, kind="full"
    )
    _journal(lake, "200.00")


def test_all_checks_pass_on_a_good_fixture(lake, tmp_path: Path) -> None:
    _good(lake)
    result = build_warehouse(tmp_path)
    outcomes = run_checks(result.path)
    assert [(o.name, o.passed) for o in outcomes] == [(n, True) for n in CHECKS]


def test_each_check_fails_on_a_bad_fixture(lake, tmp_path: Path) -> None:
    batch = Batch().reference(units=1)
    # two sold stays on one unit-type with one unit: overbooked
    batch.reservation(1, "2025-01-01", "2025-01-03", unit_id=1000)
    batch.reservation(2, "2025-01-01", "2025-01-02", total_line="99.00")  # TOTAL != items
    batch.reservation(3, "2025-01-01", "2025-01-02", type_id=999)  # unknown accommodation type
    batch.bill_line(1, bill_line_type=60, total="5.00")  # VAT line, but items carry no VAT
    batch.flush(lake, kind="full")
    _journal(lake, "50.00")  # journals far from the bills
    # an operations task takes the sold unit out of order on the stay's first night
    lake.write(
        "operation_tasks",
        [
            {
                "task_id": 1,
                "unit_id": 1000,
                "out_of_order": True,
                "out_of_order_from": "2025-01-01",
                "out_of_order_to": "2025-01-02",
            }
        ],
    )
    # two rentability rules for the same arrivals of one type
    lake.write(
        "rentability_config",
        [
            {
                "rentability_config_id": i,
                "resource_id": 1,
                "rentability_set_id": i,
                "start_date": start,
                "end_date": "2025-03-01",
            }
            for i, start in ((1, "2025-01-01"), (2, "2025-02-01"))
        ],
    )
    result = build_warehouse(tmp_path)

    con = duckdb.connect(str(result.path))
    try:
        # the nightly grain is derived from the same reservations, so tamper with it directly
        con.execute(
            "insert into core.fct_stay_nights (reservation_id, night_date, is_stay_night) "
            "values (1, date '2025-01-02', true)"
        )
        # the commercial marts: a closed month whose owner share was never booked, commission
        # on a channel without a rule, revenue of an unknown add-on, a month split once
        con.execute(
            "insert into marts.owner_statement_monthly (owner_id, unit_id, month_start, "
            "currency_code, room_revenue_net, owner_share, journal_owner_share, "
            "owner_share_difference) values (7001, 1, date '2020-01-01', 'EUR', 100, 60, 0, 60)"
        )
        con.execute(
            "insert into marts.channel_net_revenue_monthly (month_start, "
            "distribution_channel_id, currency_code, room_revenue_net, commission_net, "
            "commission_percentage) values (date '2020-01-01', 9, 'EUR', 100, 5, 0)"
        )
        con.execute(
            "insert into marts.ancillary_revenue_monthly (month_start, location_id, "
            "currency_code, addon_category_code, extra_revenue_gross, attach_rate) "
            "values (date '2020-01-01', 1, 'EUR', 'UNCATEGORISED', 10, 0.5)"
        )
        con.execute(
            "insert into marts.guest_mix_monthly (month_start, dimension, bucket, stays, nights, "
            "guests) values (date '2020-01-01', 'country', 'NL', 1, 2, 2)"
        )
        # a discount of an offer the lake does not know
        con.execute(
            "insert into marts.offer_discount_monthly (month_start, offer_id, offer_code, "
            "currency_code, discount_amount) values (date '2020-01-01', 900999, null, 'EUR', 5)"
        )
        outcomes = {n: run_check(con, n) for n in CHECKS}
        assert [n for n, o in outcomes.items() if o.passed] == []
        unknown = outcomes["offer_discounts_are_attributed"].rows[0]
        assert unknown["has_unknown"] and unknown["discount_cents"] == 500
        assert outcomes["owner_statement_reconciles"].rows[0]["owner_share_difference"] == 60
        assert outcomes["channel_commission_has_a_rule"].rows[0]["distribution_channel_id"] == 9
        assert outcomes["ancillary_revenue_is_categorised"].rows[0]["has_uncategorised"]
        assert outcomes["guest_mix_dimensions_agree"].rows[0]["dimensions"] == 1
        assert outcomes["occupancy_not_above_one"].rows[0]["nights_sold"] == 2
        assert [r["reservation_id"] for r in outcomes["bill_items_equal_total"].rows] == [2]
        assert [
            (r["unit_id"], str(r["night_date"]))
            for r in outcomes["no_stay_on_an_out_of_order_unit"].rows
        ] == [(1000, "2025-01-01")]
        overlap = outcomes["one_rentability_rule_per_arrival"].rows
        assert [(r["rentability_config_id"], r["overlapping_config_id"]) for r in overlap] == [
            (1, 2)
        ]
        assert outcomes["bill_vat_matches_vat_line"].rows == [
            {
                "reservation_id": 1,
                "payer_type": "CUSTOMER",
                "item_vat_cents": 0,
                "vat_line_cents": 500,
                "item_lines": 1,
            }
        ]
        assert outcomes["stay_nights_equal_stay_lengths"].rows == [
            {"reservation_id": 1, "expected_nights": 2, "stay_nights": 3}
        ]
        orphans = outcomes["stay_nights_have_dimensions"].rows
        assert {(r["reservation_id"], r["key_name"]) for r in orphans} >= {
            (3, "accommodation_type_id")
        }
        recon = outcomes["revenue_reconciles_with_journals"]
        assert recon.rows[0]["journal_revenue"] == 50
        # a generous tolerance makes it pass: tolerances are parameters
        assert run_check(con, "revenue_reconciles_with_journals", abs_tolerance=10_000).passed
    finally:
        con.close()
