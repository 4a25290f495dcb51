"""Maintain built models by key: what changed since the last build, and the delete+insert.

The published file records which lake files it was built from (`meta.lake_files`: name, size,
mtime) and which version of each model's SQL built each table (`meta.model_versions`). A refresh
compares them with the lake and the code:

- a lake table's **changed rows** are the rows of its new or rewritten files that belong to the
  batch the file is named after (a compaction's file holds older batches' rows, the same current
  state: no change); a full batch among them changes the table whole (keys absent from it vanish);
- a model declared `-- incremental by <key>` (`warehouse.models`) whose changed inputs all map to
  its key deletes the rows of the affected keys and inserts them again from its own SQL filtered
  on those keys; the rows it deleted and inserted are its changed rows for the models reading it;
- any other model with a changed input is rebuilt whole, and counts as unchanged for its readers
  when its fingerprint (row count and sum of row hashes) is the same as before (a calendar that
  did not move, a dimension nobody touched). When a reader maps this model's rows to its own key
  (`delta_readers`), the rebuild compares the new table with the old instead: its changed rows
  are the rows only one of them has (the old and the new version of each changed row), so a
  supply list or a dimension that changed in a few rows changes its readers in those keys only;
- a model that is missing, or whose SQL (or the macros) changed, is rebuilt whole.

Every statement runs in the caller's one transaction (`warehouse.inplace`).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from lake.parts import PART, file_id
from lake.sql import quote_ident, quote_literal
from lake.tables import TABLES as LAKE_TABLES
from warehouse.columns import table_columns
from warehouse.lake import narrowed_current_sql, raw_view_sql, table_files
from warehouse.lake_schema import TABLES
from warehouse.macros import MACROS
from warehouse.models import Incremental, Model

LAKE_FILES_TABLE = "meta.lake_files"
VERSIONS_TABLE = "meta.model_versions"
SETTINGS_INPUT = "meta.build_settings"
FULL = "full"  # an input's state: changed whole (no keys known)
# a whole rebuild of a larger table keeps the fingerprint (a diff holds both versions in memory)
DIFF_MAX_ROWS = 2_000_000
# the staging models' lineage columns: not content (a diff of a whole rebuild leaves them out)
LINEAGE = ("batch_id", "batch_kind", "extracted_at")
_LINEAGE_REF = re.compile(r"\b(?:batch_id|batch_kind|extracted_at)\b")


def model_version(model: Model) -> str:
    """What the table was built with: the model's SQL and the macros it may call."""
    text = "\n".join((model.sql, *MACROS))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record_build(con: duckdb.DuckDBPyConnection, lake_dir: Path, built: list[Model]) -> None:
    """Write the lake files this build read, and the version of each model it rebuilt."""
    con.execute(
        f"create table if not exists {LAKE_FILES_TABLE} "
        "(lake_table varchar, file_name varchar, size bigint, mtime_ns bigint)"
    )
    con.execute(f"delete from {LAKE_FILES_TABLE}")
    rows = [
        (table, *ident)
        for table in TABLES
        for f in table_files(lake_dir, table)
        if (ident := file_id(f)) is not None
    ]
    if rows:
        con.executemany(f"insert into {LAKE_FILES_TABLE} values (?, ?, ?, ?)", rows)
    con.execute(f"create table if not exists {VERSIONS_TABLE} (model varchar, version varchar)")
    names = [m.qualified for m in built]
    con.execute(f"delete from {VERSIONS_TABLE} where list_contains($1, model)", [names])
    if built:
        con.executemany(
            f"insert into {VERSIONS_TABLE} values (?, ?)",
            [(m.qualified, model_version(m)) for m in built],
        )


def forget_lake_files(con: duckdb.DuckDBPyConnection) -> None:
    """After a partial build (`only=`): no record, so the next refresh rebuilds whole."""
    con.execute(f"drop table if exists {LAKE_FILES_TABLE}")


def built_versions(con: duckdb.DuckDBPyConnection) -> dict[str, str] | None:
    """Model -> version of the file's tables; None for a file built before versions existed."""
    try:
        return dict(con.execute(f"select model, version from {VERSIONS_TABLE}").fetchall())
    except duckdb.CatalogException:
        return None


