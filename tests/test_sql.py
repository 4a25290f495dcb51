"""`reservoir sql`: every output format, full widths when piped, and the interactive shell's
dot commands, Ctrl-C and history in a pseudo-terminal."""

from __future__ import annotations

import csv
import io
import json
import os
import queue
import shlex
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import pytest

from tests.reliability.harness import ROOT, VENV_BIN

LONG = "Holiday park on the dunes with a very long name indeed"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    con.execute("create schema marts")
    con.execute("create table marts.parks (park_id integer, name varchar, revenue decimal(18, 2))")
    con.execute("comment on column marts.parks.revenue is 'Room revenue, VAT included.'")
    con.execute(f"insert into marts.parks values (1, '{LONG}', 1234.50), (2, 'Small', 0.10)")
    con.close()
    return tmp_path


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESERVOIR_")}
    return {**env, "RESERVOIR_DATA_DIR": str(data_dir), "COLUMNS": "80"}


def _sql(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV_BIN / "reservoir"), "sql", *args],
        env=_env(data_dir),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


QUERY = "select * from marts.parks order by park_id"


def test_piped_table_keeps_every_character(data_dir: Path) -> None:
    done = _sql(data_dir, QUERY)
    assert done.returncode == 0, done.stderr
    assert LONG in done.stdout and "1234.50" in done.stdout
    assert done.stdout.rstrip().endswith("2 rows")


def test_csv(data_dir: Path) -> None:
    done = _sql(data_dir, "--format", "csv", QUERY)
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows == [["park_id", "name", "revenue"], ["1", LONG, "1234.50"], ["2", "Small", "0.10"]]


def test_json_keeps_money_exact(data_dir: Path) -> None:
    done = _sql(data_dir, "-f", "json", QUERY)
    assert json.loads(done.stdout) == [
        {"park_id": 1, "name": LONG, "revenue": "1234.50"},
        {"park_id": 2, "name": "Small", "revenue": "0.10"},
    ]


def test_markdown(data_dir: Path) -> None:
    lines = _sql(data_dir, "-f", "markdown", QUERY).stdout.splitlines()
    assert lines[0] == "| park_id | name | revenue |" and lines[1] == "|---|---|---|"
    assert lines[2] == f"| 1 | {LONG} | 1234.50 |"


def test_one_row_is_singular_and_errors_go_to_stderr(data_dir: Path) -> None:
    assert _sql(data_dir, "select 1 as x").stdout.rstrip().endswith("1 row")
    bad = _sql(data_dir, "-f", "csv", "select nope from marts.parks")
    assert bad.returncode == 1 and bad.stdout == "" and "error:" in bad.stderr
    assert _sql(data_dir, "-f", "yaml", "select 1").returncode != 0


class Terminal:
    """`reservoir sql` on a pseudo-terminal made by `script` (util-linux), which makes it the
    shell's controlling terminal, so Ctrl-C typed there reaches it as SIGINT. (A pty set up
    with `preexec_fn` can deadlock in a multi-threaded test worker.)"""

    def __init__(self, data_dir: Path) -> None:
        command = shlex.join([str(VENV_BIN / "reservoir"), "sql"])
        self.proc = subprocess.Popen(
            ["script", "-qfec", command, "/dev/null"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_env(data_dir),
            cwd=ROOT,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.chunks: queue.Queue[bytes] = queue.Queue()
        stdout = self.proc.stdout
        reader = threading.Thread(
            target=lambda: [self.chunks.put(c) for c in iter(lambda: stdout.read1(65536), b"")],
            daemon=True,
        )
        reader.start()
        self.seen = ""

    def read_until(self, text: str, timeout: float = 90) -> str:  # a loaded CI machine
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not shown; got {self.seen[-2000:]!r}")
            try:
                self.seen += self.chunks.get(timeout=0.2).decode(errors="replace")
            except queue.Empty:
                continue
        out, self.seen = self.seen, self.seen[self.seen.index(text) + len(text) :]
        return out

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()

    def close(self) -> int:
        return self.proc.wait(timeout=30)


# In `make chaos`: under xdist on a clean-clone CI run the pseudo-terminal showed no prompt
# (it passed on the run before and alone); to be made deterministic (issue notes).
@pytest.mark.chaos
def test_the_shell_in_a_terminal(data_dir: Path) -> None:
    term = Terminal(data_dir)
    term.read_until("reservoir> ")
    term.type(".help\n")
    assert ".describe" in term.read_until("reservoir> ")
    term.type(".describe marts.parks\n")
    assert "Room revenue, VAT included." in term.read_until("reservoir> ")
    term.type(".schema marts.parks\n")
    assert "CREATE TABLE" in term.read_until("reservoir> ").upper()
    term.type(".mode csv\n")
    term.read_until("reservoir> ")
    term.type("select name\n")
    term.read_until("...> ")
    term.type("from marts.parks where park_id = 2;\n")
    assert "name\r\nSmall" in term.read_until("reservoir> ")
    term.type("select 'half a statement'")
    term.type("\x03")  # Ctrl-C: the statement goes, the shell stays
    term.read_until("reservoir> ")
    term.type(".nonsense\n")
    assert "unknown command" in term.read_until("reservoir> ")
    term.type(".quit\n")
    assert term.close() == 0
    history = (data_dir / ".sql_history").read_text()
    assert ".describe marts.parks" in history
