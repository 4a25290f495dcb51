"""The data layer: the marts as found in the warehouse, labels for ids, the query context."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import duckdb

from pipelines.dashboard.constants import FUTURE_DAYS, PAST_DAYS
from pipelines.dashboard.formatting import _as_date


class _Unavailable(Exception):
    """A mart lacks a column a section needs; the section says so instead of failing."""


def _quote(name: str) -> str:
    """`name` as a quoted SQL identifier (names come from the catalog)."""
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class _Mart:
    """One marts table as found in the warehouse, with a resolver for its column names."""

    name: str
    columns: tuple[str, ...]
    rows: int

    def col(self, *candidates: str, required: bool = True) -> str | None:
        for name in candidates:
            if name in self.columns:
                return name
        if required:
            raise _Unavailable(f"marts.{self.name} has none of the columns {', '.join(candidates)}")
        return None

    def q(self, *candidates: str) -> str:
        """The quoted identifier of the first candidate present (names come from the catalog)."""
        name = self.col(*candidates)
        assert name is not None
        return _quote(name)

    @property
    def ref(self) -> str:
        return "marts." + _quote(self.name)


def _load_marts(con: duckdb.DuckDBPyConnection) -> dict[str, _Mart]:
    found: dict[str, list[str]] = defaultdict(list)
    for table, column in con.execute(
        "select table_name, column_name from information_schema.columns "
        "where table_schema = ? order by table_name, ordinal_position",
        ["marts"],
    ).fetchall():
        found[table].append(column)
    marts = {}
    for table, columns in found.items():
        mart = _Mart(table, tuple(columns), 0)
        (rows,) = con.execute(f"select count(*) from {mart.ref}").fetchone() or (0,)
        marts[table] = _Mart(table, tuple(columns), int(rows))
    return marts


# Column names per logical field, as the marts models spell them (the first one present wins:
# booking_pace keys on stay_date, the daily marts on date_day).
DATE = ("date_day", "stay_date", "night_date")
MONTH = ("month_start", "month")
CURRENCY = ("currency_code",)
CHANNEL = ("distribution_channel_code", "distribution_channel_id")
AS_OF = ("as_of_date",)


def _table_columns(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> set[str]:
    return {
        r[0]
        for r in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = ? and table_name = ?",
            [schema, table],
        ).fetchall()
    }


@dataclass(frozen=True)
class _Labels:
    """Readable names for the ids the marts carry, from the dimensions when they are there."""

    types: dict[Any, str]
    rate_types: dict[Any, str]

    @classmethod
    def load(cls, con: duckdb.DuckDBPyConnection) -> _Labels:
        types: dict[Any, str] = {}
        wanted = {"accommodation_type_id", "location_code", "accommodation_type_code"}
        cols = _table_columns(con, "core", "dim_accommodation_types")
        if wanted <= cols:
            name = "accommodation_type_name" if "accommodation_type_name" in cols else "null"
            for type_id, loc, code, type_name in con.execute(
                f"select accommodation_type_id, location_code, accommodation_type_code, {name} "
                "from core.dim_accommodation_types"
            ).fetchall():
                types[type_id] = f"{loc} · {type_name or code}"
        rate_types: dict[Any, str] = {}
        cols = _table_columns(con, "staging", "stg_rate_types")
        if {"rate_type_id", "rate_type_code"} <= cols:
            name = "rate_type_name" if "rate_type_name" in cols else "null"
            for rate_id, code, rate_name in con.execute(
                f"select rate_type_id, rate_type_code, {name} from staging.stg_rate_types"
            ).fetchall():
                rate_types[rate_id] = str(rate_name or code)
        return cls(types, rate_types)

    def type(self, type_id: object, fallback: str | None = None) -> str:
        if type_id in self.types:
            return self.types[type_id]
        return fallback or ("no accommodation type" if type_id is None else f"type {type_id}")

    def rate_type(self, rate_id: object) -> str:
        if rate_id in self.rate_types:
            return self.rate_types[rate_id]
        return "no rate type" if rate_id is None else f"rate type {rate_id}"


@dataclass(frozen=True)
class _Ctx:
    con: duckdb.DuckDBPyConnection
    marts: dict[str, _Mart]
    today: date
    _labels: list[_Labels] = field(default_factory=list)

    def mart(self, name: str) -> _Mart | None:
        """The mart when it exists and has rows; None means the section shows "no data"."""
        mart = self.marts.get(name)
        return mart if mart is not None and mart.rows > 0 else None

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, list(params)).fetchall()

    def window(self, mart: _Mart, date_col: str) -> tuple[date, date] | None:
        """Today - PAST_DAYS .. today + FUTURE_DAYS, or the latest data when that is empty."""
        lo, hi = self.rows(f"select min({date_col}), max({date_col}) from {mart.ref}")[0]
        if lo is None or hi is None:
            return None
        lo, hi = _as_date(lo), _as_date(hi)
        start = max(lo, self.today - timedelta(PAST_DAYS))
        end = min(hi, self.today + timedelta(FUTURE_DAYS))
        if start > end:
            end, start = hi, max(lo, hi - timedelta(PAST_DAYS + FUTURE_DAYS))
        return start, end

    def labels(self) -> _Labels:
        if not self._labels:
            self._labels.append(_Labels.load(self.con))
        return self._labels[0]
