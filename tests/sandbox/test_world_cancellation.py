"""Cancellations: the compensation line (190) replaces the booked items, the bill settles at it,
the refund webhook carries the rest of the payments, and the journals and the bulk agree."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from sandbox.world import World
from sandbox.world.clock import cents
from sandbox.world.states import CODES

ITEM = {10, 20, 190, 250}
SUMMARY = {40, 60, 70, 80, 90, 100, 110, 120}
# the policy as docs/sandbox.md states it: days before arrival -> % of the bill value retained
POLICY = [(120, 15), (90, 15), (89, 50), (30, 50), (29, 75), (7, 75), (6, 90), (1, 90), (0, 100)]


class Hooks:
    """A webhook sender that keeps what the world sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def send(self, type_: str, data: dict[str, Any], occurred: datetime, now: datetime) -> None:
        self.sent.append((type_, dict(data)))

    def close(self) -> None:
        pass

    def of(self, rid: int, type_: str) -> list[dict[str, Any]]:
        return [d for t, d in self.sent if t == type_ and d["reservationId"] == rid]


@pytest.fixture()
def world() -> World:
    w = World(seed=7)
    w.attach_webhooks(Hooks())
    return w


def _book(w: World, days_out: int, nights: int = 4, **extra: Any) -> int:
    arrival = w.now.date() + timedelta(days=days_out)
    recs = w.availability(
        arrival_from=arrival,
        arrival_to=arrival,
        durations=[nights],
        distribution_channel_code="WEB-EUR",
    )
    free = [r for r in recs if r["availableUnits"] > 0 and r["maxCapacity"] >= 2]
    assert free, "no type free for the scripted stay"
    body = {
        "accommodationTypes": [
            {
                "resourceId": free[0]["resourceId"],
                "duration": nights,
                "subjects": {"persons": [{"age": 40, "quantity": 2}]},
                "overrideValue": 95,
            }
        ],
        "categoryCode": "GUEST",
        "distributionChannelCode": "WEB-EUR",
        "customer": {"firstName": "Can", "lastName": "Cel"},
        "arrivalDate": arrival.isoformat(),
        "addOns": ["CLEANING"],
        "autopilot": False,
    }
    body.update(extra)
    return w.create_reservation(body)["reservationId"]


def _bills(w: World, rid: int) -> dict[str, dict[str, Any]]:
    """Per payer: the item lines and the summary figures in cents."""
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {"items": [], "sum": {}})
    for ln in w.children("billlines", rid):
        bill = out[ln["payerType"]]
        if ln["billLineType"] in ITEM:
            bill["items"].append(ln)
        else:
            bill["sum"][ln["billLineType"]] = cents(ln["total"])
    return dict(out)


def _journal(w: World, rid: int) -> list[dict[str, Any]]:
    return [e for e in w.records("journalentries") if e["reservationId"] == rid]


def _net(entries: list[dict[str, Any]]) -> int:
    return sum(cents(e["creditVatIncluded"]) - cents(e["debitVatIncluded"]) for e in entries)


