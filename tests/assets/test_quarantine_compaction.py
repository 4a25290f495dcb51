"""Folding the quarantine: every row kept, stable order, crash-safe swap, retention, the job."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lake.compaction import compact_quarantine
from lake.parts import new_batch_id
from lake.schema import QUARANTINE_SCHEMA
from lake.store import Lake
from pipelines.jobs import compact_job
from pipelines.lake_assets import lake_assets, spec_keys
from pipelines.resources import LakeResource
from tests.assets.fake_service import FakeServiceResource, default_fixture, register, reservation
from tests.partitioned import materialize
from tests.reliability.harness import quarantined

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TABLE = "reservations"


def _batch(hours: int) -> str:
    return new_batch_id(T0 + timedelta(hours=hours), f"{hours:08x}")


def _quarantine(
    lake: Lake,
    batch: str,
    ids: list[int],
    *,
    at: datetime | None = None,
    flush_rows: int = 50_000,
) -> list[Path]:
    """One run's quarantine of `reservations`: one bad record per id (one part per flush)."""
    writer = lake.quarantine_writer(TABLE, batch, flush_rows=flush_rows)
    for rid in ids:
        row = {
            "_batch_id": batch,
            "_extracted_at": at or T0,
            "_source": "/reservations",
            "table": TABLE,
            "reason": f"reservations.status: unknown code ({rid})",
            "record": orjson.dumps({"reservationId": rid, "status": 77}).decode(),
        }
        writer.add(pa.Table.from_pylist([row], schema=QUARANTINE_SCHEMA))
    return writer.commit()


def _rows(lake: Lake, table: str = TABLE) -> list[dict[str, Any]]:
    """What a reader sees: every row of every quarantine file it is told to read, in order."""
    return [r for f in lake.quarantine_files(table) for r in pq.read_table(f).to_pylist()]


def _multiset(rows: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r.values()) for r in rows)


def _summary(data_dir: Path) -> tuple[int, int, dict[str, int], dict[str, list[Any]]]:
    """The reliability harness's reader (records, reasons, quarantined keys)."""
    q = quarantined(data_dir)
    keys = {t: sorted(k) for t, k in q.keys.items()}
    return q.records, q.without_reason, dict(q.reasons), keys


def _seed(lake: Lake) -> list[Path]:
    """Seven runs, written out of order, one in three parts, one extracted before the rest."""
    files = []
    files += _quarantine(lake, _batch(5), [50, 51], at=T0 + timedelta(hours=5))
    files += _quarantine(lake, _batch(1), [10, 11, 12], at=T0 + timedelta(hours=1), flush_rows=1)
    files += _quarantine(lake, _batch(3), [30], at=T0 + timedelta(hours=3))
    files += _quarantine(lake, _batch(2), [20], at=T0 + timedelta(hours=1))  # same time as 1
    files += _quarantine(lake, _batch(4), [40, 41], at=T0 + timedelta(hours=4))
    files += _quarantine(lake, _batch(6), [60], at=T0)  # read before the earlier runs
    files += _quarantine(lake, _batch(7), [10], at=T0 + timedelta(hours=7))  # 10 again, later
    return files


def _order(rows: list[dict[str, Any]]) -> list[int]:
    return [orjson.loads(r["record"])["reservationId"] for r in rows]


# ---------------------------------------------------------------------------- folding


def test_many_files_fold_into_one_with_every_row_in_a_stable_order(
    lake: Lake, tmp_path: Path
) -> None:
    files = _seed(lake)
    assert len(lake.quarantine_files(TABLE)) == len(files) == 9
    before, summary = _rows(lake), _summary(tmp_path)
    assert summary[0] == 11

    result = compact_quarantine(lake, TABLE, min_files=8)

    assert result.folded and result.files_before == 9 and result.files_after == 1
    assert result.rows_before == result.rows == 11 and result.expired == result.replaced == 0
    assert sorted(result.removed) == sorted(f.name for f in files)
    (folded,) = lake.quarantine_files(TABLE)
    assert folded.name.endswith("-folded.parquet")
    assert sorted(p.name for p in lake.quarantine_dir(TABLE).iterdir()) == [folded.name]
    assert pq.read_schema(folded) == QUARANTINE_SCHEMA
    after = _rows(lake)
    assert _multiset(after) == _multiset(before)  # every row, duplicates of key 10 included
    assert _summary(tmp_path) == summary
    # by _extracted_at, then batch; a batch's parts and rows keep their order
    assert _order(after) == [60, 10, 11, 12, 20, 30, 40, 41, 50, 51, 10]


