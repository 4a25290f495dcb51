"""Comparison helpers: lake current state and marts of two data dirs, lineage excluded."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest import mock

import dagster as dg
import duckdb
import pyarrow as pa

from lake.store import Lake
from lake.tables import TABLES
from warehouse.dictionary_pace import PATH_DEPENDENT_COLUMNS

if TYPE_CHECKING:
    from warehouse.build import BuildResult


def sandbox_opener(sb: Any, **config: Any) -> Callable[[], Any]:
    """The pipeline's `open_client` for a running sandbox: the facade over real HTTP."""
    from service.api import ReservationService
    from service.config import ServiceConfig

    settings = ServiceConfig(
        base_url=sb.base_url,
        client_id=sb.client_id,
        client_secret=sb.client_secret,
        scope=sb.scope,
        **config,
    )
    return lambda: ReservationService.connect(settings)


def reference_build(reference: Path, *, as_of: date | None) -> BuildResult:
    """A whole build of `reference`'s lake, as the rows a refresh in place must equal: the
    product's whole build but for its `COMMENT ON` script (~0.2 of a tiny lake's ~1.15 CPU s).
    The comparisons (`mart_differences`) read rows only; the comments are asserted on a whole
    build by tests/warehouse/test_catalog.py, and every other build in the suite writes them."""
    from warehouse.build import build_warehouse

    with mock.patch("warehouse.build.apply_comments", _no_comments):
        return build_warehouse(reference, as_of=as_of)


def _no_comments(con: duckdb.DuckDBPyConnection, models: list[Any]) -> None:
    return None


def _data(table: pa.Table) -> pa.Table:
    return table.select([c for c in table.schema.names if not c.startswith("_")])


def table_differences(
    a: pa.Table, b: pa.Table, sample: int = 3, con: duckdb.DuckDBPyConnection | None = None
) -> dict[str, object] | None:
    """None when both hold the same multiset of rows; else counts and a few rows of each side.
    `con`: an in-memory connection to compare on (a new one costs ~15 ms)."""
    own = con is None
    con = duckdb.connect() if con is None else con
    try:
        con.register("a", a)
        con.register("b", b)
        if _same_rows(con, "select * from a", "select * from b"):
            return None
        only_a = con.sql("select * from a except all select * from b").to_arrow_table()
        only_b = con.sql("select * from b except all select * from a").to_arrow_table()
    finally:
        con.unregister("a")
        con.unregister("b")
        if own:
            con.close()
    if only_a.num_rows == 0 and only_b.num_rows == 0:
        return None
    return {
        "rows": (a.num_rows, b.num_rows),
        "only_a": only_a.slice(0, sample).to_pylist(),
        "only_b": only_b.slice(0, sample).to_pylist(),
        "n_only_a": only_a.num_rows,
        "n_only_b": only_b.num_rows,
    }


def lake_differences(a: Lake, b: Lake, tables: Iterable[str] = TABLES) -> dict[str, object]:
    """Per lake table (every one, else `tables`): how the current states (without lineage
    columns) differ."""
    out: dict[str, object] = {}
    with duckdb.connect() as con:
        for name in tables:
            diff = table_differences(_data(a.current(name)), _data(b.current(name)), con=con)
            if diff is not None:
                out[name] = diff
    return out


def mart_differences(a: Path, b: Path, schema: str = "marts") -> dict[str, object]:
    """Per warehouse model of `schema`: how the two warehouse files differ (as
    `table_differences` says it). Both files are attached to one in-memory database and
    compared there: only the rows that differ leave DuckDB."""
    with _attached(a, b) as con:
        return _schema_differences(con, schema)


def warehouse_differences(a: Path, b: Path, schemas: Iterable[str]) -> dict[str, object]:
    """`mart_differences` of each of `schemas`, keyed `schema.model`, on one connection (a new
    connection and its two attaches cost ~35 ms a schema)."""
    out: dict[str, object] = {}
    with _attached(a, b) as con:
        for schema in schemas:
            diff = _schema_differences(con, schema)
            out.update({f"{schema}.{k}": v for k, v in diff.items()})
    return out


