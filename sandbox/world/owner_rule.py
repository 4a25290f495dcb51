"""The owner revenue-share rule, as data in, cents out (docs/contracts.md, "Owners").

An owner's contract gives them `revenueSharePercentage` of the room revenue net of VAT of the
guest nights sold on their unit while the contract runs (startDate <= night < endDate, an open
end runs on). Per contract and month the share is `net x percentage / 100` rounded half away
from zero to the cent; a month under two contracts adds both. The world books it in its owner
journals (`owners.py`) and the ground truth (`truth_owners.py`) restates it from the served
records with the same two functions, so both sides use one rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

BASIS_POINTS = 10_000  # percentages are held in hundredths of a percent


def share_cents(net_cents: int, percentage: Any) -> int:
    """`net_cents` x `percentage` / 100, half away from zero, in whole cents (exact integers)."""
    bp = round(float(percentage) * 100)
    x = int(net_cents) * bp
    sign = -1 if x < 0 else 1
    return sign * ((abs(x) + BASIS_POINTS // 2) // BASIS_POINTS)


def contract_of(contracts: Iterable[Mapping[str, Any]], night: int) -> Mapping[str, Any] | None:
    """The contract (wire dict) that covers the night (a date ordinal), or None."""
    for c in contracts:
        start = date.fromisoformat(c["startDate"]).toordinal()
        end = c.get("endDate")
        if start <= night and (end is None or night < date.fromisoformat(end).toordinal()):
            return c
    return None


def allocate(total_cents: int, first: int, nights: int) -> list[tuple[int, int]]:
    """A line's cents spread over its nights: the first |total| mod n nights take the extra
    cent (the rule of `core.fct_stay_nights` and the ground truth)."""
    n = max(nights, 1)
    sign = -1 if total_cents < 0 else 1
    q, r = divmod(abs(int(total_cents)), n)
    return [(first + i, sign * (q + (1 if i < r else 0))) for i in range(n)]


ON_THE_BOOKS = frozenset({12, 21, 31, 41})
ROOM_LINE_TYPES = frozenset({10, 130})
ROOM_RESOURCE_TYPES = frozenset({"ACCOMMODATIONTYPE", "SPECIAL"})
OWNER_USE_CATEGORY = "OWNER"


def _ord(value: str | None) -> int | None:
    return None if value is None else date.fromisoformat(value[:10]).toordinal()


def _vat_in(total_cents: int, rate: Any) -> int:
    """The VAT inside a VAT-inclusive amount: total x rate / (100 + rate), half away from zero."""
    from decimal import ROUND_HALF_UP, Decimal

    if rate is None or Decimal(str(rate)) <= 0:
        return 0
    r = Decimal(str(rate))
    return int((Decimal(total_cents) * r / (100 + r)).quantize(Decimal(1), ROUND_HALF_UP))


def _cents(amount: Any) -> int:
    from decimal import Decimal

    return 0 if amount is None else int(Decimal(str(amount)).scaleb(2))


def unit_nights(
    world: Any, unit_ids: set[int], candidates: Iterable[int] | None = None
) -> list[dict[str, Any]]:
    """Every reservation night on the given units, with its room money in cents.

    A reservation's unit is its first ACCOMMODATIONTYPE reserved resource's (pk order), as in
    `core.fct_reservations`. Room money: item lines 10 / 130 of an ACCOMMODATIONTYPE or SPECIAL
    resource, spread over their own period, else their reserved resource's, else the stay's;
    net = total - the VAT it includes. Rows: reservation_id, unit_id, ord, currency_code,
    stay_night, sold (on the books, type RESERVATION, category not OWNER / BLOCK), owner_use (on
    the books, category OWNER), room, room_net. `world` is any `sandbox.protocol.World`;
    `candidates` (reservation ids) limits the reservations read, else every one is.
    """
    currency = {
        c["distributionChannelId"]: c.get("currencyCode")
        for c in world.records("distributionchannels")
    }
    out: list[dict[str, Any]] = []
    if candidates is None:  # every reservation (the ground truth)
        first_rr: dict[int, dict[str, Any]] = {}
        for rr in world.records("reservedresources"):
            if rr["type"] == "ACCOMMODATIONTYPE" and rr["reservationId"] not in first_rr:
                first_rr[rr["reservationId"]] = rr
        picked = [(rid, acc) for rid, acc in first_rr.items() if acc.get("unitId") in unit_ids]
        for at in range(0, len(picked), _BATCH):
            _unit_nights_of(world, picked[at : at + _BATCH], {}, currency, out)
        return out
    # only these reservations (the world knows which ones hold its owned units), a batch at once
    rids = sorted(candidates)
    for at in range(0, len(rids), _BATCH):
        part = rids[at : at + _BATCH]
        picked, own_rrs = [], {}
        for rid, rrs in zip(part, _children_many(world, "reservedresources", part), strict=True):
            acc = next((rr for rr in rrs if rr["type"] == "ACCOMMODATIONTYPE"), None)
            if acc is not None and acc.get("unitId") in unit_ids:
                picked.append((rid, acc))
                own_rrs[rid] = rrs
        _unit_nights_of(world, picked, own_rrs, currency, out)
    return out


_BATCH = 2_000  # reservations read at once (their records rendered in one batch)


def _children_many(world: Any, collection: str, parents: list[int]) -> list[list[dict[str, Any]]]:
    """`[world.children(collection, p) for p in parents]`, in one batch where the world can
    (`children_many` is beyond the protocol)."""
    many = getattr(world, "children_many", None)
    if many is None:
        return [world.children(collection, p) for p in parents]
    return many(collection, parents)


def _unit_nights_of(
    world: Any,
    picked: list[tuple[int, dict[str, Any]]],
    own_rrs: dict[int, list[dict[str, Any]]],
    currency: dict[Any, Any],
    out: list[dict[str, Any]],
) -> None:
    """`unit_nights`' rows of some reservations (id, first accommodation resource), appended
    in their order; `own_rrs`: the reserved resources of those already read."""
    get_many = getattr(world, "get_many", None)
    rids = [rid for rid, _acc in picked]
    recs = (
        get_many("reservations", rids)
        if get_many is not None
        else [world.get("reservations", rid) for rid in rids]
    )
    sold_rids = [
        rid
        for rid, rec in zip(rids, recs, strict=True)
        if rec is not None
        and int(rec["status"]) in ON_THE_BOOKS
        and rec["type"] == "RESERVATION"
        and rec.get("categoryCode") not in ("OWNER", "BLOCK")
    ]
    lines_of = dict(zip(sold_rids, _children_many(world, "billlines", sold_rids), strict=True))
    missing = [rid for rid in sold_rids if rid not in own_rrs]
    fetched = _children_many(world, "reservedresources", missing)
    own_rrs = {**own_rrs, **dict(zip(missing, fetched, strict=True))}
    for (rid, acc), rec in zip(picked, recs, strict=True):
        unit = acc.get("unitId")
        if rec is None:
            continue
        status = int(rec["status"])
        on_books = status in ON_THE_BOOKS
        category = rec.get("categoryCode")
        sold = on_books and rec["type"] == "RESERVATION" and category not in ("OWNER", "BLOCK")
        owner_use = on_books and category == OWNER_USE_CATEGORY
        if not (sold or owner_use):
            continue
        arrival, departure = _ord(rec["arrivalDate"]), _ord(rec["departureDate"])
        assert arrival is not None and departure is not None
        stay = (
            _ord(acc.get("startDate")) or arrival,
            _ord(acc.get("endDate")) or departure,
        )
        nights: dict[int, list[int]] = {d: [0, 0] for d in range(arrival, departure)}
        stay_nights = set(nights)
        if sold:
            periods = {
                r["reservedResourceId"]: (r.get("startDate"), r.get("endDate"))
                for r in own_rrs[rid]
            }
            for ln in lines_of[rid]:
                if (
                    int(ln["billLineType"]) not in ROOM_LINE_TYPES
                    or ln.get("resourceType") not in ROOM_RESOURCE_TYPES
                ):
                    continue
                total = _cents(ln["total"])
                if total == 0:
                    continue
                if ln.get("startDate") is not None and ln.get("endDate") is not None:
                    first, end = _ord(ln["startDate"]), _ord(ln["endDate"])
                else:
                    own = periods.get(ln.get("reservedResourceId"))
                    if own is not None and own[0] is not None and own[1] is not None:
                        first, end = _ord(own[0]), _ord(own[1])
                    else:
                        first, end = stay
                assert first is not None and end is not None
                n = max(end - first, 1)
                net = total - _vat_in(total, ln.get("vatRate"))
                for (d, c), (_d, nc) in zip(
                    allocate(total, first, n), allocate(net, first, n), strict=True
                ):
                    money = nights.setdefault(d, [0, 0])
                    money[0] += c
                    money[1] += nc
        for d, (room, room_net) in sorted(nights.items()):
            out.append(
                {
                    "reservation_id": rid,
                    "unit_id": unit,
                    "ord": d,
                    "currency_code": currency.get(rec["distributionChannelId"]),
                    "stay_night": d in stay_nights,
                    "sold": sold,
                    "owner_use": owner_use,
                    "room": room,
                    "room_net": room_net,
                }
            )
    return out


def month_start(o: int) -> date:
    d = date.fromordinal(o)
    return date(d.year, d.month, 1)


def statement(
    nights: Iterable[Mapping[str, Any]], contracts: Mapping[int, list[Mapping[str, Any]]]
) -> dict[tuple[int, int, date, str], dict[str, int]]:
    """(owner_id, unit_id, month_start, currency) -> nights_rented, room, room_net, owner_share,
    owner_use_nights (cents and counts) over the nights a contract of the unit covers."""
    per_contract: dict[tuple[Any, ...], dict[str, int]] = {}
    for n in nights:
        c = contract_of(contracts.get(n["unit_id"], ()), n["ord"])
        if c is None:
            continue
        key = (c["ownerId"], n["unit_id"], month_start(n["ord"]), n["currency_code"])
        row = per_contract.setdefault(
            (*key, c["contractId"]),
            {"nights_rented": 0, "room": 0, "room_net": 0, "owner_use_nights": 0, "pct": 0},
        )
        row["pct"] = c["revenueSharePercentage"]
        if n["sold"]:
            row["nights_rented"] += int(n["stay_night"])
            row["room"] += n["room"]
            row["room_net"] += n["room_net"]
        if n["owner_use"] and n["stay_night"]:
            row["owner_use_nights"] += 1
    out: dict[tuple[int, int, date, str], dict[str, int]] = {}
    for (*key, _contract), row in per_contract.items():
        agg = out.setdefault(
            tuple(key),  # type: ignore[arg-type]
            {"nights_rented": 0, "room": 0, "room_net": 0, "owner_share": 0, "owner_use_nights": 0},
        )
        for k in ("nights_rented", "room", "room_net", "owner_use_nights"):
            agg[k] += row[k]
        agg["owner_share"] += share_cents(row["room_net"], row["pct"])
    return out


def contracts_by_unit(owners: Iterable[Mapping[str, Any]]) -> dict[int, list[Mapping[str, Any]]]:
    out: dict[int, list[Mapping[str, Any]]] = {}
    for o in owners:
        for c in o.get("contracts") or ():
            out.setdefault(c["unitId"], []).append({**c, "ownerId": o["ownerId"]})
    return out
