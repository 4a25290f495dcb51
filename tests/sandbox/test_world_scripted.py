"""Scripted calls: creation, the state table, payments, extensions, merges, ground truth."""

from __future__ import annotations

from datetime import date

import pytest

from sandbox.world import World, WorldError
from sandbox.world.allocation import allocate
from sandbox.world.clock import cents
from sandbox.world.states import CODES


@pytest.fixture(scope="module")
def world() -> World:
    return World(seed=7)


def _body(resource_id: int, arrival: str, nights: int, **extra) -> dict:
    body = {
        "accommodationTypes": [
            {
                "resourceId": resource_id,
                "duration": nights,
                "subjects": {"persons": [{"age": 40, "quantity": 2}]},
            }
        ],
        "categoryCode": "GUEST",
        "distributionChannelCode": "WEB-EUR",
        "customer": {
            "firstName": "Test",
            "lastName": "Guest",
            "email": "t@example.org",
            "countryCode": "NL",
            "language": "nl",
        },
        "arrivalDate": arrival,
    }
    body.update(extra)
    return body


def _free_type(w: World, arrival: str, nights: int) -> int:
    recs = w.availability(
        arrival_from=date.fromisoformat(arrival),
        arrival_to=date.fromisoformat(arrival),
        durations=[nights],
        distribution_channel_code="WEB-EUR",
    )
    free = [r for r in recs if r["availableUnits"] > 0]
    assert free, "no type free for the scripted stay"
    return free[0]["resourceId"]


def _events_for(w: World, rid: int, after: int) -> list[dict]:
    return [
        e
        for e in w.records("events")
        if e["eventId"] > after and e["eventType"] == "RESERVATION_EVENT" and e["entityId"] == rid
    ]


def test_allocation_rule() -> None:
    assert [v for _, v in allocate(1000, 1, 3)] == [334, 333, 333]
    assert [v for _, v in allocate(-1000, 1, 3)] == [-334, -333, -333]
    assert sum(v for _, v in allocate(99_999, 10, 7)) == 99_999


@pytest.mark.parametrize(
    "patch, message",
    [
        ({"accommodationTypes": []}, "accommodationTypes"),
        ({"categoryCode": "NOPE"}, "categoryCode"),
        ({"distributionChannelCode": "NOPE"}, "distributionChannelCode"),
        ({"customer": None}, "customer"),
        ({"arrivalDate": None}, "arrivalDate"),
        ({"arrivalDate": "2020-01-01"}, "past"),
    ],
)
def test_create_validates(world: World, patch: dict, message: str) -> None:
    rid = world.keys("accommodationtypes")[0]
    body = _body(rid, "2027-02-01", 3)
    body.update(patch)
    with pytest.raises(WorldError, match=message):
        world.create_reservation(body)


def test_state_table_through_the_api(world: World) -> None:
    arrival = "2027-02-08"
    rt = _free_type(world, arrival, 4)
    hw = world.event_high_water()
    out = world.create_reservation(_body(rt, arrival, 4, status="QUOTATION"))
    rid = out["reservationId"]
    assert out["status"] == CODES["QUOTATION"] and out["reservationNumber"]
    for action in ("CANCEL", "CHECKED_IN", "CHECKED_OUT", "BOGUS"):
        with pytest.raises(WorldError):
            world.update_reservation(rid, {"action": action})
    world.update_reservation(rid, {"action": "CONFIRM"})
    assert world.get("reservations", rid)["status"] == CODES["PROVISIONAL"]
    with pytest.raises(WorldError):
        world.update_reservation(rid, {"action": "CHECKED_IN"})  # needs a payment first
    world.pay(rid, 10.0)
    assert world.get("reservations", rid)["status"] == CODES["DEFINITIVE"]
    with pytest.raises(WorldError):
        world.update_reservation(rid, {"action": "DECLINE"})  # DEFINITIVE: only CANCEL / CHECKED_IN
    rec = world.update_reservation(rid, {"expectedArrivalDateTime": "2027-02-08T16:30:00"})
    assert rec["expectedArrivalDateTime"] == "2027-02-08T16:30:00"
    world.update_reservation(rid, {"action": "CHECKED_IN"})
    world.update_reservation(rid, {"action": "CHECKED_OUT"})
    hist = [s for _, s in world.status_history(rid)]
    assert hist == ["QUOTATION", "PROVISIONAL", "DEFINITIVE", "CHECKED_IN", "CHECKED_OUT"]
    assert len(_events_for(world, rid, hw)) >= 6
    with pytest.raises(WorldError, match="not found"):
        world.update_reservation(-5, {"action": "CONFIRM"})


def test_cancel_then_definitive_cancel(world: World) -> None:
    arrival = "2027-03-01"
    rt = _free_type(world, arrival, 7)
    rid = world.create_reservation(_body(rt, arrival, 7))["reservationId"]
    world.update_reservation(rid, {"action": "CANCEL"})
    rec = world.get("reservations", rid)
    assert rec["status"] == CODES["CANCELLED"] and rec["cancelDate"] is not None
    world.update_reservation(rid, {"action": "CANCEL"})
    assert world.get("reservations", rid)["status"] == CODES["DEF_CANCELLED"]
    with pytest.raises(WorldError):
        world.update_reservation(rid, {"action": "CONFIRM"})


