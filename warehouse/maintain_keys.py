"""The by-key form of maintaining a model (`warehouse.maintain`, whose docstring gives the rules):
whether an input's changed rows map to the model's key, the affected keys from the changed inputs
(the header's expressions, or its query when an input changed whole), the model's SQL with its
inputs read for those keys only, and the delete+insert of their rows (`warehouse.delta`).

`ByKeys` is the base of `warehouse.maintain.Maintainer`: its methods use the walk's state, which
the maintainer holds. `Outcome` is what maintaining one model did, in every form.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from lake.sql import narrow_cte, quote_ident, swap_relations
from lake.tables import TABLES as LAKE_TABLES
from warehouse.changes import FULL
from warehouse.columns import table_columns
from warehouse.delta import replace_keys, replace_rows
from warehouse.headers import Incremental
from warehouse.lake import narrowed_current_sql
from warehouse.lake_schema import TABLES
from warehouse.models import Model
from warehouse.rebuild import columns_of
from warehouse.shared_current import Known, Matching, Read, Reader, SharedCurrents

_COLUMN = re.compile(r"^[a-z_][a-z0-9_]*$")
_AFFECTED = re.compile(r"\baffected_keys\b")
_QUERY = re.compile(r"^select\s", re.IGNORECASE)


def _relation(qualified: str) -> str:
    """`layer.name` as SQL names it, quoted."""
    return ".".join(quote_ident(part) for part in qualified.split(".", 1))


@dataclass
class Outcome:
    """What maintaining one model did: how (`keys`, `sums`, `whole`, `unchanged`), and its
    state."""

    how: str
    state: str | None  # None: unchanged for its readers; FULL; else a temp table of its changes
    keys: int = 0
    seconds: float = 0.0
    parts: tuple[str, str] | None = None  # of a change by key: its removed rows, its new rows


class ByKeys:
    """The delete+insert of the affected keys' rows, for `warehouse.maintain.Maintainer`."""

    # the walk's state these methods use: fields of `warehouse.maintain.Maintainer`
    con: duckdb.DuckDBPyConnection
    readers: dict[str, int]
    keyed: set[str] | None
    summed: set[str] | None
    temps: list[str]
    column_cache: dict[str, tuple[tuple[str, str], ...]] | None
    stale: set[str]
    shared: SharedCurrents | None
    shared_reads: set[Read]
    described: dict[str, list[str]]

    def _maps(self, inc: Incremental, source: str, relation: str) -> bool:
        """Whether the changed rows of `source` map to the key: the form with sources names
        it; the plain form needs the key column in them (a dimension's diff has none)."""
        expr = inc.expression(source)
        if expr is None:
            return False
        if inc.sources:
            return True
        columns = self._columns(quote_ident(relation))
        return all(k in columns for k in inc.keys)

    def _columns(self, relation: str) -> list[str]:
        """A changed-rows relation's columns (written once in a walk, asked by each reader)."""
        if relation not in self.described:
            self.described[relation] = columns_of(self.con, relation)
        return self.described[relation]

    def _by_keys(self, model: Model, changed: dict[str, str]) -> Outcome | None:
        inc = model.incremental
        assert inc is not None
        base = f"{model.layer}_{model.name}"
        keys, delta = quote_ident(f"_keys_{base}"), quote_ident(f"_changed_{base}")
        removed, added = quote_ident(f"_removed_{base}"), quote_ident(f"_added_{base}")
        # the affected keys' columns: `k` for one key column, else `k0`, `k1`, ... (named apart
        # from every model column, so that a match's column names reach the row it filters)
        names = ("k",) if len(inc.keys) == 1 else tuple(f"k{i}" for i in range(len(inc.keys)))
        listed = ", ".join(quote_ident(n) for n in names)
        table = model.relation
        selects = []
        queries = set()
        for source, relation in sorted(changed.items()):
            if relation == FULL:  # changed whole: the header's query over the database
                query = inc.when_whole(source)
                assert query is not None
                if query not in queries:  # one query may serve several inputs
                    queries.add(query)
                    selects.append(f"select * from ({query}) as q({listed})")
                continue
            expr = inc.expression(source)
            assert expr is not None
            rows = f"with changed_rows as (select * from {quote_ident(relation)})"
            if _QUERY.match(expr):  # a query over all the changed rows at once
                selects.append(f"select * from ({rows} {expr}) as q({listed})")
                continue
            value = f"unnest({expr})" if expr.startswith("[") else expr
            # `changed` is one changed row; `changed_rows` all of them (a diff holds the old and
            # the new version of a row: an expression can ask whether the columns it reads moved)
            selects.append(
                f"select * from ({rows} select {value} from changed_rows as changed) as q({listed})"
            )
        (count,) = self.con.execute(
            f"create or replace temp table {keys} as select distinct {listed} from "
            f"({' union all '.join(selects)})"
        ).fetchone() or (0,)
        self.temps += [keys, delta, removed, added]
        # the table's creation gives its count; one key column asks for its null key too (a
        # statement's own cost is ~1 ms: several key columns need no null check, `matching`)
        found = 0
        if len(names) == 1 and count:
            (found,) = self.con.execute(
                f"select count(*) filter (where k is null) from {keys}"
            ).fetchone() or (0,)
        if count == 0:
            return Outcome("keys", None)
        nulls = bool(found)

        def matching(columns: tuple[str, ...]) -> str:
            """Rows whose `columns` hold an affected key (nulls equal)."""
            if len(columns) == 1:
                # a plain IN reaches the scans (an OR with a subquery would not); null keys
                # only if any
                col = quote_ident(columns[0])
                return f"({col} in (select k from {keys}){f' or {col} is null' if nulls else ''})"
            pairs = list(zip(names, columns, strict=True))
            same = " and ".join(
                f"_k.{quote_ident(n)} is not distinct from {quote_ident(c)}" for n, c in pairs
            )
            exact = f"exists (select 1 from {keys} as _k where {same})"
            if len(pairs) < 3:
                return exact
            # three columns or more: first by the distinct values of all but the last (a key
            # such as night x type x weeks back lists a night x type once per week: a probe of
            # every stored row into a table a tenth the size costs half), then exactly
            head = pairs[:-1]
            listed = ", ".join(quote_ident(n) for n, _ in head)
            near = " and ".join(
                f"_h.{quote_ident(n)} is not distinct from {quote_ident(c)}" for n, c in head
            )
            return (
                f"(exists (select 1 from (select distinct {listed} from {keys}) as _h "
                f"where {near}) and {exact})"
            )

        match = matching(inc.keys)
        guard = self.con.execute(inc.guard).fetchall() if inc.guard else None
        if self.shared is None:
            self.shared = SharedCurrents(self.con, temps=self.temps, reads=self.shared_reads)
        read = self.shared.reader(keys)
        known = self.shared.known(keys, matching) if len(names) == 1 else None
        if not inc.sources:
            sql = self._narrowed(model, matching, read, known)
        elif inc.narrow or inc.narrows:
            swaps: dict[str, str] = {}
            # each declared input read where its columns hold an affected key
            for source, expression in inc.sources if inc.narrow else ():
                columns = tuple(c.strip() for c in expression.split(","))
                if len(columns) != len(names) or not all(_COLUMN.match(c) for c in columns):
                    continue
                swaps[source] = read(source, columns, matching(columns))
                lake_table = source.removeprefix("lake.")
                # its current state narrowed by one column (a reservation's rows), or by several
                # when they are part of the lake table's key (so each value has its own rows)
                if source.startswith("lake.") and (
                    len(columns) == 1 or set(columns) <= set(LAKE_TABLES[lake_table].key)
                ):
                    current = narrowed_current_sql(
                        lake_table, columns, matching, known, self._child_rows(known)
                    )
                    swaps[f"lake_current.{lake_table}"] = f"({current})"
            # an input read by the condition its `incremental narrows` line gives
            # `affected_keys`: one column `k`, or one per key column, named as the key columns
            affected = f"(select * from {keys})"
            if len(names) > 1:
                renamed = ", ".join(
                    f"{n} as {quote_ident(c)}" for n, c in zip(names, inc.keys, strict=True)
                )
                affected = f"(select {renamed} from {keys})"
            ctes: list[tuple[str, str]] = []
            for source, condition in inc.narrows:
                on = _AFFECTED.sub(affected, condition)
                if "." not in source:  # one of the model's own CTEs (`lake.sql.narrow_cte`)
                    ctes.append((source, on))
                    continue
                swaps[source] = (  # a query stands for its rows, a condition filters them
                    f"({on})" if _QUERY.match(on) else f"(select * from {source} where {on})"
                )
            sql = swap_relations(model.sql, swaps)
            for name, on in ctes:
                sql = narrow_cte(sql, name, on)
        else:
            sql = model.sql
        # a model nobody reads (known to have no readers), or whose readers take no changed
        # rows by key, needs no changed rows
        q = model.qualified
        read = self.readers.get(q, 1) > 0 if self.keyed is None else q in self.keyed
        parts: tuple[str, str] | None = (f"_removed_{base}", f"_added_{base}")
        if read and inc.every_key_changes:
            # its readers take it by its key alone (`warehouse.changes.handed_keys`): handed
            # the affected keys, no old rows copied to find the rows that differ
            named = ", ".join(
                f"{quote_ident(n)} as {quote_ident(c)}"
                for n, c in zip(names, inc.keys, strict=True)
            )
            written, views = replace_keys(
                self.con, table, base, match, sql, f"select {named} from {keys}"
            )
            moved, parts = int(count), None
            self.described[delta] = list(inc.keys)  # the view's columns, for its readers
        else:
            # its removed and added rows apart only for a model of sums over it
            summed = self.summed is None or q in self.summed
            written, views, moved = replace_rows(
                self.con, table, base, match, sql, diff=read, parts=summed
            )
            parts = parts if summed else None
            cached = self.column_cache or {}
            if q in cached and q not in self.stale:  # its changed rows have its columns
                self.described[delta] = [c for c, _ in cached[q]]
        self.temps += [*written, *views]
        if inc.guard and self.con.execute(inc.guard).fetchall() != guard:
            return None  # an invariant outside the key moved: the caller rebuilds it whole
        if moved is None:
            return Outcome("keys", FULL, keys=int(count))
        # its new rows are the table's rows for these keys now: its readers by key read them
        self.shared.hold(q, inc.keys, keys, quote_ident(f"_new_{base}"))
        return Outcome("keys", f"_changed_{base}" if moved else None, keys=int(count), parts=parts)

    def _child_rows(self, known: Known | None) -> Callable[[str], str | None] | None:
        """A child's lake rows from only the files its parent's batches may be in
        (`SharedCurrents.child_rows`), when the parent's narrowed state is shared."""
        return self.shared.child_rows if known is not None and self.shared is not None else None

    def _narrowed(
        self,
        model: Model,
        matching: Matching,
        read: Reader,
        known: Known | None = None,
    ) -> str:
        """The model's SQL with every input that has the key column read for the affected keys
        only. Valid for the `-- incremental by <key>` form, which says that a key's rows depend
        on its inputs' rows of that key alone; DuckDB would not push the filter on the output
        through the CTEs a model reads twice (it materialises them whole)."""
        inc = model.incremental
        assert inc is not None
        if self.column_cache is None:
            self.column_cache = table_columns(self.con)  # one query for every input
            self.stale.clear()
        columns = self.column_cache
        for dep in sorted(model.deps & self.stale):  # rebuilt whole since: its columns again
            found = self.con.execute(f"describe {_relation(dep)}").fetchall()
            columns[dep] = tuple((str(name), str(kind)) for name, kind, *_ in found)
            self.stale.discard(dep)
        narrowed = [
            dep
            for dep in sorted(model.deps)
            if set(inc.keys) <= {c for c, _ in columns.get(dep, ())}
        ]
        match = matching(inc.keys)
        swaps = {d: read(d, inc.keys, match) for d in narrowed}
        for table in model.lake_tables if len(inc.keys) == 1 else ():
            (key,) = inc.keys
            if key in TABLES[table].all_columns:
                swaps[f"lake.{table}"] = f"(select * from lake.{table} where {match})"
                current = narrowed_current_sql(
                    table, (key,), matching, known, self._child_rows(known)
                )
                swaps[f"lake_current.{table}"] = f"({current})"
        return swap_relations(model.sql, swaps)
