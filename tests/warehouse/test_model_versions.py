"""A model's version (`warehouse.changes.model_version`) hashes its SQL and the macros it calls,
directly or through another macro (`warehouse.macros.macros_called`): a macro's change reaches
exactly the models that call it. Which model calls which macro is checked against DuckDB's own
parser (`json_serialize_sql`), not against the regular expressions the code uses."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import duckdb
import pytest

import warehouse.macros
from warehouse.changes import model_version
from warehouse.macros import MACRO_NAMES, MACROS, macros_called
from warehouse.models import discover_models

# main's div_money before session 17: the CASE kept DuckDB from sharing its two to_cents(amount)
_CASE_DIV_MONEY = (
    "create or replace temp macro div_money(amount, n) as "
    "case when n is null or n = 0 or amount is null then null "
    "else from_cents(sign(to_cents(amount)) * ((abs(to_cents(amount)) * 2 + n) // (2 * n))) end"
)


def _functions(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        if node.get("class") == "FUNCTION":
            out.add(str(node["function_name"]).lower())
        for value in node.values():
            _functions(value, out)
    elif isinstance(node, list):
        for value in node:
            _functions(value, out)
    return out


def _parsed_calls(con: duckdb.DuckDBPyConnection, select: str) -> set[str]:
    """The macros a select calls directly, by DuckDB's parser (comments and strings aside)."""
    tree = json.loads(con.execute("select json_serialize_sql($1)", [select]).fetchone()[0])
    assert not tree["error"], tree.get("error_message")
    return _functions(tree, set()) & set(MACRO_NAMES)


def _callers_by_parser() -> dict[str, set[str]]:
    """Each macro -> the models that call it, directly or through other macros."""
    con = duckdb.connect()
    # a macro's body is what follows the first " as " (no parameter list holds one)
    inner = {
        name: _parsed_calls(con, "select " + m.split(" as ", 1)[1])
        for name, m in zip(MACRO_NAMES, MACROS, strict=True)
    }
    callers: dict[str, set[str]] = {name: set() for name in MACRO_NAMES}
    for q, model in discover_models().items():
        reached, todo = set(), _parsed_calls(con, model.sql)
        while todo:
            name = todo.pop()
            reached.add(name)
            todo |= inner[name] - reached
        for name in reached:
            callers[name].add(q)
    return callers


def _versions() -> dict[str, str]:
    return {q: model_version(m) for q, m in discover_models().items()}


CALLERS = _callers_by_parser()


