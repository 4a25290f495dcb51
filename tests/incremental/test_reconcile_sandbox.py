"""The sweep's id reconciliation against the sandbox over HTTP: a deletion whose event was
skipped is repaired, the lake then equals a fresh full load, and the read costs about
ceil(ids / page size) requests."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.compute as pc
import pytest

from assets.modes import apply_changes, sweep
from assets.reconcile import DEFAULT_ID_PAGE_SIZE
from assets.settings import IngestSettings
from lake.state import read_cursor
from lake.store import Lake
from tests.incremental.helpers import _data, sandbox_opener, table_differences
from warehouse.refresh import refresh_warehouse

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

RESERVATION_TABLES = ("reservations", "reserved_resources", "bill_lines", "reservation_subjects")


@dataclass
class Setup:
    sandbox: Any
    opener: Any

    def today(self) -> date:
        with self.sandbox.world.lock:
            return self.sandbox.world.now.date()

    def settings(self) -> IngestSettings:
        return IngestSettings(today=self.today(), horizon_days=7)


@pytest.fixture(scope="module")
def setup() -> Iterator[Setup]:
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(seed=5, scale="small")) as sb:
        yield Setup(sb, sandbox_opener(sb))


def _drop_events_about(world: Any, rid: int, *, after: int) -> int:
    """Lose the feed's events about one reservation (retention passed, an event went missing)."""
    with world.lock:
        lost = [
            e["eventId"]
            for e in world.records("events")
            if e["eventId"] > after
            and e["eventType"] == "RESERVATION_EVENT"
            and e["entityId"] == rid
        ]
        for event_id in lost:
            world.t["events"].delete(event_id)
        world.generation += 1  # the server caches encoded pages per generation
    return len(lost)


def _rows_of(lake: Lake, table: str, rid: int) -> int:
    current = lake.current(table)
    return current.filter(pc.equal(current.column("reservation_id"), rid)).num_rows


def test_missed_delete_is_repaired_at_the_cost_of_the_id_pages(
    setup: Setup, tmp_path: Path
) -> None:
    s = setup
    lake = Lake(tmp_path / "a" / "lake")
    assert apply_changes(lake, s.opener, s.settings()).mode == "bootstrap"

    churned = s.sandbox.world.churn("reservations")  # a new cart, and a deletion with its event
    rid = churned["deleted"]
    assert rid is not None
    assert rid in set(lake.current_ids("reservations", "reservation_id"))
    assert _rows_of(lake, "reserved_resources", rid) > 0
    dropped = _drop_events_about(s.sandbox.world, rid, after=read_cursor(lake).event_id)  # type: ignore[union-attr]
    assert dropped >= 1
    incremental = apply_changes(lake, s.opener, s.settings())
    assert incremental.mode == "incremental"
    assert "reservations" not in incremental.plan.get("delete", {})
    assert rid in set(lake.current_ids("reservations", "reservation_id"))

    s.sandbox.reset_stats()
    report = sweep(lake, s.opener, s.settings())
    server = s.sandbox.stats()
    ids = report.diffs["reservation_ids"]
    assert ids["ran"] and ids["sample"] == [[rid]] and ids["removed"] == 1
    assert report.diffs["reservations"]["removed"] == 1
    assert rid not in set(lake.current_ids("reservations", "reservation_id"))
    for table in RESERVATION_TABLES[1:]:
        assert _rows_of(lake, table, rid) == 0, table

    # Cost: the list pages at the largest page size, plus one id lookup for the missing id.
    n = ids["service_ids"]
    assert ids["page_size"] == DEFAULT_ID_PAGE_SIZE
    pages = math.ceil(n / DEFAULT_ID_PAGE_SIZE)
    assert pages <= ids["list_requests"] <= pages + 1, ids  # + at most the descending probe
    assert ids["confirm_requests"] == 1
    # The server agrees: the plain list served exactly the id read and the lookup.
    assert server["endpoints"].get("GET /service/v2/reservations") == ids["requests"], server
    print(f"\nid reconciliation, {n} ids: {ids['requests']} requests ({ids})")

    # The lake's reservations now equal a fresh full load of the same service state.
    fresh = Lake(tmp_path / "b" / "lake")
    apply_changes(fresh, s.opener, s.settings())
    for table in RESERVATION_TABLES:
        diff = table_differences(_data(lake.current(table)), _data(fresh.current(table)))
        assert diff is None, (table, diff)

    # And the warehouse built from it no longer shows the reservation.
    refresh_warehouse(tmp_path / "a", as_of=s.today())
    con = duckdb.connect(str(tmp_path / "a" / "warehouse.duckdb"), read_only=True)
    try:
        shown = con.execute(
            "select count(*) from core.fct_reservations where reservation_id = $1", [rid]
        ).fetchall()
    finally:
        con.close()
    assert shown == [(0,)]
