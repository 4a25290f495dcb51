"""One warehouse built by the main job from the embedded sandbox (seed 7, small), shared by the
tests of `reservoir serve`, the feed and the snapshot: a copy of the e2e tests' run (their
xdist group, `e2e`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import pytest

from pipelines.settings import Settings
from tests.pipeline_runs import PipelineRun


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
def built(full_run: PipelineRun, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """A copy of the e2e tests' run (tests/pipeline_runs.py: the main job, seed 7, small; the
    same xdist group) without its Dagster history: these tests rebuild the warehouse and write
    beside it, the e2e tests read the original."""
    data_dir = Path(tmp_path_factory.mktemp("serve-data"))
    shutil.copytree(
        full_run.settings.data_dir,
        data_dir,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(full_run.settings.dagster_home.name),
    )
    settings = Settings(data_dir=data_dir)
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
