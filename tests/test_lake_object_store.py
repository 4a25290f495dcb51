"""The lake on object storage (RESERVOIR_LAKE_URL=s3://...): `reservoir run`'s main job against
the embedded sandbox commits every lake table as a Delta Lake table on a local S3-compatible
server (moto), the marts equal the sandbox's ground truth, a data directory started empty gets
the same lake back from the store, a re-executed batch replaces its rows instead of adding
them, DuckDB in another process and pyarrow read every table from the store
(docs/table-formats.md), and (`make chaos`) a `reservoir run` killed with SIGKILL while it
commits to the store, then run again, loses nothing and doubles nothing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from rich.console import Console

from lake.remote import DeltaRemote
from lake.store import Lake
from lake.tables import TABLES
from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import Settings, SettingsError
from sandbox.runner import SandboxSettings, run_sandbox
from tests.s3_server import ACCESS_KEY, REGION, SECRET_KEY, make_bucket, s3_server
from tests.truth import nights_mismatch

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

BUCKET = "lake"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with s3_server() as url:
        make_bucket(url, BUCKET)
        yield url


@pytest.fixture
def aws_env(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("DAGSTER_HOME", "unused")  # restored after the run sets its own
    return endpoint


def test_a_lake_url_that_is_not_s3_is_refused_with_what_to_do(tmp_path: Path) -> None:
    env = {"RESERVOIR_DATA_DIR": str(tmp_path), "RESERVOIR_LAKE_URL": "/mnt/lake"}
    with pytest.raises(SettingsError, match=r"s3://bucket/prefix.*unset it"):
        Settings.from_env(env)


def _channels(batch: str, ids: list[int], kind: str) -> Any:
    """Rows of `distribution_channels` as one batch writes them."""
    import pyarrow as pa

    schema = TABLES["distribution_channels"].arrow_schema()
    data: dict[str, list[Any]] = {n: [None] * len(ids) for n in schema.names}
    data["distribution_channel_id"] = list(ids)
    data["_batch_id"] = [batch] * len(ids)
    data["_batch_kind"] = [kind] * len(ids)
    data["_is_deleted"] = [False] * len(ids)
    data["_extracted_at"] = [datetime(2026, 11, 1, tzinfo=UTC)] * len(ids)
    data["_source"] = ["/distributionchannels"] * len(ids)
    return pa.Table.from_pydict(data).cast(schema)


def test_a_rerun_of_a_batch_replaces_its_rows(tmp_path: Path, aws_env: str) -> None:
    url = f"s3://{BUCKET}/rerun"
    lake = Lake(tmp_path / "lake", DeltaRemote(url))
    table = TABLES["distribution_channels"]
    rows = _channels

    first = lake.writer(table, "20261101T000000Z-aaaaaaaa")
    first.add(rows("20261101T000000Z-aaaaaaaa", [1, 2, 3], "full"))
    first.commit()
    for _ in range(2):  # the second batch, committed twice (a re-executed run)
        again = lake.writer(table, "20261102T000000Z-bbbbbbbb")
        again.add(rows("20261102T000000Z-bbbbbbbb", [3, 4], "delta"))
        again.commit()
    con = duckdb.connect()
    files = [str(f) for f in lake.files(table.name)]
    counts = dict(
        con.execute(
            "select _batch_id, count(*) from read_parquet($f) group by 1", {"f": files}
        ).fetchall()
    )
    assert counts == {"20261101T000000Z-aaaaaaaa": 3, "20261102T000000Z-bbbbbbbb": 2}
    assert sorted(lake.current_ids(table.name, "distribution_channel_id")) == [1, 2, 3, 4]


READ_FROM_STORE = """
import json, os, sys
import duckdb
from lake.remote import DeltaRemote
from deltalake import DeltaTable
remote = DeltaRemote(sys.argv[1])
counts = {}
for rel in remote.tables():
    if rel.startswith("_"):
        continue
    dataset = DeltaTable(remote.uri(rel), storage_options=remote.options).to_pyarrow_dataset()
    duck = duckdb.execute("select count(*) from dataset").fetchone()[0]
    counts[rel] = [duck, dataset.count_rows()]
