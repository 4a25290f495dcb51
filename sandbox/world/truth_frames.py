"""The ground truth's frames: money in cents, reservations, bill lines and stay nights as pandas tables, straight from the world's records (the marts in `truth_marts` are computed from them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.allocation import allocate_many

ON_THE_BOOKS = frozenset({12, 21, 31, 41})
HELD = frozenset({10, 11})
CANCELLED = frozenset({-12, -13})
ITEM_LINES = frozenset({10, 20, 130, 190, 250})  # 130 STAY_ARTICLE: docs/metrics.md
COMMISSION_LINES = frozenset({100, 110})
WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
DEFAULT_DURATIONS = (2, 3, 4, 7)
PACE_WEEKS = 52  # snapshots reported besides as_of
PACE_HORIZON = 365  # stay dates A .. A + 365
STLY_DAYS = 364
# the money of a reservation night, in cents: as billed, and without VAT
MONEY_NIGHT = ("room", "extra", "commission", "room_net", "extra_net", "commission_net")


# ---------------------------------------------------------------------------------------------
# small helpers
def cents(amount: Any) -> int:
    """A wire amount (JSON number, at most 2 decimals) as exact integer cents; None -> 0."""
    if amount is None:
        return 0
    scaled = Decimal(str(amount)).scaleb(2)
    if scaled != scaled.to_integral_value():
        raise ValueError(f"amount {amount!r} has more than 2 decimals")
    return int(scaled)


def money(c: int) -> Decimal:
    """Integer cents as a two-place Decimal."""
    return Decimal(int(c)).scaleb(-2).quantize(Decimal("0.01"))


def div_money(total_cents: int, n: int) -> Decimal | None:
    """total / n rounded half away from zero to the cent; None when n is 0."""
    if n == 0:
        return None
    sign = -1 if total_cents < 0 else 1
    q, r = divmod(abs(total_cents), n)
    if 2 * r >= n:
        q += 1
    return money(sign * q)


def vat_in(total_cents: int, rate: Any) -> int:
    """The VAT inside a VAT-inclusive line of `total_cents` at `rate` percent: total x rate /
    (100 + rate) to the cent, half away from zero; 0 without a positive rate."""
    if rate is None or Decimal(str(rate)) <= 0:
        return 0
    r = Decimal(str(rate))
    return int((Decimal(total_cents) * r / (100 + r)).quantize(Decimal(1), ROUND_HALF_UP))


def ratio(a: Any, b: Any) -> float:
    """A DOUBLE ratio of two counts or amounts; NaN (null) when the divisor is 0."""
    fb = float(b)
    return float(a) / fb if fb != 0 else float("nan")


def ord_of(value: str | None) -> int | None:
    """An ISO date or datetime string as a date ordinal (the date part of a datetime)."""
    return None if value is None else date.fromisoformat(value[:10]).toordinal()


def month_of(o: int) -> date:
    d = date.fromordinal(o)
    return date(d.year, d.month, 1)


def dates_of(ords: Iterable[int]) -> list[date]:
    cache: dict[int, date] = {}
    out: list[date] = []
    for o in ords:
        d = cache.get(o)
        if d is None:
            d = cache[o] = date.fromordinal(int(o))
        out.append(d)
    return out


def months(ords: Iterable[int]) -> list[date]:
    cache: dict[int, date] = {}
    out: list[date] = []
    for o in ords:
        d = cache.get(o)
        if d is None:
            d = cache[o] = month_of(int(o))
        out.append(d)
    return out


def money_col(values: Iterable[Any]) -> list[Decimal]:
    return [money(int(v)) for v in values]


def location_companies(world: World) -> dict[int, int]:
    """Location -> company through the documented `adminOrganisationId` (real-service-notes 8.2;
    locations of the real service have no `companyId`): the company of the location's admin
    organisation, the lowest companyId when several share one (as `core.dim_locations`)."""
    company: dict[Any, int] = {}
    for c in world.records("companies"):
        org = c.get("adminOrganisationId")
        if org is not None and (org not in company or c["companyId"] < company[org]):
            company[org] = c["companyId"]
    out: dict[int, int] = {}
    for loc in world.records("locations"):
        found = company.get(loc.get("adminOrganisationId"))
        if found is not None:
            out[loc["locationId"]] = found
    return out


# ---------------------------------------------------------------------------------------------
# the shared base: reservations and their allocated nights
# (fields the notes do not promise are read with `.get`: the strict profile leaves them out)
def reservations_of(world: World) -> pd.DataFrame:
    channels = {c["distributionChannelId"]: c for c in world.records("distributionchannels")}
    types = {t["resourceId"]: t for t in world.records("accommodationtypes")}
    company_of = location_companies(world)
    accommodation: dict[int, dict[str, Any]] = {}
    for rr in world.records("reservedresources"):  # pk order: the first one wins
        if rr["type"] == "ACCOMMODATIONTYPE":
            accommodation.setdefault(rr["reservationId"], rr)
    today = world.now.date().toordinal()
    rows: list[dict[str, Any]] = []
    for r in world.records("reservations"):
        rid = r["reservationId"]
        status = int(r["status"])
        acc = accommodation.get(rid)
        type_id = acc["resourceId"] if acc else None
        atype = types.get(type_id) if type_id is not None else None
        location_id = atype["locationId"] if atype else r["locationId"]
        channel = channels.get(r["distributionChannelId"], {})
        arrival = ord_of(r["arrivalDate"])
        departure = ord_of(r["departureDate"])
        stay_start = ord_of(acc.get("startDate")) if acc and acc.get("startDate") else arrival
        stay_end = ord_of(acc.get("endDate")) if acc and acc.get("endDate") else departure
        guest = r["type"] == "RESERVATION" and r["categoryCode"] not in ("OWNER", "BLOCK")
        owner_or_block = r["type"] == "INVOICE" or r["categoryCode"] in ("OWNER", "BLOCK")
        on_books = status in ON_THE_BOOKS
        cancel = ord_of(r.get("cancelDate"))
        # the day the served version took effect (a cancellation not before its cancelDate):
        # a warehouse that recorded only this version judges earlier days by today's status
        modified = ord_of(r.get("modifiedDate")) or today
        history_from = max(modified, cancel) if status in CANCELLED and cancel else modified
        rows.append(
            {
                "reservation_id": rid,
                "status": status,
                "on_books": on_books,
                "held": status in HELD,
                "cancelled": status in CANCELLED,
                "guest": guest,
                "owner_hold": on_books and owner_or_block,
                "sold": on_books and guest,
                "arrival": arrival,
                "departure": departure,
                "stay_start": stay_start,
                "stay_end": stay_end,
                "booked": ord_of(r["reservationDate"]),
                "cancelled_on": -1 if cancel is None else cancel,  # -1: never after any A
                "has_cancel_date": cancel is not None,
                "history_from": history_from,
                "channel_id": r["distributionChannelId"],
                "channel_code": channel.get("code", r["distributionChannelCode"]),
                "channel_type": channel.get("type"),
                "currency_code": channel.get("currencyCode"),
                "type_id": type_id,
                "rate_type_id": acc.get("rateTypeId") if acc else None,
                "location_id": location_id,
                "company_id": company_of.get(location_id),
            }
        )
    return pd.DataFrame(rows)


def lines_of(world: World, res: pd.DataFrame) -> pd.DataFrame:
    """Item and commission bill lines with their class, cents, the VAT they include (item
    lines from their vatRate; all of a COMMISSION_VAT 110 line) and allocation period."""
    periods = {
        rr["reservedResourceId"]: (rr.get("startDate"), rr.get("endDate"))
        for rr in world.records("reservedresources")
    }
    stay = {
        rid: (s, e)
        for rid, s, e in zip(res["reservation_id"], res["stay_start"], res["stay_end"], strict=True)
    }
    rows: list[tuple[int, int, str, int, int, int, int, Any]] = []
    for ln in world.records("billlines"):
        kind = int(ln["billLineType"])
        if kind in COMMISSION_LINES:
            cls = "commission"
        elif kind in ITEM_LINES:
            if kind == 250:
                cls = "tax"
            elif kind == 190:
                cls = "cancellation"  # the compensation a cancelled booking keeps
            elif kind in (10, 130) and ln.get("resourceType") in ("ACCOMMODATIONTYPE", "SPECIAL"):
                cls = "room"
            elif kind == 130 or (kind in (10, 20) and ln.get("resourceType") == "EXTRA"):
                cls = "extra"  # a stay article is an add-on unless it bills the stay itself
            else:
                cls = "other"
        else:
            continue  # summary lines never add to revenue
        rid = ln["reservationId"]
        total = cents(ln["total"])
        if ln.get("startDate") is not None and ln.get("endDate") is not None:
            first, end = ord_of(ln["startDate"]), ord_of(ln["endDate"])
        else:
            rr_id = ln.get("reservedResourceId")
            own = periods.get(rr_id) if rr_id else None
            if own is not None and own[0] is not None and own[1] is not None:
                first, end = ord_of(own[0]), ord_of(own[1])
            else:
                first, end = stay[rid]
        assert first is not None and end is not None
        vat = total if kind == 110 else vat_in(total, ln["vatRate"]) if kind in ITEM_LINES else 0
        rows.append((rid, kind, cls, total, vat, first, max(end - first, 1), ln.get("resourceId")))
    return pd.DataFrame(
        rows,
        columns=[
            "reservation_id",
            "bill_line_type",
            "cls",
            "cents",
            "vat",
            "first",
            "nights",
            "resource_id",
        ],
    )


def _allocated(lines: pd.DataFrame) -> pd.DataFrame:
    """Line cents spread over nights: reservation_id, ord, room, extra, commission cents, as
    billed and (`*_net`) without VAT: each line's net (cents - VAT) spread by the same rule."""
    lines = lines[lines["cls"].isin(["room", "extra", "commission"]) & (lines["cents"] != 0)]
    gross = lines["cents"].to_numpy(dtype=np.int64)
    nights = lines["nights"].to_numpy(dtype=np.int64)
    rep, offs, val = allocate_many(gross, nights)
    _rep, _offs, net = allocate_many(gross - lines["vat"].to_numpy(dtype=np.int64), nights)
    cls = lines["cls"].to_numpy()[rep]
    df = pd.DataFrame(
        {
            "reservation_id": lines["reservation_id"].to_numpy(dtype=np.int64)[rep],
            "ord": lines["first"].to_numpy(dtype=np.int64)[rep] + offs,
            **{c: np.where(cls == c, val, 0) for c in ("room", "extra", "commission")},
            **{f"{c}_net": np.where(cls == c, net, 0) for c in ("room", "extra", "commission")},
        }
    )
    return df.groupby(["reservation_id", "ord"], as_index=False)[list(MONEY_NIGHT)].sum()


