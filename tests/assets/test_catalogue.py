"""Adding an endpoint is one catalogue entry plus its table.

A toy endpoint the engine has never heard of (`/toys`, key `toyId`, refreshed by `TOY_EVENT`) is
added as one `EndpointSpec` and one lake `Table`; nothing else changes. The bootstrap extracts
it with everything else, an UPDATE event refetches the toy it names, a DELETE tombstones it.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from assets.catalogue import CATALOGUE
from assets.endpoints import ByIds, Catalogue, EndpointSpec
from assets.modes import apply_changes
from assets.plan import plan_changes
from assets.settings import IngestSettings
from lake.schema import Table, col
from lake.store import Lake
from lake.tables import TABLES
from tests.incremental import fakes
from tests.incremental.fakes import event, fixture, opener

SETTINGS = IngestSettings(today=date(2026, 6, 1), horizon_days=3)
TOYS = Table(
    "toys",
    (col("toyId", "id", required=True), col("name"), col("colour")),
    ("toy_id",),
)
TOY = EndpointSpec(
    "toys",
    "reference",
    None,  # no facade method: the keyset list of its path by its key
    "/toys",
    TOYS,
    "Toys (a test endpoint).",
    list_key="toyId",
    events=("TOY_EVENT",),
    by_ids=ByIds("/toys", "toyId"),
)


@pytest.fixture
def catalogue(monkeypatch: pytest.MonkeyPatch) -> Catalogue:
    monkeypatch.setitem(TABLES, "toys", TOYS)  # its table in lake/tables.py
    monkeypatch.setitem(fakes._ID_FIELDS, "/toys", ("toys", "toyId"))  # the fake serves it
    return CATALOGUE.with_entries(TOY)


def _toys(lake: Lake) -> dict[int, str]:
    current = lake.current("toys")
    return dict(
        zip(current.column("toy_id").to_pylist(), current.column("name").to_pylist(), strict=True)
    )


def test_the_catalogue_derives_the_toys_refresh(catalogue: Catalogue) -> None:
    assert catalogue.event_streams["TOY_EVENT"] == "toys"
    assert "toys" in catalogue.keyed and "toys" not in CATALOGUE.keyed
    plan = plan_changes([event(1, "TOY_EVENT", 7), event(2, "TOY_EVENT", 8, "DELETE")], catalogue)
    assert plan.refresh["toys"] == {7} and plan.delete["toys"] == {8}
    assert plan.tables(catalogue) == {"toys"}
    # Without the entry the same events are unknown, counted and skipped.
    assert plan_changes([event(1, "TOY_EVENT", 7)]).unknown == {"TOY_EVENT": 1}


def test_a_toy_endpoint_is_extracted_refreshed_and_tombstoned(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    data: dict[str, Any] = fixture()
    data["toys"] = [
        {"toyId": 1, "name": "kite", "colour": "red"},
        {"toyId": 2, "name": "ball", "colour": "blue"},
        {"toyId": 3, "name": "yoyo", "colour": "green"},
    ]
    lake = Lake(tmp_path / "lake")

    first = apply_changes(lake, opener(data), SETTINGS, catalogue=catalogue)
    assert first.mode == "bootstrap" and "toys" in first.landed
    assert _toys(lake) == {1: "kite", 2: "ball", 3: "yoyo"}

    data["toys"][0]["name"] = "stunt kite"
    del data["toys"][1]
    data["events"] += [
        event(3, "TOY_EVENT", 1),
        event(4, "TOY_EVENT", 2, "DELETE"),
    ]
    second = apply_changes(lake, opener(data), SETTINGS, catalogue=catalogue)
    assert second.mode == "incremental"
    assert second.plan["refresh"]["toys"] == 1 and second.plan["delete"]["toys"] == 1
    assert _toys(lake) == {1: "stunt kite", 3: "yoyo"}
    landed = lake.files("toys")[-1]
    rows = pq.read_table(landed)
    dead = rows.filter(pc.field("_is_deleted"))
    assert dead.column("toy_id").to_pylist() == [2]
    assert dead.column("_source").to_pylist() == ["/events"]
