"""The remaining marts against ground truth computed in Python from the sandbox's served data.

`sandbox.world.truth_marts.mart_truth` recomputes daily revenue (gross and net of VAT, on every
currency's full supply), channel mix, booking pace, rate availability, the finance journal,
cash clearances and the revenue reconciliation from the world's records,
independently of the warehouse SQL. Every row and every column of each mart must match: keys
both ways (no missing, no extra rows), money as exact Decimals to the cent, counts exactly, and
ratios as the same DOUBLE division of the exact figures.
"""

from __future__ import annotations

import math
from datetime import date
from decimal import Decimal
from typing import Any

import duckdb
import pandas as pd
import pytest

from pipelines.resources import DEFAULT_HORIZON_DAYS
from sandbox.world.truth_marts import MARTS, mart_truth
from tests.e2e.conftest import PipelineRun

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

KEYS: dict[str, list[str]] = {
    "revenue_daily": ["date_day", "location_id", "accommodation_type_id", "currency_code"],
    "channel_mix_monthly": ["month_start", "distribution_channel_id", "currency_code"],
    "booking_pace": ["stay_date", "as_of_date", "currency_code"],
    "rate_availability_daily": [
        "date_day",
        "accommodation_type_id",
        "rate_type_id",
        "currency_code",
    ],
    "finance_journal_monthly": ["company_id", "ledger_number", "month_start", "currency_code"],
    "cash_clearance_daily": ["clearance_date", "company_id", "location_id", "currency_code"],
    "revenue_reconciliation": ["company_id", "month_start", "currency_code"],
    "orphan_nights": ["date_day", "accommodation_type_id"],
    "allotment_pickup": [
        "as_of_date",
        "stay_date",
        "accommodation_type_id",
        "distribution_channel_id",
    ],
    "owner_statement_monthly": ["owner_id", "unit_id", "month_start", "currency_code"],
    "channel_net_revenue_monthly": ["month_start", "distribution_channel_id", "currency_code"],
    "ancillary_revenue_monthly": [
        "month_start",
        "location_id",
        "currency_code",
        "addon_category_code",
    ],
    "guest_mix_monthly": ["month_start", "dimension", "bucket"],
    "offer_discount_monthly": ["month_start", "offer_id", "currency_code"],
}


def _null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT


def _same(a: Any, b: Any) -> bool:
    if _null(a) or _null(b):
        return _null(a) and _null(b)
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return isinstance(a, Decimal) and isinstance(b, Decimal) and a == b
    if isinstance(a, float) or isinstance(b, float):
        return float(a) == float(b)  # the same DOUBLE division: bit-for-bit equal
    return bool(a == b)


def _key(v: Any) -> Any:
    if _null(v):
        return None
    if isinstance(v, date):
        return v
    if isinstance(v, (int, float)) and float(v).is_integer():
        return int(v)
    return v


@pytest.fixture(scope="module")
def as_of(full_run: PipelineRun) -> date:
    con = duckdb.connect(str(full_run.settings.warehouse_path), read_only=True)
    try:
        row = con.execute("select as_of from meta.build_settings").fetchone()
    finally:
        con.close()
    assert row is not None
    # The runner builds booking pace as of the sandbox's today, not the wall clock's date.
    assert row[0] == full_run.handle.world.now.date()
    return row[0]


@pytest.fixture(scope="module")
def truth(full_run: PipelineRun, as_of: date) -> dict[str, pd.DataFrame]:
    world = full_run.handle.world
    return mart_truth(
        world,
        as_of=as_of,
        availability_start=world.now.date(),  # the runner's availability_start
        availability_days=DEFAULT_HORIZON_DAYS,
    )


@pytest.fixture(scope="module")
def marts(full_run: PipelineRun) -> dict[str, pd.DataFrame]:
    """Each mart as Python values: DECIMAL as Decimal (exact), DATE as date, DOUBLE as float."""
    con = duckdb.connect(str(full_run.settings.warehouse_path), read_only=True)
    try:
        out = {}
        for name in MARTS:
            rel = con.execute(f"select * from marts.{name}")
            cols = [d[0] for d in rel.description or ()]
            out[name] = pd.DataFrame.from_records(rel.fetchall(), columns=cols)
        return out
    finally:
        con.close()


