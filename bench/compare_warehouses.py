"""Compare two built warehouse files table by table: the same tables, columns and rows.

    python -m bench.compare_warehouses OLD.duckdb NEW.duckdb [--allow-added]

Every table (and view) of the staging, core and marts schemas (and `meta`, but for the build's own records:
its id and time, the lake files' times) is compared by column names and types, row counts and
`except all` both ways; lineage is compared too (a batch id is data). Exits 1 on any difference.
Used to show that a change to the build's SQL or settings leaves every table identical.
`--allow-added`: a table of NEW with every column of OLD's (same names, types and order) and
more after them is compared on OLD's columns, its added columns listed but not a difference.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import duckdb

SCHEMAS = ("staging", "core", "marts", "meta")
# the build's records that differ between any two builds
SKIP = {"meta.build_settings", "meta.lake_files"}


def _tables(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, list[tuple[str, str]]]:
    rows = con.execute(
        "select table_schema || '.' || table_name, column_name, data_type "
        "from information_schema.columns where table_catalog = $1 "
        "order by table_schema, table_name, ordinal_position",
        [catalog],
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, typ in rows:
        if table.split(".")[0] in SCHEMAS and table not in SKIP:
            out.setdefault(table, []).append((column, typ))
    return out


def compare(
    old: Path, new: Path, memory_limit: str = "3GB", *, allow_added: bool = False
) -> list[str]:
    """The differences between the two files (empty: every table identical)."""
    con = duckdb.connect()
    con.execute(f"set memory_limit = '{memory_limit}'")
    # spills go to the system's temp folder (an in-memory database's default is ./.tmp)
    spill = Path(tempfile.gettempdir()) / "compare-warehouses-spill"
    con.execute(f"set temp_directory = '{spill}'")
    con.execute("set preserve_insertion_order = false")
    con.execute(f"attach '{old}' as a (read_only)")
    con.execute(f"attach '{new}' as b (read_only)")
    a, b = _tables(con, "a"), _tables(con, "b")
    problems = [f"{t}: only in {old}" for t in sorted(set(a) - set(b))]
    problems += [f"{t}: only in {new}" for t in sorted(set(b) - set(a))]
    for table in sorted(set(a) & set(b)):
        added = b[table][len(a[table]) :] if b[table][: len(a[table])] == a[table] else None
        if a[table] != b[table] and not (allow_added and added):
            problems.append(f"{table}: columns differ: {a[table]} != {b[table]}")
            continue
        schema, name = table.split(".")
        left, right = f'a."{schema}"."{name}"', f'b."{schema}"."{name}"'
        if a[table] != b[table]:
            print(f"{table}: columns added in {new}: {', '.join(c for c, _ in added or ())}")
            listed = ", ".join(f'"{c}"' for c, _ in a[table])
            right = f"(select {listed} from {right})"
        (na,) = con.execute(f"select count(*) from {left}").fetchone() or (0,)
        (nb,) = con.execute(f"select count(*) from {right}").fetchone() or (0,)
        (only_a,) = con.execute(
            f"select count(*) from (from {left} except all from {right})"
        ).fetchone() or (0,)
        (only_b,) = con.execute(
            f"select count(*) from (from {right} except all from {left})"
        ).fetchone() or (0,)
        status = "identical" if (na, only_a, only_b) == (nb, 0, 0) else "DIFFERENT"
        print(f"{table}: {na:,} / {nb:,} rows, except all {only_a} / {only_b}: {status}")
        if status != "identical":
            problems.append(f"{table}: {na} vs {nb} rows, except all {only_a} / {only_b}")
    con.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--memory-limit", default="3GB")
    parser.add_argument("--allow-added", action="store_true", help="columns added at the end")
    args = parser.parse_args(argv)
    problems = compare(args.old, args.new, args.memory_limit, allow_added=args.allow_added)
    print(f"{len(problems)} difference(s)")
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
