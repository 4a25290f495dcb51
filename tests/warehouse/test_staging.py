"""Staging applies the lake contract's current-state rule (contracts.md section 3)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq

from tests.warehouse.scenarios import Batch
from warehouse.build import build_warehouse


def test_latest_version_wins_and_tombstones_drop(lake, query, tmp_path) -> None:
    Batch().reservation(1, "2025-03-01", "2025-03-05", status=12).reservation(
        2, "2025-03-01", "2025-03-03"
    ).flush(lake, kind="full")
    Batch().reservation(1, "2025-03-01", "2025-03-05", status=21).flush(lake)
    lake.write("reservations", [{"reservation_id": 2, "_is_deleted": True}])
    build_warehouse(tmp_path)
    assert query("select reservation_id, status_code from staging.stg_reservations") == [(1, 21)]


def test_keys_missing_from_latest_full_batch_drop(lake, query, tmp_path) -> None:
    Batch().reservation(1, "2025-03-01", "2025-03-05").reservation(
        2, "2025-03-01", "2025-03-03"
    ).flush(lake, kind="full")
    Batch().reservation(3, "2025-03-01", "2025-03-02").flush(lake)  # delta: keeps 1, 2
    Batch().reservation(1, "2025-03-01", "2025-03-05").flush(lake, kind="full")
    Batch().reservation(4, "2025-03-01", "2025-03-02").flush(lake)  # delta after the full
    build_warehouse(tmp_path)
    rows = query("select reservation_id from staging.stg_reservations order by 1")
    assert rows == [(1,), (4,)]


def test_refetched_parent_replaces_its_children(lake, query, tmp_path) -> None:
    first = Batch().reservation(
        1,
        "2025-03-01",
        "2025-03-05",
        rent_lines=[("2025-03-01", "2025-03-03", "200.00"), ("2025-03-03", "2025-03-05", "240.00")],
    )
    first.flush(lake, kind="full")
    # the refetch has a single rent line: the two old lines must disappear
    Batch().reservation(1, "2025-03-01", "2025-03-05", nightly="90.00").flush(lake)
    # a late child row of an older batch never comes back
    lake.write(
        "bill_lines",
        [
            {
                "reservation_bill_line_id": 99,
                "reservation_id": 1,
                "bill_line_type": 20,
                "total": "5.00",
            }
        ],
        batch_id=lake.new_batch_id().replace("2025", "2024"),
    )
    build_warehouse(tmp_path)
    rows = query("select bill_line_type, total from staging.stg_bill_lines order by bill_line_type")
    assert [(t, str(v)) for t, v in rows] == [(10, "360.00"), (70, "360.00")]


def test_missing_tables_and_columns_give_typed_empty_relations(lake, query, tmp_path) -> None:
    # units has a single file holding only unit_id; every other table is missing
    folder = lake.root / "units"
    folder.mkdir(parents=True)
    batch = lake.new_batch_id()
    table = pa.table({"unit_id": [1], "_batch_id": [batch], "_batch_kind": ["full"]})
    pq.write_table(table, folder / f"{batch}-00000.parquet")
    build_warehouse(tmp_path, reporting_range=(date(2025, 1, 1), date(2025, 1, 2)))
    assert query("select unit_id, setup_date from staging.stg_units") == [(1, None)]
    types = dict(
        query(
            "select column_name, data_type from information_schema.columns "
            "where table_schema = 'staging' and table_name = 'stg_bill_lines'"
        )
    )
    assert types["total"] == "DECIMAL(18,2)"
    assert types["bill_line_id"] == "BIGINT"
    assert types["start_date"] == "DATE"
    assert query("select count(*) from staging.stg_bill_lines") == [(0,)]
    assert query("select count(*) from marts.revenue_daily") == [(0,)]
    # the unit (no setup date) is supply on both nights of the range
    assert query("select sum(nights_available) from marts.occupancy_daily") == [(2,)]


def test_rows_read_twice_in_one_batch_keep_the_latest_and_single_tombstones_drop(
    lake, query, tmp_path
) -> None:
    """Keyset slices can read a record twice in one batch: the later read wins, for parents and
    for children; a key seen once whose only row is a tombstone is gone."""
    from datetime import UTC, datetime, timedelta

    batch = (
        Batch()
        .reservation(1, "2025-03-01", "2025-03-05", status=12)
        .reservation(3, "2025-03-01", "2025-03-02", status=12)
    )
    batch_id = batch.flush(lake, kind="full")
    later = datetime.strptime(batch_id[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    later += timedelta(minutes=5)
    lake.write(
        "reservations",
        [{"reservation_id": 1, "status": 21}],
        batch_id=batch_id,
        kind="full",
        extracted_at=later,
        part=1,
    )
    line = {"reservation_bill_line_id": 501, "reservation_id": 1, "bill_line_type": 20}
    lake.write(
        "bill_lines",
        [{**line, "total": "7.00"}],
        batch_id=batch_id,
        kind="full",
        extracted_at=later - timedelta(minutes=1),
        part=1,
    )
    lake.write(
        "bill_lines",
        [{**line, "total": "9.00"}],
        batch_id=batch_id,
        kind="full",
        extracted_at=later,
        part=2,
    )
    lake.write("reservations", [{"reservation_id": 7, "_is_deleted": True}])
    build_warehouse(tmp_path)
    assert query("select reservation_id, status_code from staging.stg_reservations order by 1") == [
        (1, 21),
        (3, 12),
    ]
    totals = query("select total from staging.stg_bill_lines where bill_line_id = 501")
    assert [str(t) for (t,) in totals] == ["9.00"]


def test_customers_birth_year_never_reaches_the_warehouse(lake, query, tmp_path) -> None:
    """Even when a lake file holds a birth year (landed before it was treated as PII)."""
    Batch().reference(units=1).flush(lake, kind="full")
    folder = lake.root / "customers"
    folder.mkdir(parents=True)
    batch = lake.new_batch_id()
    table = pa.table(
        {
            "customer_id": [1, 2],
            "country_code": ["NL", "GB"],
            "language": ["nl", "en"],
            "birth_year": [1970, 1985],
            "_batch_id": [batch] * 2,
            "_batch_kind": ["full"] * 2,
            "_extracted_at": [datetime(2025, 1, 2, tzinfo=UTC)] * 2,
            "_is_deleted": [False] * 2,
        }
    )
    pq.write_table(table, folder / f"{batch}-00000.parquet")
    build_warehouse(tmp_path, reporting_range=(date(2025, 6, 1), date(2025, 6, 30)))
    assert query("select customer_id, country_code, language from staging.stg_customers") == [
        (1, "NL", "nl"),
        (2, "GB", "en"),
    ]
    assert (
        query(
            "select table_schema, table_name, column_name from information_schema.columns "
            "where column_name ilike '%birth%' or column_name ilike '%age_band%'"
        )
        == []
    )


def test_journal_entries_view_keeps_the_lakes_missing_amounts(lake, query, tmp_path) -> None:
    """staging.stg_journal_entries is a view of core.fct_journal_entries (the entries are
    stored once): an amount the service left out is null in staging, 0 in the fact's amounts."""
    lake.write("journal_reports", [{"journal_report_id": 1, "company_id": 1, "type": "X"}])
    lake.write(
        "journal_entries",
        [
            {
                "journal_entry_id": 7,
                "report_id": 1,
                "mutation_date": "2024-06-01",
                "ledger_number": "8000",
                "credit_vat_included": "121.00",
                "credit_vat_excluded": "100.00",
                "comments": "night",
            }
        ],
        batch_id=sorted(p.name for p in (lake.root / "journal_reports").iterdir())[-1][:25],
    )
    build_warehouse(tmp_path)
    assert query(
        "select count(*) from duckdb_views() where schema_name = 'staging' "
        "and view_name = 'stg_journal_entries'"
    ) == [(1,)]
    staged = query(
        "select journal_entry_id, journal_report_id, debit_vat_included, credit_vat_included, "
        "debit_vat_excluded, credit_vat_excluded, comments, batch_kind "
        "from staging.stg_journal_entries"
    )
    assert [r[:7] for r in staged] == [
        (7, 1, None, Decimal("121.00"), None, Decimal("100.00"), "night")
    ]
    assert staged[0][7] in ("full", "delta")
    assert query(
        "select debit_vat_included, credit_vat_included, net_vat_included, net_vat_excluded, "
        "lake_debit_vat_included, lake_credit_vat_included from core.fct_journal_entries"
    ) == [
        (
            Decimal("0.00"),
            Decimal("121.00"),
            Decimal("121.00"),
            Decimal("100.00"),
            None,
            Decimal("121.00"),
        )
    ]
