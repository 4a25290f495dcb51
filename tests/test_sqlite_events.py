"""The SQLite event log of the CLI's instance (`pipelines.sqlite_events`): the same files as
Dagster's own storage, so the UI and stock Dagster read every run, materialization and check it
records; its remembered answers follow deletions."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from pipelines import sqlite_events
from pipelines.instance import prepare_instance
from pipelines.partitions import PARTITIONS_NAME, TENANTS, ensure_partitions
from pipelines.settings import Settings
from pipelines.sqlite_events import PooledSqliteEventLogStorage


@dg.multi_asset(
    specs=[dg.AssetSpec("upstream"), dg.AssetSpec("downstream", deps=["upstream"])],
    check_specs=[dg.AssetCheckSpec("positive", asset="downstream")],
    partitions_def=TENANTS,
)
def _pair() -> object:
    yield dg.MaterializeResult(asset_key="upstream", metadata={"rows": 3})
    yield dg.MaterializeResult(
        asset_key="downstream",
        metadata={"rows": 2},
        check_results=[dg.AssetCheckResult(check_name="positive", passed=True)],
    )


@pytest.fixture
def instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dg.DagsterInstance:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "unused"))  # restored after the test
    monkeypatch.delenv("RESERVOIR_DAGSTER_PG_URL", raising=False)
    return prepare_instance(Settings(data_dir=tmp_path / "data"))


def test_runs_are_recorded_where_stock_dagster_reads_them(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)
    ensure_partitions(instance, ["default"])
    result = dg.materialize([_pair], instance=instance, partition_key="default")
    assert result.success

    # Dagster's own storage on the same folder (what `dagster dev` used before) sees it all.
    events = tmp_path / "data" / "dagster_home" / "history" / "runs"
    storage = sqlite_events.SqliteEventLogStorage(str(events))
    stock_records = storage.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("downstream")), limit=5
    ).records
    assert [r.run_id for r in stock_records] == [result.run_id]
    assert stock_records[0].partition_key == "default"
    assert stock_records[0].asset_materialization is not None
    assert stock_records[0].asset_materialization.metadata["rows"] == dg.IntMetadataValue(2)
    check = storage.get_asset_check_execution_history(
        dg.AssetCheckKey(dg.AssetKey("downstream"), "positive"), limit=5
    )
    assert [c.run_id for c in check] == [result.run_id]
    assert storage.get_logs_for_run(result.run_id)  # the run's own file

    # The instance itself, reloaded (a new process): the same records, run status included.
    again = dg.DagsterInstance.get()
    assert again.get_run_by_id(result.run_id).is_success  # type: ignore[union-attr]
    latest = again.get_latest_materialization_event(dg.AssetKey("upstream"))
    assert latest is not None and latest.run_id == result.run_id


def test_a_deleted_partition_is_gone(instance: dg.DagsterInstance) -> None:
    storage = instance.event_log_storage
    ensure_partitions(instance, ["a", "b"])
    assert instance.has_dynamic_partition(PARTITIONS_NAME, "a")
    instance.delete_dynamic_partition(PARTITIONS_NAME, "a")  # this process: at once
    assert not instance.has_dynamic_partition(PARTITIONS_NAME, "a")

    assert instance.has_dynamic_partition(PARTITIONS_NAME, "b")  # remembered now
    other = PooledSqliteEventLogStorage(storage._base_dir)  # another process's storage
    other.delete_dynamic_partition(PARTITIONS_NAME, "b")
    assert not other.has_dynamic_partition(PARTITIONS_NAME, "b")
    other.dispose()
    # Remembered answers last PARTITION_MEMORY_SECONDS; past them the file is asked again.
    storage._partitions_seen = {
        k: v - sqlite_events.PARTITION_MEMORY_SECONDS for k, v in storage._partitions_seen.items()
    }  # type: ignore[attr-defined]
    assert not instance.has_dynamic_partition(PARTITIONS_NAME, "b")


def test_wipe_closes_and_deletes_the_run_files(instance: dg.DagsterInstance) -> None:
    ensure_partitions(instance, ["default"])
    result = dg.materialize([_pair], instance=instance, partition_key="default")
    storage = instance.event_log_storage
    run_file = Path(storage.path_for_shard(result.run_id))  # type: ignore[attr-defined]
    assert run_file.exists()
    storage.wipe()
    assert not run_file.exists()
    assert not storage.get_logs_for_run(result.run_id)
    assert instance.get_latest_materialization_event(dg.AssetKey("upstream")) is None


def test_remembered_schema_answers_are_dagsters_and_follow_a_wipe(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    """The asset_keys columns and completed data migrations, once found, are not asked again;
    what they answer is what Dagster's own storage answers, and a wipe forgets them."""
    ensure_partitions(instance, ["default"])
    assert dg.materialize([_pair], instance=instance, partition_key="default").success
    storage = instance.event_log_storage
    stock = sqlite_events.SqliteEventLogStorage(storage._base_dir)  # type: ignore[attr-defined]
    assert storage._asset_key_cols_seen  # type: ignore[attr-defined]
    for column in storage._asset_key_cols_seen:  # type: ignore[attr-defined]
        assert stock.has_asset_key_col(column)
    for name in storage._indexes_seen:  # type: ignore[attr-defined]
        assert stock.has_secondary_index(name)
    assert storage.has_asset_key_index_cols() == stock.has_asset_key_index_cols()
    stock.dispose()
    storage.wipe()
    assert not storage._asset_key_cols_seen and not storage._indexes_seen  # type: ignore[attr-defined]
    # the storage still records runs after the wipe (which deleted the partitions too)
    ensure_partitions(instance, ["default"])
    again = dg.materialize([_pair], instance=instance, partition_key="default")
    latest = instance.get_latest_materialization_event(dg.AssetKey("downstream"))
    assert latest is not None and latest.run_id == again.run_id


def test_the_event_log_commits_without_an_fsync_each(instance: dg.DagsterInstance) -> None:
    """Every file of the event log (the index and a run's own, whose first connection
    predates its WAL mode) is in WAL mode with `synchronous=NORMAL` (1; SQLite's default, 2,
    syncs at every commit)."""
    ensure_partitions(instance, ["default"])
    result = dg.materialize([_pair], instance=instance, partition_key="default")
    assert result.success
    storage = instance.event_log_storage
    assert isinstance(storage, PooledSqliteEventLogStorage)
    for shard in ("index", result.run_id):
        with storage._connect(shard) as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1