print(json.dumps(counts), flush=True)
# deltalake's runtime threads can still be running when the interpreter tears down, and abort
# it ("terminate called without an active exception", delta-io/delta-rs#2184): the counts are
# out, so end as `reservoir` itself does, without the teardown.
os._exit(0)
"""


def _other_readers_agree(url: str, lake_dir: Path) -> None:
    """Two other readers, in another process: DuckDB (through deltalake's Arrow dataset) and
    pyarrow's dataset reader count every table the same as the store holds and the cache has."""
    import json
    import subprocess
    import sys

    from tests.reliability.harness import ROOT

    read = subprocess.run(
        [sys.executable, "-c", READ_FROM_STORE, url],
        env={**os.environ},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert read.returncode == 0, read.stderr[-3000:]
    counts = json.loads(read.stdout)
    assert set(counts) == {rel for rel in DeltaRemote(url).tables() if not rel.startswith("_")}
    local = Lake(lake_dir)
    for rel, (duck, arrow) in counts.items():
        files = local.files(rel)
        with duckdb.connect() as con:  # not the module's default connection, which tests share
            on_disk = con.execute(
                "select count(*) from read_parquet($f)", {"f": [str(f) for f in files]}
            ).fetchone()[0]
        assert duck == arrow == on_disk, rel


# A run killed mid-commit, on the store: `make chaos` (a minute on 2 cores). The default suite
# kills a run on the local lake (tests/reliability/test_kill_restart.py) and re-executes a batch
# on the store (test_a_rerun_of_a_batch_replaces_its_rows); the other readers are asserted on
# the main job's store below.
@pytest.mark.chaos
def test_sigkill_during_commits_to_the_store_then_a_rerun_loses_and_doubles_nothing(
    tmp_path: Path, aws_env: str
) -> None:
    import random
    import signal
    import subprocess
    import sys
    import time

    from tests.reliability.harness import ROOT, run_cli

    url = f"s3://{BUCKET}/killed"
    data = tmp_path / "data"
    with run_sandbox(SandboxSettings(seed=11, scale="small")) as handle:
        env = {
            **os.environ,
            "RESERVOIR_DATA_DIR": str(data),
            "RESERVOIR_LAKE_URL": url,
            "RESERVOIR_BASE_URL": handle.base_url,
            "RESERVOIR_CLIENT_ID": handle.client_id,
            "RESERVOIR_CLIENT_SECRET": handle.client_secret,
            "RESERVOIR_SCOPE": handle.scope,
        }
        reservoir = str(Path(sys.executable).parent / "reservoir")
        proc = subprocess.Popen(
            [reservoir, "run", "-q", "--mode", "full"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            # Wait (bounded) for the first table committed to the store, then kill the run a
            # seeded-random moment later, while the other tables are landing and committing.
            for _ in range(1200):
                if list((data / "lake").glob("*/.delta-files")) or proc.poll() is not None:
                    break
                time.sleep(0.1)
            time.sleep(random.Random(11).uniform(0.0, 1.5))
            assert proc.poll() is None, "the run ended before it could be killed"
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=60)
        committed = DeltaRemote(url).tables()
        assert committed  # the kill came after some commits, not before any

        done = run_cli(["run", "-q", "--mode", "full"], env)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        truth = handle.world.ground_truth()["nights"]
        world_reservations = len(handle.world.keys("reservations"))

    bad = nights_mismatch(data / "warehouse.duckdb", truth)
    assert bad.empty, bad.head(20).to_string()
    # The store itself, read into an empty folder: every key once in its latest batch, and the
    # reservations all there.
    fresh = Lake(tmp_path / "fresh" / "lake", DeltaRemote(url))
    fresh.pull()
    for name in TABLES:
        assert fresh.duplicate_keys(name) == 0, name
    assert fresh.current("reservations").num_rows == world_reservations

    _other_readers_agree(url, data / "lake")


def test_the_code_location_takes_the_url_from_the_environment_and_reads_fresh_state(
    tmp_path: Path, aws_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make dev` and a deployment build LakeResource without a URL: the run's environment
    gives it. Run state written by one process is what another, already pulled, reads next
    (the sensors of a long-lived code server read the cursor that runs in other pods move)."""
    from pipelines.resources import LakeResource

    url = f"s3://{BUCKET}/state"
    monkeypatch.setenv("RESERVOIR_LAKE_URL", url)
    runner = LakeResource(data_dir=str(tmp_path / "run")).lake()
    sensor = LakeResource(data_dir=str(tmp_path / "code-server")).lake()
    assert runner.remote is not None and runner.remote.url == url
    assert sensor.read_state("event_cursor") is None
    runner.write_state("event_cursor", "20261101T000000Z-aaaaaaaa", {"event_id": 41})
    runner.write_state("event_cursor", "20261102T000000Z-bbbbbbbb", {"event_id": 57})
    assert sensor.read_state("event_cursor") == {"event_id": 57}
    # `reservoir run` on an empty data directory continues from the store's cursor.
    from pipelines.runner import choose_job

    empty = Settings(data_dir=tmp_path / "empty", lake_url=url)
    assert choose_job(empty, "auto") == ("incremental_job", "incremental")
    elsewhere = Settings(data_dir=tmp_path / "new", lake_url=f"s3://{BUCKET}/nothing-yet")
    assert choose_job(elsewhere, "auto") == ("incremental_job", "bootstrap")
    # Pruning keeps the newest rows on the store too; the newest still wins.
    runner.write_state("event_cursor", "20261103T000000Z-cccccccc", {"event_id": 60})
    runner.prune_state(keep=2)
    from deltalake import DeltaTable

    stored = DeltaTable(
        runner.remote.uri("_state/event_cursor"), storage_options=runner.remote.options
    )
    assert sorted(r["event_id"] for r in stored.to_pyarrow_table().to_pylist()) == [57, 60]
    assert sensor.read_state("event_cursor") == {"event_id": 60}
    monkeypatch.delenv("RESERVOIR_LAKE_URL")
    assert LakeResource(data_dir=str(tmp_path / "plain")).lake().remote is None


def test_compaction_on_the_store_is_one_overwrite_the_cache_follows(
    tmp_path: Path, aws_env: str
) -> None:
    import pyarrow as pa
    from deltalake import DeltaTable

    from lake.compaction import compact, compact_quarantine
    from lake.schema import QUARANTINE_SCHEMA

    url = f"s3://{BUCKET}/compaction"
    lake = Lake(tmp_path / "lake", DeltaRemote(url))
    name = "distribution_channels"
    for i, (ids, kind) in enumerate([([1, 2, 3], "full"), ([3, 4], "delta"), ([5], "delta")]):
        batch = f"2026110{i + 1}T000000Z-0000000{i}"
        writer = lake.writer(TABLES[name], batch)
        writer.add(_channels(batch, ids, kind))
        writer.commit()
        quarantine = lake.quarantine_writer(name, batch)
        bad = {"_batch_id": batch, "_extracted_at": datetime(2026, 11, 1, tzinfo=UTC)}
        bad |= {"_source": "/distributionchannels", "table": name, "reason": "x", "record": "{}"}
        quarantine.add(pa.Table.from_pylist([bad], schema=QUARANTINE_SCHEMA))
        quarantine.commit()
    before = sorted(lake.current_ids(name, "distribution_channel_id"))
    assert before == [1, 2, 3, 4, 5] and len(lake.files(name)) == 3

    result = compact(lake, name, min_files=2)
    assert result.rows == 5
    store = DeltaTable(lake.remote.uri(name), storage_options=lake.remote.options)
    assert len(store.file_uris()) == 1 and store.count() == 5
    assert [p.name for p in lake.files(name)] == [u.rsplit("/", 1)[1] for u in store.file_uris()]
    assert sorted(lake.current_ids(name, "distribution_channel_id")) == before

    # Vacuum keeps what compaction replaced for a week (pinned readers); past that it goes.
    data_files = {u.rsplit("/", 1)[1] for u in store.file_uris()}

    def on_store() -> set[str]:
        import pyarrow.fs as pafs

        fs = lake.remote.filesystem()
        infos = fs.get_file_info(pafs.FileSelector(f"{BUCKET}/compaction/{name}"))
        return {i.base_name for i in infos if i.base_name.endswith(".parquet")}

    assert len(on_store()) == 4  # three batches and the compacted file
    assert lake.remote.vacuum(name, retention_hours=0) == 3
    assert on_store() == data_files

    folded = compact_quarantine(lake, name, min_files=2)
    assert folded.folded and folded.rows == 3
    assert len(lake.quarantine_files(name)) == 1
    # A data directory started empty sees the compacted lake.
    fresh = Lake(tmp_path / "fresh", DeltaRemote(url))
    fresh.pull()
    assert sorted(fresh.current_ids(name, "distribution_channel_id")) == before
    assert len(fresh.quarantine_files(name)) == 1


def test_the_main_job_lands_delta_tables_and_the_event_feed_applies_changes_to_the_store(
    tmp_path: Path, aws_env: str
) -> None:
    """`reservoir run` as a newcomer runs it (bootstrap, then the event feed) against the store.
    The bootstrap commits every landed table as a Delta table (and the run state), the cache
    holds exactly the store's files, and a data directory started empty gets the same lake
    back; after a day of changes in the sandbox, the incremental run's marts equal ground
    truth. (One test for both: each landing is a whole run, most of it fixed cost; a full
    `--mode full` run on the store, killed and rerun, is test_sigkill_during_commits_to_the_store_...,
    in `make chaos`.)"""
    from deltalake import DeltaTable

    url = f"s3://{BUCKET}/feed"
    settings = Settings(data_dir=tmp_path / "data", lake_url=url)
    quiet = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    with run_sandbox(SandboxSettings(seed=5, scale="small")) as handle:
        target = ServiceTarget.from_sandbox(handle)
        first = run_pipeline(settings, quiet=True, console=quiet, target=target)
        assert first.mode == "bootstrap"

        remote = DeltaRemote(url)
        stored = set(remote.tables())
        landed = {name for name, line in first.tables.items() if line.rows}
        assert landed <= stored, landed - stored
        assert "_state/source" in stored  # the run state is on the store too
        local = Lake(settings.lake_dir)
        for name in ("reservations", "bill_lines", "units"):
            table = DeltaTable(remote.uri(name), storage_options=remote.options)
            assert table.count() == first.tables[name].rows > 0
            # The cache holds exactly the store's current files.
            cached = {p.name for p in local.files(name)}
            assert cached == {u.rsplit("/", 1)[1] for u in table.file_uris()}
        # A data directory started empty gets the same lake back from the store.
        fresh = Lake(tmp_path / "fresh" / "lake", DeltaRemote(url))
        fresh.pull()
        for name in ("reservations", "reserved_resources", "customers", "journal_entries"):
            assert TABLES[name].key
            key = list(TABLES[name].key)
            a = local.current(name).to_pandas().sort_values(key).reset_index(drop=True)
            b = fresh.current(name).to_pandas().sort_values(key).reset_index(drop=True)
            pd.testing.assert_frame_equal(a, b, check_dtype=False)
        assert fresh.read_state("source") == local.read_state("source")

        handle.world.advance(hours=24)
        second = run_pipeline(settings, quiet=True, console=quiet, target=target)
        assert second.mode == "incremental"
        truth = handle.world.ground_truth()["nights"]
    bad = nights_mismatch(settings.warehouse_path, truth)
    assert bad.empty, bad.head(20).to_string()
    assert int(truth["nights_sold"].sum()) > 1000
    # The store holds the cursor the feed moved (an empty data directory would continue there).
    fresh = Lake(tmp_path / "fresh-after" / "lake", DeltaRemote(url))
    cursor = fresh.read_state("event_cursor")
    assert cursor is not None and cursor == Lake(settings.lake_dir).read_state("event_cursor")
    _other_readers_agree(url, settings.lake_dir)
