"""`reservoir sql`: a read-only DuckDB shell on the warehouse, for analysts.

The connection is read-only so that a shell left open never blocks a scheduled build (builds
publish a new file; see docs/contracts.md section 4).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table

MAX_ROWS_SHOWN = 200


def _print_result(console: Console, cursor: duckdb.DuckDBPyConnection) -> None:
    if cursor.description is None:
        console.print("[dim]ok[/dim]")
        return
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchmany(MAX_ROWS_SHOWN + 1)
    table = Table(*columns, show_lines=False)
    for row in rows[:MAX_ROWS_SHOWN]:
        table.add_row(*("NULL" if v is None else str(v) for v in row))
    console.print(table)
    more = " (first 200 shown)" if len(rows) > MAX_ROWS_SHOWN else ""
    console.print(f"[dim]{min(len(rows), MAX_ROWS_SHOWN)} rows{more}[/dim]")


def run_sql(warehouse: Path, query: str | None) -> int:
    """Run one query, or a line-based shell (statements end with `;`). Returns an exit code."""
    console = Console()
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        if query is not None:
            try:
                _print_result(console, con.execute(query))
            except duckdb.Error as exc:
                console.print(f"[red]error:[/red] {exc}")
                return 1
            return 0
        console.print(
            f"reservoir sql on {warehouse} (read-only). Schemas: staging, core, marts. "
            "End statements with ';'. .tables lists tables, .quit leaves."
        )
        buffer: list[str] = []
        while True:
            try:
                line = input("... " if buffer else "sql> ")
            except (EOFError, KeyboardInterrupt):
                console.print()
                return 0
            stripped = line.strip()
            if not buffer and stripped in {".quit", ".exit", "\\q"}:
                return 0
            if not buffer and stripped == ".tables":
                _print_result(
                    console,
                    con.execute(
                        "select table_schema, table_name, table_type from information_schema.tables "
                        "order by 1, 2"
                    ),
                )
                continue
            buffer.append(line)
            if stripped.endswith(";"):
                statement = "\n".join(buffer)
                buffer.clear()
                try:
                    _print_result(console, con.execute(statement))
                except duckdb.Error as exc:
                    console.print(f"[red]error:[/red] {exc}")
    finally:
        con.close()
