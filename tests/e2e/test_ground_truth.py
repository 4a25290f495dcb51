"""Every mart figure against the sandbox's own ground truth: exact, for all dates and types."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pandas as pd
import pytest

from tests.e2e.conftest import PipelineRun
from tests.truth import differences

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]


def _mart(run: PipelineRun, sql: str) -> pd.DataFrame:
    con = duckdb.connect(str(run.settings.warehouse_path), read_only=True)
    try:
        return con.execute(sql).df()
    finally:
        con.close()


def test_nights_available_sold_owner_hold_and_out_of_order_match_truth(
    full_run: PipelineRun,
) -> None:
    truth = full_run.handle.world.ground_truth()["nights"].rename(
        columns={"resource_id": "accommodation_type_id"}
    )
    truth["date"] = pd.to_datetime(truth["date"]).dt.date
    mart = _mart(
        full_run,
        "select date_day as date, location_id, accommodation_type_id, nights_available, "
        "nights_sold, owner_hold_nights, out_of_order_nights, allotment_held_nights, "
        "sellable_nights "
        "from marts.occupancy_daily",
    )
    mart["date"] = pd.to_datetime(mart["date"]).dt.date
    lo, hi = truth["date"].min(), truth["date"].max()
    mart = mart[(mart["date"] >= lo) & (mart["date"] <= hi)]
    values = [
        "nights_available",
        "nights_sold",
        "owner_hold_nights",
        "out_of_order_nights",
        "allotment_held_nights",
        "sellable_nights",
    ]
    bad = differences(truth, mart, ["date", "location_id", "accommodation_type_id"], values)
    assert bad.empty, f"{len(bad)} of {len(truth)} rows differ:\n{bad.head(20).to_string()}"
    assert int(truth["nights_sold"].sum()) > 1000  # the comparison covered a real business
    assert int(truth["out_of_order_nights"].sum()) > 100  # and units out of order
    assert int(truth["allotment_held_nights"].sum()) > 100  # and allotments still held


def test_room_and_total_revenue_match_truth_to_the_cent(full_run: PipelineRun) -> None:
    truth = full_run.handle.world.ground_truth()["room_revenue"].rename(
        columns={"resource_id": "accommodation_type_id"}
    )
    truth["date"] = pd.to_datetime(truth["date"]).dt.date
    truth = truth[
        [
            "date",
            "location_id",
            "accommodation_type_id",
            "currency_code",
            "room_revenue",
            "total_revenue",
        ]
    ]
    truth["room_revenue"] = truth["room_revenue"].map(Decimal)
    truth["total_revenue"] = truth["total_revenue"].map(Decimal)
    mart = _mart(
        full_run,
        "select date_day as date, location_id, accommodation_type_id, currency_code, "
        "cast(room_revenue_gross as varchar) as room_revenue, "
        "cast(total_revenue_gross as varchar) as total_revenue "
        "from marts.revenue_daily where room_revenue_gross <> 0 or total_revenue_gross <> 0",
    )
    # Exact comparison: DECIMAL travels as text, never through a float.
    mart["room_revenue"] = mart["room_revenue"].map(Decimal)
    mart["total_revenue"] = mart["total_revenue"].map(Decimal)
    mart["date"] = pd.to_datetime(mart["date"]).dt.date
    lo, hi = truth["date"].min(), truth["date"].max()
    mart = mart[(mart["date"] >= lo) & (mart["date"] <= hi)]
    bad = differences(
        truth,
        mart,
        ["date", "location_id", "accommodation_type_id", "currency_code"],
        ["room_revenue", "total_revenue"],
    )
    assert bad.empty, f"{len(bad)} of {len(truth)} rows differ:\n{bad.head(20).to_string()}"
    assert set(truth["currency_code"]) == {"EUR", "GBP"}


def test_reservations_created_and_cancelled_per_month_match_truth(full_run: PipelineRun) -> None:
    world = full_run.handle.world
    truth = world.ground_truth()["reservations_monthly"]
    currency = {
        c["distributionChannelId"]: c["currencyCode"] for c in world.records("distributionchannels")
    }
    truth["currency_code"] = truth["distribution_channel_id"].map(currency)
    truth = truth.groupby(["month", "location_id", "currency_code"], as_index=False)[
        ["created", "cancelled", "declined", "expired"]
    ].sum()
    truth["month"] = pd.to_datetime(truth["month"]).dt.date
    mart = _mart(
        full_run,
        "select month_start as month, location_id, currency_code, "
        "reservations_created as created, "
        "reservations_cancelled as cancelled, reservations_declined as declined, "
        "reservations_expired as expired from marts.cancellations_monthly",
    )
    mart["month"] = pd.to_datetime(mart["month"]).dt.date
    keys = ["month", "location_id", "currency_code"]
    bad = differences(truth, mart, keys, ["created", "cancelled", "declined", "expired"])
    assert bad.empty, f"{len(bad)} rows differ:\n{bad.head(20).to_string()}"
