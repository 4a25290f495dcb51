"""Implies against the sandbox over HTTP: the lake's `implies` table equals what the interface's
per-holder paths serve for every accommodation type, add-on and offer, after the bootstrap and
after IMPLY_EVENTs (an imply added to a type, one removed from an offer: tombstoned) and an
incremental run, which also equals a fresh full load (and after a promotion with an imply is
withdrawn: its implies are tombstoned with it); an IMPLY_EVENT about a unit is counted as
not modelled (unit implies are not extracted, docs/interface-coverage.md), never refetched."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from assets.catalogue import CATALOGUE
from assets.modes import apply_changes
from assets.plan import plan_changes
from assets.settings import IngestSettings
from lake.store import Lake
from tests.incremental.helpers import _data, sandbox_opener, table_differences
from tests.sandbox.conftest import signed_in

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

# the world's collection of each holder kind, and its path; an offer is also listed as a SPECIAL
# add-on (one resource id): it is read once, as an offer
HOLDERS = {
    "ACCOMMODATIONTYPE": ("accommodationtypes", "/accommodationtypes/{}/implies"),
    "OFFER": ("offers", "/offers/{}/implies"),
    "ADDON": ("addons", "/add-ons/{}/implies"),
}
Row = tuple[str, int, int, int, str, int, str | None, str | None]


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(seed=17, scale="small")) as handle:
        yield handle


def _settings(sb: Any) -> IngestSettings:
    with sb.world.lock:
        return IngestSettings(today=sb.world.now.date(), horizon_days=3)


def _served(sb: Any) -> set[Row]:
    """Every imply the sandbox serves over HTTP, one request per type, offer and add-on."""
    with sb.world.lock:
        holders = {
            k: [r["resourceId"] for r in sb.world.records(c)] for k, (c, _) in HOLDERS.items()
        }
    out: set[Row] = set()
    read: set[int] = set()
    with signed_in(sb) as api:
        for kind, ids in holders.items():
            for holder in sorted(set(ids) - read):
                read.add(holder)
                body = api.get(HOLDERS[kind][1].format(holder), params={"size": 500}).json()
                for r in body["content"]:
                    assert r["holderType"] == kind and r["resourceId"] == holder
                    out.add(
                        (
                            kind,
                            holder,
                            r["implyId"],
                            r["impliedResourceId"],
                            r["impliedCode"],
                            r["quantity"],
                            r["validFrom"],
                            r["validTo"],
                        )
                    )
    return out


def _landed(lake: Lake) -> set[Row]:
    rows = lake.current("implies").to_pylist()
    return {
        (
            r["holder_kind"],
            r["holder_id"],
            r["imply_id"],
            r["implied_resource_id"],
            r["implied_code"],
            r["quantity"],
            r["valid_from"].isoformat() if r["valid_from"] else None,
            r["valid_to"].isoformat() if r["valid_to"] else None,
        )
        for r in rows
    }


def test_implies_land_and_imply_events_refresh_them_like_a_full_load(
    sb: Any, tmp_path: Path
) -> None:
    opener = sandbox_opener(sb)
    lake = Lake(tmp_path / "incremental")
    report = apply_changes(lake, opener, _settings(sb))
    served = _served(sb)
    assert {r[0] for r in served} == set(HOLDERS)  # every holder kind has implies
    assert _landed(lake) == served
    with sb.world.lock:
        n_holders = len({r["resourceId"] for c, _ in HOLDERS.values() for r in sb.world.records(c)})
    assert report.landed["implies"].requests == n_holders  # one request per holder

    world = sb.world
    # within one business day: the events alone must carry the changes (no day roll re-read)
    with world.lock:
        first = world.t["events"].next_id
        t = world.now + timedelta(minutes=5)
        type_id = world.records("accommodationtypes")[0]["resourceId"]
        world._add_imply("implies", type_id, "ACCOMMODATIONTYPE", "PETS", t.toordinal())
        world._event("IMPLY_EVENT", type_id, "UPDATE", t, entity_type="ACCOMMODATIONTYPE")
        offer_imply = next(r for r in world.records("implies") if r["holderType"] == "OFFER")
        world.t["implies"].delete(offer_imply["implyId"])
        world._event("IMPLY_EVENT", offer_imply["resourceId"], "UPDATE", t, entity_type="OFFER")
        unit_id = int(world.t["units"].key_list()[0])
        world._add_imply("unitimplies", unit_id, "UNIT", "LINEN", t.toordinal())
        world._event("IMPLY_EVENT", unit_id, "UPDATE", t, entity_type="UNIT")
    world.advance(1)
    with world.lock:
        events = [e for e in world.records("events") if e["eventId"] >= first]
    plan = plan_changes(events)
    assert {("ACCOMMODATIONTYPE", type_id), ("OFFER", offer_imply["resourceId"])} <= (
        plan.holders["implies"]
    )
    assert plan.not_modelled["IMPLY_EVENT/UNIT"] >= 1
    assert all(kind != "UNIT" for kind, _ in plan.holders["implies"])
    report = apply_changes(lake, opener, _settings(sb))
    assert report.mode == "incremental" and not report.day_rolled
    assert report.plan["not_modelled"]["IMPLY_EVENT/UNIT"] >= 1
    landing = report.landed["implies"]
    assert landing.tombstones >= 1  # the offer's imply that disappeared
    assert landing.requests == len(plan.holders["implies"])  # only the named holders
    served_after = _served(sb)
    assert served_after != served
    assert offer_imply["implyId"] not in {r[2] for r in _landed(lake)}
    assert _landed(lake) == served_after

    _same_as_fresh(lake, sb, tmp_path / "fresh1")

    # a promotion with an imply, then withdrawn (OFFER_EVENT DELETE): its implies go with it
    with world.lock:
        t = world.now + timedelta(minutes=5)
        world._change_promo(t)  # none yet: one is created
        promo = world.records("offers")[-1]["resourceId"]
        world._add_imply("implies", promo, "OFFER", "LINEN", t.toordinal())
        world._event("IMPLY_EVENT", promo, "CREATE", t, entity_type="OFFER")
    world.advance(1)
    apply_changes(lake, opener, _settings(sb))
    assert ("OFFER", promo) in {(r[0], r[1]) for r in _landed(lake)}
    assert _landed(lake) == _served(sb)
    with world.lock:
        for _ in range(50):
            world._change_promo(world.now)
            if promo not in {o["resourceId"] for o in world.records("offers")}:
                break
    world.advance(1)
    report = apply_changes(lake, opener, _settings(sb))
    assert report.mode == "incremental" and not report.day_rolled
    assert promo not in lake.current_ids("offers", "resource_id")
    assert ("OFFER", promo) not in {(r[0], r[1]) for r in _landed(lake)}
    assert _landed(lake) == _served(sb)
    _same_as_fresh(lake, sb, tmp_path / "fresh2")


def _same_as_fresh(lake: Lake, sb: Any, path: Path) -> None:
    fresh = Lake(path)
    apply_changes(fresh, sandbox_opener(sb), _settings(sb))
    diff = table_differences(_data(lake.current("implies")), _data(fresh.current("implies")))
    assert diff is None, diff


def test_unit_implies_are_deliberately_not_read() -> None:
    spec = CATALOGUE.by_name["implies"]
    assert {h.kind for h in spec.holders} == set(HOLDERS)
    assert "UNIT" in spec.unread_holders and spec.holder("UNIT") is None
