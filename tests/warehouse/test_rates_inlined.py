"""`core.fct_stay_rate_nights` reads the rates where it uses them: read by two of its steps, the
`rates` step was materialized by DuckDB, a copy of every rate (207,000 at large, 23 columns)
in each refresh of an hour's stays, ~0.03 CPU s (docs/benchmarks.md, session 19). The rows are
the model's own: the equivalence tests compare them with a whole rebuild."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from warehouse.macros import MACROS
from warehouse.models import discover_models


def _ctes(node: dict[str, Any], out: set[str]) -> set[str]:
    if node.get("type") == "CTE":
        out.add(str(node.get("extra_info", {}).get("CTE Name")))
    for child in node.get("children", []):
        _ctes(child, out)
    return out


def test_the_rates_are_not_copied_before_they_are_read(first_state: tuple[Path, int]) -> None:
    data_dir, _ = first_state
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        for macro in MACROS:
            con.execute(macro)
        sql = discover_models()["core.fct_stay_rate_nights"].sql
        (_, plan) = con.execute(f"explain (analyze, format json) {sql}").fetchone() or ()
    finally:
        con.close()
    materialized: set[str] = set()
    for node in json.loads(plan)["operator"]:
        _ctes(node, materialized)
    assert "rates" not in materialized, materialized