def nights_of(res: pd.DataFrame, lines: pd.DataFrame) -> pd.DataFrame:
    """Reservation x night: stay nights (arrival <= D < departure) and nights carrying money."""
    span = (res["departure"] - res["arrival"]).clip(lower=0).to_numpy(dtype=np.int64)
    rep = np.repeat(np.arange(len(res)), span)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(span) - span, span)
    stay = pd.DataFrame(
        {
            "reservation_id": res["reservation_id"].to_numpy(dtype=np.int64)[rep],
            "ord": res["arrival"].to_numpy(dtype=np.int64)[rep] + offs,
            "stay_night": True,
        }
    )
    nights = stay.merge(_allocated(lines), on=["reservation_id", "ord"], how="outer")
    nights["stay_night"] = nights["stay_night"].astype("boolean").fillna(False).astype(bool)
    for c in MONEY_NIGHT:
        nights[c] = nights[c].fillna(0).astype(np.int64)
    return nights.merge(res, on="reservation_id", how="inner")


def reporting_range(world: World) -> tuple[date, date]:
    """Earliest arrival to the night before the latest departure of all reservations served."""
    recs: Sequence[dict[str, Any]] = world.records("reservations")
    first = min(date.fromisoformat(r["arrivalDate"]) for r in recs)
    last = max(date.fromisoformat(r["departureDate"]) for r in recs) - timedelta(days=1)
    return first, last