def lake_changes(con: duckdb.DuckDBPyConnection, lake_dir: Path) -> dict[str, str] | None:
    """Per lake table that changed since the recorded build: FULL, or a temp view of its
    changed rows. None when the file records no lake files (a whole rebuild is needed)."""
    try:
        recorded = con.execute(
            f"select lake_table, file_name, size, mtime_ns from {LAKE_FILES_TABLE}"
        )
        known = {(t, (n, s, m)) for t, n, s, m in recorded.fetchall()}
    except duckdb.CatalogException:
        return None
    changes: dict[str, str] = {}
    for table in TABLES:
        files = table_files(lake_dir, table)
        fresh = [f for f in files if (table, file_id(f)) not in known]
        names = {f.name for f in files}
        if any(
            t == table and (n not in names or any(f.name == n for f in fresh))
            for t, (n, _, _) in known
        ):
            # A file read before is gone (compaction folded it: the rows of every version but
            # the current one went with it, which `lake.<table>` readers see) or was rewritten
            # (a re-executed run: the keys only its first version held are unknown).
            changes[table] = FULL
            continue
        if not fresh:
            continue
        named = [f for f in fresh if PART.match(f.name)]
        # A file not named after its batch (a data file of the object store's table format,
        # cached by `lake.remote`) counts with every row it holds: a superset of the change
        unnamed = [f for f in fresh if not PART.match(f.name)]
        parts = []
        if named:
            batches = sorted({m.group("batch") for f in named if (m := PART.match(f.name))})
            listed = ", ".join(quote_literal(b) for b in batches)
            parts.append(
                f"select * from ({raw_view_sql(table, named)}) where _batch_id in ({listed})"
            )
        if unnamed:
            parts.append(f"select * from ({raw_view_sql(table, unnamed)})")
        view = f"_changed_lake_{table}"
        con.execute(
            f"create or replace temp view {quote_ident(view)} as "
            + " union all by name ".join(parts)
        )
        (full,) = con.execute(
            f"select count(*) from {quote_ident(view)} where _batch_kind = 'full'"
        ).fetchone() or (0,)
        changes[table] = FULL if full else view
    return changes


def lake_inputs(model: Model) -> set[str]:
    """The lake tables a model reads, with the parents their current state follows."""
    out: set[str] = set()
    for table in model.lake_tables:
        while table is not None and table not in out:
            out.add(table)
            table = LAKE_TABLES[table].parent
    return out


_COLUMN = re.compile(r"^[a-z_][a-z0-9_]*$")
_AFFECTED = re.compile(r"\baffected_keys\b")
_QUERY = re.compile(r"^select\s", re.IGNORECASE)


def _swap(sql: str, swaps: dict[str, str]) -> str:
    """Replace each reference to a relation (`core.fct_x`, `lake_current.t`) in one pass."""
    if not swaps:
        return sql
    names = "|".join(re.escape(n) for n in sorted(swaps, key=len, reverse=True))
    pattern = re.compile(rf"\b({names})(?![a-z0-9_])")
    return pattern.sub(lambda found: swaps[found.group(1)], sql)


def delta_readers(models: dict[str, Model]) -> dict[str, tuple[bool, tuple[Model, ...]]]:
    """The models some reader maps to its key by an expression of its own (`from <model>:`): a
    whole rebuild of these reports its changed rows (a diff) rather than a fingerprint. The
    value: whether the diff may leave the lineage columns out (no reader of the model carries
    one; a reader that copies a batch id must see a row whose batch alone changed), and the
    readers that name it."""
    named: dict[str, list[Model]] = {}
    for m in models.values():
        for source, _ in m.incremental.sources if m.incremental is not None else ():
            if source in models:
                named.setdefault(source, []).append(m)
    return {
        q: (
            not any(q in m.deps and _LINEAGE_REF.search(m.sql) for m in models.values()),
            tuple(readers),
        )
        for q, readers in named.items()
    }


@dataclass
class Outcome:
    """What maintaining one model did: how (`keys`, `whole`, `unchanged`), and its state."""

    how: str
    state: str | None  # None: unchanged for its readers; FULL; else a temp table of its changes
    keys: int = 0
    seconds: float = 0.0


