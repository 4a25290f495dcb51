"""Benchmark: what writing the warehouse's stored tables costs, with nothing computed.

    python -m bench.store_floor --data-dir /tmp/large-run/data   # a built warehouse.duckdb

Copies every table the models store (staging, core and marts; views are not stored) from the
published `warehouse.duckdb` into a new file, one `create table ... as select *` each, with the
build's connection settings (`warehouse.build.configure`), then checkpoints it: DuckDB reads
columns it wrote itself and writes them again (compression, row groups, the file's blocks). No
model SQL runs, so the figure is a floor under any full build that stores the same tables: the
full-build target (issue "Performance where users feel it") is compared with it in
docs/benchmarks.md. The copy is written next to the source (`--work`: elsewhere) and deleted
after. Results on stdout and in bench/out/store-floor.json (`--out` to name another file).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from lake.sql import quote_ident, quote_literal
from warehouse.build import configure, warehouse_path
from warehouse.models import LAYERS

OUT_DIR = Path(__file__).resolve().parent / "out"


@dataclass(frozen=True)
class TableCopy:
    table: str  # schema.name
    rows: int
    columns: int
    cpu_seconds: float
    wall_seconds: float


def stored_tables(con: duckdb.DuckDBPyConnection, catalog: str) -> list[tuple[str, str, int]]:
    """The models' stored tables of `catalog` (schema, name, columns), the largest first."""
    return con.execute(
        "select schema_name, table_name, column_count from duckdb_tables() "
        "where database_name = ? and list_contains(?, schema_name) "
        "order by estimated_size desc, schema_name, table_name",
        [catalog, list(LAYERS)],
    ).fetchall()


def copy_tables(source: Path, target: Path) -> tuple[list[TableCopy], TableCopy]:
    """Copy the stored tables of the warehouse file `source` into a new file `target`; each
    table's copy and the closing checkpoint, timed (CPU seconds count DuckDB's threads)."""
    con = duckdb.connect(str(target))
    try:
        configure(con, target.parent)
        con.execute(f"attach {quote_literal(str(source))} as published (read_only)")
        copies: list[TableCopy] = []
        for schema in LAYERS:
            con.execute(f"create schema if not exists {quote_ident(schema)}")
        for schema, name, columns in stored_tables(con, "published"):
            table = f"{quote_ident(schema)}.{quote_ident(name)}"
            started, cpu = time.perf_counter(), time.process_time()
            # a `create table ... as` answers with the rows it wrote
            ((rows,),) = con.execute(
                f"create table {table} as select * from published.{table}"
            ).fetchall()
            wall, spent = time.perf_counter() - started, time.process_time() - cpu
            copies.append(TableCopy(f"{schema}.{name}", rows, columns, spent, wall))
        con.execute("detach published")
        started, cpu = time.perf_counter(), time.process_time()
        con.execute("checkpoint")
        closing = TableCopy(
            "(checkpoint)", 0, 0, time.process_time() - cpu, time.perf_counter() - started
        )
    finally:
        con.close()
    return copies, closing


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--work", type=Path, help="where the copy is written (default: beside)")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--out", type=Path, default=OUT_DIR / "store-floor.json")
    args = parser.parse_args(argv)
    source = warehouse_path(args.data_dir)
    if not source.exists():
        parser.error(
            f"no warehouse at {source}: build one first (bench.run or bench.build_profile)"
        )
    work_dir = args.work or args.data_dir
    with tempfile.TemporaryDirectory(prefix="store-floor-", dir=work_dir) as tmp:
        started, cpu = time.perf_counter(), time.process_time()
        copies, closing = copy_tables(source, Path(tmp) / "copy.duckdb")
        wall, spent = time.perf_counter() - started, time.process_time() - cpu
        size = (Path(tmp) / "copy.duckdb").stat().st_size
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": str(source),
        "source_bytes": source.stat().st_size,
        "copy_bytes": size,
        "tables": len(copies),
        "rows": sum(c.rows for c in copies),
        "cpu_seconds": round(spent, 2),
        "wall_seconds": round(wall, 2),
        "checkpoint": asdict(closing),
        "copies": [asdict(c) for c in copies],
    }
    print(
        f"stored tables: {result['tables']}, {result['rows']:,} rows; copied in "
        f"{wall:.1f} s wall, {spent:.1f} CPU s (the checkpoint {closing.wall_seconds:.2f} s); "
        f"{size / 2**20:,.0f} MB"
    )
    for c in sorted(copies, key=lambda c: -c.cpu_seconds)[: args.top]:
        print(
            f"  {c.cpu_seconds:6.2f} CPU s {c.wall_seconds:6.2f} s  {c.table} ({c.rows:,} x {c.columns})"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.out}")
    return result


if __name__ == "__main__":
    main()
