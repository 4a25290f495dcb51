"""Offers, additions and implies leave the rest of the world as it was: a world without them
(their builder and their draws switched off) serves the same records and the same other events,
at generation and after `advance`; and the offers name what the bills discount."""

from __future__ import annotations

import json

import pytest

from sandbox.protocol import COLLECTIONS
from sandbox.world.core import World

NEW = {"offers", "offerrates", "typeadditions", "offeradditions", "implies", "unitimplies"}
NEW_EVENTS = {"OFFER_EVENT", "ADDITION_EVENT", "IMPLY_EVENT"}


def _served(world: World) -> str:
    out = {c: list(world.records(c)) for c in COLLECTIONS if c not in NEW | {"events"}}
    out["events"] = [
        {k: v for k, v in e.items() if k != "eventId"}
        for e in world.records("events")
        if e["eventType"] not in NEW_EVENTS
    ]
    return json.dumps(out, sort_keys=True, default=str)


@pytest.mark.parametrize("seed", [7, 3])
def test_the_other_collections_are_unchanged(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(seed=seed)
    world.advance(24 * 10)
    assert {e["eventType"] for e in world.records("events")} & NEW_EVENTS  # they did change
    monkeypatch.setattr(World, "_build_offers", lambda self, far_past: None)
    monkeypatch.setattr(World, "_draw_offer_changes", lambda self, start, end: [])
    without = World(seed=seed)
    without.advance(24 * 10)
    assert not list(without.records("offers"))
    assert _served(without) == _served(world)


def test_the_offers_name_what_the_bills_discount() -> None:
    world = World(seed=7)
    offers = {o["resourceId"]: o for o in world.records("offers")}
    discounted = [
        ln for ln in world.records("billlines") if ln["resourceType"] == "SPECIAL" and ln["total"]
    ]
    assert discounted and {ln["resourceId"] for ln in discounted} == {900009}
    early = offers[900009]
    assert early["code"] == "EARLYBIRD" and early["minDaysBeforeArrival"] == 120
    assert {r["value"] for r in early["rates"]} == {-10.0}
    assert early["rates"] == list(world.children("offerrates", 900009))
    assert all(ln["total"] < 0 for ln in discounted)
