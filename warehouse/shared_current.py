"""The narrowed current state of a lake parent that several models' reads share.

Within an hour the changed reservations' current state is read by `stg_reservations` and again,
as the parent their current state follows, by each child's narrowed read (bill lines, reserved
resources, subjects): four times the same rows (docs/benchmarks.md, session 17). The first
read of a parent table's narrowed current state by one key column writes it to a temp table;
a later read whose keys are among those takes its keys' rows from it. The same rows: a key's
current rows depend on that key's rows and the table's last full batch only
(`lake.sql.narrowed_current_sql`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import duckdb

from lake.sql import quote_ident
from lake.tables import TABLES as LAKE_TABLES
from warehouse.lake import narrowed_current_sql, rows_since
from warehouse.models import Model

# the tables some lake table's current state follows
PARENTS = frozenset(t.parent for t in LAKE_TABLES.values() if t.parent is not None)

Matching = Callable[[tuple[str, ...]], str]
Known = Callable[[str, tuple[str, ...]], str | None]
Read = tuple[str, tuple[str, ...]]  # a model's table and the columns a reader narrows it by
Reader = Callable[[str, tuple[str, ...], str], str]  # (table, key columns, filter) -> relation


def shared_reads(models: Iterable[Model]) -> set[Read]:
    """The model tables stored as built (their rows in no order of a key: a read by its key
    prunes nothing, `-- incremental stored as built`) that more than one model may read by
    that key when refreshed by key: `core.fct_bill_lines`, 12.8 M lines, read for an hour's
    reservations by five models (docs/benchmarks.md, session 19)."""
    listed = list(models)
    built = {
        m.qualified: m.incremental.keys
        for m in listed
        if m.incremental is not None and m.incremental.stored_as_built
    }
    counts = Counter(
        (dep, built[dep])
        for m in listed
        for dep in m.deps
        if dep in built and m.incremental is not None and m.incremental.keys == built[dep]
    )
    return {read for read, n in counts.items() if n > 1}


@dataclass
class SharedCurrents:
    """Per (table, column): the keys' table it was computed for and the temp table holding it
    (`held`); per model table and key among `reads`, the keys' table and the temp table of its
    rows for them (`tables_held`)."""

    con: duckdb.DuckDBPyConnection
    held: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = field(default_factory=dict)
    temps: list[str] = field(default_factory=list)
    reads: set[Read] = field(default_factory=set)  # `shared_reads`
    tables_held: dict[Read, tuple[str, str]] = field(default_factory=dict)
    # the parent `known` last gave: its table and the relation of its narrowed current state
    last_parent: tuple[str, str] | None = None

    def reader(self, keys: str) -> Reader:
        """A model table's rows for the affected keys in `keys` whose key columns pass a filter:
        `table_rows`, else the filtered table."""

        def read(source: str, columns: tuple[str, ...], on: str) -> str:
            found = self.table_rows(source, columns, keys, on)
            return found or f"(select * from {source} where {on})"

        return read

    def hold(self, source: str, columns: tuple[str, ...], keys: str, rows: str) -> None:
        """Take `rows` (a temp table: the model's new rows, `warehouse.delta.replace_rows`) as
        `source`'s rows for the keys of `keys`, for a read among `reads`: the table holds no
        other rows of those keys once they replaced the old (and the temp table is not read
        again by its model; a later read of keys outside adds theirs to it)."""
        if (source, columns) in self.reads:
            self.tables_held[(source, columns)] = (keys, rows)

    def table_rows(self, source: str, columns: tuple[str, ...], keys: str, on: str) -> str | None:
        """A model table's rows whose key `columns` hold a key of `keys` (one column `k`; `on`
        filters on them), for a read among `reads`: the first writes them to a temp table (unless
        the model's own new rows are held), a later one filters it, after adding the rows of its
        keys outside those (and its keys to the held ones). The same rows: the table is final by then (its readers come after it
        in the walk). None for another read (the plain filter)."""
        if (source, columns) not in self.reads or len(columns) != 1:
            return None
        found = self.tables_held.get((source, columns))
        if found is None:
            name = quote_ident(f"_held_{source.replace('.', '_')}_{len(self.temps)}")
            self.con.execute(
                f"create or replace temp table {name} as select * from {source} where {on}"
            )
            self.temps.append(name)
            self.tables_held[(source, columns)] = (keys, name)
            return name
        held_keys, name = found
        if not self._within(keys, held_keys):
            column = quote_ident(columns[0])
            self.con.execute(
                f"insert into {name} select * from {source} where {on} and not exists "
                f"(select 1 from {held_keys} as _h where _h.k is not distinct from {column})"
            )
            union = quote_ident(f"_held_keys_{len(self.temps)}")
            self.con.execute(
                f"create or replace temp table {union} as "
                f"select * from {held_keys} union select * from {keys}"
            )
            self.temps.append(union)
            self.tables_held[(source, columns)] = (union, name)
        return f"(select * from {name} where {on})"

    def known(self, keys: str, matching: Matching) -> Known:
        """For `lake.sql.narrowed_current_sql`: the relation of a parent's narrowed current state
        for the affected keys in `keys` (one column `k`), which `matching` filters on."""

        def lookup(table: str, columns: tuple[str, ...]) -> str | None:
            self.last_parent = None  # a child's `child_rows` asks of this lookup's parent only
            if table not in PARENTS or len(columns) != 1:
                return None
            found = self.held.get((table, columns))
            if found is not None and self._within(keys, found[0]):
                relation = f"(select * from {found[1]} where {matching(columns)})"
                self.last_parent = (table, relation)
                return relation
            # its lake rows for the keys first: of a top-level table only each key's latest
            # batch (`_latest_rows`; a model reading every version, such as
            # `core.fct_reservation_versions`, reads the lake itself)
            raw = quote_ident(f"_rows_{table}_{len(self.temps)}")
            where = matching(columns)
            rows = f"select * from lake.{quote_ident(table)} where {where}"
            if LAKE_TABLES[table].parent is None:
                rows = _latest_rows(table, where)
            self.con.execute(f"create or replace temp table {raw} as {rows}")
            self.temps.append(raw)
            name = quote_ident(f"_current_{table}_{len(self.temps)}")
            sql = narrowed_current_sql(
                table, columns, matching, narrowed_rows=lambda t: raw if t == table else None
            )
            self.con.execute(f"create or replace temp table {name} as {sql}")
            self.held[(table, columns)] = (keys, name)
            self.temps.append(name)
            self.last_parent = (table, name)
            return name

        return lookup

    def child_rows(self, name: str) -> str | None:
        """For `lake.sql.narrowed_current_sql`'s `narrowed_rows`: a child's lake rows in only
        the files that may hold its narrowed parent's batches (`warehouse.lake.rows_since` from
        the least of them; the child's read keeps to those batches), else None. Asked after
        `known` gave the parent, which the child's read names first."""
        parent = LAKE_TABLES[name].parent
        if parent is None or self.last_parent is None or self.last_parent[0] != parent:
            return None
        (least,) = self.con.execute(
            f"select min(_batch_id) from {self.last_parent[1]}"
        ).fetchone() or (None,)
        return rows_since(name, least)

    def _within(self, keys: str, held: str) -> bool:
        """Whether every key of `keys` is in `held` (nulls equal)."""
        if keys == held:
            return True
        (outside,) = self.con.execute(
            f"select count(*) from {keys} as n where not exists "
            f"(select 1 from {held} as h where h.k is not distinct from n.k)"
        ).fetchone() or (0,)
        return outside == 0


def _latest_rows(table: str, where: str) -> str:
    """The lake rows of `table` passing `where` from the batches that are some key's latest
    among them: a key's current row is in its latest batch (the rule ranks by batch first), so
    its current state over these rows is that over all its rows. Two reads: the key and batch
    columns of every file, then every column of those batches' files only (a file holds one
    batch: the scan skips the others by their statistics). An hour's ~500 reservations, every
    one in the newest batch, decoded every column of 22 files for ~1,000 rows (docs/
    benchmarks.md, session 23)."""
    raw = f"lake.{quote_ident(table)}"
    key = ", ".join(quote_ident(k) for k in LAKE_TABLES[table].key)
    return (
        f"select * from {raw} where {where} and _batch_id in "
        f"(select max(_batch_id) from {raw} where {where} group by {key})"
    )
