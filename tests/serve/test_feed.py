"""The metrics feed over a real uvicorn: every metric by every allowed dimension equals a query
on the marts; exports equal the mart's rows; hostile parameters get a 400 that says why."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from tests.serve.conftest import Built
from tests.serve.expected import COLUMNS, DATE_COL, has, money_per, ratio, sums
from tests.serve.server import serving
from warehouse.semantic import MEASURES, METRICS, SOURCES

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]


@pytest.fixture(scope="module")
def api(built: Built) -> Iterator[httpx.Client]:
    with serving(built.warehouse) as base, httpx.Client(base_url=base, timeout=60) as client:
        yield client


def _expected(
    built: Built, name: str, by: list[str], lo: date, hi: date, filters: dict[str, list[Any]]
) -> dict[tuple[Any, ...], Any]:
    metric = METRICS[name]
    keys = [*by, "currency"] if metric.per_currency and "currency" not in by else list(by)
    num = MEASURES[metric.numerator]
    num_table = SOURCES[num.source].table
    if num_table == "marts.forecast_daily":
        lo = max(lo, built.as_of)  # the forecast starts at the as-of date; so does its ratio
    n = sums(built, num_table, num.column, keys, lo, hi, filters)
    if metric.denominator is None:
        return n
    den = MEASURES[metric.denominator]
    den_table = SOURCES[den.source].table
    den_keys = [k for k in keys if has(den_table, k)]
    d = sums(built, den_table, den.column, den_keys, lo, hi, filters)
    positions = [keys.index(k) for k in den_keys]
    rows = set(n) | (set(d) if den_keys == keys else set())
    out = {}
    for key in rows:
        nv, dv = n.get(key, 0) or 0, d.get(tuple(key[i] for i in positions), 0) or 0
        out[key] = money_per(nv, dv) if metric.kind == "money" else ratio(nv, dv)
    return out


def _cases() -> list[tuple[str, str]]:
    return [(name, dim) for name, m in METRICS.items() for dim in ("", *m.dimensions)]


@pytest.mark.parametrize(
    ("name", "dim"), _cases(), ids=[f"{n}-by-{d or 'all'}" for n, d in _cases()]
)
def test_every_metric_by_every_dimension_equals_the_marts(
    api: httpx.Client, built: Built, name: str, dim: str
) -> None:
    lo, hi = built.as_of - timedelta(days=75), built.as_of + timedelta(days=120)
    params: list[tuple[str, str]] = [("from", lo.isoformat()), ("to", hi.isoformat())]
    if dim:
        params.append(("by", dim))
    got = api.get(f"/api/metrics/{name}", params=params)
    assert got.status_code == 200, got.text
    body = got.json()
    metric = METRICS[name]
    keys = [k for k in body["columns"] if k not in {*metric.measures, name}]
    answer = {}
    for row in body["rows"]:
        key = tuple(_key(row[k]) for k in keys)
        answer[key] = row[name]
    expected = _expected(built, name, [dim] if dim else [], lo, hi, {})
    assert set(answer) == {tuple(_key(v) for v in k) for k in expected}
    assert answer, "the window has figures"
    for key, value in expected.items():
        shown = answer[tuple(_key(v) for v in key)]
        if metric.kind == "money":
            assert shown == (None if value is None else str(value)), key
        elif metric.kind == "ratio":
            assert shown == (None if value is None else pytest.approx(value, rel=1e-12)), key
        else:
            assert Decimal(str(shown)) == Decimal(str(value)), key


def _key(v: Any) -> Any:
    return v.isoformat() if isinstance(v, date) else v


def test_filters_apply_to_each_source_that_has_them(api: httpx.Client, built: Built) -> None:
    """Occupancy of one park and channel: that channel's nights over the park's supply."""
    lo, hi = built.as_of - timedelta(days=90), built.as_of
    got = api.get(
        "/api/metrics/occupancy",
        params={"from": lo.isoformat(), "to": hi.isoformat(), "park": "1", "channel": "4"},
    ).json()
    ((row,),) = [got["rows"]]
    sold = sums(
        built, "marts.sales_daily", "nights_sold", [], lo, hi, {"park": [1], "channel": [4]}
    )
    supply = sums(built, "marts.occupancy_daily", "nights_available", [], lo, hi, {"park": [1]})
    assert row["nights_sold"] == sold[()] > 0
    assert row["nights_available"] == supply[()] > 0
    assert row["occupancy"] == pytest.approx(sold[()] / supply[()], rel=1e-12)


def test_the_unfiltered_window_equals_kpi_window(api: httpx.Client, built: Built) -> None:
    lo, hi = built.as_of - timedelta(days=30), built.as_of - timedelta(days=1)
    kpi = built.rows(
        "select currency_code, occupancy, adr_net, revpar_net from marts.kpi_window(?, ?)", [lo, hi]
    )
    params = {"from": lo.isoformat(), "to": hi.isoformat()}
    occ = api.get("/api/metrics/occupancy", params=params).json()["rows"][0]["occupancy"]
    adr = {
        r["currency"]: r["adr_net"]
        for r in api.get("/api/metrics/adr_net", params=params).json()["rows"]
    }
    revpar = {
        r["currency"]: r["revpar_net"]
        for r in api.get("/api/metrics/revpar_net", params=params).json()["rows"]
    }
    assert len(kpi) == 2
    for currency, occupancy, kpi_adr, kpi_revpar in kpi:
        assert occ == pytest.approx(occupancy, rel=1e-12)
        assert adr[currency] == str(kpi_adr)
        assert revpar[currency] == str(kpi_revpar)


def test_rows_carry_names_not_only_ids(api: httpx.Client, built: Built) -> None:
    rows = api.get("/api/metrics/nights_sold", params={"by": "park,channel"}).json()["rows"]
    parks = dict(built.rows("select location_id, location_name from core.dim_locations"))
    channels = dict(
        built.rows(
            "select distribution_channel_id, distribution_channel_name from core.dim_distribution_channels"
        )
    )
    assert rows and all(r["park_name"] == parks[r["park"]] for r in rows)
    assert all(r["channel_name"] == channels[r["channel"]] for r in rows)


def test_definitions_describe_every_metric_from_the_dictionary(
    api: httpx.Client, built: Built
) -> None:
    spec = api.get("/api/metrics").json()
    assert set(spec["metrics"]) == set(METRICS)
    for name, measure in spec["measures"].items():
        table = measure["table"]
        schema, table_name = table.split(".")
        columns = {
            r[0]
            for r in built.rows(
                "select column_name from information_schema.columns where table_schema = ? and table_name = ?",
                [schema, table_name],
            )
        }
        assert measure["column"] in columns, name
        assert measure["description"], f"{name} has no dictionary text"
        assert set(COLUMNS[table].values()) <= columns and DATE_COL[table] in columns
    occupancy = spec["metrics"]["occupancy"]
    assert occupancy["aggregation"] == "sum(nights_sold) / sum(nights_available)"
    assert spec["metrics"]["adr_net"]["per_currency"] is True
    assert (
        "channel" in occupancy["dimensions"]
        and "channel" not in spec["metrics"]["forecast_nights"]["dimensions"]
    )


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_a_mart_slice_exports_exactly(api: httpx.Client, built: Built, fmt: str) -> None:
    day = built.as_of - timedelta(days=10)
    params = {
        "from": (day - timedelta(days=6)).isoformat(),
        "to": day.isoformat(),
        "park": "2",
        "format": fmt,
    }
    got = api.get("/api/export/sales", params=params)
    assert got.status_code == 200, got.text
    expected = built.rows(
        "select * from marts.sales_daily where date_day between ? and ? and location_id = 2 order by all",
        [day - timedelta(days=6), day],
    )
    columns = [
        r[0]
        for r in built.rows(
            "select column_name from information_schema.columns where table_schema = 'marts' "
            "and table_name = 'sales_daily' order by ordinal_position"
        )
    ]
    assert expected
    if fmt == "json":
        rows = [tuple(r[c] for c in columns) for r in got.json()["rows"]]
        assert rows == [tuple(_text(v) for v in r) for r in expected]
    elif fmt == "csv":
        lines = got.text.splitlines()
        assert lines[0] == ",".join(columns)
        assert lines[1:] == [
            ",".join("" if v is None else str(_text(v)) for v in r) for r in expected
        ]
    else:
        table = pq.read_table(io.BytesIO(got.content))
        assert [tuple(r.values()) for r in table.to_pylist()] == expected


def _text(v: Any) -> Any:
    return str(v) if isinstance(v, Decimal) else v.isoformat() if isinstance(v, date) else v


HOSTILE = [
    ("/api/metrics/occupancy?by=night;drop table marts.sales_daily", "no dimension"),
    ("/api/metrics/occupancy?park=1'--", "numeric id"),
    ("/api/metrics/adr_net?currency=EUR' or '1'='1", "three-letter code"),
    ("/api/metrics/x'; drop table marts.sales_daily; --", "unknown metric"),
    ("/api/metrics/occupancy?from=2000-01-01&to=2030-01-01", "over 1500 nights"),
    ("/api/metrics/occupancy?from=yesterday", "YYYY-MM-DD"),
    ("/api/metrics/occupancy?from=0001-01-01", "between"),
    ("/api/metrics/occupancy?sql=select%201", "unknown parameter"),
    ("/api/metrics/occupancy?by=night,month,year,weekday,park", "at most 4"),
    ("/api/metrics/occupancy?format=xml", "'format'"),
    ("/api/metrics/nights_sold?booking_window=<script>", "booking_window"),
    ("/api/metrics/forecast_nights?by=park", "no dimension 'park'"),
    ("/api/metrics/occupancy?park=" + "&park=".join(str(i) for i in range(300)), "at most 200"),
    ("/api/export/sales;drop?format=csv", "unknown mart"),
    ("/api/export/forecast?channel=1", "no dimension"),
]


@pytest.mark.parametrize(("path", "says"), HOSTILE, ids=[h[1] for h in HOSTILE])
def test_hostile_parameters_get_a_clear_400(
    api: httpx.Client, built: Built, path: str, says: str
) -> None:
    got = api.get(path)
    assert got.status_code == 400, got.text
    assert says in got.json()["error"]
    assert built.rows("select count(*) from marts.sales_daily")[0][0] > 0


FILTER_VALUES: dict[str, str] = {
    "park": "1",
    "accommodation_type": "1002",
    "channel": "4",
    "booking_window": "30-59 days",
    "currency": "EUR",
}


@pytest.mark.parametrize("name", list(METRICS))
def test_every_metric_filtered_by_each_of_its_dimensions_equals_the_marts(
    api: httpx.Client, built: Built, name: str
) -> None:
    """Each filter applies to the measures whose mart has it (supply ignores channel, booking
    window and currency), by month."""
    metric = METRICS[name]
    lo, hi = built.as_of - timedelta(days=200), built.as_of + timedelta(days=100)
    for dim in [d for d in FILTER_VALUES if d in metric.dimensions]:
        raw = FILTER_VALUES[dim]
        value: Any = int(raw) if raw.isdigit() else raw
        params = {"from": lo.isoformat(), "to": hi.isoformat(), "by": "month", dim: raw}
        got = api.get(f"/api/metrics/{name}", params=params)
        assert got.status_code == 200, got.text
        rows = got.json()["rows"]
        keys = [k for k in got.json()["columns"] if k not in {*metric.measures, name}]
        answer = {tuple(_key(r[k]) for k in keys): r[name] for r in rows}
        expected = _expected(built, name, ["month"], lo, hi, {dim: [value]})
        assert set(answer) == {tuple(_key(v) for v in k) for k in expected}, dim
        for key, want in expected.items():
            shown = answer[tuple(_key(v) for v in key)]
            if metric.kind == "money":
                assert shown == (None if want is None else str(want)), (dim, key)
            elif metric.kind == "ratio":
                assert shown == (None if want is None else pytest.approx(want, rel=1e-12))
            else:
                assert Decimal(str(shown)) == Decimal(str(want)), (dim, key)
