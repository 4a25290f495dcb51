"""The sweep's reservation id reconciliation against the fake service.

A reservation deleted at the source whose DELETE event never reached us is tombstoned with its
children; a read that looks wrong (empty, another tenant, too many deletions) is refused with
nothing landed; reservations that exist are untouched.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from assets.modes import apply_changes, sweep
from assets.reconcile import (
    RECONCILE_STATE,
    IdReconcileSettings,
    ReservationIdsRefused,
)
from assets.settings import IngestSettings
from lake.state import SWEEP_STATE
from lake.store import Lake
from lake.tables import TABLES
from pipelines.jobs import sweep_job
from pipelines.resources import LakeResource, ReservationServiceResource
from tests.incremental.fakes import fixture
from tests.incremental.helpers import execute_job
from tests.incremental.id_fakes import IdListFakeService, id_opener
from warehouse.refresh import refresh_warehouse

TODAY = date(2026, 6, 1)
SETTINGS = IngestSettings(today=TODAY, horizon_days=3)
CHILDREN = ("reserved_resources", "bill_lines", "reservation_subjects")


def _live(lake: Lake, table: str = "reservations") -> set[int]:
    return set(lake.current(table).column("reservation_id").to_pylist())


def _snapshot(lake: Lake) -> dict[str, pa.Table]:
    """Current state of reservations and children, lineage columns included, in key order."""
    return {
        t: lake.current(t).sort_by([(k, "ascending") for k in TABLES[t].key]).combine_chunks()
        for t in ("reservations", *CHILDREN)
    }


def _rows_of(table: pa.Table, rid: int) -> pa.Table:
    return table.filter(pc.equal(table.column("reservation_id"), rid))


def _files(lake: Lake) -> dict[str, int]:
    return {t: len(lake.files(t)) for t in ("reservations", *CHILDREN, "units", "locations")}


def _warehouse_ids(data_dir: Path, model: str) -> set[int]:
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"), read_only=True)
    try:
        return {r[0] for r in con.execute(f"select reservation_id from {model}").fetchall()}
    finally:
        con.close()


def _delete_silently(data: dict[str, Any], *rids: int) -> None:
    """Deleted at the source; no event reaches the feed."""
    data["reservation_details"] = [
        r for r in data["reservation_details"] if r["reservationId"] not in rids
    ]


@pytest.fixture
def loaded(tmp_path: Path) -> tuple[Lake, dict[str, Any]]:
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, id_opener(data), SETTINGS)  # bootstrap: the full snapshot
    return lake, data


def test_deleted_without_event_is_tombstoned_with_children(
    loaded: tuple[Lake, dict[str, Any]], tmp_path: Path
) -> None:
    lake, data = loaded
    before = _snapshot(lake)
    assert _live(lake) == {1, 2, 3, 4, 5}
    for child in CHILDREN:
        assert _rows_of(before[child], 3).num_rows > 0, child
    _delete_silently(data, 3)

    # The feed has nothing to say about it: an incremental run leaves it live.
    apply_changes(lake, id_opener(data), SETTINGS)
    assert 3 in _live(lake)

    report = sweep(lake, id_opener(data), SETTINGS)
    assert report.diffs["reservations"]["removed"] == 1
    assert report.diffs["reservations"]["sample"] == [[3]]
    ids = report.diffs["reservation_ids"]
    assert ids["ran"] and ids["removed"] == 1 and ids["sample"] == [[3]]
    assert (ids["lake_ids"], ids["service_ids"], ids["missing"]) == (5, 4, 1)
    assert ids["found_by_id"] == 0
    assert "reservations" in report.tables
    assert report.landed["reservations"].tombstones == 1

    after = _snapshot(lake)
    assert _live(lake) == {1, 2, 4, 5}
    for child in CHILDREN:
        assert _rows_of(after[child], 3).num_rows == 0, child
    # The others are untouched: same rows, same lineage (no new version landed for them).
    for table in ("reservations", *CHILDREN):
        others = before[table].filter(pc.not_equal(before[table].column("reservation_id"), 3))
        assert after[table].equals(others.combine_chunks()), table
    # The tombstone says where it came from.
    raw = pa.concat_tables(
        [pq.read_table(f) for f in lake.files("reservations")], promote_options="default"
    )
    versions = _rows_of(raw, 3).sort_by([("_batch_id", "descending")]).to_pylist()
    last = versions[0]
    assert last["_is_deleted"] is True and last["_source"] == "/reservations"
    assert last["_batch_id"] == report.batch_id
    assert lake.read_state(RECONCILE_STATE)["business_date"] == TODAY.isoformat()

    # The warehouse the sweep job builds next no longer shows it.
    refresh_warehouse(tmp_path, as_of=TODAY)
    assert _warehouse_ids(tmp_path, "core.fct_reservations") == {1, 2, 4, 5}
    assert _warehouse_ids(tmp_path, "core.fct_bill_lines") == {1, 2, 4, 5}


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("empty", "listed no reservation ids at all"),
        ("other_tenant", r"5 of the lake's 5 live reservations \(100.0%\)"),
    ],
)
def test_guard_rail_refuses_a_read_that_would_delete_too_much(
    loaded: tuple[Lake, dict[str, Any]], mode: str, message: str
) -> None:
    lake, data = loaded
    before, files, mark = _snapshot(lake), _files(lake), lake.read_state(SWEEP_STATE)
    data["id_list"] = mode
    data["units"][0] = {**data["units"][0], "cleaningStatus": "DIRTY"}  # would land otherwise

    with pytest.raises(ReservationIdsRefused, match=message) as refused:
        sweep(lake, id_opener(data), SETTINGS)
    text = str(refused.value)
    assert "Nothing was tombstoned" in text
    assert "RESERVOIR_SCOPE" in text and "204" in text and "id_reconcile_max_share" in text

    assert _snapshot(lake) == before  # nothing tombstoned, nothing relanded
    assert _files(lake) == files  # the sweep stopped before landing anything
    assert lake.read_state(SWEEP_STATE) == mark
    assert lake.read_state(RECONCILE_STATE) is None


def test_too_many_deletions_refused_then_accepted_with_a_larger_share(
    loaded: tuple[Lake, dict[str, Any]],
) -> None:
    lake, data = loaded
    _delete_silently(data, 2, 4)  # 40 % of the lake
    with pytest.raises(ReservationIdsRefused, match=r"2 of the lake's 5 .*40.0%.* limit of 20%"):
        sweep(lake, id_opener(data), SETTINGS)
    assert _live(lake) == {1, 2, 3, 4, 5}

    report = sweep(lake, id_opener(data), SETTINGS, id_max_removed_share=0.5)
    assert report.diffs["reservations"]["removed"] == 2
    assert _live(lake) == {1, 3, 5}
    for child in CHILDREN:
        assert _live(lake, child) == {1, 3, 5}, child


def test_an_incomplete_list_read_costs_requests_not_data(tmp_path: Path) -> None:
    lake, data = Lake(tmp_path / "lake"), fixture()
    # Unchanged for long: the sweep's modified-since read does not bring it back either.
    data["reservation_details"][4]["modifiedDate"] = "2025-06-01T00:00:00.000"
    apply_changes(lake, id_opener(data), SETTINGS)
    services: list[IdListFakeService] = []

    class Truncating(IdListFakeService):
        def _headers(self) -> list[dict[str, Any]]:
            records = super()._headers()
            # The list "loses" reservation 5, which still exists and answers by id.
            return (
                records if self._asking_by_id else [r for r in records if r["reservationId"] != 5]
            )

        _asking_by_id = False

        def reservations(self, ids: Any = None, *, modified_since: Any = None) -> Any:
            self._asking_by_id = True
            return super().reservations(ids, modified_since=modified_since)

    def open_() -> IdListFakeService:
        services.append(Truncating(data))
        return services[-1]

    report = sweep(lake, open_, SETTINGS)
    ids = report.diffs["reservation_ids"]
    assert (ids["missing"], ids["found_by_id"], ids["removed"]) == (1, 1, 0)
    assert any("list read was incomplete" in n for n in report.notes)
    assert _live(lake) == {1, 2, 3, 4, 5}
    assert services[0].stats["reservations_by_id"] == 1


def test_request_cost_is_visible_and_small(loaded: tuple[Lake, dict[str, Any]]) -> None:
    lake, data = loaded
    _delete_silently(data, 5)
    services: list[IdListFakeService] = []

    def open_() -> IdListFakeService:
        services.append(IdListFakeService(data))
        return services[-1]

    report = sweep(lake, open_, SETTINGS, id_page_size=3)
    ids = report.diffs["reservation_ids"]
    # 4 ids at 3 a page: 2 list pages, 1 id lookup for the one missing id.
    assert (ids["page_size"], ids["list_requests"], ids["confirm_requests"]) == (3, 2, 1)
    assert ids["requests"] == 3
    assert services[0].asked_sizes == [3]
    assert services[0].stats["reservations"] == 2
    assert report.requests >= ids["requests"]

    # Default size: the larger of the client's page size and 2000.
    assert IdReconcileSettings().size_for(services[0]) == 2000
    services[0].config.page_size = 5000
    assert IdReconcileSettings().size_for(services[0]) == 5000


def test_every_n_days_and_off(loaded: tuple[Lake, dict[str, Any]]) -> None:
    lake, data = loaded
    _delete_silently(data, 1)
    services: list[IdListFakeService] = []

    def open_() -> IdListFakeService:
        services.append(IdListFakeService(data))
        return services[-1]

    def run(day: int, every: int) -> dict[str, Any]:
        settings = IngestSettings(
            today=TODAY + timedelta(days=day), horizon_days=3, id_reconcile_every_days=every
        )
        # A lake of five: one deletion is 20-25 %, the guard rail's range.
        return sweep(lake, open_, settings, id_max_removed_share=0.5).diffs["reservation_ids"]

    off = run(0, 0)
    assert not off["ran"] and "turned off" in off["skipped"]
    assert services[-1].stats["reservations"] == 0 and 1 in _live(lake)

    first = run(0, 2)
    assert first["ran"] and first["removed"] == 1 and 1 not in _live(lake)
    _delete_silently(data, 2)
    assert not run(1, 2)["ran"]  # one day later: not due
    assert services[-1].stats["reservations"] == 0 and 2 in _live(lake)
    again = run(2, 2)
    assert again["ran"] and again["sample"] == [[2]] and 2 not in _live(lake)


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="id_reconcile_max_share"):
        IdReconcileSettings(max_removed_share=0)
    with pytest.raises(ValueError, match="id_reconcile_every_days"):
        IdReconcileSettings(every_days=-1)


class IdFakeResource(ReservationServiceResource):
    """The service resource handing out the id-list fake."""

    fixture: str = "reconcile"

    def open_client(self) -> IdListFakeService:  # type: ignore[override]
        return IdListFakeService(_JOB_DATA[self.fixture])


_JOB_DATA: dict[str, dict[str, Any]] = {}


def test_sweep_job_fails_with_the_guard_rail_message_and_accepts_config(tmp_path: Path) -> None:
    data = fixture()
    _JOB_DATA["reconcile"] = data
    resources = {
        "lake": LakeResource(
            data_dir=str(tmp_path),
            availability_start=TODAY.isoformat(),
            availability_horizon_days=3,
        ),
        "service": IdFakeResource(),
    }
    lake = resources["lake"].lake()
    apply_changes(lake, id_opener(data), SETTINGS)
    _delete_silently(data, 2, 4)
    try:
        # the event log of the CLI's instance (Dagster's SQLite files, connections kept open):
        # Dagster's own costs this test two thirds of its time
        events = {
            "module": "pipelines.sqlite_events",
            "class": "PooledSqliteEventLogStorage",
            "config": {"base_dir": str(tmp_path / "dagster" / "history" / "runs")},
        }
        with dg.instance_for_test(overrides={"event_log_storage": events}) as instance:
            failed = execute_job(sweep_job, resources, instance=instance, raise_on_error=False)
            assert not failed.success
            errors = [
                e.event_specific_data.error.to_string()  # type: ignore[union-attr]
                for e in failed.all_events
                if e.is_step_failure
            ]
            assert any("reservation id reconciliation refused" in m for m in errors), errors
            assert _live(lake) == {1, 2, 3, 4, 5}

            ok = execute_job(
                sweep_job,
                resources,
                instance=instance,
                run_config={"ops": {"lake": {"config": {"id_reconcile_max_share": 0.5}}}},
            )
            assert ok.success
            landed = {
                e.asset_key.path[-1]
                for e in ok.get_asset_materialization_events()
                if e.asset_key.path[0] == "lake"
                and e.materialization.metadata["dagster/row_count"].value
            }
            assert landed >= {"reservations"}
    finally:
        _JOB_DATA.pop("reconcile", None)
    assert _live(lake) == {1, 3, 5}
    assert _warehouse_ids(tmp_path, "core.fct_reservations") == {1, 3, 5}
