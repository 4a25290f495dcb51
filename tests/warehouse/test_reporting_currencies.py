"""core.dim_reporting_currencies maintained by currency (`-- incremental by currency_code`): an
hour whose stays keep selling in the currencies they had leaves the set unread; a stay in a new
currency adds it, and the last one in it going away removes it. Each refresh equals a whole
rebuild of the same lake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

import warehouse.maintain
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import GBP_CHANNEL, Batch
from tests.warehouse.test_inplace import AS_OF, _differences_from_a_whole_rebuild, _first_state
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
    lake: Lake, tmp_path: Path, monkeypatch: Any
) -> None:
    replaced: list[str] = []  # the tables whose affected keys' rows were replaced
    replace = warehouse.maintain.replace_rows

    def recorded(con: duckdb.DuckDBPyConnection, table: str, *args: Any, **kwargs: Any) -> Any:
        replaced.append(table)
        return replace(con, table, *args, **kwargs)

    monkeypatch.setattr(warehouse.maintain, "replace_rows", recorded)
    _first_state(lake, tmp_path)  # three EUR stays
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
