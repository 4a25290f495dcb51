"""The main job against the strict profile of the sandbox (the service as the notes describe it).

The strict sandbox refuses the returnSections PAYINGCUSTOMERBILL and SUBJECTS, serves the real
field names (locations without companyId, availability without availableUnits, subjects as
`reservationSubjects`), leaves optional fields out at random and bills the line types 50, 130,
140 and 180. The run must land every record (no quarantine), say once that it dropped the
sections, and build marts equal to the ground truth computed from the strict world's records.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

import dagster as dg
import duckdb
import pandas as pd
import pytest

from lake.store import Lake
from pipelines.resources import DEFAULT_HORIZON_DAYS
from sandbox.world.truth_marts import MARTS, mart_truth
from tests.e2e.conftest import PipelineRun
from tests.e2e.test_mart_truth import mismatches

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e-strict")]


def _query(run: PipelineRun, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(run.settings.warehouse_path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _frame(run: PipelineRun, sql: str) -> pd.DataFrame:
    con = duckdb.connect(str(run.settings.warehouse_path), read_only=True)
    try:
        rel = con.execute(sql)
        cols = [d[0] for d in rel.description or ()]
        return pd.DataFrame.from_records(rel.fetchall(), columns=cols)
    finally:
        con.close()


def test_the_strict_run_lands_every_record(strict_run: PipelineRun) -> None:
    assert strict_run.handle.settings.profile == "strict"
    lines = strict_run.summary.tables
    assert lines and all(line.quarantined == 0 for line in lines.values()), {
        name: line.quarantined for name, line in lines.items() if line.quarantined
    }
    assert not strict_run.summary.failed_checks
    lake = Lake(strict_run.settings.data_dir / "lake")
    assert not [f for t in lake.quarantine_tables() for f in lake.quarantine_files(t)]


def test_the_refused_sections_are_noted_once_and_read_per_reservation(
    strict_run: PipelineRun,
) -> None:
    instance = dg.DagsterInstance.from_config(str(strict_run.settings.dagster_home))
    try:
        notes = [
            note
            for event in instance.all_logs(strict_run.summary.run_id)
            if event.dagster_event is not None and event.dagster_event.is_step_materialization
            for note in event.dagster_event.step_materialization_data.materialization.metadata.get(
                "notes", dg.MetadataValue.json([])
            ).value
        ]
    finally:
        instance.dispose()
    refused = [n for n in notes if "refused returnSections" in n]
    assert len(refused) == 1, notes
    assert "PAYINGCUSTOMERBILL" in refused[0] and "SUBJECTS" in refused[0]
    world = strict_run.handle.world
    lake = Lake(strict_run.settings.data_dir / "lake")
    subjects = lake.current("reservation_subjects")
    assert subjects.num_rows == len(world.records("subjects")) > 0
    payers = Counter(lake.current("bill_lines").column("payer_type").to_pylist())
    served = Counter(line["payerType"] for line in world.records("billlines"))
    assert payers == served and payers["PAYING_CUSTOMER"] > 0


def test_the_real_shapes_reach_the_warehouse(strict_run: PipelineRun) -> None:
    # company and currency of every location through its admin organisation
    rows = _query(
        strict_run, "select location_id, company_id, currency_code from core.dim_locations"
    )
    assert rows and all(company is not None and currency for _, company, currency in rows)
    # availability from units[] alone
    (available,) = _query(
        strict_run, "select count(*) from core.fct_availability where available_units > 0"
    )[0]
    assert available > 0
    # every bill-line type of the strict profile, classed
    classes = dict(
        ((t, c), n)
        for t, c, n in _query(
            strict_run,
            "select bill_line_type, coalesce(revenue_class, line_class), count(*) "
            "from core.fct_bill_lines group by all",
        )
    )
    for line_type, cls in ((50, "other"), (130, "extra"), (140, "other"), (180, "other")):
        assert classes.get((line_type, cls), 0) > 0, (line_type, cls, classes)


def test_the_strict_marts_match_the_strict_ground_truth(strict_run: PipelineRun) -> None:
    world = strict_run.handle.world
    (as_of,) = _query(strict_run, "select as_of from meta.build_settings")[0]
    assert as_of == world.now.date()
    truth = mart_truth(
        world,
        as_of=as_of,
        availability_start=world.now.date(),
        availability_days=DEFAULT_HORIZON_DAYS,
    )
    bad = {
        name: found
        for name in MARTS
        if (
            found := mismatches(
                name, truth[name], _frame(strict_run, f"select * from marts.{name}")
            )
        )
    }
    assert not bad, {name: found[:10] for name, found in bad.items()}
    # the truth covered real money, extras billed as stay articles included
    assert (
        truth["revenue_daily"]["total_revenue_gross"].sum()
        > truth["revenue_daily"]["room_revenue_gross"].sum()
    )


def test_the_strict_occupancy_matches_the_ground_truth(strict_run: PipelineRun) -> None:
    truth = strict_run.handle.world.ground_truth()["nights"]
    mart = _frame(
        strict_run,
        "select date_day, location_id, accommodation_type_id, nights_available, nights_sold, "
        "owner_hold_nights from marts.occupancy_daily",
    )
    truth = truth.rename(columns={"resource_id": "accommodation_type_id", "date": "date_day"})
    truth["date_day"] = pd.to_datetime(truth["date_day"]).dt.date
    mart["date_day"] = pd.to_datetime(mart["date_day"]).dt.date
    lo, hi = min(truth["date_day"]), max(truth["date_day"])
    mart = mart[(mart["date_day"] >= lo) & (mart["date_day"] <= hi)]
    keys = ["date_day", "location_id", "accommodation_type_id"]
    values = ["nights_available", "nights_sold", "owner_hold_nights"]
    merged = truth.merge(mart, on=keys, how="outer", suffixes=("_truth", "_mart"))
    for v in values:
        diff = merged[f"{v}_truth"].fillna(0) != merged[f"{v}_mart"].fillna(0)
        assert not diff.any(), merged[diff].head(10).to_string()
    assert int(truth["nights_sold"].sum()) > 1000
    assert isinstance(lo, date)