def mismatches(name: str, truth: pd.DataFrame, mart: pd.DataFrame) -> list[str]:
    """Every difference between the truth and the mart: rows either side lacks, then values."""
    keys = KEYS[name]
    assert set(truth.columns) == set(mart.columns), (
        f"{name}: columns differ: truth only {set(truth.columns) - set(mart.columns)}, "
        f"mart only {set(mart.columns) - set(truth.columns)}"
    )
    values = [c for c in mart.columns if c not in keys]
    if _identical(keys, truth, mart):
        return []

    def index(df: pd.DataFrame) -> dict[tuple[Any, ...], dict[str, Any]]:
        rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        for rec in df.to_dict("records"):
            k = tuple(_key(rec[c]) for c in keys)
            assert k not in rows, f"{name}: duplicate key {k}"
            rows[k] = rec
        return rows

    t, m = index(truth), index(mart)
    out = [f"missing from the mart: {k}" for k in t.keys() - m.keys()]
    out += [f"not in the truth: {k}" for k in m.keys() - t.keys()]
    for k in t.keys() & m.keys():
        tr, mr = t[k], m[k]
        out += [
            f"{k} {c}: truth {tr[c]!r} mart {mr[c]!r}" for c in values if not _same(tr[c], mr[c])
        ]
    return sorted(out)


def _identical(keys: list[str], truth: pd.DataFrame, mart: pd.DataFrame) -> bool:
    """The fast path of `mismatches`: unique keys, and in key order every column holds the same
    Python values of the same types (so each pair passes `_same`). Anything else, including a
    NaN or a key that does not sort, goes the cell-by-cell way, which names the differences."""
    if len(truth) != len(mart) or truth.duplicated(keys).any():
        return False
    try:
        t = truth.sort_values(keys, ignore_index=True)
        m = mart.sort_values(keys, ignore_index=True)
        for c in mart.columns:
            a, b = t[c].tolist(), m[c].tolist()
            if list(map(type, a)) != list(map(type, b)) or _no_nan(a) != _no_nan(b):
                return False
    except TypeError:  # pd.NA compared, or keys of mixed types
        return False
    return True


def _no_nan(values: list[Any]) -> list[Any]:
    """A DOUBLE column's NaNs as None: NaN is no float's equal, not even its own, but two
    NaNs in the same place are the same null to `_same` (rate availability's service units
    where the service has no record: without this the whole mart went cell by cell, ~8 CPU s
    of a small world's 54,528 rows)."""
    return [None if isinstance(v, float) and math.isnan(v) else v for v in values]


def _check(name: str, truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]) -> None:
    bad = mismatches(name, truth[name], marts[name])
    shown = "\n".join(bad[:25])
    assert not bad, f"{name}: {len(bad)} differences over {len(truth[name])} rows:\n{shown}"


def test_revenue_daily_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("revenue_daily", truth, marts)
    t = truth["revenue_daily"]
    assert set(t["currency_code"]) == {"EUR", "GBP"}
    assert t["nights_sold"].sum() > 1000 and t["commission_net"].map(bool).any()
    assert (t["room_vat"] > 0).sum() > 1000
    # every currency carries every night's supply: the same total on each
    assert t.groupby("currency_code")["nights_available"].sum().nunique() == 1


def test_channel_mix_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("channel_mix_monthly", truth, marts)
    t = truth["channel_mix_monthly"]
    assert set(t["currency_code"]) == {"EUR", "GBP"}
    assert t["nights_sold"].sum() > 1000 and t["commission_gross"].map(bool).any()
    assert (t["room_revenue_net"] <= t["room_revenue_gross"]).all()
    assert (t["room_revenue_net"] < t["room_revenue_gross"]).any()
    assert t["distribution_channel_id"].nunique() >= 3


