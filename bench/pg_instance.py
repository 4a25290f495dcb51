"""A small full run with the Dagster instance on PostgreSQL: wall seconds, the run's own CPU,
PostgreSQL's CPU (its processes and the backends they reaped) and the sessions and transactions
the server accepted, with the CLI's pooled storage (`pipelines.pg_storage`) or, with `--stock`,
dagster-postgres's own (a connection per statement).

    python -m bench.pg_instance [--stock] [--scale small]

Needs Debian's PostgreSQL (`bash scripts/ensure-postgres.sh`); a throwaway cluster is started.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from rich.console import Console

from bench.proc import cpu_seconds
from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import DAGSTER_PG_ENV, Settings
from sandbox.runner import SandboxSettings, run_sandbox
from tests.postgres_server import postgres_cluster

# An operator's own dagster.yaml (no managed mark): the CLI leaves it as it is.
STOCK_YAML = (
    "telemetry:\n  enabled: false\n"
    + f"storage:\n  postgres:\n    postgres_url:\n      env: {DAGSTER_PG_ENV}\n"
)


def postgres_cpu_seconds() -> float:
    """User and system CPU of the server's processes and of the children they reaped."""
    found = subprocess.run(["pgrep", "-x", "postgres"], capture_output=True, text=True)
    total = 0
    for pid in found.stdout.split():
        try:
            total += cpu_seconds(int(pid), reaped=True)
        except OSError:
            continue  # a backend that ended between the listing and the read
    return total


def server_counts(url: str) -> tuple[int, int]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as con:
            row = con.execute(
                sa.text("select sum(sessions), sum(xact_commit) from pg_stat_database")
            ).one()
    finally:
        engine.dispose()
    return int(row[0]), int(row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stock", action="store_true", help="dagster-postgres's own storage")
    parser.add_argument("--scale", default="small")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="reservoir-pg-bench-"))
    with postgres_cluster() as url:
        settings = Settings(data_dir=tmp / "data", dagster_pg_url=url)
        if args.stock:
            settings.dagster_home.mkdir(parents=True)
            (settings.dagster_home / "dagster.yaml").write_text(STOCK_YAML)
        sessions0, xacts0 = server_counts(url)
        cpu0 = postgres_cpu_seconds()
        usage0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        with (
            run_sandbox(SandboxSettings(seed=7, scale=args.scale)) as handle,
            open(os.devnull, "w") as sink,
        ):
            run_pipeline(
                settings,
                mode="full",
                quiet=True,
                console=Console(file=sink),
                target=ServiceTarget.from_sandbox(handle),
            )
        wall = time.perf_counter() - t0
        usage1 = resource.getrusage(resource.RUSAGE_SELF)
        sessions1, xacts1 = server_counts(url)
        result = {
            "storage": "stock" if args.stock else "pooled",
            "scale": args.scale,
            "wall_s": round(wall, 2),
            "run_process_cpu_s": round(
                usage1.ru_utime + usage1.ru_stime - usage0.ru_utime - usage0.ru_stime, 2
            ),
            "postgres_cpu_s": round(postgres_cpu_seconds() - cpu0, 2),
            "sessions": sessions1 - sessions0 - 1,  # less this bench's own second count
            "transactions": xacts1 - xacts0,
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
