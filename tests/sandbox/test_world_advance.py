"""Moving the clock: every change leaves an event, invariants survive, and it is repeatable."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta

import pytest

from sandbox.world import World, WorldError
from sandbox.world.clock import cents
from sandbox.world.states import HOLDING, NAMES, history_is_legal

ITEM = {10, 20, 190, 250}


@pytest.fixture(scope="module")
def advanced() -> tuple[World, dict, dict, int, object]:
    w = World(seed=11)
    before = {r["reservationId"]: dict(r) for r in w.records("reservations")}
    hw = w.event_high_water()
    start = w.now
    summary = w.advance(24 * 10)
    return w, before, summary, hw, start


def test_clock_moves_and_summary(advanced) -> None:
    w, _before, summary, hw, start = advanced
    assert w.now == start + timedelta(days=10)
    assert summary["n_created"] > 0 and summary["n_moves"] > 0
    assert summary["firstEventId"] == hw + 1
    with pytest.raises(WorldError):
        w.advance(-1)


def test_every_change_has_an_event(advanced) -> None:
    w, before, _summary, hw, start = advanced
    new_events = [e for e in w.records("events") if e["eventId"] > hw]
    ids = [e["eventId"] for e in new_events]
    assert ids == sorted(set(ids))
    dates = [e["eventDate"] for e in new_events]
    assert dates == sorted(dates)
    assert all(start.isoformat() <= d[:19] <= w.now.isoformat() for d in dates)
    by_res = defaultdict(set)
    for e in new_events:
        if e["eventType"] == "RESERVATION_EVENT":
            by_res[e["entityId"]].add(e["entityAction"])
    changed = 0
    for rec in w.records("reservations"):
        old = before.get(rec["reservationId"])
        if old is None:
            assert "CREATE" in by_res[rec["reservationId"]]
            changed += 1
        elif old != rec:
            assert rec["modifiedDate"] > old["modifiedDate"]
            assert "UPDATE" in by_res[rec["reservationId"]]
            changed += 1
    assert changed > 10
    gone = set(before) - {r["reservationId"] for r in w.records("reservations")}
    for rid in gone:
        assert "DELETE" in by_res[rid]
    kinds = {e["eventType"] for e in new_events}
    assert {"RESERVATION_EVENT", "AVAILABILITY_EVENT", "CUSTOMER_EVENT"} <= kinds


def test_invariants_after_advance(advanced) -> None:
    w = advanced[0]
    today = w.now.date()
    nights: dict[tuple[int, int], int] = {}
    for rec in w.records("reservations"):
        rid = rec["reservationId"]
        hist = w.status_history(rid)
        assert history_is_legal(hist), hist
        st = NAMES[rec["status"]]
        if st in ("PROVISIONAL", "DEFINITIVE", "CHECKED_IN"):
            assert date.fromisoformat(rec["departureDate"]) >= today
        if st in HOLDING:
            unit = next(
                rr["unitId"]
                for rr in w.children("reservedresources", rid)
                if rr["type"] == "ACCOMMODATIONTYPE"
            )
            a = date.fromisoformat(rec["arrivalDate"]).toordinal()
            for o in range(a, date.fromisoformat(rec["departureDate"]).toordinal()):
                assert (unit, o) not in nights
                nights[(unit, o)] = rid
        lines = w.children("billlines", rid)
        for payer in {ln["payerType"] for ln in lines}:
            pl = [ln for ln in lines if ln["payerType"] == payer]
            items = sum(cents(ln["total"]) for ln in pl if ln["billLineType"] in ITEM)
            assert [cents(ln["total"]) for ln in pl if ln["billLineType"] == 70] == [items]
    for _rid, hist in w.deleted:
        assert history_is_legal([(t, s) for t, s in hist])


def test_advance_is_deterministic() -> None:
    """The same seed and the same calls give the same world (spontaneous draws depend on the
    call pattern, so advancing 12 h + 24 h may differ from 36 h at once)."""
    a, c = World(seed=3), World(seed=3)
    a.advance(36)
    c.advance(36)
    assert a.records("events") == c.records("events")
    assert a.records("billlines") == c.records("billlines")
    assert a.records("reservations") == c.records("reservations")


def test_churn_inserts_and_deletes_with_events() -> None:
    w = World(seed=5)
    hw = w.event_high_water()
    n = len(w.keys("reservations"))
    out = w.churn("reservations")
    assert out["deleted"] is not None and w.get("reservations", out["deleted"]) is None
    assert w.children("billlines", out["deleted"]) == []
    if out["inserted"] is not None:
        assert w.get("reservations", out["inserted"]) is not None
    assert len(w.keys("reservations")) == n + (out["inserted"] is not None) - 1
    keys = w.keys("reservations")
    assert list(keys) == sorted(keys) and len(w.records("reservations")) == len(keys)
    events = [e for e in w.records("events") if e["eventId"] > hw]
    assert any(e["entityAction"] == "DELETE" and e["entityId"] == out["deleted"] for e in events)
    out = w.churn("customers")
    assert w.get("customers", out["inserted"]) is not None
    assert w.churn("units") == {"inserted": None, "deleted": None}
