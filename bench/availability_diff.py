"""Benchmark: what comparing the availability horizon with the lake costs before it lands.

    python -m bench.availability_diff /tmp/<name>/lake

Reads the current availability and its prices from a lake (give a copy: a `Lake` may create
folders), changes one record's available units and compares the two as a run does
(`assets.diff.keyed_diff`, then `rows_matching` for the prices that land). Prints wall and CPU
seconds of each step (CPU: user + system of this process, DuckDB's threads included).
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import pyarrow as pa

from assets.diff import keyed_diff
from assets.lastgood import rows_matching
from lake.store import Lake
from lake.tables import TABLES


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lake", type=Path, help="a lake folder (a copy)")
    lake = Lake(parser.parse_args().lake)
    t0, c0 = time.perf_counter(), _cpu()
    current = {t: lake.current(t) for t in ("availability", "availability_prices")}
    t1, c1 = time.perf_counter(), _cpu()
    root = current["availability"]
    units = root.column("available_units").to_pylist()
    units[0] = (units[0] or 0) + 1
    field = root.schema.field("available_units")
    fresh = {
        **current,
        "availability": root.set_column(
            root.schema.get_field_index(field.name), field, pa.array(units, field.type)
        ),
    }
    tables = [TABLES["availability"], TABLES["availability_prices"]]
    differing, removed = keyed_diff(tables, fresh, current)
    t2, c2 = time.perf_counter(), _cpu()
    kept = rows_matching([fresh["availability_prices"]], differing)
    t3, c3 = time.perf_counter(), _cpu()
    print(f"{root.num_rows:,} records, {current['availability_prices'].num_rows:,} prices")
    print(f"current state of both tables: {t1 - t0:.2f} s wall, {c1 - c0:.2f} CPU s")
    print(
        f"keyed_diff: {t2 - t1:.2f} s wall, {c2 - c1:.2f} CPU s "
        f"({differing.num_rows} differing, {removed.num_rows} removed)"
    )
    print(
        f"prices kept: {t3 - t2:.2f} s wall, {c3 - c2:.2f} CPU s "
        f"({sum(p.num_rows for p in kept)} rows)"
    )


if __name__ == "__main__":
    main()
