"""Normaliser workers write a streamed landing's parts themselves (`assets.worker_writes`): the
run's process adopts and commits them, and the lake holds what in-thread normalisation lands."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import assets.pages
import lake.parts
from assets import page_queue, workers
from assets.guard import RemovalRefused
from lake.parts import PART
from lake.store import Lake
from lake.tables import TABLES
from service.errors import ServiceError
from service.lazy import skim
from tests.assets.fake_service import reservation
from tests.assets.test_normalise_workers import SPEC, _bodies, _Clock, _reservations, _run


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets.pages, "datetime", _Clock)


@pytest.fixture
def workers_always(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every page goes to the pool; records each pool request (its size)."""
    monkeypatch.setattr(page_queue, "WORKER_MIN_BYTES", 0)
    requested: list[int] = []
    shared = workers.shared_pool

    def spy(count: int) -> workers.Pool:
        requested.append(count)
        return shared(count)

    monkeypatch.setattr(workers, "shared_pool", spy)
    return requested


def _rows(lake: Lake, table: str) -> pa.Table:
    data = pq.read_table(lake.table_dir(table))
    return data.sort_by([(name, "ascending") for name in TABLES[table].key])


@pytest.fixture
def main_writes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The parts this process writes (the workers' writes happen in their own processes)."""
    written: list[Path] = []
    write = lake.parts.write_part

    def spy(data: pa.Table, path: Path) -> None:
        written.append(path)
        write(data, path)

    monkeypatch.setattr(lake.parts, "write_part", spy)
    return written


def test_two_workers_write_the_parts_and_the_lake_holds_the_same_rows(
    tmp_path: Path, workers_always: list[int], main_writes: list[Path]
) -> None:
    spec = SPEC["reservations"]
    bodies = _bodies(_reservations())
    in_thread = _run(spec, tmp_path / "thread", bodies, 0, flush_rows=7)
    main_writes.clear()
    in_workers = _run(spec, tmp_path / "workers", bodies, 2, flush_rows=7)
    assert workers_always == [2]

    thread_lake, worker_lake = Lake(tmp_path / "thread"), Lake(tmp_path / "workers")
    for table in spec.tables:
        a, b = _rows(thread_lake, table.name), _rows(worker_lake, table.name)
        assert a.num_rows > 0, table.name
        assert b.equals(a), table.name
        # The batch's part names, numbered from 0 without a gap; every part in the report.
        names = [f.name for f in worker_lake.files(table.name)]
        assert all(PART.match(n) for n in names), names
        assert sorted(int(PART.match(n)["part"]) for n in names) == list(range(len(names)))  # type: ignore[index]
        assert sorted(in_workers.files[table.name]) == names
        assert in_workers.rows[table.name] == in_thread.rows[table.name] == b.num_rows
    # Quarantined records made the full batch a delta: the adopted parts were rewritten so.
    assert in_workers.batch_kind == "delta"
    assert any("-w" in p.name for p in main_writes)
    kinds = pq.read_table(worker_lake.table_dir("reservations")).column("_batch_kind")
    assert set(kinds.to_pylist()) == {"delta"}
    assert in_workers.records == in_thread.records
    assert in_workers.quarantined == in_thread.quarantined
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_failed_landing_deletes_the_parts_its_workers_staged(
    tmp_path: Path, workers_always: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = SPEC["reservations"]
    bodies = _bodies(_reservations())
    bodies[-2] = bodies[-2].replace(b'"R00037"', b'"R\xff0037"')  # refused by the full decode
    assert skim(bodies[-2], "reservationId", "/x") is not None
    with pytest.raises(ServiceError, match="not valid JSON"):
        _run(spec, tmp_path, bodies, 2, flush_rows=2)
    lake_ = Lake(tmp_path)
    for table in spec.tables:
        assert lake_.files(table.name) == [], table.name
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_full_batch_from_the_workers_is_written_there_and_still_guarded(
    tmp_path: Path, workers_always: list[int], main_writes: list[Path]
) -> None:
    spec = SPEC["reservations"]
    good = [reservation(rid) for rid in range(1, 41)]
    first = _run(spec, tmp_path, _bodies(good), 2, flush_rows=7)
    assert first.batch_kind == "full" and first.records == 40
    # Every part was written by the workers; this process only renamed them.
    assert main_writes == []
    assert sum(len(names) for names in first.files.values()) > len(spec.tables)
    with pytest.raises(RemovalRefused):
        _run(spec, tmp_path, _bodies(good[:10]), 2, flush_rows=7)
    assert Lake(tmp_path).current("reservations").num_rows == 40


def test_work_sent_to_a_worker_runs_in_that_worker() -> None:
    pool = workers.shared_pool(2)
    assert len(pool) == 2
    pids = [pool.submit_to(w, os.getpid).result() for w in (0, 1, 0, 1)]
    assert pids[0] == pids[2] and pids[1] == pids[3] and pids[0] != pids[1]