def test_unit_hold_blocks_and_frees_availability(world: World) -> None:
    arrival = "2027-03-15"
    rt = _free_type(world, arrival, 3)

    def avail() -> int:
        recs = world.availability(
            arrival_from=date(2027, 3, 15),
            arrival_to=date(2027, 3, 15),
            resource_ids=[rt],
            durations=[3],
        )
        return recs[0]["availableUnits"]

    n = avail()
    rids = [world.create_reservation(_body(rt, arrival, 3))["reservationId"] for _ in range(n)]
    assert avail() == 0
    with pytest.raises(WorldError, match="no unit"):
        world.create_reservation(_body(rt, arrival, 3))
    world.update_reservation(rids[0], {"action": "DECLINE"})
    assert avail() == 1


def test_init_delete_removes_the_record(world: World) -> None:
    arrival = "2027-04-05"
    rt = _free_type(world, arrival, 2)
    hw = world.event_high_water()
    rid = world.create_reservation(_body(rt, arrival, 2, status="INIT"))["reservationId"]
    assert world.children("billlines", rid)
    world.update_reservation(rid, {"action": "DELETE"})
    assert world.get("reservations", rid) is None
    assert rid not in world.keys("reservations")
    assert world.children("billlines", rid) == [] == world.children("reservedresources", rid)
    actions = [e["entityAction"] for e in _events_for(world, rid, hw)]
    assert actions[0] == "CREATE" and actions[-1] == "DELETE"


def test_customer_merge(world: World) -> None:
    with_res = [c for c, rs in world.cust_res.items() if rs and world.get("customers", c)]
    survivor, removed = with_res[10], with_res[20]
    moved = list(world.cust_res[removed])
    hw = world.event_high_water()
    world.merge_customers(survivor, removed)
    assert world.get("customers", removed) is None
    assert removed not in world.keys("customers")
    for rid in moved:
        assert world.get("reservations", rid)["customerId"] == survivor
        assert _events_for(world, rid, hw)
    merge = [
        e for e in world.records("events") if e["eventId"] > hw and e["entityAction"] == "MERGE"
    ]
    assert merge == [
        {**merge[0], "eventType": "CUSTOMER_EVENT", "entityId": survivor, "oldEntityId": removed}
    ]
    with pytest.raises(WorldError):
        world.merge_customers(survivor, removed)


def test_ground_truth_worked_example() -> None:
    """metrics.md: Dec 20 - Jan 5 at 100/night = 1,200 in December and 400 in January;
    extending to Jan 8 adds 300 to January and leaves December alone."""
    w = World(seed=7)
    recs = w.availability(
        arrival_from=date(2026, 12, 20),
        arrival_to=date(2026, 12, 20),
        durations=[19],
        distribution_channel_code="WEB-EUR",
    )
    rt = next(r["resourceId"] for r in recs if r["availableUnits"] > 0)
    loc = w.get("accommodationtypes", rt)["locationId"]

    def month_sums() -> dict:
        g = w.ground_truth()
        rev = g["room_revenue"]
        rev = rev[(rev.resource_id == rt) & (rev.currency_code == "EUR")]
        nights = g["nights"][g["nights"].resource_id == rt]
        out = {}
        for key, month in (("dec", (2026, 12)), ("jan", (2027, 1))):
            rm = rev[[(d.year, d.month) == month for d in rev.date]]
            nm = nights[[(d.year, d.month) == month for d in nights.date]]
            out[key] = (int(rm.room_revenue_cents.sum()), int(nm.nights_sold.sum()))
        return out

    before = month_sums()
    body = _body(rt, "2026-12-20", 16)
    body["accommodationTypes"][0]["overrideValue"] = 100
    rid = w.create_reservation(body)["reservationId"]
    rent = [ln for ln in w.children("billlines", rid) if ln["resourceType"] == "ACCOMMODATIONTYPE"]
    assert [(ln["value"], ln["quantity"], ln["total"]) for ln in rent] == [(100.0, 16, 1600.0)]
    after = month_sums()
    assert (
        after["dec"][0] - before["dec"][0] == 120_000 and after["dec"][1] - before["dec"][1] == 12
    )
    assert after["jan"][0] - before["jan"][0] == 40_000 and after["jan"][1] - before["jan"][1] == 4
    w.change_stay(rid, "2027-01-08")
    ext = month_sums()
    assert ext["dec"] == after["dec"]
    assert ext["jan"][0] - after["jan"][0] == 30_000 and ext["jan"][1] - after["jan"][1] == 3
    rent = [ln for ln in w.children("billlines", rid) if ln["resourceType"] == "ACCOMMODATIONTYPE"]
    assert [(ln["startDate"], ln["endDate"], ln["total"]) for ln in rent] == [
        ("2026-12-20", "2027-01-05", 1600.0),
        ("2027-01-05", "2027-01-08", 300.0),
    ]
    lines = w.children("billlines", rid)
    total = [cents(ln["total"]) for ln in lines if ln["billLineType"] == 70]
    assert total == [sum(cents(ln["total"]) for ln in lines if ln["billLineType"] in (10, 250))]
    assert w.get("reservations", rid)["departureDate"] == "2027-01-08"
    # a cancelled stay leaves the books: revenue and nights go back
    w.update_reservation(rid, {"action": "CANCEL"})
    assert month_sums() == before
    monthly = w.ground_truth()["reservations_monthly"]
    row = monthly[
        (monthly.location_id == loc)
        & (monthly.distribution_channel_id == 1)
        & (monthly.month == date(2026, 11, 1))
    ]
    assert int(row.cancelled.sum()) >= 1
