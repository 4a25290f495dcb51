"""`reservoir sql`: a read-only DuckDB shell on the warehouse, for analysts.

The connection is read-only so that a shell left open never blocks a scheduled build (builds
publish a new file; see docs/contracts.md section 4). Results print as a table (a wrapped rich
table on a terminal; a plain aligned table, never truncated, when piped), CSV, JSON or Markdown
(`pipelines.sqlformat`). The interactive shell has line editing and a history file (readline),
dot commands (`.help`), and Ctrl-C cancels the statement being typed or run, not the shell.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import duckdb

from pipelines.sqlformat import FORMATS, Result, write_result

HISTORY_FILE = ".sql_history"  # in the data directory, next to the warehouse
HISTORY_LENGTH = 1000

HELP = """\
Statements end with ';' and may span lines. Ctrl-C cancels the statement; Ctrl-D leaves.
  .tables              tables and views of every schema (staging, core, marts, ...)
  .schema [NAME]       the CREATE statement of a table or view (all of a schema: .schema marts)
  .describe NAME       columns of a table or view, with their types and descriptions
  .mode [FORMAT]       show or set the output: table, csv, json or markdown
  .help                this text
  .quit / .exit        leave"""


def _execute(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None
) -> Result:
    relation = con.execute(sql, params or [])
    if relation.description is None:
        return Result([], [])
    return Result([d[0] for d in relation.description], relation.fetchall())


class Shell:
    """One session on one read-only connection; `out` is where results go."""

    def __init__(self, con: duckdb.DuckDBPyConnection, out: TextIO, fmt: str = "table") -> None:
        self.con, self.out, self.format = con, out, fmt
        self.commands: dict[str, Callable[[str], None]] = {
            ".help": lambda _: self._say(HELP),
            ".tables": self._tables,
            ".schema": self._schema,
            ".describe": self._describe,
            ".mode": self._mode,
        }

    def _say(self, text: str) -> None:
        print(text, file=self.out)

    def _error(self, text: str) -> None:
        """Errors go to stderr, so that CSV or JSON on stdout stays parseable."""
        self.out.flush()
        print(text, file=sys.stderr, flush=True)

    def _show(self, result: Result) -> None:
        write_result(result, self.out, self.format)

    def run(self, sql: str) -> bool:
        """Run one statement and print its result; False (and a message) when it failed."""
        try:
            self._show(_execute(self.con, sql))
        except duckdb.Error as exc:
            self._error(f"error: {exc}")
            return False
        except KeyboardInterrupt:
            with contextlib.suppress(duckdb.Error):
                self.con.interrupt()
            self._error("query cancelled")
            return False
        return True

    def dot(self, line: str) -> bool:
        """Run a dot command; False when the line is not one."""
        name, _, arg = line.strip().partition(" ")
        command = self.commands.get(name)
        if command is None:
            if name.startswith("."):
                self._say(f"unknown command {name}; .help lists them")
                return True
            return False
        try:
            command(arg.strip().rstrip(";"))
        except duckdb.Error as exc:
            self._error(f"error: {exc}")
        return True

    def _tables(self, _: str) -> None:
        self._show(
            _execute(
                self.con,
                "select table_schema as schema, table_name as name, table_type as type "
                "from information_schema.tables order by 1, 2",
            )
        )

    def _split(self, name: str) -> tuple[str | None, str]:
        schema, _, table = name.rpartition(".")
        return (schema or None), table

    def _schema(self, name: str) -> None:
        where, params = "true", []
        if name:
            schema, table = self._split(name)
            if schema is None and table in self._schemas():
                where, params = "schema_name = ?", [table]  # `.schema marts`
            elif schema is None:
                where, params = "table_name = ?", [table]
            else:
                where, params = "schema_name = ? and table_name = ?", [schema, table]
        result = _execute(
            self.con,
            f"select sql from duckdb_tables() where {where} "
            "union all select sql from duckdb_views() where not internal and "
            + where.replace("table_name", "view_name"),
            [*params, *params],
        )
        if not result.rows:
            self._say(f"no table or view {name!r}; .tables lists them")
            return
        for (sql,) in result.rows:
            text = str(sql).rstrip()
            self._say(text if text.endswith(";") else text + ";")

    def _schemas(self) -> set[str]:
        return {r[0] for r in _execute(self.con, "select schema_name from duckdb_schemas()").rows}

    def _describe(self, name: str) -> None:
        if not name:
            self._say("usage: .describe NAME (e.g. .describe marts.revenue_daily)")
            return
        schema, table = self._split(name)
        where = "table_name = ?" + ("" if schema is None else " and schema_name = ?")
        params: list[object] = [table] if schema is None else [table, schema]
        result = _execute(
            self.con,
            "select schema_name as schema, column_name as column, data_type as type, "
            f"comment as description from duckdb_columns() where {where} "
            "order by schema_name, column_index",
            params,
        )
        if not result.rows:
            self._say(f"no table or view {name!r}; .tables lists them")
            return
        self._show(result)

    def _mode(self, fmt: str) -> None:
        if not fmt:
            self._say(f"output: {self.format} (one of {', '.join(FORMATS)})")
        elif fmt in FORMATS:
            self.format = fmt
        else:
            self._say(f"unknown output {fmt!r}; one of {', '.join(FORMATS)}")


def _readline(history: Path | None) -> None:
    """Line editing and a history file, where the platform has readline."""
    try:
        import readline
    except ImportError:  # pragma: no cover - not on Linux or macOS
        return
    if history is None:
        return
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(HISTORY_LENGTH)
    import atexit

    atexit.register(lambda: _save_history(readline, history))


def _save_history(readline: object, history: Path) -> None:
    with contextlib.suppress(OSError):
        readline.write_history_file(history)  # type: ignore[attr-defined]


def interactive(shell: Shell, warehouse: Path, history: Path | None) -> int:
    """The read-eval-print loop: statements end with ';', dot commands stand alone."""
    _readline(history)
    # Ctrl-C must reach the shell even when it was started with SIGINT ignored (a parent that
    # ignores it passes that on, and Python then installs no handler of its own).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    shell._say(
        f"reservoir sql on {warehouse} (read-only). Schemas: staging, core, marts. "
        "End statements with ';'. .help lists the commands."
    )
    buffer: list[str] = []
    while True:
        try:
            line = input("   ...> " if buffer else "reservoir> ")
        except EOFError:
            shell._say("")
            return 0
        except KeyboardInterrupt:  # cancels the statement being typed, as psql does
            shell._say("^C")
            buffer.clear()
            continue
        stripped = line.strip()
        if not buffer and stripped in {".quit", ".exit", "\\q"}:
            return 0
        if not buffer and stripped.startswith(".") and shell.dot(stripped):
            continue
        if not stripped and not buffer:
            continue
        buffer.append(line)
        if stripped.endswith(";"):
            statement = "\n".join(buffer)
            buffer.clear()
            shell.run(statement)


def run_sql(
    warehouse: Path,
    query: str | None,
    *,
    fmt: str = "table",
    out: TextIO | None = None,
    history: Path | None = None,
) -> int:
    """Run one query (exit code 1 if it fails), or the interactive shell."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        shell = Shell(con, out or sys.stdout, fmt)
        if query is not None:
            return 0 if shell.run(query) else 1
        return interactive(shell, warehouse, history)
    finally:
        con.close()
