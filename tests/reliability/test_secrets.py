"""A recognisable client secret never reaches a log, the lake, the warehouse or Dagster storage.

The sandbox is started with a canary secret and the pipeline is pointed at it through the
RESERVOIR_* variables, as in production. Afterwards the canary (and its base64 forms) must not
appear in the run's stdout/stderr, in Python logging at DEBUG, or in any file under the data
directory (Parquet, DuckDB, Dagster's run and event storage, its compressed snapshots included).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import secrets
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.reliability.conftest import SCALE, SEED, Figures
from tests.reliability.harness import Target, run_cli, run_extraction

pytestmark = [pytest.mark.sandbox]
CI_SELECTION = ("distribution_channels", "locations", "customers")


def needles(secret: str) -> list[bytes]:
    """The secret as bytes, and each base64 alignment of it (as in a Basic auth header)."""
    raw = secret.encode()
    out = [raw]
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw)[4 if shift else 0 :]
        out.append(encoded[:-4])  # the stable middle, whatever surrounds it
    return out


def leaks(data: bytes, secret: str) -> bool:
    return any(n in data for n in needles(secret))


def _sqlite_values(path: Path) -> Iterator[bytes]:
    """Every text and blob value of a SQLite file, blobs also zlib-decompressed (Dagster stores
    job and execution-plan snapshots compressed, where a raw byte scan cannot see a secret)."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
    except sqlite3.DatabaseError:
        return
    try:
        for table in tables:
            for row in con.execute(f'select * from "{table}"'):
                for value in row:
                    if isinstance(value, str):
                        yield value.encode()
                    elif isinstance(value, bytes):
                        yield value
                        with contextlib.suppress(zlib.error):
                            yield zlib.decompress(value)
    finally:
        con.close()


def file_leaks(path: Path, secret: str) -> bool:
    data = path.read_bytes()
    if leaks(data, secret):
        return True
    if data.startswith(b"SQLite format 3"):
        return any(leaks(v, secret) for v in _sqlite_values(path))
    return False


def scan(root: Path, secret: str) -> tuple[int, list[Path]]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), [p for p in files if file_leaks(p, secret)]


@pytest.fixture
def canary_sandbox(world) -> Iterator[SandboxHandle]:  # type: ignore[no-untyped-def]
    secret = f"S3CRET-canary-{secrets.token_hex(8)}"
    settings = SandboxSettings(seed=SEED, scale=SCALE, client_secret=secret)
    with run_sandbox(settings, world=world) as handle:
        yield handle


def test_secret_is_not_in_python_logging_or_lake(
    canary_sandbox: SandboxHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    figures: Figures,
) -> None:
    secret = canary_sandbox.client_secret
    with caplog.at_level(logging.DEBUG):
        run_extraction(Target.of(canary_sandbox), tmp_path)
    assert caplog.records, "nothing was logged at DEBUG; the check would be vacuous"
    text = "\n".join(f"{r.getMessage()} {r.args!r} {r.__dict__!r}" for r in caplog.records).encode()
    assert not leaks(text, secret)
    count, found = scan(tmp_path, secret)
    figures.secret_files_scanned += count
    figures.secret_leaks += len(found)
    assert count > 20 and not found, found


@pytest.mark.parametrize(
    "select",
    [
        pytest.param(CI_SELECTION, id="ci-selection"),
        pytest.param((), id="full-run", marks=[pytest.mark.chaos, pytest.mark.slow]),
    ],
)
def test_secret_is_not_in_reservoir_run_output_or_files(
    select: tuple[str, ...], canary_sandbox: SandboxHandle, tmp_path: Path, figures: Figures
) -> None:
    secret = canary_sandbox.client_secret
    env = Target.of(canary_sandbox).env(tmp_path / "data")
    args = ["run", "--mode", "full", *(a for name in select for a in ("-s", name))]
    done = run_cli(args, env, timeout=900)
    output = (done.stdout + done.stderr).encode()
    count, found = scan(tmp_path / "data", secret)
    figures.secret_files_scanned += count
    figures.secret_leaks += len(found) + leaks(output, secret)
    assert not leaks(output, secret)
    assert not found, found
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "data" / "dagster_home").is_dir()
    assert count >= 10  # lake batches, Dagster run and event storage at least