@pytest.mark.parametrize(("days_out", "pct"), POLICY)
def test_cancelling_a_fully_paid_booking_keeps_the_policy_compensation(
    world: World, days_out: int, pct: int
) -> None:
    rid = _book(world, days_out)
    world.pay(rid)  # everything
    before = _bills(world, rid)["CUSTOMER"]
    paid, total = before["sum"][80], before["sum"][70]
    tax = sum(cents(x["total"]) for x in before["items"] if x["billLineType"] == 250)
    assert paid == total > 0 and before["sum"][90] == 0
    value = total - tax
    world.update_reservation(rid, {"action": "CANCEL"})

    after = _bills(world, rid)
    assert list(after) == ["CUSTOMER"]
    bill = after["CUSTOMER"]
    [line] = bill["items"]
    compensation = cents(line["total"])
    assert compensation == (value * pct + 50) // 100  # the policy's share, half up
    assert line["billLineType"] == 190 and line["description"] == "Cancellation compensation"
    assert (line["quantity"], line["multiplier"], cents(line["value"])) == (1, 1, compensation)
    rec = world.get("reservations", rid)
    assert (line["startDate"], line["endDate"]) == (rec["arrivalDate"], rec["departureDate"])
    # TOTAL = the compensation, PAID = what the refund left, DUE = TO_PAY = 0
    assert bill["sum"][70] == bill["sum"][80] == compensation
    assert bill["sum"][90] == bill["sum"][120] == 0
    assert bill["sum"][40] == compensation  # no tourist tax left on the bill
    hooks: Hooks = world.webhooks
    refunds = hooks.of(rid, "reservation.refund_given")
    refunded = sum(cents(h["amount"]) for h in refunds)
    assert refunded == paid - bill["sum"][80] == total - compensation
    assert all(h["currencyCode"] == "EUR" and h["status"] == CODES["CANCELLED"] for h in refunds)
    assert len(refunds) == (1 if refunded else 0)
    assert hooks.of(rid, "reservation.bill_change")[-1]["amount"] == compensation / 100
    # the journals: the booking reversed on its ledgers, the compensation credited to 8300
    entries = _journal(world, rid)
    revenue = [e for e in entries if e["ledgerNumber"].startswith("8")]
    comp = [e for e in revenue if e["ledgerNumber"] == "8300"]
    assert _net(comp) == compensation and _net(revenue) == compensation
    assert all(e["mutationDate"] == rec["cancelDate"][:10] for e in comp)
    assert _net([e for e in entries if e["ledgerNumber"] == "1750"]) == 0


def test_compensation_never_exceeds_what_was_paid(world: World) -> None:
    rid = _book(world, 10)  # 75 % retained of the value, but only a deposit was paid
    world.pay(rid, 50)
    world.update_reservation(rid, {"action": "CANCEL"})
    bill = _bills(world, rid)["CUSTOMER"]
    assert [cents(x["total"]) for x in bill["items"]] == [5000]
    assert bill["sum"][70] == bill["sum"][80] == 5000 and bill["sum"][90] == 0
    assert world.webhooks.of(rid, "reservation.refund_given") == []


def test_an_unpaid_cancellation_costs_nothing(world: World) -> None:
    rid = _book(world, 3)
    world.update_reservation(rid, {"action": "CANCEL"})
    bill = _bills(world, rid)["CUSTOMER"]
    assert [(x["billLineType"], cents(x["total"])) for x in bill["items"]] == [(190, 0)]
    assert bill["sum"][70] == bill["sum"][80] == bill["sum"][90] == 0
    assert _net([e for e in _journal(world, rid) if e["ledgerNumber"].startswith("8")]) == 0


def test_an_agent_booking_keeps_no_commission_once_cancelled(world: World) -> None:
    channel = next(c for c in world.records("distributionchannels") if c["commissionPercentage"])
    rid = _book(world, 50, distributionChannelCode=channel["code"])
    world.pay(rid)
    agent = _bills(world, rid)["AGENT"]
    assert agent["sum"][100] > 0
    world.update_reservation(rid, {"action": "CANCEL"})
    after = _bills(world, rid)
    assert set(after) == {"CUSTOMER", "AGENT"}
    for bill in after.values():
        assert [x["billLineType"] for x in bill["items"]] == [190]
        assert bill["sum"][70] == bill["sum"][80] and bill["sum"][120] == 0
    assert after["AGENT"]["sum"][100] == after["AGENT"]["sum"][110] == 0
    # the agent had paid the bill net of commission: the compensation is 50 % at most of that
    assert 0 < after["AGENT"]["sum"][70] <= agent["sum"][80]


