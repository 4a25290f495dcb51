"""Models rebuilt whole every hour until session 15, now maintained by key: the reporting
currencies by currency (an hour whose stays keep selling in the currencies they had leaves the
set unread; a stay in a new currency adds it, the last one in it going away removes it) and the
owner statements by unit x month. Each refresh equals a whole rebuild of the same lake."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import GBP_CHANNEL, Batch
from tests.warehouse.test_inplace import (
    AS_OF,
    _differences_from_a_whole_rebuild,
    _first_state_copy,
)
from warehouse.build import build_warehouse
from warehouse.inplace import update_warehouse

MODEL = "core.dim_reporting_currencies"


def _currencies(path: Path) -> list[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(f"select currency_code from {MODEL} order by 1").fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def test_the_reporting_currencies_follow_the_stays_by_currency(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, replaced: list[str]
) -> None:
    _first_state_copy(first_state, lake, tmp_path)  # three EUR stays
    assert _currencies(tmp_path / "warehouse.duckdb") == ["EUR"]

    # a EUR stay extended: EUR still sells on its nights, so no currency is affected
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.fct_stay_nights") == "keys", result.refreshed
    assert result.refreshed.get(MODEL) == "keys", result.refreshed
    assert '"core"."fct_stay_nights"' in replaced, replaced
    assert '"core"."dim_reporting_currencies"' not in replaced, replaced
    assert _currencies(result.path) == ["EUR"]
    assert _differences_from_a_whole_rebuild(tmp_path, "extended") == {}

    # a stay sold through the GBP channel: GBP joins the set
    Batch().reservation(4, "2025-01-03", "2025-01-05", unit_id=4, channel=GBP_CHANNEL).flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get(MODEL) == "keys", result.refreshed
    assert '"core"."dim_reporting_currencies"' in replaced, replaced
    assert _currencies(result.path) == ["EUR", "GBP"]
    assert _differences_from_a_whole_rebuild(tmp_path, "gbp") == {}

    # the only GBP stay cancelled (nothing kept as compensation): GBP leaves the set
    Batch().reservation(
        4,
        "2025-01-03",
        "2025-01-05",
        unit_id=4,
        channel=GBP_CHANNEL,
        status=-12,
        cancelled="2024-12-20",
        total_line="0.00",
    ).flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get(MODEL) == "keys", result.refreshed
    assert _differences_from_a_whole_rebuild(tmp_path, "cancelled") == {}
    assert _currencies(result.path) == ["EUR"]


def _owner_and_journal(batch: Batch) -> Batch:
    """Owner 1 with a 40 % contract on unit 1000 (code U0), and the owner report of January
    booking their share of it (ledger 1610)."""
    t = batch.tables
    t["owners"].append({"owner_id": 1, "code": "O1"})
    t["owner_contracts"].append(
        {
            "contract_id": 1,
            "owner_id": 1,
            "unit_id": 1000,
            "revenue_share_percentage": 40.0,
            "start_date": "2024-01-01",
        }
    )
    t["journal_reports"].append(
        {
            "journal_report_id": 1,
            "company_id": 1,
            "type": "OWNER_MUTATION_REPORT",
            "period_from": "2025-01-01",
            "period_to": "2025-01-31",
            "currency_code": "EUR",
        }
    )
    t["journal_entries"].append(
        {
            "journal_entry_id": 1,
            "report_id": 1,
            "type": "OWNER_MUTATION_REPORT",
            "mutation_date": "2025-01-31",
            "resource_code": "U0",
            "ledger_number": "1610",
            "debit_vat_excluded": Decimal("0.00"),
            "credit_vat_excluded": Decimal("300.00"),
        }
    )
    return batch


def test_the_owner_statements_follow_stays_and_reports_by_unit_and_month(
    lake: Lake, tmp_path: Path
) -> None:
    """marts.owner_statement_monthly by unit x month: a stay on the owner's unit changed, then
    the owner report deleted (its entries with it: the report's old month keys every unit), each
    refresh by key and equal to a whole rebuild."""
    model = "marts.owner_statement_monthly"
    _owner_and_journal(Batch().reference(units=2)).reservation(
        1, "2025-01-01", "2025-01-12", unit_id=1000
    ).reservation(2, "2025-01-02", "2025-01-05", unit_id=1001).flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=AS_OF)

    Batch().reservation(1, "2025-01-01", "2025-01-15", unit_id=1000, nightly="90.00").flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get(model) == "keys", result.refreshed
    assert _differences_from_a_whole_rebuild(tmp_path, "stay") == {}
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        shares = con.execute(f"select journal_owner_share from {model}").fetchall()
    finally:
        con.close()
    assert shares and all(s != 0 for (s,) in shares), shares

    Batch(tables={"journal_reports": [{"journal_report_id": 1, "_is_deleted": True}]}).flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("staging.stg_journal_reports") == "keys", result.refreshed
    assert result.refreshed.get(model) == "keys", result.refreshed
    assert _differences_from_a_whole_rebuild(tmp_path, "report-gone") == {}
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        assert con.execute(f"select sum(journal_owner_share) from {model}").fetchone() == (0,)
    finally:
        con.close()
