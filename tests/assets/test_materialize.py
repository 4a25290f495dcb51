"""Materialise the lake assets against the fake service and check what lands."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets.catalogue import CATALOGUE
from lake.store import Lake
from lake.tables import TABLES
from pipelines.asset_keys import lake_key
from pipelines.jobs import compact_job
from pipelines.lake_assets import lake_assets, spec_keys
from pipelines.resources import LakeResource
from pipelines.run_requests import REQUESTS_TAG, requests_in
from tests.assets.fake_service import FakeServiceResource, default_fixture, register, reservation
from tests.partitioned import materialize

ALL = None  # every lake table
PII_VALUES = (b"anna@example.org", b"Jansen", b"+31 6 1234")


def _materialize(
    selection: list[dg.AssetKey] | None,
    lake: LakeResource,
    fixture: str = "default",
    **kw: object,
) -> dg.ExecuteInProcessResult:
    return materialize(
        [lake_assets],
        selection=selection,
        resources={"service": FakeServiceResource(fixture=fixture), "lake": lake},
        **kw,  # type: ignore[arg-type]
    )


def _lake_resource(path: Path, **kw: object) -> LakeResource:
    return LakeResource(
        data_dir=str(path), availability_start="2026-06-01", availability_horizon_days=35, **kw
    )  # type: ignore[arg-type]


# The tests on `landed` (one materialisation of every asset, ~2 CPU s) run on one xdist worker:
# without a group `--dist loadgroup` spreads a module's tests over both workers, and each built it.
LANDED = pytest.mark.xdist_group("materialize_landed")


@pytest.fixture(scope="module")
def landed_in(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dg.ExecuteInProcessResult, Lake, dg.DagsterInstance]:
    resource = _lake_resource(tmp_path_factory.mktemp("lake"))
    instance = dg.DagsterInstance.ephemeral()
    result = _materialize(ALL, resource, instance=instance)
    return result, resource.lake(), instance


@pytest.fixture(scope="module")
def landed(landed_in) -> tuple[dg.ExecuteInProcessResult, Lake]:
    return landed_in[:2]


@LANDED
def test_every_table_lands_typed_as_specified(landed) -> None:
    result, lake = landed
    assert result.success
    for name, table in TABLES.items():
        files = lake.files(name)
        assert files, name
        for f in files:
            assert pq.read_schema(f).remove_metadata() == table.arrow_schema(), name
        assert lake.current(name).num_rows > 0, name


@LANDED
def test_keys_unique_and_children_linked(landed) -> None:
    _, lake = landed
    for name, table in TABLES.items():
        rows = lake.current(name).select(list(table.key)).to_pylist()
        assert len(rows) == len({tuple(r.values()) for r in rows}), name
        if table.parent:
            parent = TABLES[table.parent]
            parent_keys = {
                tuple(r[pk] for pk in table.parent_key.values())
                for r in lake.current(parent.name).to_pylist()
            }
            links = {tuple(r[c] for c in table.parent_key) for r in lake.current(name).to_pylist()}
            assert links <= parent_keys, name
    bills = lake.current("bill_lines").to_pylist()
    assert {b["payer_type"] for b in bills} == {"CUSTOMER", "PAYING_CUSTOMER", "AGENT"}
    assert len(lake.current("availability").to_pylist()) == 35 * 3 * 2


@LANDED
def test_lineage_and_one_batch_per_run(landed) -> None:
    _, lake = landed
    batch_ids = set()
    for name in TABLES:
        t = lake.current(name)
        for col in ("_batch_id", "_batch_kind", "_extracted_at", "_source", "_is_deleted"):
            assert t.column(col).null_count == 0, (name, col)
        batch_ids |= set(t.column("_batch_id").to_pylist())
    (batch_id,) = batch_ids
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{8}", batch_id)
    assert lake.current("customer_merges").to_pylist()[0]["_batch_kind"] == "delta"


@LANDED
def test_no_temp_files_and_no_pii(landed) -> None:
    _, lake = landed
    files = [p for p in lake.root.rglob("*") if p.is_file()]
    assert not [p for p in files if p.suffix == ".tmp"]
    assert not {"first_name", "last_name", "email", "phone"} & set(
        lake.current("customers").column_names
    )
    for f in files:
        data = f.read_bytes()
        assert not any(v in data for v in PII_VALUES), f


@LANDED
def test_customer_merges_from_the_event_feed(landed) -> None:
    _, lake = landed
    (merge,) = lake.current("customer_merges").to_pylist()
    assert (merge["old_customer_id"], merge["customer_id"]) == (599, 501)
    assert lake.read_state("cursor_customer_merges") == {"cursor": 2}


@LANDED
def test_metadata_and_checks(landed) -> None:
    result, _ = landed
    events = {
        e.asset_key.path[-1]: e.materialization.metadata
        for e in result.get_asset_materialization_events()
    }
    assert set(events) == set(TABLES)
    specs = {s.key.path[-1]: s for s in lake_assets.specs}
    for name, md in events.items():
        assert md["dagster/row_count"].value > 0, name
        assert md["requests_used"].value > 0, name
        assert md["bytes_written"].value > 0, name
        assert "unknown_fields" in md and "quarantined_records" in md
        # the asset's definition explains the columns; the materialization repeats none
        assert "dagster/column_schema" not in md, name
        cols = [c.name for c in specs[name].metadata["dagster/column_schema"].columns]
        assert cols == TABLES[name].arrow_schema().names
        preview = md["preview"].value.splitlines()
        assert preview[0].startswith("| ") and cols[0] in preview[0], name
        assert 3 <= len(preview) <= 7, name  # header, rule, 1-5 rows
    checks = result.get_asset_check_evaluations()
    # unique keys per table + quarantine per stream
    assert len(checks) == len(TABLES) + len(CATALOGUE.specs)
    assert all(c.passed for c in checks)


@LANDED
def test_the_run_is_tagged_with_the_requests_its_materializations_report(landed_in) -> None:
    """`reservoir status` counts the day's requests from this tag alone (`pipelines.status`)."""
    result, _, instance = landed_in
    metadata = [
        {k: getattr(v, "value", v) for k, v in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
    ]
    run = instance.get_run_by_id(result.run_id)
    assert run is not None and int(run.tags[REQUESTS_TAG]) == requests_in(metadata) > 0


def _bad_fixture(name: str) -> str:
    data = default_fixture()
    data["reservation_details"][1] = reservation(2, status=77)
    data["units"][0]["energyLabel"] = "A"
    return register(name, data)


def test_quarantine_rate_over_threshold_fails_with_a_clear_message(tmp_path: Path) -> None:
    resource = _lake_resource(tmp_path, quarantine_floor=0)  # 1 of 5 is under the default floor
    result = _materialize(
        spec_keys("reservations"), resource, _bad_fixture("bad1"), raise_on_error=False
    )
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    message = failure.step_failure_data.user_failure_data.description
    assert "table 'reservations': 1 of 5 records (20.0%)" in message
    assert "more than the 0 allowed (the larger of 5.0% of its records and 0 records)" in message
    assert "reservations.status: unknown code" in message
    assert "RESERVOIR_QUARANTINE_FLOOR" in message
    lake = resource.lake()
    assert lake.files("reservations") == [] and lake.files("bill_lines") == []
    assert len(lake.quarantine_files("reservations")) == 1


def test_below_threshold_run_goes_on_and_lands_the_rest_as_delta(tmp_path: Path) -> None:
    resource = _lake_resource(tmp_path, quarantine_threshold=0.5)
    instance = dg.DagsterInstance.ephemeral()
    result = _materialize(
        spec_keys("reservations", "units"), resource, _bad_fixture("bad2"), instance=instance
    )
    assert result.success
    # a selection's tag: the requests of its own streams and the run's rest, as its metadata
    metadata = [
        {k: getattr(v, "value", v) for k, v in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
    ]
    run = instance.get_run_by_id(result.run_id)
    assert run is not None and int(run.tags[REQUESTS_TAG]) == requests_in(metadata) > 0
    lake = resource.lake()
    (q,) = pq.read_table(lake.quarantine_files("reservations")[0]).to_pylist()
    assert q["reason"] == "reservations.status: unknown code (77)" and '"status":77' in q["record"]
    current = lake.current("reservations").to_pylist()
    assert sorted(r["reservation_id"] for r in current) == [1, 3, 4, 5]
    assert {r["_batch_kind"] for r in current} == {"delta"}
    md = {
        e.asset_key.path[-1]: e.materialization.metadata
        for e in result.get_asset_materialization_events()
    }
    assert md["reservations"]["quarantined_records"].value == 1
    assert md["units"]["unknown_fields"].value == {"energyLabel": 1}
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    assert [c.check_name for c in failed] == ["quarantine_rate"]


def test_rerun_with_the_same_batch_is_idempotent(tmp_path: Path) -> None:
    resource = _lake_resource(tmp_path, batch_id="20260101T000000Z-0000beef", flush_rows=3)
    assets = spec_keys("reservations")
    assert _materialize(assets, resource).success
    lake = resource.lake()
    first = {t: sorted(p.name for p in lake.files(t)) for t in TABLES}
    key = "reservation_bill_line_id"
    snapshot = lake.current("bill_lines").drop_columns(["_extracted_at"]).sort_by(key)
    assert _materialize(assets, resource).success
    assert {t: sorted(p.name for p in lake.files(t)) for t in TABLES} == first
    again = lake.current("bill_lines").drop_columns(["_extracted_at"]).sort_by(key)
    assert again.combine_chunks().equals(snapshot.combine_chunks())


def test_compaction_job_preserves_current_state(tmp_path: Path) -> None:
    resource = _lake_resource(tmp_path, compact_min_files=2)
    assets = spec_keys("reservations", "distribution_channels")
    for _ in range(3):
        assert _materialize(assets, resource).success
    lake = resource.lake()
    before = {t: lake.current(t).sort_by(TABLES[t].key[0]) for t in TABLES}
    assert len(lake.files("reservations")) == 3
    result = compact_job.execute_in_process(resources={"lake": resource})
    assert result.success
    assert len(lake.files("reservations")) == 1 and len(lake.files("bill_lines")) == 1
    for t, expected in before.items():
        assert lake.current(t).sort_by(TABLES[t].key[0]).equals(expected), t


def test_a_lake_that_lands_personal_data_says_so_in_its_column_schema(tmp_path: Path) -> None:
    """The definition's column schema leaves personal columns out; a materialization that landed
    them carries its own schema, with them, so the UI shows what the files hold."""
    resource = _lake_resource(tmp_path, include_customer_pii=True)
    result = _materialize([lake_key("customers"), lake_key("locations")], resource)
    assert result.success
    events = {e.asset_key.path[-1]: e for e in result.get_asset_materialization_events()}
    # a table without personal columns lands what its definition says: no schema repeated
    assert "dagster/column_schema" not in events["locations"].materialization.metadata
    event = events["customers"]
    landed = [
        c.name for c in event.materialization.metadata["dagster/column_schema"].schema.columns
    ]
    assert landed == TABLES["customers"].arrow_schema(True).names
    assert {"first_name", "email"} <= set(landed)
    assert set(landed) - set(TABLES["customers"].arrow_schema().names)
