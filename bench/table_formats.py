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

The store is moto's S3 server on loopback (`moto[server]`); Iceberg's catalog is pyiceberg's SQL
catalog on a SQLite file. Results: a table on stdout, JSON in bench/out/table-formats-*.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

OUT_DIR = Path(__file__).resolve().parent / "out"
ROOT = Path(__file__).resolve().parents[1]
BUCKET = "lake"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}
REGION = "us-east-1"
SMALL_APPENDS, SMALL_ROWS = 20, 1_000
WRITER_COMMITS, WRITER_ROWS, MAX_RETRIES = 15, 100, 10
KILLS, KILL_ROWS = 5, 20_000


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """moto's S3 server on a free loopback port for the block; yields its endpoint URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- the two formats, behind one small interface ---------------------------------------------


class Delta:
    name = "delta"

    def __init__(self, endpoint: str, work: Path) -> None:
        self.options = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_REGION": REGION,
            "AWS_ALLOW_HTTP": "true",
            **CREDENTIALS,
        }

    def uri(self, table: str) -> str:
        return f"s3://{BUCKET}/delta/{table}"

    def append(self, table: str, data: pa.Table) -> None:
        from deltalake import write_deltalake

        write_deltalake(self.uri(table), data, mode="append", storage_options=self.options)

    def replace(self, table: str, data: pa.Table, writer: str) -> None:
        """One commit that replaces every row of `writer` (a rerun of the same batch)."""
        from deltalake import write_deltalake

        write_deltalake(
            self.uri(table),
            data,
            mode="overwrite",
            predicate=f"writer = '{writer}'",
            storage_options=self.options,
        )

    def reader(self, table: str) -> Any:
        from deltalake import DeltaTable

        return DeltaTable(self.uri(table), storage_options=self.options).to_pyarrow_dataset()

    def live_files(self, table: str) -> set[str]:
        from deltalake import DeltaTable

        uris = DeltaTable(self.uri(table), storage_options=self.options).file_uris()
        return {u.split(f"s3://{BUCKET}/", 1)[1] for u in uris}

    def prefix(self, table: str) -> str:
        return f"delta/{table}/"

    def conflict(self, exc: Exception) -> bool:
        return "Commit" in type(exc).__name__ or "conflict" in str(exc).lower()


class Iceberg:
    name = "iceberg"

    def __init__(self, endpoint: str, work: Path) -> None:
        self.props = {
            "uri": f"sqlite:///{work / 'iceberg-catalog.db'}",
            "warehouse": f"s3://{BUCKET}/iceberg",
            "s3.endpoint": endpoint,
            "s3.region": REGION,
            "s3.access-key-id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        }
        self._catalog: Any = None

    @property
    def catalog(self) -> Any:
        if self._catalog is None:
            from pyiceberg.catalog.sql import SqlCatalog

            self._catalog = SqlCatalog("lake", **self.props)
            with contextlib.suppress(Exception):  # already there (another writer made it)
                self._catalog.create_namespace("lake")
        return self._catalog

    @staticmethod
    def _cast(data: pa.Table) -> pa.Table:
        # Iceberg stores microseconds; the lake writes milliseconds.
        fields = [
            pa.field(f.name, pa.timestamp("us", tz=f.type.tz), f.nullable)
            if pa.types.is_timestamp(f.type)
            else f
            for f in data.schema
        ]
        return data.cast(pa.schema(fields))

    def append(self, table: str, data: pa.Table) -> None:
        data = self._cast(data)
        tbl = self.catalog.create_table_if_not_exists(f"lake.{table}", schema=data.schema)
        tbl.append(data)

    def replace(self, table: str, data: pa.Table, writer: str) -> None:
        from pyiceberg.expressions import EqualTo

        tbl = self.catalog.create_table_if_not_exists(f"lake.{table}", schema=data.schema)
        tbl.overwrite(data, overwrite_filter=EqualTo("writer", writer))

    def reader(self, table: str) -> Any:
        return self.catalog.load_table(f"lake.{table}").scan().to_arrow_batch_reader()

    def live_files(self, table: str) -> set[str]:
        tbl = self.catalog.load_table(f"lake.{table}")
        return {t.file.file_path.split(f"s3://{BUCKET}/", 1)[1] for t in tbl.scan().plan_files()}

    def prefix(self, table: str) -> str:
        return f"iceberg/lake/{table}/"

    def conflict(self, exc: Exception) -> bool:
        return type(exc).__name__ in {"CommitFailedException", "OperationalError"}


FORMATS = {"delta": Delta, "iceberg": Iceberg}


def objects(endpoint: str, prefix: str) -> tuple[int, int]:
    """(objects, bytes) under a prefix of the bucket."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **_boto_credentials())
    count = size = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for obj in page.get("Contents", []):
            count += 1
            size += obj["Size"]
    return count, size


def data_objects(endpoint: str, prefix: str) -> set[str]:
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **_boto_credentials())
    keys: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        keys |= {o["Key"] for o in page.get("Contents", []) if o["Key"].endswith(".parquet")}
    return keys


def _boto_credentials() -> dict[str, str]:
    return {
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    }


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


def _child(role: str, fmt_name: str, endpoint: str, work: Path, tag: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "bench.table_formats",
        "--child",
        role,
        "--format",
        fmt_name,
        "--endpoint",
        endpoint,
        "--work",
        str(work),
        "--tag",
        tag,
    ]


def rows_for(tag: str, seq: int, n: int) -> pa.Table:
    return pa.table(
        {
            "writer": pa.array([tag] * n),
            "seq": pa.array([seq] * n, pa.int64()),
            "row": pa.array(range(n), pa.int64()),
        }
    )


