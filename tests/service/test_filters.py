from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import httpx
import pytest

from service.filters import F, Filter, Op, batch_ids, encoded_length, format_value


@pytest.mark.parametrize(
    ("condition", "rendered"),
    [
        pytest.param(F("code").contains("BUN"), "code:BUN", id="contains"),
        pytest.param(F("code").strict("BUN"), "code::BUN", id="strict"),
        pytest.param(F("status").ne(12), "status!:12", id="not-equals"),
        pytest.param(F("status") > 0, "status>0", id="gt"),
        pytest.param(F("status") >= 12, "status>:12", id="ge"),
        pytest.param(F("status") < 21, "status<21", id="lt"),
        pytest.param(F("status") <= 21, "status<:21", id="le"),
        pytest.param(F("resourceId").isin([3, 1, 2]), "resourceId:[3,1,2]", id="list"),
        pytest.param(F("resourceId").isin({3, 1}), "resourceId:[1,3]", id="set-sorted"),
        pytest.param(F("archived") < True, "archived<true", id="bool"),
        pytest.param(F("arrivalDate") >= date(2026, 4, 2), "arrivalDate>:2026-04-02", id="date"),
        pytest.param(
            F("modifiedDate") > datetime(2026, 4, 2, 9, 53, 24, 866_000),
            "modifiedDate>2026-04-02T09:53:24.866",
            id="naive-datetime-ms",
        ),
        pytest.param(
            F("modifiedDate") > datetime(2026, 4, 2, 11, 0, tzinfo=timezone(timedelta(hours=2))),
            "modifiedDate>2026-04-02T09:00:00.000",
            id="aware-datetime-to-utc",
        ),
        pytest.param(F("value") >= Decimal("10.50"), "value>:10.50", id="decimal"),
    ],
)
def test_condition_renders(condition, rendered) -> None:
    assert condition.render() == rendered


@pytest.mark.parametrize(
    ("where", "params"),
    [
        pytest.param(Filter(), [], id="empty"),
        pytest.param(Filter.of(F("a") > 1), ["a>1"], id="single"),
        pytest.param(Filter.of(F("a") > 1, F("a") < 9), ["a>1", "a<9"], id="and-repeats-param"),
        pytest.param(
            Filter.of(F("a").contains("x") | F("b").contains("y")), ["a:x||b:y"], id="or-chain"
        ),
        pytest.param(
            Filter.of((F("a") < 3) | (F("a") > 7) | F("c").strict("z")),
            ["a<3||a>7||c::z"],
            id="or-three",
        ),
        pytest.param(Filter.of("raw:1").and_(F("b") > 2), ["raw:1", "b>2"], id="raw-and-builder"),
    ],
)
def test_filter_params(where: Filter, params: list[str]) -> None:
    assert where.params() == params


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda: F("a").contains("x||y").render(), id="or-in-value"),
        pytest.param(lambda: F("a").isin(["x,y"]).render(), id="comma-in-list-item"),
        pytest.param(lambda: F("a").isin([]).render(), id="empty-list"),
        pytest.param(lambda: F("a b"), id="bad-field"),
        pytest.param(lambda: (F("a") > [1, 2]).render(), id="list-with-gt"),
    ],
)
def test_invalid_filters_raise(bad) -> None:
    with pytest.raises(ValueError):
        bad()


def test_operators_are_percent_encoded_by_httpx() -> None:
    url = httpx.URL("https://h/x", params={"filter": "a>:1||b:[1,2]"})
    assert "%3E%3A1%7C%7Cb%3A%5B1%2C2%5D" in str(url)
    assert format_value(datetime(2026, 1, 2, tzinfo=UTC)) == "2026-01-02T00:00:00.000"
    assert Op.GE.value == ">:"


@pytest.mark.parametrize("budget", [10, 50, 400, 1800])
def test_batch_ids_fit_budget_and_keep_every_id_once(budget: int) -> None:
    ids = [*range(1, 3000), 5, 6, 7]  # duplicates dropped
    batches = list(batch_ids(ids, budget=budget))
    flat = [i for b in batches for i in b]
    assert flat == list(range(1, 3000))
    for batch in batches:
        assert encoded_length(",".join(map(str, batch))) <= budget


def test_batch_ids_empty_and_bad_budget() -> None:
    assert list(batch_ids([], budget=100)) == []
    with pytest.raises(ValueError):
        list(batch_ids([1], budget=0))
