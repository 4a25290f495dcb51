"""Marts read back from a warehouse file and compared with the sandbox's ground truth."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd


def read_mart(warehouse: Path, name: str) -> pd.DataFrame:
    """A mart as Python values (DECIMAL as Decimal, DATE as date, DOUBLE as float)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rel = con.execute(f"select * from marts.{name}")
        cols = [d[0] for d in rel.description or ()]
        return pd.DataFrame.from_records(rel.fetchall(), columns=cols)


def differences(
    expected: pd.DataFrame, actual: pd.DataFrame, keys: list[str], values: list[str]
) -> pd.DataFrame:
    """Rows (by `keys`) where a value differs; a row on one side only counts as zeros."""
    merged = expected.merge(
        actual, on=keys, how="outer", suffixes=("_truth", "_mart"), indicator=True
    )
    bad = pd.Series(False, index=merged.index)
    for v in values:
        merged[f"{v}_truth"] = merged[f"{v}_truth"].fillna(0)
        merged[f"{v}_mart"] = merged[f"{v}_mart"].fillna(0)
        bad |= merged[f"{v}_truth"] != merged[f"{v}_mart"]
    return merged[bad]


def nights_mismatch(warehouse: Path, truth: pd.DataFrame) -> pd.DataFrame:
    """Days x location x type where `marts.occupancy_daily` differs from the truth's nights
    available or sold, over the truth's dates."""
    truth = truth.rename(columns={"resource_id": "accommodation_type_id"})
    truth["date"] = pd.to_datetime(truth["date"]).dt.date
    with duckdb.connect(str(warehouse), read_only=True) as con:
        mart = con.execute(
            "select date_day as date, location_id, accommodation_type_id, nights_available, "
            "nights_sold from marts.occupancy_daily where date_day between ? and ?",
            [truth["date"].min(), truth["date"].max()],
        ).df()
    mart["date"] = pd.to_datetime(mart["date"]).dt.date
    keys = ["date", "location_id", "accommodation_type_id"]
    values = ["nights_available", "nights_sold"]
    return differences(truth[[*keys, *values]], mart, keys, values)
