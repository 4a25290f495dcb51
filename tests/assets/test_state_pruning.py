"""Run state (`lake/_state/<name>/`) stays bounded: compaction keeps the newest files of each."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

from lake.parts import new_batch_id
from lake.state import CURSOR_STATE, Cursor, next_batch_id, read_cursor, write_cursor
from lake.store import Lake
from pipelines.jobs import compact_job
from pipelines.resources import LakeResource

START = datetime(2026, 1, 1, tzinfo=UTC)


def _runs(lake: Lake, n: int) -> list[str]:
    """n runs' worth of state: a cursor and a pending row per run, batch ids one minute apart."""
    ids = []
    for i in range(n):
        batch = new_batch_id(START + timedelta(minutes=i))
        write_cursor(lake, batch, Cursor(event_id=i + 1, batch_id=batch))
        lake.write_state("warehouse_pending", batch, {"tables": f"t{i}", "batch_id": batch})
        ids.append(batch)
    return ids


def test_prune_keeps_the_newest_files_of_each_state(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    ids = _runs(lake, 30)
    before = (read_cursor(lake), lake.read_state("warehouse_pending"), next_batch_id(lake))

    removed = lake.prune_state(keep=5)

    assert removed == {CURSOR_STATE: 25, "warehouse_pending": 25}
    for name in (CURSOR_STATE, "warehouse_pending"):
        kept = sorted(p.stem for p in (lake.root / "_state" / name).glob("*.parquet"))
        assert kept == ids[-5:]
    after = (read_cursor(lake), lake.read_state("warehouse_pending"), next_batch_id(lake))
    assert after[:2] == before[:2]
    assert read_cursor(lake).event_id == 30  # type: ignore[union-attr]
    assert after[2] > ids[-1]  # new batch ids still sort after every recorded one
    assert (lake.root / "_state").is_dir()
    assert lake.prune_state(keep=5) == {}  # nothing more to do
    with pytest.raises(ValueError, match="at least 1"):
        lake.prune_state(keep=0)


def test_compact_job_prunes_state_history(tmp_path: Path) -> None:
    resource = LakeResource(data_dir=str(tmp_path), state_history=3)
    lake = resource.lake()
    _runs(lake, 10)
    instance = dg.DagsterInstance.ephemeral()

    result = compact_job.execute_in_process(resources={"lake": resource}, instance=instance)

    assert result.success
    (output,) = [e for e in result.all_events if e.is_successful_output]
    metadata = {k: v.value for k, v in output.step_output_data.metadata.items()}
    assert metadata["state_files_removed"] == {CURSOR_STATE: 7, "warehouse_pending": 7}
    assert len(list((lake.root / "_state" / CURSOR_STATE).glob("*.parquet"))) == 3
    assert read_cursor(lake).event_id == 10  # type: ignore[union-attr]
    logs = [e.user_message for e in instance.all_logs(result.run_id)]
    assert any("pruned state history to the newest 3 files each" in m for m in logs)