@pytest.mark.parametrize("name", MACRO_NAMES)
def test_a_macros_change_changes_the_versions_of_exactly_its_callers(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _versions()
    changed = tuple(m + " " if n == name else m for n, m in zip(MACRO_NAMES, MACROS, strict=True))
    monkeypatch.setattr(warehouse.macros, "MACROS", changed)
    after = _versions()
    moved = {q for q in before if before[q] != after[q]}
    assert CALLERS[name], f"no model calls {name}: a macro for nothing"
    assert moved == CALLERS[name]


def test_an_inner_macro_reaches_the_models_that_call_it_through_another() -> None:
    # revenue_daily calls div_money, which calls to_cents and from_cents
    assert "marts.revenue_daily" in CALLERS["to_cents"]
    assert "to_cents(" not in discover_models()["marts.revenue_daily"].sql
    assert CALLERS["weekday_code"] >= CALLERS["rate_applies"]


def test_div_money_without_its_case_changes_only_its_callers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = _versions()
    with_case = tuple(_CASE_DIV_MONEY if m.startswith(_CASE_DIV_MONEY[:44]) else m for m in MACROS)
    assert with_case != MACROS
    monkeypatch.setattr(warehouse.macros, "MACROS", with_case)
    before = _versions()
    assert {q for q in now if now[q] != before[q]} == CALLERS["div_money"]
    assert CALLERS["div_money"] == {
        "core.fct_availability",
        "marts.ancillary_revenue_monthly",
        "marts.channel_net_revenue_monthly",
        "marts.rate_availability_daily",
        "marts.revenue_daily",
    }


@pytest.mark.parametrize(
    ("sql", "called"),
    [
        ("select div_money(a, n) from t", {"div_money", "to_cents", "from_cents"}),
        ("select DIV_MONEY (a, n) from t", {"div_money", "to_cents", "from_cents"}),
        ('select "div_money"(a, n) from t', {"div_money", "to_cents", "from_cents"}),
        (
            "select div_money /* why */ -- so\n (a, n) from t",
            {"div_money", "to_cents", "from_cents"},
        ),
        ("select 1 -- to_cents(x) in a comment\n", {"to_cents"}),
        ("select 'safe_ratio(a, b)' as s", {"safe_ratio"}),
        ("select to_cents_of_something(x)", {"to_cents"}),  # a longer name: erring on more
        ("select rate_applies(a,b,c,d,e,f,g,h,i,j,k,l,m)", {"rate_applies", "weekday_code"}),
        ("select is_on_the_books, status_name from fct", set()),  # columns, not calls
        ("select my_to_cents(x)", set()),
        # letters Python's case-insensitive patterns take for s and i: erring on more
        ("select \u017fafe_ratio(a, b)", {"safe_ratio"}),
        ("select \u0130S_GUEST_STAY(a, b)", {"is_guest_stay"}),
        ("select d\u0131v_money(a, n)", {"div_money", "to_cents", "from_cents"}),
    ],
)
def test_the_macros_a_text_calls(sql: str, called: set[str]) -> None:
    names = {n for n, m in zip(MACRO_NAMES, MACROS, strict=True) if m in macros_called(sql)}
    assert names == called


class _Counted:
    """A macro's call pattern that counts its searches."""

    def __init__(self, pattern: Any, searched: list[str], name: str) -> None:
        self.pattern, self.searched, self.name = pattern, searched, name

    def search(self, sql: str) -> Any:
        self.searched.append(self.name)
        return self.pattern.search(sql)


def test_only_the_names_a_text_holds_are_searched_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each macro's pattern costs ~0.2 ms on a model's text, 13 per model per refresh: a name
    the text does not hold in any case is not searched for (docs/benchmarks.md, session 19)."""
    patterns = dict(warehouse.macros._CALL)
    searched: list[str] = []
    counted = {n: _Counted(p, searched, n) for n, p in patterns.items()}
    monkeypatch.setattr(warehouse.macros, "_CALL", counted)
    sql = "select Div_Money(a, n) from t -- to_cents_total and status_name, not called"
    assert warehouse.macros._named(sql) == {"div_money"}
    assert sorted(searched) == ["div_money", "status_name", "to_cents"]
    searched.clear()
    for model in discover_models().values():  # what every pattern finds, searching fewer
        assert warehouse.macros._named(model.sql) == {
            n for n, p in patterns.items() if p.search(model.sql)
        }
    assert len(searched) < len(discover_models()) * len(MACRO_NAMES) / 4


def test_div_money_without_its_case_gives_the_same_values_and_nulls() -> None:
    con = duckdb.connect()
    for macro in MACROS:
        con.execute(macro)
    con.execute(_CASE_DIV_MONEY.replace("div_money", "div_money_case", 1))
    amounts = [None, "0.00", "0.01", "-0.01", "0.03", "-0.03", "0.05", "-0.05", "1.00", "-1.00"]
    amounts += ["10.50", "-10.50", "0.15", "-0.15", "2.25", "-2.25", "9999999999.99", "-7.77"]
    counts = [None, 0, 1, 2, 3, 4, 6, 7, 10, 365, -1, -2, -3]
    con.execute("create table a (amount decimal(18, 2))")
    con.executemany("insert into a values (?)", [[v] for v in amounts])
    con.execute("create table c (n bigint, i integer)")
    con.executemany("insert into c values (?, ?)", [[n, n] for n in counts])
    pairs = "select amount, n, i from a, c"
    for count in ("n", "i"):
        new = f"select amount, {count}, div_money(amount, {count}) as v from ({pairs})"
        old = f"select amount, {count}, div_money_case(amount, {count}) as v from ({pairs})"
        assert (
            con.execute(f"({new} except all {old}) union all ({old} except all {new})").fetchall()
            == []
        )
        assert con.execute(f"select typeof(v) from ({new}) limit 1").fetchone() == (
            "DECIMAL(18,2)",
        )
    got = {
        (a, n): v
        for a, n, v in con.execute(
            f"select amount, n, div_money(amount, n) from ({pairs})"
        ).fetchall()
    }
    assert len(got) == len(amounts) * len(counts)
    assert got[(Decimal("0.03"), 2)] == Decimal("0.02")  # 1.5 cents: half away from zero
    assert got[(Decimal("-0.03"), 2)] == Decimal("-0.02")
    assert got[(Decimal("0.05"), 2)] == Decimal("0.03")
    assert got[(Decimal("10.50"), 4)] == Decimal("2.63")  # 262.5 cents
    assert got[(Decimal("1.00"), 3)] == Decimal("0.33")
    assert got[(Decimal("1.00"), 0)] is None
    assert got[(Decimal("1.00"), None)] is None
    assert got[(None, 2)] is None
    assert (
        got[(Decimal("-1.00"), -2)]
        == con.execute("select div_money_case(-1.00::decimal(18, 2), -2::bigint)").fetchone()[0]
    )
