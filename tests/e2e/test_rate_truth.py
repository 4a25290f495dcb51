"""List prices of every booked stay night against the ground truth of the rate rule.

`sandbox.world.truth_rates` prices each stay night from the served rate records (docs/metrics.md,
"List prices"); `core.fct_stay_rate_nights` must give the same winning OVERRIDE, the same
ABSOLUTE / RELATIVE adjustments and the same price to the cent, for every reservation night. The
comparison is only worth something if the sandbox's rates made each rule decide prices, so the
test also counts, for each quantifier and each window (arrival, booking date, minimum and
maximum nights), the nights it priced and the nights it would have priced but for that window.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from decimal import Decimal
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

from sandbox.world import truth_rates
from sandbox.world.truth_frames import lines_of, money, nights_of, reservations_of
from tests.e2e.conftest import PipelineRun

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

VALUES = ("list_price", "base_price", "rate_id", "priority", "adjustment_rate_ids")


@pytest.fixture(scope="module")
def truth(full_run: PipelineRun) -> pd.DataFrame:
    world = full_run.handle.world
    with world.lock:
        res = reservations_of(world)
        return truth_rates.stay_rate_nights(world, nights_of(res, lines_of(world, res)))


@pytest.fixture(scope="module")
def model(full_run: PipelineRun) -> pd.DataFrame:
    con = duckdb.connect(str(full_run.settings.warehouse_path), read_only=True)
    try:
        rel = con.execute("select * from core.fct_stay_rate_nights")
        cols = [d[0] for d in rel.description or ()]
        return pd.DataFrame.from_records(rel.fetchall(), columns=cols)
    finally:
        con.close()


def _truth_rows(truth: pd.DataFrame) -> dict[tuple[int, date], tuple[Any, ...]]:
    out = {}
    for r in truth.itertuples(index=False):
        priced = not pd.isna(r.list_cents)
        out[(int(r.reservation_id), date.fromordinal(int(r.ord)))] = (
            money(int(r.list_cents)) if priced else None,
            money(int(r.base_cents)) if priced else None,
            int(r.rate_id) if priced else None,
            None if pd.isna(r.priority) else int(r.priority),
            list(r.adjustment_rate_ids) if priced else None,
        )
    return out


def test_every_stay_night_is_priced_as_the_truth(truth: pd.DataFrame, model: pd.DataFrame) -> None:
    expected = _truth_rows(truth)
    got = {
        (int(r["reservation_id"]), r["night_date"]): tuple(
            list(r[c]) if c == "adjustment_rate_ids" and r[c] is not None else r[c] for c in VALUES
        )
        for r in model.to_dict("records")
    }
    assert got.keys() == expected.keys()
    bad = [(k, expected[k], got[k]) for k in expected if expected[k] != got[k]]
    assert not bad, f"{len(bad)} of {len(expected)} nights differ, e.g. {bad[:5]}"
    assert all(isinstance(v[0], Decimal) for v in got.values() if v[0] is not None)
    assert len(expected) > 10_000


def _bound(rate: truth_rates.Rate, name: str) -> tuple[int | None, int | None] | None:
    return next(((lo, hi) for col, lo, hi in rate.bounds if col == name), None)


def test_each_quantifier_and_window_decided_prices(
    full_run: PipelineRun, truth: pd.DataFrame
) -> None:
    """The nights each kind of rate priced, and the nights one window alone kept it from."""
    rates = truth_rates.active_rates(full_run.handle.world)
    by_id = {r.rate_id: r for rs in rates.values() for r in rs}
    priced = truth[truth["list_cents"].notna()]
    applied: Counter[str] = Counter()
    for rate_id, adjustments in zip(
        priced["rate_id"].tolist(), priced["adjustment_rate_ids"].tolist(), strict=True
    ):
        for r in (by_id[rate_id], *(by_id[a] for a in adjustments)):
            applied[r.quantifier] += 1
            for name, label in (
                ("arrival", "arrival window"),
                ("booked", "booking window"),
                ("stay_nights", "nights window"),
            ):
                if _bound(r, name) is not None:
                    applied[label] += 1
    assert min(applied[k] for k in ("OVERRIDE", "ABSOLUTE", "RELATIVE")) > 50, applied
    assert min(applied[k] for k in ("arrival window", "booking window", "nights window")) > 50, (
        applied
    )

    # near misses: a rate holding on every bound but one, that one keeping it out
    missed: Counter[str] = Counter()
    cols = {
        "night": priced["ord"].to_numpy(dtype=np.int64),
        "arrival": priced["arrival"].to_numpy(dtype=np.int64),
        "booked": priced["booked"].to_numpy(dtype=np.int64),
        "stay_nights": priced["stay_nights"].to_numpy(dtype=np.int64),
    }
    weekday = (cols["night"] - 1) % 7
    keys = priced[["type_id", "rate_type_id"]].to_numpy(dtype=np.int64)
    for (type_id, rate_type_id), key_rates in rates.items():
        rows = (keys[:, 0] == type_id) & (keys[:, 1] == rate_type_id)
        for r in key_rates:
            for col, lo, hi in r.bounds:
                if col == "night":
                    continue
                others = truth_rates.Rate(
                    r.rate_id,
                    r.priority,
                    r.quantifier,
                    r.value,
                    tuple(b for b in r.bounds if b[0] != col),
                    r.days,
                )
                out = np.zeros(len(rows), dtype=bool)
                if lo is not None:
                    out |= cols[col] < lo
                if hi is not None:
                    out |= cols[col] > hi
                hits = rows & others.mask(cols, weekday) & out
                if col == "stay_nights":
                    below = lo is not None and bool((hits & (cols[col] < lo)).any())
                    above = hi is not None and bool((hits & (cols[col] > hi)).any())
                    missed["fewer nights than minDuration"] += below
                    missed["more nights than maxDuration"] += above
                else:
                    missed[col] += int(hits.sum())
    assert missed["arrival"] > 50 and missed["booked"] > 50, missed
    assert missed["fewer nights than minDuration"] > 0, missed
    assert missed["more nights than maxDuration"] > 0, missed