@dataclass
class Maintainer:
    """Walks the models in dependency order, keeping each one's state for its readers."""

    con: duckdb.DuckDBPyConnection
    lake: dict[str, str]  # lake table -> FULL or changed-rows view
    settings_changed: bool
    versions: dict[str, str]
    existing: set[str]
    readers: dict[str, int] = field(default_factory=dict)
    # whole rebuilds that report their changed rows -> (lineage out of the diff, who names it)
    diffed: dict[str, tuple[bool, tuple[Model, ...]]] = field(default_factory=dict)
    states: dict[str, str | None] = field(default_factory=dict)
    temps: list[str] = field(default_factory=list)

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
        inc = model.incremental
        if (
            fresh
            and inc is not None
            and all(
                state != FULL and self._maps(inc, source, state)
                for source, state in changed.items()
            )
        ):
            outcome = self._by_keys(model, changed)
            if outcome is not None:
                outcome.seconds = time.perf_counter() - t0
                self.states[q] = outcome.state
                return outcome
        if fresh and self._diff_helps(q) and self._rows(model) <= DIFF_MAX_ROWS:
            outcome = self._whole_diffed(model)
        else:
            outcome = self._whole(model, compare=fresh and self.readers.get(q, 0) > 0)
        outcome.seconds = time.perf_counter() - t0
        self.states[q] = outcome.state
        return outcome

    def _maps(self, inc: Incremental, source: str, relation: str) -> bool:
        """Whether the changed rows of `source` map to the key: the form with sources names
        it; the plain form needs the key column in them (a dimension's diff has none)."""
        expr = inc.expression(source)
        if expr is None:
            return False
        if inc.sources:
            return True
        return expr in self._columns(quote_ident(relation))

    def _diff_helps(self, q: str) -> bool:
        """Whether a reader that names `q` may go by key: not when each one reads the as-of
        date and it moved (they are rebuilt whole anyway, e.g. allotment pickup on a new day)."""
        _, readers = self.diffed.get(q, (False, ()))
        return any(
            not (self.settings_changed and SETTINGS_INPUT in reader.sql) for reader in readers
        )

    def _rows(self, model: Model) -> int:
        table = f"{quote_ident(model.layer)}.{quote_ident(model.name)}"
        (rows,) = self.con.execute(f"select count(*) from {table}").fetchone() or (0,)
        return int(rows)

    def _columns(self, relation: str) -> list[str]:
        return [row[0] for row in self.con.execute(f"describe select * from {relation}").fetchall()]

    def _by_keys(self, model: Model, changed: dict[str, str]) -> Outcome | None:
        inc = model.incremental
        assert inc is not None
        base = f"{model.layer}_{model.name}"
        keys, delta = quote_ident(f"_keys_{base}"), quote_ident(f"_changed_{base}")
        selects = []
        for source, relation in sorted(changed.items()):
            expr = inc.expression(source)
            assert expr is not None
            rows = f"with changed_rows as (select * from {quote_ident(relation)})"
            if _QUERY.match(expr):  # a query over all the changed rows at once
                selects.append(f"select * from ({rows} {expr}) as q(k)")
                continue
            value = f"unnest({expr})" if expr.startswith("[") else expr
            # `changed` is one changed row; `changed_rows` all of them (a diff holds the old and
            # the new version of a row: an expression can ask whether the columns it reads moved)
            selects.append(
                f"select * from ({rows} select {value} as k from changed_rows as changed)"
            )
        self.con.execute(
            f"create or replace temp table {keys} as select distinct k from "
            f"({' union all '.join(selects)})"
        )
        self.temps += [keys, delta]
        (count,) = self.con.execute(f"select count(*) from {keys}").fetchone() or (0,)
        if count == 0:
            return Outcome("keys", None)
        table = f"{quote_ident(model.layer)}.{quote_ident(model.name)}"
        key = quote_ident(inc.key)
        (nulls,) = self.con.execute(f"select count(*) from {keys} where k is null").fetchone() or (
            0,
        )
        # a plain IN reaches the scans (an OR with a subquery would not); null keys only if any
        match = f"({key} in (select k from {keys}){f' or {key} is null' if nulls else ''})"
        guard = self.con.execute(inc.guard).fetchall() if inc.guard else None
        if not inc.sources:
            sql = self._narrowed(model, match)
        elif inc.narrow or inc.narrows:
            swaps: dict[str, str] = {}
            # each declared input read where its column holds an affected key
            for source, column in inc.sources if inc.narrow else ():
                if not _COLUMN.match(column):
                    continue
                on = match.replace(key, quote_ident(column))
                swaps[source] = f"(select * from {source} where {on})"
                if source.startswith("lake."):
                    lake_table = source.removeprefix("lake.")
                    current = narrowed_current_sql(lake_table, column, on)
                    swaps[f"lake_current.{lake_table}"] = f"({current})"
            # an input read by the condition its `incremental narrows` line gives
            for source, condition in inc.narrows:
                on = _AFFECTED.sub(f"(select k from {keys})", condition)
                swaps[source] = f"(select * from {source} where {on})"
            sql = _swap(model.sql, swaps)
        else:
            sql = model.sql
        self.con.execute(
            f"create or replace temp table {delta} as select * from {table} where {match}"
        )
        self.con.execute(f"delete from {table} where {match}")
        self.con.execute(f"insert into {table} by name select * from ({sql}) where {match}")
        self.con.execute(f"insert into {delta} select * from {table} where {match}")
        if inc.guard and self.con.execute(inc.guard).fetchall() != guard:
            return None  # an invariant outside the key moved: the caller rebuilds it whole
        return Outcome("keys", f"_changed_{base}", keys=int(count))

    def _narrowed(self, model: Model, match: str) -> str:
        """The model's SQL with every input that has the key column read for the affected keys
        only. Valid for the `-- incremental by <key>` form, which says that a key's rows depend
        on its inputs' rows of that key alone; DuckDB would not push the filter on the output
        through the CTEs a model reads twice (it materialises them whole)."""
        inc = model.incremental
        assert inc is not None
        columns = table_columns(self.con)  # one query for every input
        narrowed = [
            dep for dep in sorted(model.deps) if any(c == inc.key for c, _ in columns.get(dep, ()))
        ]
        swaps = {d: f"(select * from {d} where {match})" for d in narrowed}
        for table in model.lake_tables:
            if inc.key in TABLES[table].all_columns:
                swaps[f"lake.{table}"] = f"(select * from lake.{table} where {match})"
                swaps[f"lake_current.{table}"] = f"({narrowed_current_sql(table, inc.key, match)})"
        return _swap(model.sql, swaps)

    def _whole(self, model: Model, *, compare: bool) -> Outcome:
        table = f"{quote_ident(model.layer)}.{quote_ident(model.name)}"
        before = self._fingerprint(table) if compare else None
        self.con.execute(f"create or replace table {table} as\n{model.sql}")
        if before is not None and self._fingerprint(table) == before:
            return Outcome("whole", None)
        return Outcome("whole", FULL)

    def _whole_diffed(self, model: Model) -> Outcome:
        """Rebuild whole; the changed rows are the rows only the old or only the new table has
        (`except all` both ways: duplicates count, nulls compare equal), lineage aside: a list
        re-read whole lands every row in a new batch, and no reader maps a batch id to its key.
        A changed schema changes it whole."""
        table = f"{quote_ident(model.layer)}.{quote_ident(model.name)}"
        base = f"{model.layer}_{model.name}"
        before, delta = quote_ident(f"_before_{base}"), quote_ident(f"_changed_{base}")
        self.temps += [before, delta]
        self.con.execute(f"create or replace temp table {before} as select * from {table}")
        columns = self._columns(before)
        self.con.execute(f"create or replace table {table} as\n{model.sql}")
        if self._columns(table) != columns:
            return Outcome("whole", FULL)
        blind = self.diffed[model.qualified][0]
        lineage = [c for c in columns if c in LINEAGE and blind]
        rows = f"select * exclude ({', '.join(lineage)})" if lineage else "select *"
        self.con.execute(
            f"create or replace temp table {delta} as "
            f"select * from ({rows} from {before} except all {rows} from {table}) "
            f"union all select * from ({rows} from {table} except all {rows} from {before})"
        )
        (count,) = self.con.execute(f"select count(*) from {delta}").fetchone() or (0,)
        return Outcome("whole", f"_changed_{base}" if count else None)

    def _fingerprint(self, table: str) -> tuple[object, ...]:
        cols = self.con.execute(
            "select list(column_name || ' ' || data_type order by ordinal_position) "
            "from information_schema.columns where table_catalog = current_database() "
            "and table_schema || '.' || table_name = $1",
            [table.replace('"', "")],
        ).fetchone()
        row = self.con.execute(f"select count(*), sum(hash(t)) from {table} as t").fetchone()
        return (cols, row)

    def drop_temps(self) -> None:
        for name in self.temps:
            self.con.execute(f"drop table if exists temp.{name}")
        for table in self.lake.values():
            if table != FULL:
                self.con.execute(f"drop view if exists temp.{quote_ident(table)}")