def test_a_rebooking_bills_the_stay_again(world: World) -> None:
    rid = _book(world, 40)
    world.pay(rid)
    booked = _bills(world, rid)["CUSTOMER"]
    world.update_reservation(rid, {"action": "CANCEL"})
    kept = _bills(world, rid)["CUSTOMER"]["sum"][80]
    out = world.update_reservation(rid, {"action": "CONFIRM"})
    assert out["status"] == CODES["DEFINITIVE"]  # the compensation kept counts as paid
    again = _bills(world, rid)["CUSTOMER"]

    def shape(bill: dict[str, Any]) -> list[tuple[Any, ...]]:
        fields = ("billLineType", "resourceId", "quantity", "total", "startDate", "endDate")
        return [tuple(x[f] for f in fields) for x in bill["items"]]

    assert shape(again) == shape(booked)
    assert again["sum"][70] == booked["sum"][70] and again["sum"][80] == kept
    assert again["sum"][90] == booked["sum"][70] - kept
    revenue = [e for e in _journal(world, rid) if e["ledgerNumber"].startswith("8")]
    items = sum(cents(x["total"]) for x in again["items"] if x["billLineType"] == 10)
    assert _net(revenue) == items
    assert _net([e for e in revenue if e["ledgerNumber"] == "8300"]) == 0


def test_bulk_cancellations_follow_the_same_policy(world: World) -> None:
    """The generated history's cancelled bills have the live bills' shape, the policy's
    compensation (at most its share of the value cancelled) and journals that reverse it."""
    fz = world._fz
    base = world.t["reservations"].block.base
    by_rid: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in world.records("journalentries"):
        by_rid[e["reservationId"]].append(e)
    checked = at_share = 0
    for rec in world.records("reservations"):
        rid = rec["reservationId"]
        if rec["status"] not in (CODES["CANCELLED"], CODES["DEF_CANCELLED"]) or rid in world.res:
            continue
        value = int(fz.cancel_value[rid - base])
        days = date.fromisoformat(rec["arrivalDate"]) - date.fromisoformat(rec["cancelDate"][:10])
        pct = next((p for d, p in POLICY if days.days >= d), 100)
        compensation = 0
        for bill in _bills(world, rid).values():
            [line] = bill["items"]
            assert line["billLineType"] == 190 and line["vatRate"] == 9.0
            assert (line["startDate"], line["endDate"]) == (
                rec["arrivalDate"],
                rec["departureDate"],
            )
            assert bill["sum"][70] == bill["sum"][80] == cents(line["total"])
            assert bill["sum"][90] == bill["sum"][120] == bill["sum"].get(100, 0) == 0
            compensation += cents(line["total"])
        share = (value * pct + 50) // 100
        assert 0 <= compensation <= share + 1  # per bill rounding: at most a cent per bill
        at_share += compensation >= share - 1
        # the journals: each booked ledger's latest entry reverses it; 8300 has the rest
        latest: dict[str, int] = {}
        for e in by_rid[rid]:
            if e["ledgerNumber"].startswith("8"):
                latest[e["ledgerNumber"]] = cents(e["creditVatIncluded"]) - cents(
                    e["debitVatIncluded"]
                )
        assert -sum(v for lg, v in latest.items() if lg != "8300") == value
        assert _net([e for e in by_rid[rid] if e["ledgerNumber"].startswith("8")]) == compensation
        checked += 1
    assert checked > 100 and 0 < at_share < checked  # fully paid ones and deposits alike


def test_the_worked_example_of_the_metric_dictionary(world: World) -> None:
    """docs/metrics.md, "a cancelled booking": 475.00 paid, 45 days out, 227.50 kept."""
    rid = _book(world, 45)
    world.pay(rid)
    before = _bills(world, rid)["CUSTOMER"]
    lines = {x["description"]: cents(x["total"]) for x in before["items"]}
    assert sorted(lines.values()) == [2000, 7500, 38000] and before["sum"][80] == 47500
    world.update_reservation(rid, {"action": "CANCEL"})
    after = _bills(world, rid)["CUSTOMER"]
    assert [cents(x["total"]) for x in after["items"]] == [22750]
    assert (after["sum"][70], after["sum"][80], after["sum"][90]) == (22750, 22750, 0)
    [refund] = world.webhooks.of(rid, "reservation.refund_given")
    assert refund["amount"] == 247.5
    revenue = [e for e in _journal(world, rid) if e["ledgerNumber"].startswith("8")]
    reversed_ = {
        e["ledgerNumber"]: cents(e["debitVatIncluded"]) for e in revenue if e["debitVatIncluded"]
    }
    assert reversed_ == {"8000": 38000, "8100": 7500}
