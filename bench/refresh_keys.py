"""Benchmark: one mart's refresh by key against its whole rebuild, on a copy of a built warehouse,
for the changes of N reservations (a stand-in for an hour's at a scale whose `bench.refresh_hour`
states take too long to prepare).

    python -m bench.refresh_keys /tmp/large-run/data/warehouse.duckdb --work /tmp/x \
        --reservations 500 marts.booking_pace marts.orphan_nights marts.ancillary_revenue_monthly

The file is copied to `--work` (never written in place). In one transaction on the copy, the
models these marts read that the file lacks are built whole (e.g. a currency set added since),
then N reservations with a stay night on or after the as-of date (seeded sample: what an
hour's bookings and changes touch) count as changed: the rows of
`core.fct_stay_nights`, `core.fct_reservation_versions`, `core.fct_reservations`,
`core.fct_bill_lines` and `core.fct_bill_line_nights` of those reservations, and their unit
nights in two versions (sold and free), are the changed rows a refresh would hand to the marts.
Each mart is then maintained by `warehouse.maintain.Maintainer` as a refresh would (by key, or by
adding what changed, its table taken as built by its current SQL), timed, and built whole into
a temp table, timed. The marts are taken in the order given, each reading the changes of those
before it (booking pace: `core.fct_pace_night_spans core.fct_pace_span_groups
core.fct_pace_on_the_books core.dim_pace_currencies marts.booking_pace`; the sampled
reservations' pace nights are first given a cent more room revenue, which their refresh by key
takes back, so that the cells move).
The transaction is rolled back: the copy is left as it was.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import duckdb

from lake.sql import quote_ident
from warehouse.changes import model_version
from warehouse.macros import MACROS
from warehouse.maintain import Maintainer
from warehouse.models import discover_models

SPANS = "core.fct_pace_night_spans"
CHANGED = (
    "core.fct_stay_nights",
    "core.fct_reservation_versions",
    "core.fct_reservations",
    "core.fct_bill_lines",
    "core.fct_bill_line_nights",
)


def _changed_rows(con: duckdb.DuckDBPyConnection, reservations: int, seed: int) -> dict[str, str]:
    """Temp tables of the sampled reservations' rows (and their unit nights, sold and free)."""
    con.execute(
        "create temp table _sample as select reservation_id from (select distinct "
        "reservation_id from core.fct_stay_nights where night_date >= (select as_of from "
        f"meta.build_settings)) using sample reservoir({int(reservations)} rows) "
        f"repeatable ({int(seed)})"
    )
    states: dict[str, str] = {}
    for q in CHANGED:
        name = f"_changed_{q.replace('.', '_')}"
        con.execute(
            f"create temp table {quote_ident(name)} as select * from {q} "
            "where reservation_id in (select reservation_id from _sample)"
        )
        states[q] = name
    con.execute(
        "create temp table _changed_core_fct_unit_nights as "
        "with touched as (select u.* from core.fct_unit_nights as u inner join "
        "(select distinct unit_id, night_date from core.fct_stay_nights where reservation_id in "
        "(select reservation_id from _sample)) as s using (unit_id, night_date)) "
        "select * from touched union all "
        "select * replace (not is_sold as is_sold) from touched"
    )
    states["core.fct_unit_nights"] = "_changed_core_fct_unit_nights"
    return states


def run(warehouse: Path, work: Path, marts: list[str], reservations: int, seed: int) -> None:
    work.mkdir(parents=True, exist_ok=True)
    copy = work / "warehouse.duckdb"
    shutil.copyfile(warehouse, copy)
    models = discover_models()
    con = duckdb.connect(str(copy))
    try:
        for macro in MACROS:
            con.execute(macro)
        existing = {
            f"{s}.{t}"
            for s, t in con.execute(
                "select table_schema, table_name from information_schema.tables"
            ).fetchall()
        }
        con.execute("begin")
        needed = {d for m in marts for d in models[m].deps} | set(marts)
        for q in [q for q in models if q in needed - existing]:  # in dependency order
            con.execute(f"create table {q} as\n{models[q].sql}")
            existing.add(q)
        states = _changed_rows(con, reservations, seed)
        if SPANS in marts:
            # the sample's pace nights a cent off, as an hour's changes leave them: the refresh
            # puts back what the lake holds, and the sums of their cells move
            con.execute(
                f"update {SPANS} set room_revenue = room_revenue + 0.01 "
                "where reservation_id in (select reservation_id from _sample)"
            )
        parts: dict[str, tuple[str, str]] = {}
        walks = []
        for q in marts:
            model = models[q]
            walk = Maintainer(
                con,
                lake={},
                settings_changed=False,
                versions={q: model_version(model)},
                existing=existing,
                states=dict(states),
                parts=dict(parts),
            )
            walks.append(walk)
            t0, c0 = time.perf_counter(), time.process_time()
            outcome = walk.maintain(model)
            keyed, keyed_cpu = time.perf_counter() - t0, time.process_time() - c0
            # a later mart reads this one's change (a chain such as booking pace's)
            states[q] = walk.states[q]
            parts.update(walk.parts)
            t0, c0 = time.perf_counter(), time.process_time()
            con.execute(f"create or replace temp table _whole as\n{model.sql}")
            whole, whole_cpu = time.perf_counter() - t0, time.process_time() - c0
            con.execute("drop table _whole")
            print(
                f"{q}: {outcome.how} ({outcome.keys} keys) {keyed_cpu:.2f} CPU s, "
                f"{keyed:.2f} s wall; whole {whole_cpu:.2f} CPU s, {whole:.2f} s wall"
            )
        for walk in walks:
            walk.drop_temps()
        con.execute("rollback")
    finally:
        con.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("marts", nargs="+")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--reservations", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    run(args.warehouse, args.work, args.marts, args.reservations, args.seed)


if __name__ == "__main__":
    main()
