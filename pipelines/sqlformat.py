"""How `reservoir sql` prints a result: table, CSV, JSON or Markdown.

A terminal gets a rich table whose long values wrap instead of being cut to a few characters;
a pipe or a file gets a plain aligned table at full width (or the format asked for). Money
(DECIMAL) keeps every digit: JSON writes it as a string, CSV and the tables as printed by Python.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

FORMATS = ("table", "csv", "json", "markdown")
MAX_TABLE_ROWS = 200  # a table on a terminal shows this many; the other formats show all


@dataclass(frozen=True)
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)  # exact; a float would round money
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    return value


def _footer(result: Result, shown: int) -> str:
    more = f" (first {shown:,} shown)" if shown < len(result.rows) else ""
    return plural(len(result.rows), "row") + more


def _plain_table(result: Result, out: TextIO) -> None:
    cells = [[_text(v) for v in row] for row in result.rows]
    widths = [len(c) for c in result.columns]
    for row in cells:
        widths = [max(w, len(v)) for w, v in zip(widths, row, strict=True)]
    numeric = [
        all(isinstance(r[i], int | float | Decimal) or r[i] is None for r in result.rows)
        for i in range(len(result.columns))
    ]

    def line(values: list[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    print(line(result.columns), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in cells:
        print(line(row), file=out)
    print(_footer(result, len(result.rows)), file=out)


def _rich_table(result: Result, out: TextIO) -> None:
    console = Console(file=out)
    table = Table(show_lines=False)
    for name in result.columns:
        table.add_column(name, overflow="fold", min_width=min(len(name), 12))
    shown = result.rows[:MAX_TABLE_ROWS]
    for row in shown:
        table.add_row(*(_text(v) for v in row))
    console.print(table)
    console.print(f"[dim]{_footer(result, len(shown))}[/dim]")


def write_result(result: Result, out: TextIO, fmt: str = "table") -> None:
    """Print a result in one of FORMATS; a statement without rows prints `ok`."""
    if not result.columns:
        if fmt == "table":
            print("ok", file=out)
        return
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([["" if v is None else _text(v) for v in row] for row in result.rows])
    elif fmt == "json":
        records = [
            {c: _json_value(v) for c, v in zip(result.columns, row, strict=True)}
            for row in result.rows
        ]
        json.dump(records, out, indent=2, ensure_ascii=False)
        out.write("\n")
    elif fmt == "markdown":
        print("| " + " | ".join(result.columns) + " |", file=out)
        print("|" + "|".join("---" for _ in result.columns) + "|", file=out)
        for row in result.rows:
            values = [_text(v).replace("|", "\\|") for v in row]
            print("| " + " | ".join(values) + " |", file=out)
    elif out.isatty():
        _rich_table(result, out)
    else:
        _plain_table(result, out)