def test_booking_pace_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame], as_of: date
) -> None:
    _check("booking_pace", truth, marts)
    t = truth["booking_pace"]
    assert t["as_of_date"].nunique() == 53 and max(t["as_of_date"]) == as_of
    # the comparison covered real history: pickup, cancellations after A and STLY all occur
    assert (t["pickup_nights"] != 0).sum() > 100
    assert (t["pickup_nights"] < 0).any()  # cancelled after an earlier snapshot
    assert (t["stly_otb_nights"] > 0).sum() > 100


def test_rate_availability_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("rate_availability_daily", truth, marts)
    t = truth["rate_availability_daily"]
    assert t["realised_adr"].notna().sum() > 1000
    assert t["service_available_units"].notna().sum() > 100
    assert t["list_price"].notna().all()


def test_finance_journal_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("finance_journal_monthly", truth, marts)
    t = truth["finance_journal_monthly"]
    assert t["is_revenue_ledger"].any() and not t["is_revenue_ledger"].all()
    assert set(t["currency_code"]) == {"EUR", "GBP"}


def test_cash_clearance_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("cash_clearance_daily", truth, marts)
    t = truth["cash_clearance_daily"]
    assert t["clearances_with_difference"].sum() > 0


def test_revenue_reconciliation_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    # The reconciliation's tolerance belongs to its asset check on the all-time difference;
    # the mart's own figures (both sides, differences, running totals) are exact.
    _check("revenue_reconciliation", truth, marts)
    t = truth["revenue_reconciliation"]
    assert t["bill_revenue"].map(bool).sum() > 10 and t["journal_revenue"].map(bool).sum() > 10


def test_allotment_pickup_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("allotment_pickup", truth, marts)
    t = truth["allotment_pickup"]
    # the comparison covered pickup, releases and units still held
    assert (t["picked_up_nights"] > 0).sum() > 100
    assert (t["released_nights"] > 0).sum() > 100 and (t["still_held_nights"] > 0).sum() > 100


def test_orphan_nights_match_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("orphan_nights", truth, marts)
    t = truth["orphan_nights"]
    # the comparison covered nights the rules orphan and nights they leave fillable
    assert t["orphan_nights"].sum() > 50
    assert (t["unsold_nights"] - t["orphan_nights"]).sum() > 1000


def test_owner_statement_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("owner_statement_monthly", truth, marts)
    t = truth["owner_statement_monthly"]
    assert t["nights_rented"].sum() > 100 and t["owner_use_nights"].sum() > 10
    assert (t["owner_share"] > 0).sum() > 10
    assert (t["owner_share"] < t["room_revenue_net"]).any()
    # the closed months are booked in the owner journals; the open ones are not yet
    booked = t[t["journal_owner_share"] != 0]
    assert len(booked) > 10 and (booked["owner_share_difference"] == 0).all()
    assert (t["owner_share_difference"] != 0).any()


def test_channel_net_revenue_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("channel_net_revenue_monthly", truth, marts)
    t = truth["channel_net_revenue_monthly"]
    paid = t[t["commission_gross"] != 0]
    assert len(paid) > 5 and (paid["commission_percentage"] > 0).all()
    assert (paid["net_room_revenue_net"] < paid["room_revenue_net"]).all()
    assert (paid["net_adr_net"] < paid["adr_net"]).all()
    free = t[t["commission_percentage"] == 0]
    assert len(free) > 5 and (free["commission_gross"] == 0).all()


def test_ancillary_revenue_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("ancillary_revenue_monthly", truth, marts)
    t = truth["ancillary_revenue_monthly"]
    assert {"LINEN", "CLEANING", "PETS"} <= set(
        t[t["extra_revenue_gross"] > 0]["addon_category_code"]
    )
    assert "UNCATEGORISED" not in set(t["addon_category_code"])
    rates = t["attach_rate"].dropna()
    assert (rates > 0).sum() > 20 and (rates <= 1).all()
    # the categories add up to revenue_daily's extras (total - room) per location and month
    daily = truth["revenue_daily"].copy()
    daily["month_start"] = [d.replace(day=1) for d in daily["date_day"]]
    daily["extra"] = daily["total_revenue_gross"] - daily["room_revenue_gross"]
    keys = ["month_start", "location_id", "currency_code"]
    want = daily.groupby(keys)["extra"].sum()
    got = t.groupby(keys)["extra_revenue_gross"].sum()
    assert (got - want.reindex(got.index).fillna(0) == 0).all()


