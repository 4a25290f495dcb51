"""One warehouse built by the main job from the embedded sandbox (seed 7, small), shared by the
tests of `reservoir serve`, the feed and the snapshot (one xdist group)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import pytest
from rich.console import Console

from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import Settings
from sandbox.runner import SandboxSettings, run_sandbox


@dataclass
class Built:
    data_dir: Path
    warehouse: Path
    as_of: date
    _con: tuple[int, duckdb.DuckDBPyConnection] | None = None

    def rows(self, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
        """A query on the published warehouse (one read-only connection, reopened when a
        build has published a new file)."""
        inode = self.warehouse.stat().st_ino
        if self._con is None or self._con[0] != inode:
            if self._con is not None:
                self._con[1].close()
            self._con = (inode, duckdb.connect(str(self.warehouse), read_only=True))
        return self._con[1].execute(sql, params or []).fetchall()

    def close(self) -> None:
        if self._con is not None:
            self._con[1].close()
            self._con = None


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    data_dir = Path(tmp_path_factory.mktemp("serve-data"))
    settings = Settings(data_dir=data_dir)
    saved = os.environ.get("DAGSTER_HOME")
    with run_sandbox(SandboxSettings(seed=7, scale="small")) as handle:
        try:
            run_pipeline(
                settings,
                mode="full",
                quiet=True,
                console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
                target=ServiceTarget.from_sandbox(handle),
            )
        finally:
            if saved is None:
                os.environ.pop("DAGSTER_HOME", None)
            else:
                os.environ["DAGSTER_HOME"] = saved
    warehouse = settings.warehouse_path
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        (as_of,) = con.execute("select as_of from meta.build_settings").fetchone() or (None,)
    finally:
        con.close()
    assert isinstance(as_of, date)
    found = Built(data_dir, warehouse, as_of)
    yield found
    found.close()