def run_child(role: str, fmt: Any, tag: str) -> None:
    """In a child process: append commits, reporting each on stdout."""
    table = f"{role}_{tag.split('-')[0]}"
    if role == "writers":
        import logging

        class Count(logging.Handler):
            retries = 0

            def emit(self, record: logging.LogRecord) -> None:
                Count.retries += "concurrent update" in record.getMessage()

        logging.getLogger().addHandler(Count())
        logging.getLogger().setLevel(logging.WARNING)
        conflicts = 0
        for seq in range(WRITER_COMMITS):
            for attempt in range(MAX_RETRIES + 1):
                try:
                    fmt.append(table, rows_for(tag, seq, WRITER_ROWS))
                    break
                except Exception as exc:
                    if not fmt.conflict(exc) or attempt == MAX_RETRIES:
                        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:300]}))
                        sys.exit(1)
                    conflicts += 1
                    fmt._catalog = None  # reload
        report = {"commits": WRITER_COMMITS, "refused": conflicts, "retried_inside": Count.retries}
        print(json.dumps(report), flush=True)
        return
    if role == "rerun":  # the same batch again and again, as re-executions of one run
        fmt.replace(table, rows_for("B", 0, KILL_ROWS), "B")
        print("ready", flush=True)
        while True:
            fmt.replace(table, rows_for("B", 0, KILL_ROWS), "B")
    fmt.append(table, rows_for(tag, 0, KILL_ROWS))
    print("ready", flush=True)
    for seq in range(1, 10_000):
        fmt.append(table, rows_for(tag, seq, KILL_ROWS))
        print(f"committed {seq}", flush=True)


def table_rows(fmt: Any, table: str) -> pa.Table:
    try:
        rel = fmt.reader(table)  # noqa: F841
    except Exception as exc:  # killed before its first commit: no table yet
        if "NotFound" not in type(exc).__name__ and "NoSuchTable" not in type(exc).__name__:
            raise
        return pa.table({"writer": pa.array([], pa.string()), "seq": [], "n": []})
    sql = "select writer, seq, count(*) as n from rel group by all"
    return duckdb.connect().sql(sql).to_arrow_table()


def measure_writers(fmt: Any, endpoint: str, work: Path) -> dict[str, Any]:
    procs = [
        subprocess.Popen(
            _child("writers", fmt.name, endpoint, work, f"{fmt.name}-{w}"),
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for w in "ab"
    ]
    reports = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    result: dict[str, Any] = {"writers": reports}
    with contextlib.suppress(Exception):
        counts = table_rows(fmt, f"writers_{fmt.name}").to_pylist()
        expected = {
            (f"{fmt.name}-{w}", s)
            for w in "ab"
            for s in range(WRITER_COMMITS)
            if "error" not in reports["ab".index(w)]
        }
        seen = {(r["writer"], r["seq"]) for r in counts}
        result["commits_lost"] = len(expected - seen)
        result["commits_duplicated"] = sum(r["n"] != WRITER_ROWS for r in counts)
    return result


def measure_kills(fmt: Any, endpoint: str, work: Path, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    table = f"kill_{fmt.name}"
    outcomes = []
    for k in range(KILLS):
        proc = subprocess.Popen(
            _child("kill", fmt.name, endpoint, work, f"{fmt.name}-{k}"),
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 1.5))
        proc.send_signal(signal.SIGKILL)
        reported = 1 + sum(1 for line in proc.stdout if line.startswith("committed"))
        proc.wait()
        counts = table_rows(fmt, table).to_pylist()
        mine = [r for r in counts if r["writer"] == f"{fmt.name}-{k}"]
        live = fmt.live_files(table) if counts else set()
        orphans = data_objects(endpoint, fmt.prefix(table)) - live
        outcomes.append(
            {
                "reported_commits": reported,
                "visible_commits": len(mine),
                "partial_commits": sum(r["n"] != KILL_ROWS for r in counts),
                "orphan_data_files": len(orphans),
            }
        )
    # The table still takes an append after the kills.
    fmt.append(table, rows_for("after", 0, 10))
    after = [r for r in table_rows(fmt, table).to_pylist() if r["writer"] == "after"]
    return {
        "kills": outcomes,
        "append_after_kills_ok": after == [{"writer": "after", "seq": 0, "n": 10}],
    }


def measure_reruns(fmt: Any, endpoint: str, work: Path, seed: int) -> dict[str, Any]:
    """A rerun of a batch replaces its rows in one commit; SIGKILL during reruns loses nothing
    and duplicates nothing (the contract's idempotent re-execution, docs/table-formats.md)."""
    rng = random.Random(seed + 1)
    table = f"rerun_{fmt.name}"
    fmt.append(table, rows_for("A", 0, KILL_ROWS))  # another batch, never touched
    fmt.replace(table, rows_for("B", 0, KILL_ROWS), "B")
    fmt.replace(table, rows_for("B", 0, KILL_ROWS), "B")

    def counts() -> dict[str, int]:
        return {r["writer"]: r["n"] for r in table_rows(fmt, table).to_pylist()}

    after_two = counts()
    after_kills = []
    for k in range(KILLS):
        proc = subprocess.Popen(
            _child("rerun", fmt.name, endpoint, work, f"{fmt.name}-{k}"),
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        after_kills.append(counts())
    expected = {"A": KILL_ROWS, "B": KILL_ROWS}
    return {
        "rows_after_batch_written_twice": after_two,
        "rows_right_after_each_kill": sum(c == expected for c in after_kills),
        "kills": KILLS,
    }


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
        with moto_server() as endpoint:
            import boto3

            boto3.client(
                "s3", endpoint_url=endpoint, region_name=REGION, **_boto_credentials()
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
