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

from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb

from lake.sql import quote_ident
from lake.tables import TABLES as LAKE_TABLES
from warehouse.lake import narrowed_current_sql

# the tables some lake table's current state follows
PARENTS = frozenset(t.parent for t in LAKE_TABLES.values() if t.parent is not None)

Matching = Callable[[tuple[str, ...]], str]
Known = Callable[[str, tuple[str, ...]], str | None]


@dataclass
class SharedCurrents:
    """Per (table, column): the keys' table it was computed for and the temp table holding it."""

    con: duckdb.DuckDBPyConnection
    held: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = field(default_factory=dict)
    temps: list[str] = field(default_factory=list)

    def known(self, keys: str, matching: Matching) -> Known:
        """For `lake.sql.narrowed_current_sql`: the relation of a parent's narrowed current state
        for the affected keys in `keys` (one column `k`), which `matching` filters on."""

        def lookup(table: str, columns: tuple[str, ...]) -> str | None:
            if table not in PARENTS or len(columns) != 1:
                return None
            found = self.held.get((table, columns))
            if found is not None and self._within(keys, found[0]):
                return f"(select * from {found[1]} where {matching(columns)})"
            name = quote_ident(f"_current_{table}_{len(self.temps)}")
            sql = narrowed_current_sql(table, columns, matching)
            self.con.execute(f"create or replace temp table {name} as {sql}")
            self.held[(table, columns)] = (keys, name)
            self.temps.append(name)
            return name

        return lookup

    def _within(self, keys: str, held: str) -> bool:
        """Whether every key of `keys` is in `held` (nulls equal)."""
        if keys == held:
            return True
        (outside,) = self.con.execute(
            f"select count(*) from {keys} as n where not exists "
            f"(select 1 from {held} as h where h.k is not distinct from n.k)"
        ).fetchone() or (0,)
        return outside == 0
