"""The table-format comparison's faults: two writers appending to one table at once, SIGKILL of
a process appending in a loop, and SIGKILL during reruns of one batch; each in child processes
that `python -m bench.table_formats --child ...` runs (bench/table_formats.py).
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from bench.table_formats_store import data_objects

ROOT = Path(__file__).resolve().parents[1]
WRITER_COMMITS, WRITER_ROWS, MAX_RETRIES = 15, 100, 10
KILLS, KILL_ROWS = 5, 20_000


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


def _killed_at_random(
    role: str, fmt: Any, endpoint: str, work: Path, k: int, rng: random.Random
) -> subprocess.Popen[str]:
    """A child of `role` killed (SIGKILL) at a random moment after it is ready; its stdout left
    to read and the process to wait for."""
    proc = subprocess.Popen(
        _child(role, fmt.name, endpoint, work, f"{fmt.name}-{k}"),
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.05, 1.5))
    proc.send_signal(signal.SIGKILL)
    return proc


def measure_kills(fmt: Any, endpoint: str, work: Path, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    table = f"kill_{fmt.name}"
    outcomes = []
    for k in range(KILLS):
        proc = _killed_at_random("kill", fmt, endpoint, work, k, rng)
        assert proc.stdout is not None
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
        _killed_at_random("rerun", fmt, endpoint, work, k, rng).wait()
        after_kills.append(counts())
    expected = {"A": KILL_ROWS, "B": KILL_ROWS}
    return {
        "rows_after_batch_written_twice": after_two,
        "rows_right_after_each_kill": sum(c == expected for c in after_kills),
        "kills": KILLS,
    }
