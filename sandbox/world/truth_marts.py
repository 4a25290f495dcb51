"""Ground truth for the marts that `truth.py` does not cover, from the world's served records.

Independent of the warehouse SQL: everything here is computed in Python (pandas / numpy) from
what the world serves through its public protocol (`records`, `availability`, `now`, `lock`),
following
the definitions of shared/spec/metrics.md, docs/contracts.md section 2 and docs/metrics.md:

- what counts: on the books (12, 21, 31, 41), held (10, 11), cancelled (-12, -13); guest stays
  (type RESERVATION, category not OWNER / BLOCK); owner / hold (on the books, type INVOICE or
  category OWNER / BLOCK);
- a reservation's accommodation type, unit, rate type and stay period come from its first
  ACCOMMODATIONTYPE reserved resource; its location is that type's location, its company the
  location's company, its currency the distribution channel's;
- money in integer cents: bill item lines (10, 20, 190, 250) and commission lines (100, 110) are
  spread evenly over their own period (startDate..endDate), else their reserved resource's, else
  the accommodation stay, the first `|total| mod nights` nights taking the extra cent;
- the reporting range runs from the earliest arrival to the night before the latest departure of
  all reservations served.

`mart_truth(world, as_of=...)` returns one DataFrame per mart, columns named like the mart's.
Money columns hold `Decimal` values with two places, ratios floats (NaN for null), dates
`datetime.date`. Never served over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth import allocate_many

ON_THE_BOOKS = frozenset({12, 21, 31, 41})
HELD = frozenset({10, 11})
CANCELLED = frozenset({-12, -13})
ITEM_LINES = frozenset({10, 20, 190, 250})
COMMISSION_LINES = frozenset({100, 110})
WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
DEFAULT_DURATIONS = (2, 3, 4, 7)
PACE_WEEKS = 52  # snapshots reported besides as_of
PACE_HORIZON = 365  # stay dates A .. A + 365
STLY_DAYS = 364

MARTS = (
    "channel_mix_monthly",
    "booking_pace",
    "rate_availability_daily",
    "finance_journal_monthly",
    "cash_clearance_daily",
    "revenue_reconciliation",
)


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


def ratio(a: Any, b: Any) -> float:
    """A DOUBLE ratio of two counts or amounts; NaN (null) when the divisor is 0."""
    fb = float(b)
    return float(a) / fb if fb != 0 else float("nan")


def _ord(value: str | None) -> int | None:
    """An ISO date or datetime string as a date ordinal (the date part of a datetime)."""
    return None if value is None else date.fromisoformat(value[:10]).toordinal()


def _month(o: int) -> date:
    d = date.fromordinal(o)
    return date(d.year, d.month, 1)


def _dates(ords: Iterable[int]) -> list[date]:
    cache: dict[int, date] = {}
    out: list[date] = []
    for o in ords:
        d = cache.get(o)
        if d is None:
            d = cache[o] = date.fromordinal(int(o))
        out.append(d)
    return out


def _months(ords: Iterable[int]) -> list[date]:
    cache: dict[int, date] = {}
    out: list[date] = []
    for o in ords:
        d = cache.get(o)
        if d is None:
            d = cache[o] = _month(int(o))
        out.append(d)
    return out


def _money_col(values: Iterable[Any]) -> list[Decimal]:
    return [money(int(v)) for v in values]


# ---------------------------------------------------------------------------------------------
# the shared base: reservations and their allocated nights
def _reservations(world: World) -> pd.DataFrame:
    channels = {c["distributionChannelId"]: c for c in world.records("distributionchannels")}
    types = {t["resourceId"]: t for t in world.records("accommodationtypes")}
    locations = {loc["locationId"]: loc for loc in world.records("locations")}
    accommodation: dict[int, dict[str, Any]] = {}
    for rr in world.records("reservedresources"):  # pk order: the first one wins
        if rr["type"] == "ACCOMMODATIONTYPE":
            accommodation.setdefault(rr["reservationId"], rr)
    rows: list[dict[str, Any]] = []
    for r in world.records("reservations"):
        rid = r["reservationId"]
        status = int(r["status"])
        acc = accommodation.get(rid)
        type_id = acc["resourceId"] if acc else None
        atype = types.get(type_id) if type_id is not None else None
        location_id = atype["locationId"] if atype else r["locationId"]
        location = locations.get(location_id)
        channel = channels.get(r["distributionChannelId"], {})
        arrival = _ord(r["arrivalDate"])
        departure = _ord(r["departureDate"])
        stay_start = _ord(acc["startDate"]) if acc and acc["startDate"] else arrival
        stay_end = _ord(acc["endDate"]) if acc and acc["endDate"] else departure
        guest = r["type"] == "RESERVATION" and r["categoryCode"] not in ("OWNER", "BLOCK")
        owner_or_block = r["type"] == "INVOICE" or r["categoryCode"] in ("OWNER", "BLOCK")
        on_books = status in ON_THE_BOOKS
        cancel = _ord(r["cancelDate"])
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
                "booked": _ord(r["reservationDate"]),
                "cancelled_on": -1 if cancel is None else cancel,  # -1: never after any A
                "has_cancel_date": cancel is not None,
                "channel_id": r["distributionChannelId"],
                "channel_code": channel.get("code", r["distributionChannelCode"]),
                "channel_type": channel.get("type"),
                "currency_code": channel.get("currencyCode"),
                "type_id": type_id,
                "rate_type_id": acc["rateTypeId"] if acc else None,
                "location_id": location_id,
                "company_id": location["companyId"] if location else None,
            }
        )
    return pd.DataFrame(rows)


def _lines(world: World, res: pd.DataFrame) -> pd.DataFrame:
    """Item and commission bill lines with their class, cents and allocation period."""
    periods = {
        rr["reservedResourceId"]: (rr["startDate"], rr["endDate"])
        for rr in world.records("reservedresources")
    }
    stay = {
        rid: (s, e)
        for rid, s, e in zip(res["reservation_id"], res["stay_start"], res["stay_end"], strict=True)
    }
    rows: list[tuple[int, int, str, int, int, int]] = []
    for ln in world.records("billlines"):
        kind = int(ln["billLineType"])
        if kind in COMMISSION_LINES:
            cls = "commission"
        elif kind in ITEM_LINES:
            if kind == 250:
                cls = "tax"
            elif kind == 10 and ln["resourceType"] in ("ACCOMMODATIONTYPE", "SPECIAL"):
                cls = "room"
            elif kind in (10, 20) and ln["resourceType"] == "EXTRA":
                cls = "extra"
            else:
                cls = "other"
        else:
            continue  # summary lines never add to revenue
        rid = ln["reservationId"]
        total = cents(ln["total"])
        if ln["startDate"] is not None and ln["endDate"] is not None:
            first, end = _ord(ln["startDate"]), _ord(ln["endDate"])
        else:
            own = periods.get(ln["reservedResourceId"]) if ln["reservedResourceId"] else None
            if own is not None and own[0] is not None and own[1] is not None:
                first, end = _ord(own[0]), _ord(own[1])
            else:
                first, end = stay[rid]
        assert first is not None and end is not None
        rows.append((rid, kind, cls, total, first, max(end - first, 1)))
    return pd.DataFrame(
        rows, columns=["reservation_id", "bill_line_type", "cls", "cents", "first", "nights"]
    )


def _allocated(lines: pd.DataFrame) -> pd.DataFrame:
    """Line cents spread over nights: reservation_id, ord, room, extra, commission cents."""
    lines = lines[lines["cls"].isin(["room", "extra", "commission"]) & (lines["cents"] != 0)]
    rep, offs, val = allocate_many(
        lines["cents"].to_numpy(dtype=np.int64), lines["nights"].to_numpy(dtype=np.int64)
    )
    cls = lines["cls"].to_numpy()[rep]
    df = pd.DataFrame(
        {
            "reservation_id": lines["reservation_id"].to_numpy(dtype=np.int64)[rep],
            "ord": lines["first"].to_numpy(dtype=np.int64)[rep] + offs,
            "room": np.where(cls == "room", val, 0),
            "extra": np.where(cls == "extra", val, 0),
            "commission": np.where(cls == "commission", val, 0),
        }
    )
    return df.groupby(["reservation_id", "ord"], as_index=False)[
        ["room", "extra", "commission"]
    ].sum()


def _nights(res: pd.DataFrame, lines: pd.DataFrame) -> pd.DataFrame:
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
    for c in ("room", "extra", "commission"):
        nights[c] = nights[c].fillna(0).astype(np.int64)
    return nights.merge(res, on="reservation_id", how="inner")


# ---------------------------------------------------------------------------------------------
# the marts
def _channel_mix(nights: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    sold = nights[nights["sold"] & nights["ord"].between(lo, hi)].copy()
    sold["month_start"] = _months(sold["ord"])
    sold["total"] = sold["room"] + sold["extra"]
    keys = ["month_start", "channel_id", "channel_code", "channel_type", "currency_code"]
    g = sold.groupby(keys, as_index=False, dropna=False).agg(
        nights_sold=("stay_night", "sum"),
        room=("room", "sum"),
        total=("total", "sum"),
        commission=("commission", "sum"),
    )
    month_nights = g.groupby("month_start")["nights_sold"].transform("sum")
    month_room = g.groupby(["month_start", "currency_code"])["room"].transform("sum")
    return pd.DataFrame(
        {
            "month_start": g["month_start"],
            "distribution_channel_id": g["channel_id"].astype(np.int64),
            "distribution_channel_code": g["channel_code"],
            "channel_type": g["channel_type"],
            "currency_code": g["currency_code"],
            "nights_sold": g["nights_sold"].astype(np.int64),
            "room_revenue": _money_col(g["room"]),
            "total_revenue": _money_col(g["total"]),
            "commission": _money_col(g["commission"]),
            "nights_share": [
                ratio(a, b) for a, b in zip(g["nights_sold"], month_nights, strict=True)
            ],
            # DOUBLE of each money amount, then divided (the amounts are exact to the cent)
            "room_revenue_share": [
                ratio(money(a), money(b)) for a, b in zip(g["room"], month_room, strict=True)
            ],
        }
    )


def _booking_pace(nights: pd.DataFrame, as_of: date, lo: int, hi: int) -> pd.DataFrame:
    cand = nights[
        nights["stay_night"] & nights["guest"] & (nights["on_books"] | nights["cancelled"])
    ]
    currencies = sorted(cand["currency_code"].dropna().unique())
    cur_idx = cand["currency_code"].map({c: i for i, c in enumerate(currencies)}).to_numpy()
    d = cand["ord"].to_numpy(dtype=np.int64)
    booked = cand["booked"].to_numpy(dtype=np.int64)
    on_books = cand["on_books"].to_numpy(dtype=bool)
    cancelled_on = cand["cancelled_on"].to_numpy(dtype=np.int64)
    has_cancel = cand["has_cancel_date"].to_numpy(dtype=bool)
    room = cand["room"].to_numpy(dtype=np.int64)
    a0 = as_of.toordinal()
    d0 = min(int(d.min()) if len(d) else a0, a0 - 7 * (PACE_WEEKS + 1) - STLY_DAYS)
    d1 = max(int(d.max()) if len(d) else a0, a0 + PACE_HORIZON) + 1
    width = d1 - d0
    ncur = len(currencies)

    def otb(a: int) -> tuple[np.ndarray, np.ndarray]:
        """OTB nights and room cents as of A, indexed [currency, stay ordinal - d0]."""
        m = (booked <= a) & (on_books | (has_cancel & (cancelled_on > a)))
        idx = cur_idx[m] * width + (d[m] - d0)
        n = np.bincount(idx, minlength=ncur * width).reshape(ncur, width)
        c = np.bincount(idx, weights=room[m], minlength=ncur * width)
        # weights go through float64: exact for sums of integer cents below 2**53
        return n.astype(np.int64), np.rint(c).astype(np.int64).reshape(ncur, width)

    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def otb_at(a: int) -> tuple[np.ndarray, np.ndarray]:
        if a not in cache:
            cache[a] = otb(a)
        return cache[a]

    parts: list[pd.DataFrame] = []
    for k in range(PACE_WEEKS + 1):
        a = a0 - 7 * k
        first, last = max(a, lo), min(a + PACE_HORIZON, hi)
        if last < first:
            continue
        days = np.arange(first, last + 1)
        cur_n, cur_c = otb_at(a)
        prev_n, prev_c = otb_at(a - 7)
        stly_n, stly_c = otb_at(a - STLY_DAYS)
        for ci, code in enumerate(currencies):
            i = days - d0
            j = days - STLY_DAYS - d0
            parts.append(
                pd.DataFrame(
                    {
                        "stay": days,
                        "as_of": a,
                        "currency_code": code,
                        "otb_nights": cur_n[ci, i],
                        "otb_cents": cur_c[ci, i],
                        "prev_nights": prev_n[ci, i],
                        "prev_cents": prev_c[ci, i],
                        "stly_nights": stly_n[ci, j],
                        "stly_cents": stly_c[ci, j],
                    }
                )
            )
    cols = [
        "stay_date",
        "as_of_date",
        "currency_code",
        "days_before_arrival",
        "otb_nights",
        "otb_room_revenue",
        "pickup_nights",
        "pickup_room_revenue",
        "stly_stay_date",
        "stly_as_of_date",
        "stly_otb_nights",
        "stly_otb_room_revenue",
        "pace_nights",
        "pace_room_revenue",
    ]
    if not parts:
        return pd.DataFrame(columns=cols)
    g = pd.concat(parts, ignore_index=True)
    out = pd.DataFrame(
        {
            "stay_date": _dates(g["stay"]),
            "as_of_date": _dates(g["as_of"]),
            "currency_code": g["currency_code"],
            "days_before_arrival": (g["stay"] - g["as_of"]).astype(np.int64),
            "otb_nights": g["otb_nights"],
            "otb_room_revenue": _money_col(g["otb_cents"]),
            "pickup_nights": g["otb_nights"] - g["prev_nights"],
            "pickup_room_revenue": _money_col(g["otb_cents"] - g["prev_cents"]),
            "stly_stay_date": _dates(g["stay"] - STLY_DAYS),
            "stly_as_of_date": _dates(g["as_of"] - STLY_DAYS),
            "stly_otb_nights": g["stly_nights"],
            "stly_otb_room_revenue": _money_col(g["stly_cents"]),
            "pace_nights": g["otb_nights"] - g["stly_nights"],
            "pace_room_revenue": _money_col(g["otb_cents"] - g["stly_cents"]),
        }
    )
    return out[cols]


def _rate_nights(world: World, lo: int, hi: int) -> pd.DataFrame:
    """List price per (night, type, rate type): the winning active rate of the rate rule."""
    currency = {rt["rateTypeId"]: rt["currencyCode"] for rt in world.records("ratetypes")}
    width = hi - lo + 1
    weekday = (np.arange(lo, hi + 1) - 1) % 7  # ordinal 1 (0001-01-01) is a Monday
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for rate in world.records("rates"):
        if rate.get("status") not in (1, None):
            continue
        groups.setdefault((rate["resourceId"], rate["rateTypeId"]), []).append(rate)
    parts: list[pd.DataFrame] = []
    for (type_id, rate_type_id), rates in sorted(groups.items()):
        price = np.full(width, -1, dtype=np.int64)
        have = np.zeros(width, dtype=bool)
        # lowest (priority, rateId) first: later writes win, so the winner is written last
        rates.sort(
            key=lambda r: (r["priority"] if r["priority"] is not None else -(10**9), r["rateId"])
        )
        for rate in rates:
            f = max(_ord(rate["validFrom"]) or lo, lo) - lo
            t = min(_ord(rate["validTo"]) or hi, hi) - lo
            if t < f:
                continue
            mask = np.zeros(width, dtype=bool)
            mask[f : t + 1] = True
            if rate["applicableDays"] is not None:
                allowed = [WEEKDAYS.index(x) for x in rate["applicableDays"]]
                mask &= np.isin(weekday, allowed)
            price[mask] = cents(rate["value"])
            have |= mask
        idx = np.flatnonzero(have)
        parts.append(
            pd.DataFrame(
                {
                    "ord": idx + lo,
                    "type_id": type_id,
                    "rate_type_id": rate_type_id,
                    "currency_code": currency.get(rate_type_id),
                    "list_cents": price[idx],
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            columns=["ord", "type_id", "rate_type_id", "currency_code", "list_cents"]
        )
    return pd.concat(parts, ignore_index=True)


def _supply(world: World, lo: int, hi: int) -> pd.DataFrame:
    """Units available per (night, type): setupDate <= D and (archivedFrom null or > D)."""
    width = hi - lo + 1
    per_type: dict[int, np.ndarray] = {}
    for unit in world.records("units"):
        arr = per_type.setdefault(unit["resourceId"], np.zeros(width + 1, dtype=np.int64))
        f = max(_ord(unit["setupDate"]) or lo, lo)
        t = min(_ord(unit["archivedFrom"]) or hi + 1, hi + 1)
        if t > f:
            arr[f - lo] += 1
            arr[t - lo] -= 1
    parts = [
        pd.DataFrame({"ord": np.arange(lo, hi + 1), "type_id": t, "available": a.cumsum()[:width]})
        for t, a in sorted(per_type.items())
    ]
    if not parts:
        return pd.DataFrame(columns=["ord", "type_id", "available"])
    return pd.concat(parts, ignore_index=True)


def _rate_availability(
    world: World,
    nights: pd.DataFrame,
    lo: int,
    hi: int,
    availability_start: date,
    availability_days: int,
) -> pd.DataFrame:
    key = ["ord", "type_id", "rate_type_id", "currency_code"]
    in_range = nights["ord"].between(lo, hi)
    sold = nights[nights["sold"] & in_range]
    realised = sold.groupby(key, as_index=False, dropna=False).agg(
        nights_sold=("stay_night", "sum"), room=("room", "sum")
    )
    listed = _rate_nights(world, lo, hi)
    rows = listed.merge(realised, on=key, how="outer")
    # occupancy of the type on D (all locations): supply and every reservation taking a unit
    stay = nights[nights["stay_night"] & in_range]
    taken_mask = stay["sold"] | stay["owner_hold"] | (stay["held"] & stay["guest"])
    taken = stay[taken_mask].groupby(["ord", "type_id"], as_index=False).size()
    occupancy = _supply(world, lo, hi).merge(taken, on=["ord", "type_id"], how="outer")
    occupancy["available"] = occupancy["available"].fillna(0).astype(np.int64)
    occupancy["size"] = occupancy["size"].fillna(0).astype(np.int64)
    rows = rows.merge(occupancy, on=["ord", "type_id"], how="left")
    # the service's own availability index for arrivals on D, over the extracted window
    first = availability_start
    last = availability_start + timedelta(days=availability_days - 1)
    best: dict[tuple[int, int], int] = {}
    while first <= last:  # at most 31 arrival dates per call, as the endpoint
        upto = min(first + timedelta(days=30), last)
        for rec in world.availability(arrival_from=first, arrival_to=upto):
            k = (int(rec["resourceId"]), _ord(rec["arrivalDate"]) or 0)
            best[k] = max(best.get(k, rec["availableUnits"]), rec["availableUnits"])
        first = upto + timedelta(days=1)
    types = {t["resourceId"]: t["locationId"] for t in world.records("accommodationtypes")}
    out_rows: list[dict[str, Any]] = []
    for r in rows.itertuples(index=False):
        list_cents = None if pd.isna(r.list_cents) else int(r.list_cents)
        n = 0 if pd.isna(r.nights_sold) else int(r.nights_sold)
        room = 0 if pd.isna(r.room) else int(r.room)
        adr = div_money(room, n) if not pd.isna(r.nights_sold) else None
        avail = None if pd.isna(r.available) else int(r.available)
        out_rows.append(
            {
                "date_day": date.fromordinal(int(r.ord)),
                "accommodation_type_id": int(r.type_id),
                "location_id": types.get(int(r.type_id)),
                "rate_type_id": int(r.rate_type_id),
                "currency_code": r.currency_code,
                "list_price": None if list_cents is None else money(list_cents),
                "nights_sold": n,
                "room_revenue": money(room),
                "realised_adr": adr,
                "adr_vs_list_price": (
                    None if adr is None or list_cents is None else adr - money(list_cents)
                ),
                "nights_available": avail,
                "remaining_units": None if avail is None else avail - int(r.size),
                "service_available_units": best.get((int(r.type_id), int(r.ord))),
            }
        )
    return pd.DataFrame(out_rows)


def _journal_entries(world: World) -> pd.DataFrame:
    reports = {r["journalReportId"]: r for r in world.records("journalreports")}
    companies = {c["companyId"]: c for c in world.records("companies")}
    locations = {loc["locationId"]: loc for loc in world.records("locations")}
    rows: list[dict[str, Any]] = []
    for e in world.records("journalentries"):
        report = reports.get(e["reportId"], {})
        location = locations.get(e["locationId"], {})
        company_id = report.get("companyId") or location.get("companyId")
        currency = report.get("currencyCode") or companies.get(company_id, {}).get("currencyCode")
        ledger = e["ledgerNumber"]
        rows.append(
            {
                "company_id": company_id,
                "ledger_number": ledger,
                "month_start": _month(_ord(e["mutationDate"]) or 0),
                "currency_code": currency,
                "is_revenue_ledger": bool(ledger) and str(ledger).startswith("8"),
                "debit_inc": cents(e["debitVatIncluded"]),
                "credit_inc": cents(e["creditVatIncluded"]),
                "debit_exc": cents(e["debitVatExcluded"]),
                "credit_exc": cents(e["creditVatExcluded"]),
            }
        )
    return pd.DataFrame(rows)


def _finance_journal(entries: pd.DataFrame) -> pd.DataFrame:
    keys = ["company_id", "ledger_number", "month_start", "currency_code"]
    g = entries.groupby(keys, as_index=False, dropna=False).agg(
        is_revenue_ledger=("is_revenue_ledger", "any"),
        entry_count=("debit_inc", "size"),
        debit_inc=("debit_inc", "sum"),
        credit_inc=("credit_inc", "sum"),
        debit_exc=("debit_exc", "sum"),
        credit_exc=("credit_exc", "sum"),
    )
    return pd.DataFrame(
        {
            **{k: g[k] for k in keys},
            "is_revenue_ledger": g["is_revenue_ledger"].astype(bool),
            "entry_count": g["entry_count"].astype(np.int64),
            "debit_vat_included": _money_col(g["debit_inc"]),
            "credit_vat_included": _money_col(g["credit_inc"]),
            "debit_vat_excluded": _money_col(g["debit_exc"]),
            "credit_vat_excluded": _money_col(g["credit_exc"]),
            "net_vat_included": _money_col(g["credit_inc"] - g["debit_inc"]),
            "net_vat_excluded": _money_col(g["credit_exc"] - g["debit_exc"]),
        }
    )


def _cash_clearance(world: World) -> pd.DataFrame:
    accounts = {a["cashAccountId"]: a for a in world.records("cashaccounts")}
    rows: list[dict[str, Any]] = []
    for c in world.records("cashclearances"):
        account = accounts.get(c["cashAccountId"], {})
        counted = [
            cents(c[k]) for k in ("countedCash", "countedCard", "countedCheque", "countedAncv")
        ]
        rows.append(
            {
                "clearance_date": date.fromisoformat(c["clearanceDate"]),
                "company_id": account.get("companyId"),
                "location_id": account.get("locationId"),
                "currency_code": account.get("currencyCode"),
                "expected": cents(c["expectedAmount"]),
                "cash": counted[0],
                "card": counted[1],
                "cheque": counted[2],
                "ancv": counted[3],
                "total": sum(counted),
                "difference": cents(c["difference"]),
                "with_difference": c["difference"] is not None and cents(c["difference"]) != 0,
            }
        )
    keys = ["clearance_date", "company_id", "location_id", "currency_code"]
    g = (
        pd.DataFrame(rows)
        .groupby(keys, as_index=False, dropna=False)
        .agg(
            clearance_count=("expected", "size"),
            expected=("expected", "sum"),
            cash=("cash", "sum"),
            card=("card", "sum"),
            cheque=("cheque", "sum"),
            ancv=("ancv", "sum"),
            total=("total", "sum"),
            difference=("difference", "sum"),
            with_difference=("with_difference", "sum"),
        )
    )
    return pd.DataFrame(
        {
            **{k: g[k] for k in keys},
            "clearance_count": g["clearance_count"].astype(np.int64),
            "expected_amount": _money_col(g["expected"]),
            "counted_cash": _money_col(g["cash"]),
            "counted_card": _money_col(g["card"]),
            "counted_cheque": _money_col(g["cheque"]),
            "counted_ancv": _money_col(g["ancv"]),
            "counted_total": _money_col(g["total"]),
            "difference": _money_col(g["difference"]),
            "clearances_with_difference": g["with_difference"].astype(np.int64),
        }
    )


def _revenue_reconciliation(
    res: pd.DataFrame, lines: pd.DataFrame, entries: pd.DataFrame
) -> pd.DataFrame:
    keys = ["company_id", "month_start", "currency_code"]
    # Tourist tax (250) is posted to a non-revenue ledger and is not revenue.
    revenue_lines = sorted(ITEM_LINES - {250})
    items = lines[lines["bill_line_type"].isin(revenue_lines)].merge(
        res[res["on_books"]], on="reservation_id", how="inner"
    )
    items["month_start"] = _months(items["booked"])
    bills = items.groupby(keys, as_index=False, dropna=False).agg(bill=("cents", "sum"))
    revenue = entries[entries["is_revenue_ledger"]].copy()
    revenue["inc"] = revenue["credit_inc"] - revenue["debit_inc"]
    revenue["exc"] = revenue["credit_exc"] - revenue["debit_exc"]
    journals = revenue.groupby(keys, as_index=False, dropna=False).agg(
        journal=("inc", "sum"), journal_exc=("exc", "sum")
    )
    g = bills.merge(journals, on=keys, how="outer")
    for c in ("bill", "journal", "journal_exc"):
        g[c] = g[c].fillna(0).astype(np.int64)
    g = g.sort_values(keys, kind="stable").reset_index(drop=True)
    g["difference"] = g["bill"] - g["journal"]
    by = g.groupby(["company_id", "currency_code"], dropna=False)
    g["cum_bill"] = by["bill"].cumsum()
    g["cum_journal"] = by["journal"].cumsum()
    g["cum_difference"] = by["difference"].cumsum()
    return pd.DataFrame(
        {
            **{k: g[k] for k in keys},
            "bill_revenue": _money_col(g["bill"]),
            "journal_revenue": _money_col(g["journal"]),
            "journal_revenue_vat_excluded": _money_col(g["journal_exc"]),
            "difference": _money_col(g["difference"]),
            "cumulative_bill_revenue": _money_col(g["cum_bill"]),
            "cumulative_journal_revenue": _money_col(g["cum_journal"]),
            "cumulative_difference": _money_col(g["cum_difference"]),
        }
    )


def reporting_range(world: World) -> tuple[date, date]:
    """Earliest arrival to the night before the latest departure of all reservations served."""
    recs: Sequence[dict[str, Any]] = world.records("reservations")
    first = min(date.fromisoformat(r["arrivalDate"]) for r in recs)
    last = max(date.fromisoformat(r["departureDate"]) for r in recs) - timedelta(days=1)
    return first, last


def mart_truth(
    world: World,
    *,
    as_of: date | None = None,
    availability_start: date | None = None,
    availability_days: int = 90,
) -> dict[str, pd.DataFrame]:
    """One DataFrame per mart (MARTS), computed from the world's served records.

    `as_of` is the build's booking-pace snapshot date (default: the world's today);
    `availability_start` / `availability_days` the arrival window the pipeline extracted from
    the availability endpoint (default: the world's today and 90 days).
    """
    with world.lock:
        today = world.now.date()
        as_of = as_of or today
        availability_start = availability_start or today
        first, last = reporting_range(world)
        lo, hi = first.toordinal(), last.toordinal()
        res = _reservations(world)
        lines = _lines(world, res)
        nights = _nights(res, lines)
        entries = _journal_entries(world)
        return {
            "channel_mix_monthly": _channel_mix(nights, lo, hi),
            "booking_pace": _booking_pace(nights, as_of, lo, hi),
            "rate_availability_daily": _rate_availability(
                world, nights, lo, hi, availability_start, availability_days
            ),
            "finance_journal_monthly": _finance_journal(entries),
            "cash_clearance_daily": _cash_clearance(world),
            "revenue_reconciliation": _revenue_reconciliation(res, lines, entries),
        }