def test_offer_discounts_match_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("offer_discount_monthly", truth, marts)
    t = truth["offer_discount_monthly"]
    assert len(t) > 10 and set(t["offer_code"]) == {"EARLYBIRD"}
    assert (t["discount_amount"] > 0).all() and (t["bookings"] > 0).all()
    # the early-booking offer takes about 10 % off the rent of the nights it covers
    rate = t["discount_amount"].sum() / t["room_revenue_before_discount"].sum()
    assert Decimal("0.08") < rate < Decimal("0.12")
    # its discount is room revenue already: revenue_daily's room revenue includes it
    assert (t["room_revenue"] < t["room_revenue_before_discount"]).all()


def test_guest_mix_matches_truth(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    _check("guest_mix_monthly", truth, marts)
    t = truth["guest_mix_monthly"]
    assert set(t["dimension"]) == {
        "guest_type",
        "country",
        "party_size",
        "length_of_stay",
        "booking_window",
        "arrival_weekday",
    }
    repeat = t[(t["dimension"] == "guest_type") & (t["bucket"] == "repeat")]
    assert repeat["stays"].sum() > 50 and (repeat["share_of_stays"] < 0.6).all()
    assert t[t["dimension"] == "country"]["bucket"].nunique() >= 4
    assert t[t["dimension"] == "booking_window"]["bucket"].nunique() == 7
    # every dimension splits the same stays
    per = t.groupby(["month_start", "dimension"])["stays"].sum().unstack()
    assert (per.nunique(axis=1) == 1).all()


def test_the_comparison_catches_a_one_cent_or_one_night_change(
    truth: dict[str, pd.DataFrame], marts: dict[str, pd.DataFrame]
) -> None:
    """The comparison itself is not vacuous: one changed figure, or one row less, is found."""
    for name, column, delta in (
        ("revenue_daily", "room_revenue_net", Decimal("0.01")),
        ("revenue_daily", "nights_available", 1),
        ("channel_mix_monthly", "room_revenue_net", Decimal("0.01")),
        ("booking_pace", "otb_nights", 1),
        ("rate_availability_daily", "remaining_units", 1),
        ("finance_journal_monthly", "credit_vat_included", Decimal("0.01")),
        ("cash_clearance_daily", "counted_card", Decimal("0.01")),
        ("revenue_reconciliation", "cumulative_difference", Decimal("-0.01")),
        ("owner_statement_monthly", "owner_share", Decimal("0.01")),
        ("owner_statement_monthly", "owner_use_nights", 1),
        ("channel_net_revenue_monthly", "net_adr_net", Decimal("0.01")),
        ("ancillary_revenue_monthly", "stays_with_addon", 1),
        ("guest_mix_monthly", "nights", 1),
        ("offer_discount_monthly", "discount_amount", Decimal("0.01")),
        ("offer_discount_monthly", "nights", 1),
    ):
        # a window of the truth around the changed row and the mart's rows of the same keys
        # (the comparison is row by row: the whole of booking pace costs seconds per call)
        middle = len(truth[name]) // 2
        window = truth[name].iloc[max(0, middle - 100) : middle + 100]
        mart = _rows_of(marts[name], window, KEYS[name])
        assert mismatches(name, window, mart) == [], name
        bent = window.copy()
        bent.loc[bent.index[len(bent) // 2], column] += delta
        assert len(mismatches(name, bent, mart)) == 1, (name, column)
        assert len(mismatches(name, window.iloc[1:], mart)) == 1, name


def _rows_of(mart: pd.DataFrame, truth: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The mart's rows whose keys the truth's rows have."""
    wanted = {tuple(_key(v) for v in row) for row in truth[keys].itertuples(index=False)}
    found = [tuple(_key(v) for v in row) in wanted for row in mart[keys].itertuples(index=False)]
    return mart[found]
