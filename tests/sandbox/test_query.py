"""Pure tests of the sandbox's filter, sort and paging functions (no HTTP)."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.filters import (
    Condition,
    QueryError,
    SortOrder,
    build_predicate,
    compile_filter,
    compile_filters,
    infer_types,
    parse_sort,
    parse_term,
)
from sandbox.query import envelope, parse_paging, plan_keys, select, select_keyed

RECORDS: list[dict[str, Any]] = [
    {
        "id": 1,
        "code": "Alpha",
        "price": 10.5,
        "active": True,
        "day": "2026-01-01",
        "at": "2026-01-01T10:00:00.000",
        "tags": [1, 2],
        "parentId": None,
        "addr": {"city": "X"},
    },
    {
        "id": 2,
        "code": "beta",
        "price": 20.0,
        "active": False,
        "day": "2026-02-01",
        "at": "2026-02-01T09:30:00.000",
        "tags": [3],
        "parentId": 1,
        "addr": {"city": "Y"},
    },
    {
        "id": 3,
        "code": "alphabet",
        "price": 30.0,
        "active": True,
        "day": "2026-03-01",
        "at": "2026-03-01T00:00:00.000",
        "tags": [],
        "parentId": 1,
        "addr": None,
    },
    {
        "id": 4,
        "code": "Gamma",
        "price": 20,
        "active": True,
        "day": "2026-03-15",
        "at": "2026-03-15T23:59:59.999",
        "tags": [2],
        "parentId": 2,
        "addr": None,
    },
]
TYPES = infer_types(RECORDS)


def ids(filters: list[str]) -> list[int]:
    pred = build_predicate(compile_filters(filters, TYPES), TYPES)
    return [r["id"] for r in RECORDS if pred is None or pred(r)]


def test_infer_types() -> None:
    assert TYPES == {
        "id": "int",
        "code": "string",
        "price": "number",
        "active": "bool",
        "day": "date",
        "at": "datetime",
        "tags": "array",
        "parentId": "int",
        "addr": "object",
    }


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("code:abc", ("code", ":", "abc")),
        ("code::abc", ("code", "::", "abc")),
        ("code!:abc", ("code", "!:", "abc")),
        ("id>:3", ("id", ">:", "3")),
        ("id>3", ("id", ">", "3")),
        ("id<:3", ("id", "<:", "3")),
        ("id<3", ("id", "<", "3")),
        ("at>:2026-01-01T10:00:00.000", ("at", ">:", "2026-01-01T10:00:00.000")),
        ("id:[1,2]", ("id", ":", "[1,2]")),
    ],
    ids=[
        "contains",
        "strict",
        "not",
        "gte",
        "gt",
        "lte",
        "lt",
        "datetime-value-with-colons",
        "list",
    ],
)
def test_parse_term_longest_operator_first(term: str, expected: tuple[str, str, str]) -> None:
    assert parse_term(term) == expected


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (["code:alpha"], [1, 3]),
        (["code::alpha"], []),
        (["code::Alpha"], [1]),
        (["code!:Alpha"], [2, 3, 4]),
        (["code>beta"], []),
        (["code>Gamma"], [3, 2]),
        (["id:2"], [2]),
        (["id::2"], [2]),
        (["id!:2"], [1, 3, 4]),
        (["id>2"], [3, 4]),
        (["id>:2"], [2, 3, 4]),
        (["id<2"], [1]),
        (["id<:2"], [1, 2]),
        (["price:20"], [2, 4]),
        (["price>15.5"], [2, 3, 4]),
        (["active:true"], [1, 3, 4]),
        (["active!:true"], [2]),
        (["day:2026-03-01"], [3]),
        (["day>2026-02-01"], [3, 4]),
        (["day<:2026-02-01"], [1, 2]),
        (["at:2026-03-15"], [4]),
        (["at>:2026-02-01T09:30:00.000"], [2, 3, 4]),
        (["tags:2"], [1, 4]),
        (["parentId:null"], [1]),
        (["parentId!:null"], [2, 3, 4]),
        (["parentId>:1"], [2, 3, 4]),
        (["id:[1,3,99]"], [1, 3]),
        (["id!:[1,3]"], [2, 4]),
        (["code::[beta,Gamma]"], [2, 4]),
        (["id:1||code:gam"], [1, 4]),
        (["id>1", "price:20"], [2, 4]),
        (["id>1||active:false", "code:a"], [2, 3, 4]),
    ],
    ids=[
        "str-contains-ci",
        "str-strict-case",
        "str-strict",
        "str-not",
        "str-gt-none",
        "str-gt",
        "int-colon-equals",
        "int-strict",
        "int-not",
        "int-gt",
        "int-gte",
        "int-lt",
        "int-lte",
        "number-equals-int-and-float",
        "number-gt",
        "bool-equals",
        "bool-not",
        "date-equals",
        "date-gt",
        "date-lte",
        "datetime-day-prefix",
        "datetime-gte",
        "array-contains",
        "null",
        "not-null",
        "null-never-compares",
        "list",
        "not-in-list",
        "strict-string-list",
        "or-chain",
        "and-repeated",
        "and-of-or",
    ],
)
def test_filter_operators(filters: list[str], expected: list[int]) -> None:
    assert sorted(ids(filters)) == sorted(expected)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("bogus:1", "unknown filter field 'bogus'"),
        ("addr.city:X", "nested field 'addr.city'"),
        ("addr:X", "nested field 'addr'"),
        ("code", "malformed filter term"),
        ("id:", "has no value"),
        ("id>abc", "'abc' for field 'id' is not an integer"),
        ("price<cheap", "is not a number"),
        ("active:maybe", "is not a boolean"),
        ("day>2026-13-45", "is not a valid date"),
        ("day>tomorrow", "is not a date"),
        ("active>true", "not supported on bool"),
        ("id>[1,2]", "does not take a list"),
        ("id:[]", "empty value list"),
        ("parentId>null", "cannot compare"),
        ("id:1||", "malformed filter term"),
    ],
    ids=[
        "unknown-field",
        "dotted-field",
        "object-field",
        "no-operator",
        "no-value",
        "int-text",
        "number-text",
        "bool-text",
        "impossible-date",
        "not-a-date",
        "bool-comparison",
        "list-with-comparison",
        "empty-list",
        "null-comparison",
        "dangling-or",
    ],
)
def test_bad_filters_name_the_problem(expr: str, message: str) -> None:
    with pytest.raises(QueryError, match=message.replace("[", r"\[").replace(".", r"\.")):
        compile_filter(expr, TYPES)


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        (["price"], [1, 2, 4, 3]),
        (["price,desc"], [3, 2, 4, 1]),
        (["price,desc", "id,desc"], [3, 4, 2, 1]),
        (["code,asc"], [1, 4, 3, 2]),
        (["parentId,asc", "id,desc"], [1, 3, 2, 4]),
        (["parentId,desc"], [4, 2, 3, 1]),
        (["active,price,desc"], [3, 4, 1, 2]),
    ],
    ids=[
        "default-asc",
        "desc",
        "tie-break",
        "strings-case-sensitive",
        "nulls-first-asc",
        "nulls-last-desc",
        "spring-multi-field",
    ],
)
def test_sort(sort: list[str], expected: list[int]) -> None:
    orders = parse_sort(sort, TYPES)
    selection = select(RECORDS, None, orders, 0, 10)
    assert [r["id"] for r in selection.content] == expected


@pytest.mark.parametrize(
    ("sort", "message"),
    [(["nope"], "unknown sort field"), (["addr"], "nested"), ([","], "empty sort")],
    ids=["unknown", "nested", "empty"],
)
def test_bad_sort(sort: list[str], message: str) -> None:
    with pytest.raises(QueryError, match=message):
        parse_sort(sort, TYPES)


@pytest.mark.parametrize(
    ("page", "size", "expected"),
    [(None, None, (0, 20)), ("2", "5", (2, 5)), ("0", "5000", (0, 100)), ("", "", (0, 20))],
    ids=["defaults", "given", "clamped", "empty-strings"],
)
def test_paging(page: str | None, size: str | None, expected: tuple[int, int]) -> None:
    assert parse_paging(page, size, 100) == expected


@pytest.mark.parametrize(
    ("page", "size"), [("-1", "5"), ("0", "0"), ("x", "5")], ids=["negative", "zero-size", "text"]
)
def test_bad_paging(page: str, size: str) -> None:
    with pytest.raises(QueryError):
        parse_paging(page, size, 100)


@pytest.mark.parametrize(
    ("page", "size", "total", "count", "first", "last", "pages"),
    [
        (0, 2, 5, 2, True, False, 3),
        (2, 2, 5, 1, False, True, 3),
        (0, 20, 0, 0, True, True, 0),
        (9, 2, 5, 0, False, True, 3),
    ],
    ids=["first", "last", "empty", "beyond"],
)
def test_envelope(
    page: int, size: int, total: int, count: int, first: bool, last: bool, pages: int
) -> None:
    content = [{"id": i} for i in range(count)]
    env = envelope(content, page=page, size=size, total=total, orders=[SortOrder("id", True)])
    assert env == {
        "content": content,
        "size": size,
        "number": page,
        "numberOfElements": count,
        "totalElements": total,
        "totalPages": pages,
        "first": first,
        "last": last,
        "empty": count == 0,
        "sort": [
            {
                "direction": "DESC",
                "property": "id",
                "ignoreCase": False,
                "nullHandling": "NATIVE",
                "ascending": False,
                "descending": True,
            }
        ],
    }


KEYS = list(range(10, 110, 10))  # 10, 20, ..., 100
ROWS = [{"id": k, "even": k % 20 == 0} for k in KEYS]
ID_TYPES = {"id": "int", "even": "bool"}


@pytest.mark.parametrize(
    ("filters", "sort", "page", "size", "expected", "total"),
    [
        ([], [], 0, 3, [10, 20, 30], 10),
        (["id>30"], [], 0, 3, [40, 50, 60], 7),
        (["id>:30", "id<:50"], [], 0, 10, [30, 40, 50], 3),
        (["id>35", "id<60"], [], 1, 1, [50], 2),
        (["id:[100,20,25]"], [], 0, 10, [20, 100], 2),
        (["id:[20,30,40]", "id>20"], [], 0, 10, [30, 40], 2),
        (["id>50"], ["id,desc"], 0, 2, [100, 90], 5),
        (["id>50", "even:true"], [], 0, 10, [60, 80, 100], 3),
        (["id>50||even:true"], [], 0, 10, [20, 40, 60, 70, 80, 90, 100], 7),
        (["id::70"], [], 0, 10, [70], 1),
        (["id>200"], [], 0, 10, [], 0),
    ],
    ids=[
        "no-filter",
        "keyset-gt",
        "range",
        "range-page-2",
        "id-list",
        "id-list-and-bound",
        "desc",
        "key-and-other",
        "or-is-not-keyed",
        "strict-equal",
        "past-the-end",
    ],
)
def test_select_keyed_matches_generic(
    filters: list[str], sort: list[str], page: int, size: int, expected: list[int], total: int
) -> None:
    compiled = compile_filters(filters, ID_TYPES)
    orders = parse_sort(sort, ID_TYPES)
    plan = plan_keys(compiled, "id")
    fast = select_keyed(
        KEYS, ROWS, plan, build_predicate(plan.rest, ID_TYPES), orders, "id", page, size
    )
    slow = select(ROWS, build_predicate(compiled, ID_TYPES), orders, page, size)
    assert [r["id"] for r in fast.content] == expected == [r["id"] for r in slow.content]
    assert fast.total == total == slow.total


def test_plan_keys_takes_only_single_pk_terms() -> None:
    compiled = compile_filters(["id>10", "id<:90", "id>5||even:true", "even:true"], ID_TYPES)
    plan = plan_keys(compiled, "id")
    assert (plan.low, plan.low_inclusive, plan.high, plan.high_inclusive) == (10, False, 90, True)
    assert plan.rest == [compiled[2], compiled[3]]
    assert plan_keys([[Condition("id", "in", frozenset({3, 1}))]], "id").ids == [1, 3]
