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
  the accommodation stay, the first `|total| mod nights` nights taking the extra cent; each
  line's net of VAT (total - total x vatRate / (100 + vatRate) to the cent; a COMMISSION_VAT
  line is all VAT) is spread the same way (`truth_revenue`);
- the reporting range runs from the earliest arrival to the night before the latest departure of
  all reservations served.

`mart_truth(world, as_of=...)` returns one DataFrame per mart, columns named like the mart's.
Money columns hold `Decimal` values with two places, ratios floats (NaN for null), dates
`datetime.date`. Never served over HTTP.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_ancillary import ancillary_revenue
from sandbox.world.truth_channels import channel_net_revenue
from sandbox.world.truth_frames import (
    ITEM_LINES,
    PACE_HORIZON,
    PACE_WEEKS,
    STLY_DAYS,
    cents,
    dates_of,
    lines_of,
    location_companies,
    money_col,
    month_of,
    months,
    nights_of,
    ord_of,
    reporting_range,
    reservations_of,
)
from sandbox.world.truth_guests import guest_mix
from sandbox.world.truth_offers import offer_discounts
from sandbox.world.truth_owners import owner_statement
from sandbox.world.truth_pricing import (
    rate_availability,
)
from sandbox.world.truth_revenue import channel_mix, revenue_daily
from sandbox.world.truth_supply import allotment_rows, orphan_rows

MARTS = (
    "revenue_daily",
    "channel_mix_monthly",
    "booking_pace",
    "rate_availability_daily",
    "finance_journal_monthly",
    "cash_clearance_daily",
    "revenue_reconciliation",
    "allotment_pickup",
    "orphan_nights",
    "owner_statement_monthly",
    "channel_net_revenue_monthly",
    "ancillary_revenue_monthly",
    "offer_discount_monthly",
    "guest_mix_monthly",
)


