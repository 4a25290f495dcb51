"""Every lake asset against the embedded sandbox over loopback HTTP, with malformed pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest

from lake.store import Lake
from lake.tables import TABLES
from pipelines.lake_assets import lake_assets, spec_keys
from pipelines.resources import LakeResource, ReservationServiceResource
from tests.partitioned import materialize

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
KNOWN_REASON = re.compile(
    r"^\w+\.\w+: (missing required value|bad date|unknown code|not an integer|not an amount"
    r"|not a number|bad datetime|not text) \("
)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[object]:
    runner = pytest.importorskip("sandbox.runner")
    with runner.run_sandbox(runner.SandboxSettings(faults={"malformed": 0.02})) as handle:
        yield handle


def _resources(handle: object, data_dir: Path, **lake: object) -> dict[str, object]:
    today = handle.world.now.date().isoformat()  # type: ignore[attr-defined]
    return {
        "service": ReservationServiceResource(
            base_url=handle.base_url,
            client_id=handle.client_id,  # type: ignore[attr-defined]
            client_secret=handle.client_secret,
            scope=handle.scope,  # type: ignore[attr-defined]
        ),
        "lake": LakeResource(
            data_dir=str(data_dir), availability_start=today, availability_horizon_days=31, **lake
        ),  # type: ignore[arg-type]
    }


def _reasons(lake_root: Path) -> list[str]:
    lake = Lake(lake_root)  # quarantine_files: what readers see (not what a fold replaced)
    return [
        r
        for table in lake.quarantine_tables()
        for f in lake.quarantine_files(table)
        for r in pq.read_table(f).column("reason").to_pylist()
    ]


def test_every_asset_materialises_against_the_sandbox(sandbox: object, tmp_path: Path) -> None:
    resources = _resources(sandbox, tmp_path)
    result = materialize([lake_assets], resources=resources)
    assert result.success
    lake = resources["lake"].lake()  # type: ignore[attr-defined]
    for name, table in TABLES.items():
        current = lake.current(name)
        assert current.num_rows > 0, name
        for f in lake.files(name):
            assert pq.read_schema(f).remove_metadata() == table.arrow_schema(), name
    requests = sum(
        e.materialization.metadata["requests_used"].value
        for e in result.get_asset_materialization_events()
    )
    assert requests > 0
    assert all(KNOWN_REASON.match(r) for r in _reasons(lake.root))
    assert not [p for p in lake.root.rglob("*.tmp")]


def test_malformed_records_are_quarantined_not_landed(sandbox: object, tmp_path: Path) -> None:
    sandbox.faults.configure({"malformed": 1.0})  # type: ignore[attr-defined]
    try:
        resources = _resources(sandbox, tmp_path, quarantine_threshold=0.5)
        result = materialize(
            [lake_assets], selection=spec_keys("reservations"), resources=resources
        )
    finally:
        sandbox.faults.configure({"malformed": 0.02})  # type: ignore[attr-defined]
    assert result.success
    lake = resources["lake"].lake()  # type: ignore[attr-defined]
    reasons = _reasons(lake.root)
    assert reasons and all(KNOWN_REASON.match(r) for r in reasons)
    current = lake.current("reservations")
    assert 77 not in current.column("status").to_pylist()
    assert current.column("reservation_id").null_count == 0
    assert set(current.column("_batch_kind").to_pylist()) == {"delta"}


LINEAGE = {"_batch_id", "_batch_kind", "_extracted_at"}


def _content(lake: Lake, table: str) -> list[tuple[object, ...]]:
    current = lake.current(table)
    names = [n for n in current.column_names if n not in LINEAGE]
    return sorted(zip(*(current.column(n).to_pylist() for n in names), strict=True), key=repr)


def test_worker_processes_land_what_the_run_process_lands_through_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages arrive undecoded over HTTP through 503s, dropped connections and truncated bodies
    (retried by the client), then are decoded and normalised in a worker process or in the
    run's own process: the lake is the same."""
    runner = pytest.importorskip("sandbox.runner")
    from assets import page_queue

    monkeypatch.setattr(page_queue, "WORKER_MIN_BYTES", 0)  # every page of the stream to the pool
    faults = {"http_503": 0.05, "drop": 0.05, "truncate": 0.05}
    lakes = {}
    with runner.run_sandbox(runner.SandboxSettings(faults=faults)) as handle:
        for workers in (0, 1):
            resources = _resources(handle, tmp_path / str(workers), normalise_workers=workers)
            result = materialize(
                [lake_assets], selection=spec_keys("reservations"), resources=resources
            )
            assert result.success
            events = result.get_asset_materialization_events()
            used = {e.materialization.metadata["normalise_workers"].value for e in events}
            assert used == {workers}
            lakes[workers] = resources["lake"].lake()  # type: ignore[attr-defined]
        stats = httpx.get(handle.admin_url + "/stats", timeout=10).json()  # type: ignore[attr-defined]
    injected = stats["faults"]["injected"]
    assert all(injected[name] > 0 for name in faults), injected  # the retries were exercised
    for table in ("reservations", "reserved_resources", "bill_lines", "reservation_subjects"):
        thread, pool = _content(lakes[0], table), _content(lakes[1], table)
        assert thread and pool == thread, table
