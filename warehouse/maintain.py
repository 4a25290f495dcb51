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

import time
from dataclasses import dataclass, field

import duckdb

from lake.sql import quote_ident, swap_relations
from warehouse.additive import OLD_SETTINGS, add_sums, shift_sums
from warehouse.asof import days_moved
from warehouse.changes import FULL, SETTINGS_INPUT, lake_inputs, model_version
from warehouse.maintain_keys import ByKeys, Outcome
from warehouse.models import Model
from warehouse.rebuild import rebuild, rebuild_diffed
from warehouse.shared_current import Read, SharedCurrents

# a whole rebuild of a larger table keeps the fingerprint (a diff holds both versions in memory)
DIFF_MAX_ROWS = 2_000_000


@dataclass
class Maintainer(ByKeys):
    """Walks the models in dependency order, keeping each one's state for its readers (the
    by-key form is its base, `warehouse.maintain_keys.ByKeys`)."""

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
    # the models a model of sums reads (their removed and added rows kept apart); None: every one
    summed: set[str] | None = None
    # whole rebuilds that report their changed rows -> (lineage out of the diff, who names it)
    diffed: dict[str, tuple[bool, tuple[Model, ...]]] = field(default_factory=dict)
    states: dict[str, str | None] = field(default_factory=dict)
    # models changed by key -> the temp tables of the rows they removed and of those inserted
    parts: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the temp tables and views this walk wrote (the connection's close drops them; the shared
    # reads number theirs by it)
    temps: list[str] = field(default_factory=list)
    # every table's columns (`table_columns`), read once: one query of the catalog costs
    # ~10 ms; a table rebuilt whole since (the only step that may change its columns) is
    # `stale`, described again when a model by key reads it (`describe`: ~1 ms)
    column_cache: dict[str, tuple[tuple[str, str], ...]] | None = None
    stale: set[str] = field(default_factory=set)
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

    def _whole(self, model: Model, *, compare: bool) -> Outcome:
        changed = rebuild(self.con, model, compare=compare)
        self.stale.add(model.qualified)
        return Outcome("whole", FULL if changed else None)

    def _whole_diffed(self, model: Model) -> Outcome:
        """Rebuild whole; its changed rows are those only the old or only the new table has
        (`warehouse.rebuild.rebuild_diffed`). A changed schema changes it whole."""
        base = f"{model.layer}_{model.name}"
        before, delta = quote_ident(f"_before_{base}"), quote_ident(f"_changed_{base}")
        self.temps.append(delta)  # `before` is the old table renamed aside, dropped after
        blind = self.diffed[model.qualified][0]
        changed = rebuild_diffed(self.con, model, before, delta, blind=blind)
        self.stale.add(model.qualified)
        if changed is None:
            return Outcome("whole", FULL)
        return Outcome("whole", f"_changed_{base}" if changed else None)
