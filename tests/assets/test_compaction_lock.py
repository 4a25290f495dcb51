"""Compaction deletes the lake files it replaced; a warehouse build names files in its views and
reads them for seconds to a minute. The compaction lock keeps the two apart (lake/locks.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import dagster as dg
import pytest

from lake import locks as lake_locks
from lake.locks import LakeBusy, compaction_lock
from lake.store import Lake
from pipelines.jobs import compact_job
from pipelines.resources import LakeResource
from warehouse.build import build_warehouse


def test_readers_share_the_lock_and_compaction_waits_for_them(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir()
    with (
        compaction_lock(lake, shared=True),
        compaction_lock(lake, shared=True),
        pytest.raises(LakeBusy, match="a warehouse build is reading the lake"),
        compaction_lock(lake, shared=False, timeout=0.3),
    ):
        pass  # pragma: no cover
    with (  # free again once the readers are done
        compaction_lock(lake, shared=False, timeout=0.3),
        pytest.raises(LakeBusy, match="the lake is being compacted"),
        compaction_lock(lake, shared=True, timeout=0.3),
    ):
        pass  # pragma: no cover


def test_a_reader_of_a_lake_that_does_not_exist_makes_nothing(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    with compaction_lock(lake, shared=True) as path:
        assert path is None
    assert not lake.root.exists()


def test_a_warehouse_build_waits_for_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lake_locks, "DEFAULT_LOCK_TIMEOUT", 0.3)
    lake = Lake(tmp_path / "lake")
    with compaction_lock(lake, shared=False), pytest.raises(LakeBusy, match="being compacted"):
        build_warehouse(tmp_path)
    assert not list(tmp_path.glob("warehouse.duckdb*"))  # nothing half-built is left


def test_the_compact_job_waits_for_a_warehouse_build(tmp_path: Path) -> None:
    resource = LakeResource(data_dir=str(tmp_path))
    lake = resource.lake()
    lake.root.mkdir(parents=True)
    held = threading.Event()
    release = threading.Event()

    def build() -> None:  # a build that holds the lake for a while
        with compaction_lock(lake, shared=True):
            held.set()
            release.wait(10)

    reader = threading.Thread(target=build)
    reader.start()
    assert held.wait(10)
    finished: list[float] = []

    def compact() -> None:
        result = compact_job.execute_in_process(
            resources={"lake": resource}, instance=dg.DagsterInstance.ephemeral()
        )
        assert result.success
        finished.append(time.monotonic())

    compactor = threading.Thread(target=compact)
    compactor.start()
    time.sleep(1.0)
    assert not finished  # compaction is still waiting for the build
    released_at = time.monotonic()
    release.set()
    reader.join(10)
    compactor.join(60)
    assert finished and finished[0] >= released_at