@contextlib.contextmanager
def _attached(a: Path, b: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    try:
        con.execute(f"attach '{a}' as wa (read_only)")
        con.execute(f"attach '{b}' as wb (read_only)")
        yield con
    finally:
        con.close()


def _schema_differences(con: duckdb.DuckDBPyConnection, schema: str) -> dict[str, object]:
    out: dict[str, object] = {}
    names_a = _tables(con, "wa", schema)
    names_b = _tables(con, "wb", schema)
    if names_a != names_b:
        out["<models>"] = {
            "only_a": sorted(names_a - names_b),
            "only_b": sorted(names_b - names_a),
        }
    for name in sorted(names_a & names_b):
        for part, where in _parts(con, schema, name):
            side_a = f'select {part} from wa.{schema}."{name}" {where.format(db="wa")}'
            side_b = f'select {part} from wb.{schema}."{name}" {where.format(db="wb")}'
            diff = _differences(con, side_a, side_b)
            if diff is not None:
                out[f"{name} {where.format(db='a')}" if where else name] = diff
    return out


def _differences(
    con: duckdb.DuckDBPyConnection, side_a: str, side_b: str, sample: int = 3
) -> dict[str, object] | None:
    """`table_differences` of two queries on one connection."""
    if _same_rows(con, side_a, side_b):
        return None
    only_a = f"({side_a} except all {side_b})"
    only_b = f"({side_b} except all {side_a})"
    n_a, n_b = _count(con, only_a), _count(con, only_b)
    if n_a == 0 and n_b == 0:
        return None
    rows_a, rows_b = _count(con, f"({side_a})"), _count(con, f"({side_b})")
    return {
        "rows": (rows_a, rows_b),
        "only_a": con.sql(f"select * from {only_a} limit {sample}").to_arrow_table().to_pylist(),
        "only_b": con.sql(f"select * from {only_b} limit {sample}").to_arrow_table().to_pylist(),
        "n_only_a": n_a,
        "n_only_b": n_b,
    }


def _same_rows(con: duckdb.DuckDBPyConnection, side_a: str, side_b: str) -> bool:
    """Whether two queries give the same multiset of rows, in one pass: every distinct row
    with its count on side A less its count on side B, none of them non-zero. The same
    equality as `except all` (NULLs equal, every column compared), for a fifth of its CPU
    (two `except all`s hash each side twice: ~3.5 CPU s for a small world's 90 models
    against ~0.7, docs/benchmarks.md session 16); the differences themselves are described
    by the `except all`s."""
    side = "__reservoir_side"
    ((unmatched,),) = con.execute(
        f"select count(*) from (select * exclude ({side}), sum({side}) from "
        f"(select *, 1 as {side} from ({side_a}) union all "
        f"select *, -1 as {side} from ({side_b})) "
        f"group by all having sum({side}) <> 0)"
    ).fetchall()
    return int(unmatched) == 0


def _count(con: duckdb.DuckDBPyConnection, relation: str) -> int:
    ((count,),) = con.execute(f"select count(*) from {relation}").fetchall()
    return int(count)


def _parts(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> list[tuple[str, str]]:
    """What of a model two run paths must agree on: every column, but for the columns that
    depend on the recorded history (PATH_DEPENDENT_COLUMNS). Of those, the on-the-books
    figures must agree where every reservation's current version is in force (the latest as-of
    date); pickup, STLY and pace look back to earlier dates. A condition names its file
    `{db}`."""
    dependent = PATH_DEPENDENT_COLUMNS.get(f"{schema}.{name}")
    if not dependent:
        return [("*", "")]
    columns = [
        r[0]
        for r in con.execute(
            "select column_name from information_schema.columns where table_catalog = 'wa' "
            "and table_schema = $1 and table_name = $2 order by ordinal_position",
            [schema, name],
        ).fetchall()
    ]
    stable = ", ".join(f'"{c}"' for c in columns if c not in dependent)
    latest = f'where as_of_date = (select max(as_of_date) from {{db}}.{schema}."{name}")'
    at_latest = ", ".join(f'"{c}"' for c in columns if c not in dependent or c.startswith("otb_"))
    return [(stable, ""), (at_latest, latest)]


def _tables(con: duckdb.DuckDBPyConnection, db: str, schema: str) -> set[str]:
    rows = con.execute(
        "select table_name from information_schema.tables "
        "where table_catalog = $1 and table_schema = $2",
        [db, schema],
    ).fetchall()
    return {r[0] for r in rows}


def execute_job(
    job: dg.UnresolvedAssetJobDefinition, resources: dict[str, Any], **kw: Any
) -> dg.ExecuteInProcessResult:
    """Run one of the code location's asset jobs in this process with test resources (the
    warehouse beside the lake resource's data directory)."""
    from pipelines.lake_assets import lake_assets
    from pipelines.warehouse_assets import WarehouseResource, build_warehouse_assets

    data_dir = resources["lake"].data_dir
    defs = dg.Definitions(
        assets=[lake_assets, build_warehouse_assets()],
        jobs=[job],
        resources={"warehouse": WarehouseResource(data_dir=data_dir), **resources},
    )
    from tests.partitioned import partition_kw

    return defs.resolve_job_def(job.name).execute_in_process(**partition_kw(kw))
