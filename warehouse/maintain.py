"""Maintain built models by key: the delete+insert, the whole rebuild, or nothing.

A refresh compares the lake and the code with what the published file records
(`warehouse.changes`: a lake table's changed rows, or FULL; each model's SQL version):

- a model declared `-- incremental by <key>` (`warehouse.headers`) whose changed inputs all map to
  its key deletes the rows of the affected keys and inserts them again from its own SQL filtered
  on those keys; of the rows it deleted and inserted, those that differ (the old rows the new
  ones do not have, and the other way round) are its changed rows for the models reading it,
  and when none differ it is unchanged for them; the table writes only the rows that differ
  (a model whose readers take none of its rows by key, `warehouse.changes.keyed_sources`,
  keeps no old rows and is changed whole for them: `warehouse.delta.replace_rows`);
- any other model with a changed input is rebuilt whole (`warehouse.rebuild`): unchanged for
  its readers when its fingerprint is the same as before; when a reader maps its rows to its
  own key (`warehouse.changes.delta_readers`), its changed rows are those only the old or only
  the new table has;
- a model of sums (`-- incremental sums over <input> by ...`) whose one changed input is that
  input, by key, adds the sums over the input's new rows and subtracts those over its old rows
  (`warehouse.additive`): a by-key change keeps the rows it removed apart from those it inserted;
- an input that changed whole (the settings, i.e. the as-of date, or a model rebuilt whole with
  no diff) maps to the key only by the reader's `-- incremental when <input> changed whole:`
  query over the database; without one the reader is rebuilt whole;
- a model that is missing, or whose SQL (or a macro it calls) changed, is rebuilt whole (one
  built before tells its readers what differs from the table it replaced, as above).

Every statement runs in the caller's one transaction (`warehouse.inplace`).

A whole build stores a model by key in key order (`Model.table_sql`): reads of a few keys' rows
then skip the row groups and vectors none of them is in (docs/benchmarks.md, session 17).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import duckdb

from lake.sql import quote_ident, swap_relations
from lake.tables import TABLES as LAKE_TABLES
from warehouse.additive import OLD_SETTINGS, add_sums, shift_sums
from warehouse.asof import days_moved
from warehouse.changes import FULL, SETTINGS_INPUT, lake_inputs, model_version
from warehouse.columns import table_columns
from warehouse.delta import replace_rows
from warehouse.headers import Incremental
from warehouse.lake import narrowed_current_sql
from warehouse.lake_schema import TABLES
from warehouse.models import Model
from warehouse.rebuild import columns_of, rebuild, rebuild_diffed
from warehouse.shared_current import Known, Matching, Read, Reader, SharedCurrents

# a whole rebuild of a larger table keeps the fingerprint (a diff holds both versions in memory)
DIFF_MAX_ROWS = 2_000_000

_COLUMN = re.compile(r"^[a-z_][a-z0-9_]*$")
_AFFECTED = re.compile(r"\baffected_keys\b")
_QUERY = re.compile(r"^select\s", re.IGNORECASE)


@dataclass
class Outcome:
    """What maintaining one model did: how (`keys`, `sums`, `whole`, `unchanged`), and its
    state."""

    how: str
    state: str | None  # None: unchanged for its readers; FULL; else a temp table of its changes
    keys: int = 0
    seconds: float = 0.0
    parts: tuple[str, str] | None = None  # of a change by key: its removed rows, its new rows


@dataclass
class Maintainer:
    """Walks the models in dependency order, keeping each one's state for its readers."""

    con: duckdb.DuckDBPyConnection
    lake: dict[str, str]  # lake table -> FULL or changed-rows view
    settings_changed: bool
    versions: dict[str, str]
    existing: set[str]
    # model -> how many models read it (one absent: taken as read, for a change by key)
    readers: dict[str, int] = field(default_factory=dict)
    # the models whose changed rows a reader takes by key (`keyed_sources`); None: every model
    # that is read
    keyed: set[str] | None = None
    # whole rebuilds that report their changed rows -> (lineage out of the diff, who names it)
    diffed: dict[str, tuple[bool, tuple[Model, ...]]] = field(default_factory=dict)
    states: dict[str, str | None] = field(default_factory=dict)
    # models changed by key -> the temp tables of the rows they removed and of those inserted
    parts: dict[str, tuple[str, str]] = field(default_factory=dict)
    temps: list[str] = field(default_factory=list)
    # the temp views among `temps` (dropped as views)
    views: set[str] = field(default_factory=set)
    # every table's columns (`table_columns`), read once and again after a whole rebuild (the
    # only step that may change a table's columns): one query of the catalog costs ~10 ms
    column_cache: dict[str, tuple[tuple[str, str], ...]] | None = None
    # the lake parents' narrowed current states the reads share (its temps are among `temps`)
    shared: SharedCurrents | None = None
    shared_reads: set[Read] = field(default_factory=set)  # the model tables' reads it shares
    described: dict[str, list[str]] = field(default_factory=dict)  # `_columns`

    def changed_inputs(self, model: Model) -> dict[str, str]:
        found: dict[str, str] = {}
        for dep in model.deps:
            if self.states.get(dep) is not None:
                found[dep] = self.states[dep]  # type: ignore[assignment]
        for table in lake_inputs(model):
            if table in self.lake:
                found[f"lake.{table}"] = self.lake[table]
        if SETTINGS_INPUT in model.sql and self.settings_changed:
            found[SETTINGS_INPUT] = FULL
        return found

    def maintain(self, model: Model) -> Outcome:
        t0 = time.perf_counter()
        q = model.qualified
        fresh = q in self.existing and self.versions.get(q) == model_version(model)
        changed = self.changed_inputs(model)
        if fresh and not changed:
            self.states[q] = None
            return Outcome("unchanged", None)
        sums = model.sums
        if (  # its input by key, or (when its snapshots shift) the as-of date, or both
            fresh
            and sums is not None
            and set(changed) - {SETTINGS_INPUT if sums.shifts else ""} <= {sums.source}
            and (sums.source not in changed or sums.source in self.parts)
        ):
            added = self._added(model, SETTINGS_INPUT in changed)
            if added is not None:  # else a null sum: rebuilt whole below
                added.seconds = time.perf_counter() - t0
                self._keep(q, added)
                return added
        inc = model.incremental
        if (
            fresh
            and inc is not None
            and all(
                inc.when_whole(source) is not None
                if state == FULL
                else self._maps(inc, source, state)
                for source, state in changed.items()
            )
        ):
            outcome = self._by_keys(model, changed)
            if outcome is not None:
                outcome.seconds = time.perf_counter() - t0
                self._keep(q, outcome)
                return outcome
        built = q in self.existing  # by this SQL or another: its readers learn what differs
        if built and self._diff_helps(q) and self._rows(model) <= DIFF_MAX_ROWS:
            outcome = self._whole_diffed(model)
        else:
            outcome = self._whole(model, compare=built and self.readers.get(q, 0) > 0)
        outcome.seconds = time.perf_counter() - t0
        self._keep(q, outcome)
        return outcome

    def _keep(self, q: str, outcome: Outcome) -> None:
        self.states[q] = outcome.state
        if outcome.parts is not None and outcome.state is not None:
            self.parts[q] = outcome.parts

    def _added(self, model: Model, moved: bool) -> Outcome | None:
        """A model of sums over the one input that changed by key (`warehouse.additive`), at the
        old date when the date `moved` (then shifted); None when a sum came out null or the
        date it moved from is unknown (the model is left as it is for a whole rebuild)."""
        assert model.sums is not None
        source, base = model.sums.source, f"{model.layer}_{model.name}"
        self.temps += [quote_ident(f"_{p}_{base}") for p in ("sums", "removed", "added", "changed")]
        days = days_moved(self.con) if moved else 0
        done = None
        if source in self.parts and days is not None:
            swaps = {SETTINGS_INPUT: OLD_SETTINGS} if moved else {}
            old, new = (
                swap_relations(model.sql, {source: quote_ident(p), **swaps})
                for p in self.parts[source]
            )
            done = add_sums(self.con, model, old, new)
        if moved and days is not None and (done is not None or source not in self.parts):
            done = shift_sums(self.con, model, days)
            return None if done is None else Outcome("sums", FULL, keys=done.keys)
        if done is None:
            return None
        return Outcome("sums", done.changed, keys=done.keys, parts=(done.removed, done.added))

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

    def _diff_helps(self, q: str) -> bool:
        """Whether a reader that names `q` may go by its diff: not one rebuilt whole anyway (it
        reads the as-of date, which moved), nor one with a query for `q` changed whole."""
        _, readers = self.diffed.get(q, (False, ()))
        return any(
            not (self.settings_changed and self._whole_on_settings(reader))
            and (reader.incremental is None or reader.incremental.when_whole(q) is None)
            for reader in readers
        )

    def _whole_on_settings(self, reader: Model) -> bool:
        """Whether `reader` reads the settings and has no query for their change."""
        inc = reader.incremental
        return SETTINGS_INPUT in reader.sql and (
            inc is None or inc.when_whole(SETTINGS_INPUT) is None
        )

    def _rows(self, model: Model) -> int:
        table = model.relation
        (rows,) = self.con.execute(f"select count(*) from {table}").fetchone() or (0,)
        return int(rows)

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
        self.con.execute(
            f"create or replace temp table {keys} as select distinct {listed} from "
            f"({' union all '.join(selects)})"
        )
        self.temps += [keys, delta, removed, added]
        null_keys = "count(*) filter (where k is null)" if len(names) == 1 else "0"
        (count, found) = self.con.execute(
            f"select count(*), {null_keys} from {keys}"
        ).fetchone() or (0, 0)
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
            same = " and ".join(
                f"_k.{quote_ident(n)} is not distinct from {quote_ident(c)}"
                for n, c in zip(names, columns, strict=True)
            )
            return f"exists (select 1 from {keys} as _k where {same})"

        match = matching(inc.keys)
        guard = self.con.execute(inc.guard).fetchall() if inc.guard else None
        if self.shared is None:
            self.shared = SharedCurrents(self.con, temps=self.temps, reads=self.shared_reads)
        read = self.shared.reader(keys)
        known = self.shared.known(keys, matching) if len(names) == 1 else None
        if not inc.sources:
            rows = self.shared.rows(keys, matching) if len(names) == 1 else None
            sql = self._narrowed(model, matching, read, known, rows)
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
                    current = narrowed_current_sql(lake_table, columns, matching, known)
                    swaps[f"lake_current.{lake_table}"] = f"({current})"
            # an input read by the condition its `incremental narrows` line gives
            # `affected_keys`: one column `k`, or one per key column, named as the key columns
            affected = f"(select * from {keys})"
            if len(names) > 1:
                renamed = ", ".join(
                    f"{n} as {quote_ident(c)}" for n, c in zip(names, inc.keys, strict=True)
                )
                affected = f"(select {renamed} from {keys})"
            for source, condition in inc.narrows:
                on = _AFFECTED.sub(affected, condition)
                swaps[source] = (  # a query stands for its rows, a condition filters them
                    f"({on})" if _QUERY.match(on) else f"(select * from {source} where {on})"
                )
            sql = swap_relations(model.sql, swaps)
        else:
            sql = model.sql
        # a model nobody reads (known to have no readers), or whose readers take no changed
        # rows by key, needs no changed rows
        q = model.qualified
        read = self.readers.get(q, 1) > 0 if self.keyed is None else q in self.keyed
        written, views, moved = replace_rows(self.con, table, base, match, sql, diff=read)
        self.temps += written
        self.views.update(views)
        if inc.guard and self.con.execute(inc.guard).fetchall() != guard:
            return None  # an invariant outside the key moved: the caller rebuilds it whole
        if moved is None:
            return Outcome("keys", FULL, keys=int(count))
        # its new rows are the table's rows for these keys now: its readers by key read them
        self.shared.hold(q, inc.keys, keys, quote_ident(f"_new_{base}"))
        parts = (f"_removed_{base}", f"_added_{base}")
        return Outcome("keys", f"_changed_{base}" if moved else None, keys=int(count), parts=parts)

    def _narrowed(
        self,
        model: Model,
        matching: Matching,
        read: Reader,
        known: Known | None = None,
        rows: Known | None = None,
    ) -> str:
        """The model's SQL with every input that has the key column read for the affected keys
        only. Valid for the `-- incremental by <key>` form, which says that a key's rows depend
        on its inputs' rows of that key alone; DuckDB would not push the filter on the output
        through the CTEs a model reads twice (it materialises them whole)."""
        inc = model.incremental
        assert inc is not None
        if self.column_cache is None:
            self.column_cache = table_columns(self.con)  # one query for every input
        columns = self.column_cache
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
                # its lake rows for these keys already read (`rows`): taken from there
                held = rows(table, (key,)) if rows is not None else None
                swaps[f"lake.{table}"] = held or f"(select * from lake.{table} where {match})"
                current = narrowed_current_sql(table, (key,), matching, known)
                swaps[f"lake_current.{table}"] = f"({current})"
        return swap_relations(model.sql, swaps)

    def _whole(self, model: Model, *, compare: bool) -> Outcome:
        changed = rebuild(self.con, model, compare=compare)
        self.column_cache = None
        return Outcome("whole", FULL if changed else None)

    def _whole_diffed(self, model: Model) -> Outcome:
        """Rebuild whole; its changed rows are those only the old or only the new table has
        (`warehouse.rebuild.rebuild_diffed`). A changed schema changes it whole."""
        base = f"{model.layer}_{model.name}"
        before, delta = quote_ident(f"_before_{base}"), quote_ident(f"_changed_{base}")
        self.temps += [before, delta]
        blind = self.diffed[model.qualified][0]
        changed = rebuild_diffed(self.con, model, before, delta, blind=blind)
        self.column_cache = None
        if changed is None:
            return Outcome("whole", FULL)
        return Outcome("whole", f"_changed_{base}" if changed else None)

    def drop_temps(self) -> None:
        """Drop the temp tables and views this walk wrote (those that exist: one query of the
        temp catalog rather than a statement per name)."""
        present = dict(
            self.con.execute(
                "select table_name, table_type from information_schema.tables "
                "where table_catalog = 'temp'"
            ).fetchall()
        )
        views = {quote_ident(t) for t in self.lake.values() if t != FULL} | self.views
        for name in dict.fromkeys([*views, *self.temps]):
            kind = present.get(name.strip('"'))
            if kind is not None:
                self.con.execute(f"drop {'view' if kind == 'VIEW' else 'table'} temp.{name}")
