"""Data-quality checks on the built warehouse: each is a query returning its offending rows.

A check passes when the query returns no rows. The Dagster factory wires each one as an asset
check on its model; `run_checks` runs them on a published file for the CLI and tests. The checks
on the core facts are in `warehouse.checks_core`, those on the marts in `warehouse.checks_marts`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from warehouse.check_spec import CheckResult, CheckSpec
from warehouse.checks_core import CORE_CHECKS
from warehouse.checks_marts import MART_CHECKS

SAMPLE_ROWS = 20

CHECKS: dict[str, CheckSpec] = {c.name: c for c in (*CORE_CHECKS, *MART_CHECKS)}


def run_check(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> CheckResult:
    """Run one check; `params` override its defaults (e.g. abs_tolerance)."""
    spec = CHECKS[name]
    bound = {**spec.params, **params}
    rel = con.execute(spec.sql, bound) if bound else con.execute(spec.sql)
    cols = [d[0] for d in rel.description or ()]
    rows = rel.fetchall()
    return CheckResult(
        name=spec.name,
        model=spec.model,
        passed=not rows,
        failure_count=len(rows),
        rows=[dict(zip(cols, r, strict=True)) for r in rows[:SAMPLE_ROWS]],
    )


def run_checks(path: Path, names: set[str] | None = None) -> list[CheckResult]:
    """Run the named checks (default: all) on a warehouse file, read-only."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return [run_check(con, n) for n in CHECKS if names is None or n in names]
    finally:
        con.close()
