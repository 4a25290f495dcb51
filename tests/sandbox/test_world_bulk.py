"""The bulk history: reservations kept as columns until something touches them (thawing)."""

from __future__ import annotations

import pytest

from sandbox.world import World, WorldError
from sandbox.world.clock import cents
from sandbox.world.states import CODES, history_is_legal

ITEM = {10, 20, 190, 250}


@pytest.fixture()
def world() -> World:
    return World(seed=11)


def _frozen(w: World, status: str) -> int:
    for rid in w.keys("reservations"):
        rec = w.get("reservations", rid)
        if rid not in w.res and rec is not None and rec["status"] == CODES[status]:
            return rid
    raise AssertionError(f"no frozen {status} reservation")


def _served(w: World, rid: int) -> dict:
    return {
        "rec": w.get("reservations", rid),
        "rrs": w.children("reservedresources", rid),
        "lines": w.children("billlines", rid),
        "subjects": w.children("subjects", rid),
        "history": w.status_history(rid),
    }


def test_generated_reservations_are_frozen_and_thaw_unchanged(world: World) -> None:
    assert len(world.res) < len(world.keys("reservations")) // 10
    rid = _frozen(world, "CHECKED_OUT")
    before = _served(world, rid)
    assert history_is_legal(before["history"]) and before["history"][-1][1] == "CHECKED_OUT"
    r = world._res(rid)  # thaw
    assert r is not None and world.res[rid] is r
    assert _served(world, rid) == before
    assert world.get("reservations", rid) is r.rec  # the served record is the live one now
    for payer, bill in r.bills.items():
        lines = [ln for ln in before["lines"] if ln["payerType"] == payer]
        total = next(ln for ln in lines if ln["billLineType"] == 70)
        assert (
            sum(cents(ln["total"]) for ln in lines if ln["billLineType"] in ITEM)
            == cents(total["total"])
            == bill.total
        )
        paid = next(ln for ln in lines if ln["billLineType"] == 80)
        assert cents(paid["total"]) == bill.paid


def test_update_of_a_frozen_reservation_is_served_and_announced(world: World) -> None:
    rid = _frozen(world, "CHECKED_OUT")
    hw = world.event_high_water()
    world.update_reservation(rid, {"expectedArrivalDateTime": "2026-10-01T15:30:00"})
    assert world.get("reservations", rid)["expectedArrivalDateTime"] == "2026-10-01T15:30:00"
    events = [e for e in world.records("events") if e["eventId"] > hw]
    assert [(e["entityId"], e["entityAction"]) for e in events] == [(rid, "UPDATE")]


def test_state_moves_apply_to_frozen_reservations(world: World) -> None:
    rid = _frozen(world, "CANCELLED")
    with pytest.raises(WorldError):  # CANCELLED -> CHECKED_OUT is not in the state table
        world.update_reservation(rid, {"action": "CHECKED_OUT"})
    out = world.update_reservation(rid, {"action": "CANCEL"})
    assert out["status"] == CODES["DEF_CANCELLED"]
    assert [s for _, s in world.status_history(rid)][-2:] == ["CANCELLED", "DEF_CANCELLED"]


def test_purging_a_frozen_reservation_removes_its_records(world: World) -> None:
    victim = world._oldest_with_status(("DECLINED", "EXPIRED"))
    assert victim is not None
    rid = victim.rid
    n_lines = len(world.children("billlines", rid))
    n_all = len(world.keys("billlines"))
    assert n_lines > 0
    world._purge(victim, world.now)
    assert world.get("reservations", rid) is None
    assert world.children("billlines", rid) == []
    assert world.children("reservedresources", rid) == []
    assert world.children("subjects", rid) == []
    assert len(world.keys("billlines")) == n_all - n_lines
    assert rid not in list(world.keys("reservations"))
    assert any(d[0] == rid for d in world.deleted)


def test_scheduled_steps_of_frozen_reservations_fire_on_advance(world: World) -> None:
    pending = {rid for _t, _s, rid, _a, _arg in world.heap}
    frozen_pending = [rid for rid in pending if rid not in world.res]
    assert frozen_pending
    hw = world.event_high_water()
    world.advance(72)
    thawed = [rid for rid in frozen_pending if rid in world.res]
    assert thawed
    changed = {
        e["entityId"]
        for e in world.records("events")
        if e["eventId"] > hw and e["eventType"] == "RESERVATION_EVENT"
    }
    assert set(thawed) & changed
    for rid in thawed:
        assert history_is_legal(world.status_history(rid))


def test_grouped_lists_each_keys_values_in_their_order() -> None:
    import numpy as np

    from sandbox.world.bulk import _grouped

    keys = np.array([5, 3, 5, 9, 3, 5])
    values = np.array([10, 11, 12, 13, 14, 15])
    assert _grouped(keys, values) == {5: [10, 12, 15], 3: [11, 14], 9: [13]}
    assert _grouped(keys[:0], values[:0]) == {}
