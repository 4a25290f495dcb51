"""The generated world: determinism, state histories, units, bills, finance, events."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import date, datetime

import pytest

from sandbox.protocol import CHILDREN, COLLECTIONS
from sandbox.world import World, truth_rates
from sandbox.world.clock import cents
from sandbox.world.states import (
    CANCELLED_STATES,
    CODES,
    HOLDING,
    NAMES,
    ON_BOOKS,
    history_is_legal,
)
from sandbox.world.truth_frames import lines_of, nights_of, reservations_of

ITEM = {10, 20, 190, 250}


@pytest.fixture(scope="module")
def world() -> World:
    return World(seed=7)


def _digest(w: World, names: tuple[str, ...]) -> str:
    return json.dumps({n: list(w.records(n)) for n in names}, sort_keys=True, default=str)


def test_same_seed_same_world_other_seed_other_world(world: World) -> None:
    names = ("reservations", "billlines", "customers", "events", "journalentries", "rates")
    again = World(seed=7)
    assert _digest(again, names) == _digest(world, names)
    assert again.now == world.now == datetime(2026, 11, 1)
    other = World(seed=8)
    assert _digest(other, ("reservations",)) != _digest(world, ("reservations",))


def test_sizes_keys_and_children(world: World) -> None:
    stats = world.stats()
    assert 2000 <= stats["reservations"] <= 8000
    assert stats["billlines"] > 5 * stats["reservations"]
    for name, pk in COLLECTIONS.items():
        keys = world.keys(name)
        recs = world.records(name)
        assert list(keys) == sorted(set(keys)), name
        assert [r[pk] for r in recs] == list(keys), name
        if keys:
            assert world.get(name, keys[0]) == recs[0]
            assert world.get(name, keys[-1]) == recs[-1]
    for child, (parent, link) in CHILDREN.items():
        pkeys = world.keys(parent)
        some = pkeys[len(pkeys) // 2]
        kids = world.children(child, some)
        assert all(k[link] == some for k in kids)
        assert len({k[COLLECTIONS[child]] for k in kids}) == len(kids)
    assert world.get("reservations", -1) is None


def test_reference_data(world: World) -> None:
    chans = world.records("distributionchannels")
    assert {c["currencyCode"] for c in chans} >= {"EUR", "GBP"}
    assert {c["code"]: c["commissionPercentage"] for c in chans}["OTA-EUR"] == 15.0
    kinds = {t["kindCode"] for t in world.records("accommodationtypes")}
    assert kinds == {"BUNGALOW", "CHALET", "LODGE", "CAMPING_PITCH"}
    today = world.now.date().isoformat()
    archived = [u["archivedFrom"] for u in world.records("units") if u["archivedFrom"]]
    assert any(a <= today for a in archived) and any(a > today for a in archived)
    rates = world.records("rates")
    assert any(r["applicableDays"] == ["FRI", "SAT"] for r in rates)
    assert all(isinstance(r["value"], float) and cents(r["value"]) % 1 == 0 for r in rates)
    assert len(world.capacities(world.keys("accommodationtypes")[0])) == 2


def test_every_reservation_follows_the_state_table(world: World) -> None:
    now = world.now
    statuses = Counter()
    for rec in world.records("reservations"):
        hist = world.status_history(rec["reservationId"])
        assert history_is_legal(hist), (rec["reservationId"], hist)
        assert CODES[hist[-1][1]] == rec["status"]
        statuses[hist[-1][1]] += 1
        st = hist[-1][1]
        dep = date.fromisoformat(rec["departureDate"])
        arr = date.fromisoformat(rec["arrivalDate"])
        if st in ON_BOOKS:
            if dep < now.date():
                assert st == "CHECKED_OUT", rec
            elif arr > now.date():
                assert st in ("PROVISIONAL", "DEFINITIVE"), rec
        if st in ("OPTIONAL", "QUOTATION", "REQUEST", "INIT"):
            assert arr >= now.date()
        if st in ("CANCELLED", "DEF_CANCELLED"):
            assert rec["cancelDate"] is not None
        assert rec["reservationDate"] <= rec["modifiedDate"]
    for st in (
        "CHECKED_OUT",
        "CHECKED_IN",
        "DEFINITIVE",
        "PROVISIONAL",
        "CANCELLED",
        "DEF_CANCELLED",
        "DECLINED",
        "EXPIRED",
    ):
        assert statuses[st] > 0, st
    total = sum(statuses.values())
    assert 0.03 < (statuses["CANCELLED"] + statuses["DEF_CANCELLED"]) / total < 0.2


def test_no_unit_is_double_booked(world: World) -> None:
    nights: dict[tuple[int, str], int] = {}
    for rec in world.records("reservations"):
        if NAMES[rec["status"]] not in HOLDING:
            continue
        acc = [
            rr
            for rr in world.children("reservedresources", rec["reservationId"])
            if rr["type"] == "ACCOMMODATIONTYPE"
        ]
        a = date.fromisoformat(rec["arrivalDate"]).toordinal()
        d = date.fromisoformat(rec["departureDate"]).toordinal()
        for o in range(a, d):
            key = (acc[0]["unitId"], o)
            assert key not in nights, (key, nights.get(key), rec["reservationId"])
            nights[key] = rec["reservationId"]


def test_reserved_resources(world: World) -> None:
    types = {t["resourceId"] for t in world.records("accommodationtypes")}
    units = {u["unitId"]: u["resourceId"] for u in world.records("units")}
    extras = 0
    for rec in world.records("reservations"):
        rrs = world.children("reservedresources", rec["reservationId"])
        acc = [rr for rr in rrs if rr["type"] == "ACCOMMODATIONTYPE"]
        assert len(acc) == 1
        rr = acc[0]
        assert rr["resourceId"] in types and units[rr["unitId"]] == rr["resourceId"]
        assert rr["rateTypeId"] is not None
        assert rr["startDate"] == rec["arrivalDate"] and rr["endDate"] == rec["departureDate"]
        extras += sum(1 for r in rrs if r["type"] == "EXTRA")
        assert world.get("customers", rec["customerId"]) is not None
    assert extras > 0


def _stay_list_prices(world: World) -> tuple[dict[tuple[int, int], int], dict[tuple, str]]:
    """List price (cents) of every stay night by the rate rule written from the records
    (sandbox.world.truth_rates), and the rates that set it, by their remark."""
    res = reservations_of(world)
    priced = truth_rates.stay_rate_nights(world, nights_of(res, lines_of(world, res)))
    priced = priced[priced["list_cents"].notna()]
    remark = {r["rateId"]: r["remark"] for r in world.records("rates")}
    keys = list(zip(priced["reservation_id"].tolist(), priced["ord"].tolist(), strict=True))
    prices = dict(zip(keys, priced["list_cents"].astype(int).tolist(), strict=True))
    used = {
        k: ", ".join(remark[x] for x in (w, *adj))
        for k, w, adj in zip(
            keys, priced["rate_id"].tolist(), priced["adjustment_rate_ids"].tolist(), strict=True
        )
    }
    return prices, used


def test_bills_follow_the_bill_rules(world: World) -> None:
    listed, used = _stay_list_prices(world)
    priced_by: Counter[str] = Counter()
    chan = {c["distributionChannelId"]: c for c in world.records("distributionchannels")}
    payers = Counter()
    checked_prices = 0
    cancelled_bills = 0
    for n, rec in enumerate(world.records("reservations")):
        lines = world.children("billlines", rec["reservationId"])
        by_payer: dict[str, list[dict]] = defaultdict(list)
        for ln in lines:
            by_payer[ln["payerType"]].append(ln)
            for f in ("value", "total"):
                v = ln[f]
                assert isinstance(v, float | int) and len(repr(float(v)).split(".")[1]) <= 2
        assert "CUSTOMER" in by_payer
        commissioned = chan[rec["distributionChannelId"]]["commissionPercentage"] > 0
        assert ("AGENT" in by_payer) == commissioned
        for payer, pl in by_payer.items():
            payers[payer] += 1
            items = sum(cents(x["total"]) for x in pl if x["billLineType"] in ITEM)
            summ = {
                x["billLineType"]: cents(x["total"]) for x in pl if x["billLineType"] not in ITEM
            }
            assert summ[70] == items
            comm = summ.get(100, 0) + summ.get(110, 0)
            assert (100 in summ) == (payer == "AGENT")
            assert summ[120] == summ[70] - comm - summ[80]
            assert summ[90] == summ[70] - summ[80]
            if NAMES[rec["status"]] in ("CANCELLED", "DEF_CANCELLED"):
                # the compensation (190) replaced the items: retained = paid, nothing due,
                # no commission on a cancelled booking
                assert [x["billLineType"] for x in pl if x["billLineType"] in ITEM] == [190]
                assert summ[70] == summ[80] and summ[90] == summ[120] == 0
                assert summ.get(100, 0) == summ.get(110, 0) == 0
                cancelled_bills += 1
                continue
            if payer == "AGENT":  # rent only on the agent bill; extras and tax on the customer's
                assert all(
                    x["resourceType"] in ("ACCOMMODATIONTYPE", "SPECIAL")
                    for x in pl
                    if x["billLineType"] in ITEM
                )
            for x in pl:
                if x["billLineType"] == 10 and x["resourceType"] == "ACCOMMODATIONTYPE":
                    assert cents(x["total"]) == cents(x["value"]) * x["quantity"]
                    s = date.fromisoformat(x["startDate"])
                    e = date.fromisoformat(x["endDate"])
                    assert (e - s).days == x["quantity"]
                    if n % 7 == 0:  # list price of the stay = bill price on every night
                        for k in range(x["quantity"]):
                            night = (rec["reservationId"], s.toordinal() + k)
                            assert listed[night] == cents(x["value"]), (x, used[night])
                            priced_by[used[night]] += 1
                            checked_prices += 1
        # PAID moves PROVISIONAL to DEFINITIVE: every CHECKED_OUT guest stay is fully paid
        if NAMES[rec["status"]] == "CHECKED_OUT":
            for pl in by_payer.values():
                assert sum(cents(x["total"]) for x in pl if x["billLineType"] == 120) == 0
    assert checked_prices > 500 and cancelled_bills > 50
    # every kind of rate priced some of them: arrival, booking and length-of-stay windows,
    # OVERRIDE, ABSOLUTE and RELATIVE (docs/sandbox.md, "Rates")
    kinds = {part for key in priced_by for part in key.split(", ")}
    assert kinds >= {
        "Summer week",
        "Advance booking spring",
        "Short stay surcharge",
        "Long stay discount",
    }, priced_by
    assert payers["PAYING_CUSTOMER"] > 0 and payers["AGENT"] > 0


def test_journal_entries_follow_bills(world: World) -> None:
    reports = {r["journalReportId"]: r for r in world.records("journalreports")}
    net: dict[int, int] = defaultdict(int)
    for e in world.records("journalentries"):
        rep = reports[e["reportId"]]
        assert rep["periodFrom"] <= e["mutationDate"] <= rep["periodTo"]
        assert e["reportNumber"] == rep["reportNumber"]
        if e["ledgerNumber"].startswith("8"):
            net[e["reservationId"]] += cents(e["creditVatIncluded"]) - cents(e["debitVatIncluded"])
    checked = 0
    for rec in world.records("reservations"):
        rid = rec["reservationId"]
        lines = world.children("billlines", rid)
        revenue = sum(cents(x["total"]) for x in lines if x["billLineType"] in (10, 190))
        # booked items while on the books; the compensation (190) once cancelled
        counted = NAMES[rec["status"]] in ON_BOOKS | CANCELLED_STATES
        expect = revenue if counted else 0
        assert net.get(rid, 0) == expect, rid
        checked += 1
    assert checked > 1000
    assert any(cents(e["debitVatIncluded"]) > 0 for e in world.records("journalentries"))


def test_cash_clearances(world: World) -> None:
    accounts = world.records("cashaccounts")
    clear = world.records("cashclearances")
    per = Counter((c["cashAccountId"], c["clearanceDate"]) for c in clear)
    assert set(per.values()) == {1}
    days = {c["clearanceDate"] for c in clear}
    assert len(clear) == len(accounts) * len(days)
    diffs = 0
    for c in clear:
        counted = sum(
            cents(c[k]) for k in ("countedCash", "countedCard", "countedCheque", "countedAncv")
        )
        assert cents(c["difference"]) == counted - cents(c["expectedAmount"])
        diffs += c["difference"] != 0
    assert 0 < diffs < len(clear) * 0.2


def test_initial_events(world: World) -> None:
    events = world.records("events")
    ids = [e["eventId"] for e in events]
    assert ids == sorted(set(ids)) and world.event_high_water() == ids[-1]
    dates = [e["eventDate"] for e in events]
    assert dates == sorted(dates)
    assert dates[0] >= "2026-10-25" and dates[-1] <= "2026-11-01T00:00:00.000"
    types = Counter(e["eventType"] for e in events)
    assert types["RESERVATION_EVENT"] > 0 and types["CUSTOMER_EVENT"] > 0
    merges = [e for e in events if e["entityAction"] == "MERGE"]
    for m in merges:
        assert world.get("customers", m["oldEntityId"]) is None
        assert world.get("customers", m["entityId"]) is not None
    # every reservation modified in the window has an event
    evs = {e["entityId"] for e in events if e["eventType"] == "RESERVATION_EVENT"}
    for rec in world.records("reservations"):
        if rec["modifiedDate"] > dates[0]:
            assert rec["reservationId"] in evs


def test_customers_have_pii_and_dates(world: World) -> None:
    for c in world.records("customers")[:200]:
        for f in (
            "countryCode",
            "language",
            "createdDate",
            "modifiedDate",
            "firstName",
            "lastName",
            "email",
            "phone",
            "address",
        ):
            assert c[f] is not None
        assert c["createdDate"] <= c["modifiedDate"]