def test_folding_again_keeps_every_row_and_the_order(lake: Lake, tmp_path: Path) -> None:
    _seed(lake)
    compact_quarantine(lake, TABLE)
    _quarantine(lake, _batch(8), [80], at=T0 + timedelta(hours=8))
    _quarantine(lake, _batch(0), [1], at=T0)  # extracted before everything folded so far
    before, summary = _rows(lake), _summary(tmp_path)

    result = compact_quarantine(lake, TABLE)

    assert result.folded and result.files_before == 3 and result.rows == 13
    assert len(lake.quarantine_files(TABLE)) == 1
    assert _multiset(_rows(lake)) == _multiset(before) and _summary(tmp_path) == summary
    assert _order(_rows(lake)) == [1, 60, 10, 11, 12, 20, 30, 40, 41, 50, 51, 10, 80]


def test_below_the_threshold_nothing_is_touched(lake: Lake) -> None:
    files = _quarantine(lake, _batch(1), [1]) + _quarantine(lake, _batch(2), [2])
    result = compact_quarantine(lake, TABLE, min_files=3)
    assert not result.folded and result.removed == [] and result.files_after == 2
    assert lake.quarantine_files(TABLE) == sorted(files)


def test_tables_without_quarantine_are_left_alone(lake: Lake) -> None:
    assert lake.quarantine_tables() == []
    result = compact_quarantine(lake, "units")
    assert not result.folded and result.rows_before == 0
    assert not lake.quarantine_dir("units").exists()


# ---------------------------------------------------------------------------- crash safety


@pytest.mark.parametrize("deleted_before_crash", [0, 1, 4, 8])
def test_crash_after_the_rename_never_double_counts_and_the_next_run_repairs(
    lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deleted_before_crash: int
) -> None:
    files = _seed(lake)
    before, summary = _rows(lake), _summary(tmp_path)
    real_unlink = Path.unlink
    calls = {"n": 0}

    def crashing_unlink(self: Path, missing_ok: bool = False) -> None:
        if calls["n"] >= deleted_before_crash:
            raise OSError("simulated crash while deleting the folded files")
        calls["n"] += 1
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", crashing_unlink)
    with pytest.raises(OSError, match="simulated crash"):
        compact_quarantine(lake, TABLE)
    monkeypatch.setattr(Path, "unlink", real_unlink)

    on_disk = sorted(lake.quarantine_dir(TABLE).glob("*.parquet"))
    assert len(on_disk) == 1 + len(files) - deleted_before_crash  # new file + old leftovers
    (visible,) = lake.quarantine_files(TABLE)  # the leftovers are not read
    assert visible.name.endswith("-folded.parquet")
    assert _multiset(_rows(lake)) == _multiset(before)
    assert _summary(tmp_path) == summary

    repaired = compact_quarantine(lake, TABLE)

    assert len(repaired.leftovers) == len(files) - deleted_before_crash
    assert not repaired.folded  # one visible file: nothing to fold
    assert sorted(lake.quarantine_dir(TABLE).iterdir()) == [visible]
    assert _multiset(_rows(lake)) == _multiset(before) and _summary(tmp_path) == summary


