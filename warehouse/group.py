"""The group warehouse (`<data dir>/group.duckdb`): every tenant's marts in one file, each row
with its `tenant`, and the group marts summed across tenants (occupancy, revenue in each
currency, channel mix).

Built after the tenants' runs from their published warehouse files, attached read-only (a
tenant's own build is never blocked or seen half-done), into `group.duckdb.building-<id>` and
renamed over the old file when complete, like a tenant's warehouse (`warehouse.build.publish`):
a reader sees the old group or the new one, never a mix. A tenant without a warehouse yet is
left out and named in `meta.tenants`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from lake.sql import quote_ident, quote_literal
from warehouse.build import discard, new_build_id, publish
from warehouse.catalog import column_docs
from warehouse.dictionary_group import GROUP_MARTS, TENANT
from warehouse.macros import MACROS

GROUP_FILE = "group.duckdb"
GROUP_MODELS_DIR = Path(__file__).parent / "group_models"
STACKED_SCHEMA = "tenants"  # tenants.<mart>: every tenant's rows of one mart, with `tenant`


@dataclass(frozen=True)
class GroupResult:
    """The published group file, the tenants it holds and the rows of each of its tables."""

    path: Path
    tenants: tuple[str, ...]
    seconds: float
    row_counts: dict[str, int] = field(default_factory=dict)


def group_models() -> dict[str, str]:
    """`marts.<name>` -> SQL of every group mart, in name order."""
    return {
        f"marts.{p.stem}": p.read_text(encoding="utf-8")
        for p in sorted(GROUP_MODELS_DIR.glob("*.sql"))
    }


def build_group(data_dir: Path, warehouses: Mapping[str, Path]) -> GroupResult:
    """Build and publish `<data_dir>/group.duckdb` from each tenant's warehouse file
    (`warehouses`: tenant name -> path; the missing ones are left out)."""
    started = time.perf_counter()
    target = Path(data_dir) / GROUP_FILE
    building = target.with_name(f"{GROUP_FILE}.building-{new_build_id()}")
    present = {name: path for name, path in warehouses.items() if Path(path).exists()}
    con = duckdb.connect(str(building))
    try:
        con.execute("set TimeZone = 'UTC'")
        for macro in MACROS:
            con.execute(macro)
        for schema in (STACKED_SCHEMA, "marts", "meta"):
            con.execute(f"create schema {quote_ident(schema)}")
        aliases = {}
        for number, (name, path) in enumerate(present.items()):
            aliases[name] = alias = f"tenant_{number}"
            con.execute(f"attach {quote_literal(str(path))} as {alias} (read_only)")
        _tenants_table(con, warehouses, aliases)
        counts = _stack(con, aliases)
        for qualified, sql in group_models().items():
            con.execute(f"create table {qualified} as\n{sql}")
            (counts[qualified],) = con.execute(f"select count(*) from {qualified}").fetchone() or (
                0,
            )
        _comments(con)
        for alias in aliases.values():
            con.execute(f"detach {alias}")
        con.execute("checkpoint")
        con.close()
        publish(building, target)
    except BaseException:
        con.close()
        discard(building)
        raise
    return GroupResult(
        path=target,
        tenants=tuple(present),
        seconds=time.perf_counter() - started,
        row_counts=counts,
    )


def _tenants_table(
    con: duckdb.DuckDBPyConnection, warehouses: Mapping[str, Path], aliases: Mapping[str, str]
) -> None:
    """meta.tenants: each tenant, its warehouse file, and that file's build and as-of date."""
    con.execute(
        "create table meta.tenants (tenant varchar, warehouse_path varchar, "
        "is_included boolean, build_id varchar, as_of date)"
    )
    for name, path in warehouses.items():
        alias = aliases.get(name)
        build_id = as_of = None
        if alias is not None:
            row = con.execute(f"select build_id, as_of from {alias}.meta.build_settings").fetchone()
            build_id, as_of = row if row else (None, None)
        con.execute(
            "insert into meta.tenants values ($1, $2, $3, $4, $5)",
            [name, str(path), alias is not None, build_id, as_of],
        )


