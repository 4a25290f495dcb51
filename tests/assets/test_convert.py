"""Column converters: clean values take the fast path, bad values are flagged, money is exact."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assets.convert import CONVERTERS


@pytest.mark.parametrize(
    ("kind", "values", "expected", "bad"),
    [
        ("id", [1, None, 2**40], [1, None, 2**40], None),
        ("int", [1, "abc", 2.5, "7"], [1, None, None, 7], [False, True, True, False]),
        # an integer above 2**53 beside a bad value stays exact, as it does in a page of ints
        (
            "int",
            ["abc", 9_007_199_254_740_993, True, 2**64],
            [None, 9_007_199_254_740_993, None, None],
            [True, False, True, True],
        ),
        ("float", [1, 2.5, "abc"], [1.0, 2.5, None], [False, False, True]),
        ("date", ["2026-01-31", None], [dt.date(2026, 1, 31), None], None),
        (
            "date",
            ["2026-13-45", "2026-02-30", "2026-02-01"],
            [None, None, dt.date(2026, 2, 1)],
            [True, True, False],
        ),
        (
            "datetime",
            ["2026-04-02T09:53:24.866"],
            [dt.datetime(2026, 4, 2, 9, 53, 24, 866000, tzinfo=dt.UTC)],
            None,
        ),
        (
            "datetime",
            ["2026-04-02T09:53:24.866+02:00", "yesterday"],
            [dt.datetime(2026, 4, 2, 7, 53, 24, 866000, tzinfo=dt.UTC), None],
            [False, True],
        ),
        ("str", ["a", 42, {"x": 1}], ["a", "42", None], [False, False, True]),
        ("bool", [True, "false", "maybe"], [True, False, None], [False, False, True]),
        ("int_list", [[1, 2], None, ["x"]], [[1, 2], None, None], [False, False, True]),
        ("str_list", [["MON"], "MON", None], [["MON"], None, None], [False, True, False]),
        (
            "translation",
            [
                [{"language": "nl", "name": "Duin"}, {"language": "en", "name": "Dune"}],
                [{"language": "de", "name": "Düne"}],
                "x",
            ],
            ["Dune", "Düne", None],
            [False, False, True],
        ),
    ],
    ids=[
        "ids",
        "int-coerce",
        "int-exact-beside-bad",
        "float-coerce",
        "date",
        "bad-dates",
        "datetime-utc",
        "datetime-offset",
        "str",
        "bool",
        "int-list",
        "str-list-not-a-string",
        "translations",
    ],
)
def test_converters(kind: str, values: list, expected: list, bad: list | None) -> None:
    arr, mask, _ = CONVERTERS[kind](values)
    assert arr.to_pylist() == expected
    if bad is None:
        assert mask is None or not mask.any()
    else:
        assert mask is not None and mask.tolist() == bad


def test_money_is_decimal_and_flags_text() -> None:
    arr, mask, _ = CONVERTERS["money"]([19.99, 0.1, 120, "abc", None, 1e17])
    assert arr.type == pa.decimal128(18, 2)
    assert arr.to_pylist() == [
        Decimal("19.99"),
        Decimal("0.10"),
        Decimal("120.00"),
        None,
        None,
        None,
    ]
    assert mask.tolist() == [False, False, False, True, False, True]


@given(st.lists(st.integers(min_value=-(10**13), max_value=10**13), min_size=1, max_size=50))
def test_money_matches_decimal_repr(cents: list[int]) -> None:
    """Any JSON number with two decimals lands as exactly that amount (no float drift)."""
    values = [c / 100 for c in cents]
    arr, mask, _ = CONVERTERS["money"](values)
    expected = [Decimal(repr(v)).quantize(Decimal("0.01")) for v in values]
    assert arr.to_pylist() == expected
    assert mask is None or not mask.any()
