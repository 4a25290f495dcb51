"""Benchmark: the lake's tables as Delta Lake and as Apache Iceberg on an S3-compatible store.

    python -m bench.table_formats --lake /tmp/x/data/lake   # a lake `reservoir run` wrote
    python -m bench.table_formats                           # builds the medium lake first

Which open table format the lake should use on object storage (docs/table-formats.md) is
decided on these figures, measured on the medium sandbox world's lake:

1. write: every lake table appended once (one commit per table), then 20 small appends to
   `reservations` (what an incremental run does), per format; objects and bytes on the store;
2. read: every table scanned by DuckDB through the format's own reader (DuckDB's delta and
   iceberg extensions cannot be downloaded here): `deltalake` -> pyarrow dataset -> DuckDB and
   `pyiceberg` scan -> Arrow record batches -> DuckDB; the local Parquet files for reference;
3. two writers: two processes append 15 commits each to one table at once; rows lost or
   duplicated, commits refused (a refused commit is reloaded and retried, up to 10 times);
4. SIGKILL: a process appending 20,000-row commits in a loop is killed at a random moment,
   5 times per format; the table must still read, hold whole commits only, and take appends;
5. reruns: a batch written twice by replacing its rows (Delta: overwrite with a predicate on the
   batch column; Iceberg: overwrite with a filter) holds its rows once, and SIGKILL during a loop
   of such reruns leaves it whole, once, and the other batch untouched, 5 times per format.

The store is moto's S3 server on loopback (`moto[server]`, started as the tests start it,
`tests/s3_server.py`); Iceberg's catalog is pyiceberg's SQL catalog on a SQLite file. Results: a
table on stdout, JSON in bench/out/table-formats-*.json. The bucket and the two formats are in
`table_formats_store.py`, the faults of 3-5 (child processes started as
`python -m bench.table_formats --child ...`) in `table_formats_faults.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from bench.table_formats_faults import (
    ROOT,
    measure_kills,
    measure_reruns,
    measure_writers,
    run_child,
)
from bench.table_formats_store import (
    BUCKET,
    FORMATS,
    REGION,
    boto_credentials,
    objects,
)

OUT_DIR = Path(__file__).resolve().parent / "out"
SMALL_APPENDS, SMALL_ROWS = 20, 1_000


# -- the lake ----------------------------------------------------------------------------------


def load_lake(lake: Path) -> dict[str, pa.Table]:
    """Every table of a local lake (all its batch files), as Arrow."""
    tables: dict[str, pa.Table] = {}
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    for folder in sorted(p for p in lake.iterdir() if p.is_dir() and not p.name.startswith("_")):
        files = sorted(str(f) for f in folder.glob("*.parquet"))
        if files:
            tables[folder.name] = con.sql(
                "select * from read_parquet($f, union_by_name = true)", params={"f": files}
            ).to_arrow_table()
    return tables


def build_medium_lake(work: Path) -> Path:
    data = work / "data"
    env = {**os.environ, "RESERVOIR_DATA_DIR": str(data)}
    env.pop("RESERVOIR_BASE_URL", None)
    cmd = [str(Path(sys.executable).parent / "reservoir"), "run", "-q", "--mode", "full"]
    subprocess.run([*cmd, "--scale", "medium"], check=True, env=env, cwd=ROOT)
    return data / "lake"


def scan_sql(rel: str) -> str:
    # Hashing whole rows makes DuckDB read every column of every row.
    return f"select count(*), bit_xor(hash(t)) from {rel} as t"


# -- measurements ------------------------------------------------------------------------------


def measure_writes(fmt: Any, endpoint: str, tables: dict[str, pa.Table]) -> dict[str, Any]:
    started = time.perf_counter()
    for name, data in tables.items():
        fmt.append(name, data)
    initial = time.perf_counter() - started
    reservations = tables["reservations"]
    started = time.perf_counter()
    for i in range(SMALL_APPENDS):
        fmt.append("reservations", reservations.slice(i * SMALL_ROWS, SMALL_ROWS))
    small = (time.perf_counter() - started) / SMALL_APPENDS
    count, size = objects(endpoint, fmt.prefix("").rstrip("/"))
    res_count, _ = objects(endpoint, fmt.prefix("reservations"))
    return {
        "initial_write_s": round(initial, 2),
        "small_append_s": round(small, 3),
        "objects": count,
        "bytes": size,
        "reservations_objects_after_21_commits": res_count,
    }


def measure_reads(fmt: Any, tables: dict[str, pa.Table]) -> dict[str, Any]:
    con = duckdb.connect()
    started = time.perf_counter()
    rows = 0
    for name in tables:
        rel = fmt.reader(name)  # noqa: F841 - DuckDB scans the Python variable by its name
        rows += con.execute(scan_sql("rel")).fetchone()[0]
    return {"read_all_tables_s": round(time.perf_counter() - started, 2), "rows_read": rows}


def local_read(lake: Path, tables: dict[str, pa.Table]) -> float:
    con = duckdb.connect()
    started = time.perf_counter()
    for name in tables:
        files = sorted(str(f) for f in (lake / name).glob("*.parquet"))
        con.execute(scan_sql("read_parquet($f, union_by_name = true)"), {"f": files}).fetchone()
    return round(time.perf_counter() - started, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", type=Path, help="a lake folder; default: build the medium one")
    parser.add_argument("--formats", default="delta,iceberg")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", choices=["writers", "kill", "rerun"], help=argparse.SUPPRESS)
    parser.add_argument("--format", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tag", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, FORMATS[args.format](args.endpoint, args.work), args.tag)
        return
    with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
        work = Path(tmp)
        lake = args.lake or build_medium_lake(work)
        tables = load_lake(lake)
        results: dict[str, Any] = {
            "lake": {
                "tables": len(tables),
                "rows": sum(t.num_rows for t in tables.values()),
                "parquet_files": sum(len(list((lake / n).glob("*.parquet"))) for n in tables),
                "local_read_s": local_read(lake, tables),
            }
        }
        from tests.s3_server import s3_server  # here: the children need not import pytest

        with s3_server() as endpoint:
            import boto3

            boto3.client(
                "s3", endpoint_url=endpoint, region_name=REGION, **boto_credentials()
            ).create_bucket(Bucket=BUCKET)
            for name in args.formats.split(","):
                fmt = FORMATS[name](endpoint, work)
                print(f"{name}: writing", file=sys.stderr)
                figures = measure_writes(fmt, endpoint, tables)
                figures |= measure_reads(fmt, tables)
                print(f"{name}: two writers", file=sys.stderr)
                figures["concurrent"] = measure_writers(fmt, endpoint, work)
                print(f"{name}: SIGKILL", file=sys.stderr)
                figures["sigkill"] = measure_kills(fmt, endpoint, work, args.seed)
                print(f"{name}: reruns", file=sys.stderr)
                figures["reruns"] = measure_reruns(fmt, endpoint, work, args.seed)
                results[name] = figures
    OUT_DIR.mkdir(exist_ok=True)
    out = OUT_DIR / f"table-formats-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    print(f"-> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