def _stack(con: duckdb.DuckDBPyConnection, aliases: Mapping[str, str]) -> dict[str, int]:
    """tenants.<mart> for every mart the tenants' warehouses hold: their rows, `tenant` first
    (a mart stored as a view too: `marts.allotment_pickup` is one)."""
    marts: dict[str, None] = {}
    for alias in aliases.values():
        for (table,) in con.execute(
            "select table_name from information_schema.tables where table_catalog = $1 "
            "and table_schema = 'marts' order by table_name",
            [alias],
        ).fetchall():
            marts[table] = None
    counts: dict[str, int] = {}
    for mart in marts:
        parts = [
            f"select {quote_literal(name)} as tenant, * from {alias}.marts.{quote_ident(mart)}"
            for name, alias in aliases.items()
            if con.execute(
                "select count(*) from information_schema.tables where table_catalog = $1 "
                "and table_schema = 'marts' and table_name = $2",
                [alias, mart],
            ).fetchone()
            == (1,)
        ]
        qualified = f"{STACKED_SCHEMA}.{quote_ident(mart)}"
        con.execute(f"create table {qualified} as\n" + "\nunion all by name\n".join(parts))
        (counts[f"{STACKED_SCHEMA}.{mart}"],) = con.execute(
            f"select count(*) from {qualified}"
        ).fetchone() or (0,)
    if not marts:  # no tenant warehouse yet: the group marts still read empty tables
        for mart, columns in _EMPTY_INPUTS.items():
            con.execute(f"create table {STACKED_SCHEMA}.{mart} ({columns})")
    return counts


_MONEY = "decimal(18, 2)"
_EMPTY_INPUTS = {
    "occupancy_daily": "tenant varchar, date_day date, nights_available bigint, "
    "nights_sold bigint, owner_hold_nights bigint",
    "revenue_daily": "tenant varchar, date_day date, currency_code varchar, "
    + ", ".join(
        f"{c} {_MONEY}"
        for c in (
            "room_revenue_gross",
            "room_revenue_net",
            "total_revenue_gross",
            "total_revenue_net",
            "commission_gross",
            "commission_net",
            "cancellation_revenue",
        )
    )
    + ", nights_sold bigint, nights_available bigint",
    "channel_mix_monthly": "tenant varchar, month_start date, distribution_channel_code varchar, "
    "currency_code varchar, nights_sold bigint, "
    + ", ".join(
        f"{c} {_MONEY}"
        for c in (
            "room_revenue_gross",
            "room_revenue_net",
            "total_revenue_gross",
            "total_revenue_net",
            "commission_gross",
            "commission_net",
        )
    ),
}


def group_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """`schema.table` -> its columns, of the file `con` has open."""
    present: dict[str, list[str]] = {}
    for table, column in con.execute(
        "select table_schema || '.' || table_name, column_name from information_schema.columns "
        "where table_catalog = current_database() and table_schema in ('tenants', 'marts') "
        "order by ordinal_position"
    ).fetchall():
        present.setdefault(table, []).append(column)
    return present


def group_docs(present: Mapping[str, list[str]]) -> dict[str, dict[str, str]]:
    """Each table's column descriptions: the group marts' from `GROUP_MARTS`, a stacked mart's
    from its tenant mart's dictionary entry plus `tenant` ('' where nothing describes it)."""
    docs: dict[str, dict[str, str]] = {}
    for table, columns in present.items():
        if table in GROUP_MARTS:
            docs[table] = {c: GROUP_MARTS[table].get(c, "") for c in columns}
            continue
        mart = f"marts.{table.split('.', 1)[1]}"
        try:
            own = column_docs(mart, {mart: [c for c in columns if c != "tenant"]})
        except KeyError:
            own = {}
        docs[table] = {c: TENANT if c == "tenant" else own.get(c, "") for c in columns}
    return docs


def _comments(con: duckdb.DuckDBPyConnection) -> None:
    statements = [
        f"comment on column {table}.{quote_ident(column)} is {quote_literal(text)}"
        for table, columns in group_docs(group_columns(con)).items()
        for column, text in columns.items()
        if text
    ]
    if statements:
        con.execute(";\n".join(statements))