def test_crash_before_the_rename_leaves_the_old_files(
    lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _seed(lake)
    before, summary = _rows(lake), _summary(tmp_path)

    def crash(tmp: Path, final: Path) -> None:
        raise OSError("simulated crash before the rename")

    monkeypatch.setattr("lake.compaction.replace_atomically", crash)
    with pytest.raises(OSError, match="simulated crash"):
        compact_quarantine(lake, TABLE)
    monkeypatch.undo()

    assert lake.quarantine_files(TABLE) == sorted(files)
    assert _rows(lake) == before and _summary(tmp_path) == summary
    result = compact_quarantine(lake, TABLE)
    assert result.folded and result.rows == len(before)
    assert _multiset(_rows(lake)) == _multiset(before)


def test_crash_while_refolding_keeps_the_superseded_fold_unread(
    lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(lake)
    compact_quarantine(lake, TABLE)
    (first,) = lake.quarantine_files(TABLE)
    _quarantine(lake, _batch(8), [80], at=T0 + timedelta(hours=8))
    before, summary = _rows(lake), _summary(tmp_path)

    monkeypatch.setattr(Path, "unlink", lambda *a, **k: (_ for _ in ()).throw(OSError("crash")))
    with pytest.raises(OSError):
        compact_quarantine(lake, TABLE)
    monkeypatch.undo()

    assert first.exists() and first not in lake.quarantine_files(TABLE)
    assert len(lake.quarantine_files(TABLE)) == 1
    assert _multiset(_rows(lake)) == _multiset(before) and _summary(tmp_path) == summary
    assert len(compact_quarantine(lake, TABLE).leftovers) == 2
    assert _multiset(_rows(lake)) == _multiset(before)


def test_a_batch_rewritten_after_the_fold_replaces_its_folded_rows(lake: Lake) -> None:
    """A re-executed run reuses its batch id; its new quarantine replaces the earlier attempt's."""
    rerun = _batch(2)
    _quarantine(lake, _batch(1), [1])
    _quarantine(lake, rerun, [2, 3], at=T0 + timedelta(hours=2))
    compact_quarantine(lake, TABLE)
    _quarantine(lake, rerun, [3], at=T0 + timedelta(hours=3))  # the re-run, one bad record now
    assert len(lake.quarantine_files(TABLE)) == 2  # a new file, not mistaken for a leftover

    result = compact_quarantine(lake, TABLE)

    assert result.folded and result.replaced == 2 and result.rows == 2
    assert _order(_rows(lake)) == [1, 3]


# ---------------------------------------------------------------------------- retention


def test_retention_drops_only_rows_older_than_the_limit(lake: Lake, tmp_path: Path) -> None:
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    _quarantine(lake, _batch(1), [1, 2], at=now - timedelta(days=40))
    _quarantine(lake, _batch(2), [3], at=now - timedelta(days=30, seconds=1))
    _quarantine(lake, _batch(3), [4], at=now - timedelta(days=30))  # exactly at the limit: kept
    _quarantine(lake, _batch(4), [5, 6], at=now - timedelta(hours=1))

    result = compact_quarantine(lake, TABLE, retention_days=30, now=now)

    assert result.folded and result.rows_before == 6 and result.expired == 3 and result.rows == 3
    assert _order(_rows(lake)) == [4, 5, 6]
    assert quarantined(tmp_path).records == 3


def test_retention_folds_even_below_the_threshold(lake: Lake) -> None:
    now = datetime(2026, 3, 1, tzinfo=UTC)
    _quarantine(lake, _batch(1), [1, 2], at=now - timedelta(days=10))
    _quarantine(lake, _batch(2), [3], at=now)
    kept = compact_quarantine(lake, TABLE, min_files=8, retention_days=30, now=now)
    assert not kept.folded and kept.expired == 0 and len(lake.quarantine_files(TABLE)) == 2

    later = now + timedelta(days=25)  # the first run's rows are 35 days old now
    result = compact_quarantine(lake, TABLE, min_files=8, retention_days=30, now=later)
    assert result.folded and result.expired == 2 and _order(_rows(lake)) == [3]

    gone = compact_quarantine(lake, TABLE, retention_days=30, now=later + timedelta(days=30))
    assert gone.folded and gone.expired == 1 and _rows(lake) == []
    assert len(lake.quarantine_files(TABLE)) == 1  # an empty fold, still hiding what it replaced


def test_retention_must_be_at_least_a_day(lake: Lake) -> None:
    with pytest.raises(ValueError, match="at least 1 day"):
        compact_quarantine(lake, TABLE, retention_days=0)


# ---------------------------------------------------------------------------- the job


def _bad_fixture(name: str) -> str:
    data = default_fixture()
    data["reservation_details"][1] = reservation(2, status=77)
    return register(name, data)


def _resource(path: Path, **kw: Any) -> LakeResource:
    return LakeResource(
        data_dir=str(path), availability_start="2026-06-01", availability_horizon_days=35, **kw
    )


def _extract(resource: LakeResource, fixture: str) -> None:
    result = materialize(
        [lake_assets],
        selection=spec_keys("reservations", "units"),
        resources={"service": FakeServiceResource(fixture=fixture), "lake": resource},
    )
    assert result.success


def _run_compaction(
    resource: LakeResource,
) -> tuple[dict[str, Any], list[str]]:
    instance = dg.DagsterInstance.ephemeral()
    result = compact_job.execute_in_process(resources={"lake": resource}, instance=instance)
    assert result.success
    (output,) = [e for e in result.all_events if e.is_successful_output]
    metadata = {k: v.value for k, v in output.step_output_data.metadata.items()}
    logs = [e.user_message for e in instance.all_logs(result.run_id)]
    return metadata, logs


def test_compact_job_folds_quarantine_and_reports_it(tmp_path: Path) -> None:
    resource = _resource(tmp_path, quarantine_threshold=0.5, compact_min_files=2)
    fixture = _bad_fixture("quarantine-fold")
    for _ in range(3):
        _extract(resource, fixture)
    lake = resource.lake()
    assert len(lake.quarantine_files(TABLE)) == 3
    before, summary = _rows(lake), _summary(tmp_path)
    assert summary[0] == 3 and summary[3] == {TABLE: [(2,)]}

    metadata, logs = _run_compaction(resource)

    assert len(lake.quarantine_files(TABLE)) == 1
    assert _multiset(_rows(lake)) == _multiset(before) and _summary(tmp_path) == summary
    assert metadata["quarantine_folded"] == {
        TABLE: {
            "files_before": 3,
            "rows_before": 3,
            "rows_kept": 3,
            "rows_expired": 0,
            "rows_replaced": 0,
            "leftovers_removed": 0,
        }
    }
    assert metadata["quarantine_files_removed"] == 3
    assert metadata["quarantine_rows_expired"] == 0
    assert metadata["quarantine_retention_days"] == "keep everything"
    assert metadata["tables_compacted"]["reservations"] == 3
    assert f"folded quarantine {TABLE}: 3 files -> 1 (3 of 3 rows kept)" in logs


def test_compact_job_applies_the_retention(tmp_path: Path) -> None:
    resource = _resource(tmp_path, compact_min_files=8, quarantine_retention_days=30)
    lake = resource.lake()
    now = datetime.now(UTC)
    _quarantine(lake, _batch(1), [1, 2], at=now - timedelta(days=31))
    _quarantine(lake, _batch(2), [3], at=now - timedelta(days=2))

    metadata, logs = _run_compaction(resource)

    assert _order(_rows(lake)) == [3]
    assert metadata["quarantine_rows_expired"] == 2 and metadata["quarantine_rows_kept"] == 1
    assert metadata["quarantine_retention_days"] == 30
    assert metadata["quarantine_folded"][TABLE]["rows_expired"] == 2
    assert (
        f"folded quarantine {TABLE}: 2 files -> 1 (1 of 3 rows kept; 2 older than 30 days "
        "dropped)" in logs
    )


def test_compact_job_repairs_an_interrupted_fold_and_reports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resource = _resource(tmp_path, compact_min_files=2)
    lake = resource.lake()
    files = _seed(lake)
    before = _rows(lake)
    with monkeypatch.context() as patch:
        patch.setattr(Path, "unlink", lambda *a, **k: (_ for _ in ()).throw(OSError("crash")))
        with pytest.raises(OSError):
            compact_quarantine(lake, TABLE)

    metadata, logs = _run_compaction(resource)

    assert metadata["quarantine_leftovers_removed"] == len(files)
    assert metadata["quarantine_folded"] == {} and metadata["quarantine_files_removed"] == 0
    assert any(f"removed {len(files)} files an interrupted compaction" in m for m in logs)
    assert len(list(lake.quarantine_dir(TABLE).iterdir())) == 1
    assert _multiset(_rows(lake)) == _multiset(before)