# ---------------------------------------------------------------------------------------------
# the marts
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
    history_from = cand["history_from"].to_numpy(dtype=np.int64)
    a0 = as_of.toordinal()
    d0 = min(int(d.min()) if len(d) else a0, a0 - 7 * (PACE_WEEKS + 1) - STLY_DAYS)
    d1 = max(int(d.max()) if len(d) else a0, a0 + PACE_HORIZON) + 1
    width = d1 - d0
    ncur = len(currencies)

    def count(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nights and room cents of the nights `m`, indexed [currency, stay ordinal - d0]."""
        idx = cur_idx[m] * width + (d[m] - d0)
        n = np.bincount(idx, minlength=ncur * width).reshape(ncur, width)
        c = np.bincount(idx, weights=room[m], minlength=ncur * width)
        # weights go through float64: exact for sums of integer cents below 2**53
        return n.astype(np.int64), np.rint(c).astype(np.int64).reshape(ncur, width)

    def otb(a: int) -> tuple[np.ndarray, ...]:
        """As of A (docs/metrics.md, "Pace from history", with one recorded version per
        reservation, the served one): by history from the day that version took effect, by
        today's status before; and by today's status for every A."""
        by_status = (booked <= a) & (on_books | (has_cancel & (cancelled_on > a)))
        from_history = on_books & (history_from <= a)
        from_status = by_status & (history_from > a)
        n_all, c_all = count(by_status)
        n_hist, c_hist = count(from_history)
        n_stat, c_stat = count(from_status)
        return n_hist + n_stat, c_hist + c_stat, n_hist, n_stat, n_all, c_all

    cache: dict[int, tuple[np.ndarray, ...]] = {}

    def otb_at(a: int) -> tuple[np.ndarray, ...]:
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
        cur_n, cur_c, cur_hist, cur_stat, cur_all_n, cur_all_c = otb_at(a)
        prev_n, prev_c = otb_at(a - 7)[:2]
        stly_n, stly_c = otb_at(a - STLY_DAYS)[:2]
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
                        "hist_nights": cur_hist[ci, i],
                        "stat_nights": cur_stat[ci, i],
                        "all_nights": cur_all_n[ci, i],
                        "all_cents": cur_all_c[ci, i],
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
        "otb_nights_from_history",
        "otb_nights_from_current_status",
        "otb_nights_by_current_status",
        "otb_room_revenue_by_current_status",
    ]
    if not parts:
        return pd.DataFrame(columns=cols)
    g = pd.concat(parts, ignore_index=True)
    out = pd.DataFrame(
        {
            "stay_date": dates_of(g["stay"]),
            "as_of_date": dates_of(g["as_of"]),
            "currency_code": g["currency_code"],
            "days_before_arrival": (g["stay"] - g["as_of"]).astype(np.int64),
            "otb_nights": g["otb_nights"],
            "otb_room_revenue": money_col(g["otb_cents"]),
            "pickup_nights": g["otb_nights"] - g["prev_nights"],
            "pickup_room_revenue": money_col(g["otb_cents"] - g["prev_cents"]),
            "stly_stay_date": dates_of(g["stay"] - STLY_DAYS),
            "stly_as_of_date": dates_of(g["as_of"] - STLY_DAYS),
            "stly_otb_nights": g["stly_nights"],
            "stly_otb_room_revenue": money_col(g["stly_cents"]),
            "pace_nights": g["otb_nights"] - g["stly_nights"],
            "pace_room_revenue": money_col(g["otb_cents"] - g["stly_cents"]),
            "otb_nights_from_history": g["hist_nights"],
            "otb_nights_from_current_status": g["stat_nights"],
            "otb_nights_by_current_status": g["all_nights"],
            "otb_room_revenue_by_current_status": money_col(g["all_cents"]),
        }
    )
    return out[cols]


def _journal_entries(world: World) -> pd.DataFrame:
    reports = {r["journalReportId"]: r for r in world.records("journalreports")}
    companies = {c["companyId"]: c for c in world.records("companies")}
    company_of = location_companies(world)
    rows: list[dict[str, Any]] = []
    for e in world.records("journalentries"):
        report = reports.get(e["reportId"], {})
        company_id = report.get("companyId") or company_of.get(e.get("locationId"))
        currency = report.get("currencyCode") or companies.get(company_id, {}).get("currencyCode")
        ledger = e["ledgerNumber"]
        rows.append(
            {
                "company_id": company_id,
                "ledger_number": ledger,
                "month_start": month_of(ord_of(e["mutationDate"]) or 0),
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
            "debit_vat_included": money_col(g["debit_inc"]),
            "credit_vat_included": money_col(g["credit_inc"]),
            "debit_vat_excluded": money_col(g["debit_exc"]),
            "credit_vat_excluded": money_col(g["credit_exc"]),
            "net_vat_included": money_col(g["credit_inc"] - g["debit_inc"]),
            "net_vat_excluded": money_col(g["credit_exc"] - g["debit_exc"]),
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
                "with_difference": c.get("difference") is not None and cents(c["difference"]) != 0,
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
            "expected_amount": money_col(g["expected"]),
            "counted_cash": money_col(g["cash"]),
            "counted_card": money_col(g["card"]),
            "counted_cheque": money_col(g["cheque"]),
            "counted_ancv": money_col(g["ancv"]),
            "counted_total": money_col(g["total"]),
            "difference": money_col(g["difference"]),
            "clearances_with_difference": g["with_difference"].astype(np.int64),
        }
    )


def _revenue_reconciliation(
    res: pd.DataFrame, lines: pd.DataFrame, entries: pd.DataFrame
) -> pd.DataFrame:
    keys = ["company_id", "month_start", "currency_code"]
    # Tourist tax (250) is posted to a non-revenue ledger and is not revenue; the compensation
    # (190) of a cancelled booking is, in the month of its cancellation.
    revenue_lines = sorted(ITEM_LINES - {250})
    items = lines[lines["bill_line_type"].isin(revenue_lines)].merge(
        res[res["on_books"] | res["cancelled"]], on="reservation_id", how="inner"
    )
    items = items[items["on_books"] | (items["cls"] == "cancellation")].copy()
    kept = items["cancelled"] & (items["cancelled_on"] >= 0)
    items["month_start"] = months(np.where(kept, items["cancelled_on"], items["booked"]))
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
            "bill_revenue": money_col(g["bill"]),
            "journal_revenue": money_col(g["journal"]),
            "journal_revenue_vat_excluded": money_col(g["journal_exc"]),
            "difference": money_col(g["difference"]),
            "cumulative_bill_revenue": money_col(g["cum_bill"]),
            "cumulative_journal_revenue": money_col(g["cum_journal"]),
            "cumulative_difference": money_col(g["cum_difference"]),
        }
    )


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
        res = reservations_of(world)
        lines = lines_of(world, res)
        nights = nights_of(res, lines)
        entries = _journal_entries(world)
        return {
            "revenue_daily": revenue_daily(world, nights, lo, hi),
            "channel_mix_monthly": channel_mix(nights, lo, hi),
            "booking_pace": _booking_pace(nights, as_of, lo, hi),
            "rate_availability_daily": rate_availability(
                world, nights, lo, hi, availability_start, availability_days
            ),
            "finance_journal_monthly": _finance_journal(entries),
            "cash_clearance_daily": _cash_clearance(world),
            "revenue_reconciliation": _revenue_reconciliation(res, lines, entries),
            "allotment_pickup": allotment_rows(world, as_of, lo, hi),
            "orphan_nights": orphan_rows(world, as_of, lo, hi),
            "owner_statement_monthly": owner_statement(world),
            "channel_net_revenue_monthly": channel_net_revenue(world, nights, lo, hi),
            "ancillary_revenue_monthly": ancillary_revenue(world, nights, lines, lo, hi),
            "guest_mix_monthly": guest_mix(world, res),
            "offer_discount_monthly": offer_discounts(world, nights, lines, lo, hi),
        }
