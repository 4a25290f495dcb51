"""The header language of a model: how it is stored and maintained, read from its first comment
lines (`warehouse.models` gives each model its parsed declarations).

A model is rebuilt whole (`create or replace table`) unless its header declares how to maintain
it by key (`warehouse.maintain`, docs/layout.md "incremental models"):

    -- incremental by reservation_id
    -- incremental by date_day from core.fct_stay_nights: night_date

The first form: every input (model or lake table) that changed is mapped to the key by its own
column of the same name. The second names, per input, the SQL expression over that input's
changed rows (`changed`) that gives the key values it touches (a list expression `[a, b]` gives
several, as does `unnest(...)`; e.g. the reservations a customer merge touches, in
`core/fct_reservations.sql`; an expression that starts with `select` is a query over all the
changed rows at once, `changed_rows`, whose one column gives the keys: e.g. the types of the
unit nights that changed within the window, in `marts/orphan_nights.sql`);
an input that changed and is not named makes the model rebuild whole. The expression sees the
changed row as `changed` and every changed row as `changed_rows`; a model rebuilt whole that a
reader names reports as changed the rows its old and new table do not share (both versions of
each), so an expression can ask whether the columns its model reads moved (`unnest(case when
... then [...] else [] end)`, e.g. the dimensions in `core/fct_reservations.sql`). `-- incremental guard:
<select>` adds a query whose result must be the same before and after the delete+insert, else
the model is rebuilt whole (an invariant outside the key, e.g. the set of reporting currencies).

The first form also says that a key's rows depend on its inputs' rows of that key alone, so the
refresh reads every input that has the key column for the affected keys only. The second form
filters only the model's output, unless the header adds `-- incremental narrows its inputs`: then
each named input whose expression is a plain column is read where that column holds an affected
key (the same promise; name an unchanged input such as `core.dim_dates: date_day` to narrow it).
When a key's rows need an input's rows by a condition that is not "its column holds the key" (a
date 364 days on, the nights of a stay, the reservations of a month), one line per input says it:

    -- incremental narrows core.fct_stay_nights: night_date in affected_keys or night_date + 364 in affected_keys

where `affected_keys` is the set of affected key values (one column, `k`); every reference to
that input is then read through the condition. The condition must keep every row that any
affected key's rows depend on (a whole reservation when the model looks across its versions).
A `select` in place of the condition stands for the input's rows, with the same columns: a
query may cut them to what the affected keys read (`core/fct_allotment_pickup_weeks.sql` reads each
allotment for the keyed nights of its type alone: a condition on the allotments and one on the
calendar could only keep every night of every keyed type).

A line may name one of the model's own common table expressions (a bare name) instead of an
input: the refresh reads that CTE where the condition holds (its columns named as
`<cte>.column`; `lake.sql.narrow_cte`), for a key no input carries whole:

    -- incremental narrows grid: exists (select 1 from affected_keys as k where k.stay_date = grid.stay_date and ...)

(`core/fct_allotment_pickup_weeks.sql`: its key pairs a night with its weeks back, which come
from the as-of date, not from an input; its narrowed inputs keep all 13 snapshots of each keyed
night, its grid of allotment nights x snapshots only the keyed ones. A whole build reads the
CTE whole.)

A key may be several columns, where an hour's changes are sparse in their combination but not
in any one of them (an hour's stays reach a third of the nights and half the types, but a few
thousand of the nights x types):

    -- incremental by date_day, accommodation_type_id from core.fct_stay_nights: night_date, accommodation_type_id

Each expression then gives one value per key column, comma separated (a query, one column per
key column); a key matches a row when every column is not distinct from it (nulls equal);
`affected_keys` has one column per key column, named as the key columns; "narrows its inputs"
narrows an input whose expression is the input's own columns by all of them (a lake table's
current state too when they are part of its key: `staging/stg_availability.sql` by type x
arrival date).

An input that changed whole (the build settings, i.e. a moved as-of date, or a model rebuilt
whole that reports no diff) makes the model rebuild whole, unless a line gives a query over the
database whose rows (one column per key column) are the affected keys then:

    -- incremental when meta.build_settings changed whole: select ...

The query runs after the input was brought up to date and before the model is: it can compare
the model's stored rows with the input's new ones (`marts/occupancy_daily.sql`: the nights x
types whose allotment-held nights differ from those of allotment pickup rebuilt whole), or give
the keys the days between the old and the new date reach (`core/fct_allotment_pickup_weeks.sql`:
its snapshots are stored by weeks back from the as-of date, not by date, so a move rewrites only
the nights a release date or a booking among those days reaches; `marts/allotment_pickup.sql`
is a view adding the dates). The settings the stored tables were built with are the temp table
`build_settings_before`.

A model maintained by key whose rows are snapshots taken a fixed number of days before the
as-of date stores them by that distance (weeks back, say), not by their date, and a view adds
the dates (`core/fct_allotment_pickup_weeks.sql` under `marts/allotment_pickup.sql`): a move of
the date then rewrites only the keys its `when meta.build_settings changed whole` query gives.
(`-- incremental shifts`, below, is for a model of sums only.)

A model whose rows are another model's, column for column (a projection of a wider table),
is stored as a view rather than written a second time:

    -- materialized as a view

The build creates it with `create view`; a refresh has nothing to maintain in it (it reads its
input as that input is), and its readers see it changed whole when any of its inputs changed.
A view reads only models (never the lake: the lake's catalogs are detached before publishing).

A model of sums says so instead (`warehouse.additive`):

    -- incremental sums over core.fct_pace_night_spans by as_of_date, stay_date, currency_code

Its rows are those key columns and sums (counts) over the input's rows, every other column one
such sum, each input row counted on its own (no distinct, window or join between its rows), and
no row whose sums are all 0. When that input alone changed, by key, the refresh adds the sums
over its new rows and subtracts those over its old ones; any other change rebuilds it whole.
A model of sums over snapshots that move with the as-of date says so, with the query of the
difference a move makes per key (a long query, as a guard, continues on lines with the same
prefix): `-- incremental shifts as_of_date with the as-of date` and `-- incremental when
meta.build_settings changed whole: select ...`; a new date then moves the rows (brought up to
the input at the old date) and adds the query's rows (`warehouse.additive.shift_sums`), which
are one per key (its sums grouped by the key: they are added as they come).

A model maintained by key is stored ordered by its key when it is built whole (`Model.table_sql`),
so that a refresh's reads of a few keys skip most of the table; one whose sort costs the build more
than it saves says so:

    -- incremental stored as built

(`core/fct_bill_lines.sql`: sorting 12.7 million bill lines with their texts spilled under the
build's memory limit and doubled the model's build, 34.6 -> 69.7 CPU s at large, for ~0.15 CPU s
an hour; docs/benchmarks.md, session 17; `core/fct_journal_entries.sql`,
`marts/rate_availability_daily.sql` and `core/fct_reservations.sql`, whose rows a build gives
clustered by their key anyway: the sort cost ~0.3-1.6 CPU s each at large and the hour's reads
the same, sessions 22 and 23). It orders the stored rows, not what they are: the model's version
leaves the line out (`without_storage_order`), so declaring it, or dropping it, rebuilds
nothing. It needs the
`incremental by` form. A model whose readers take it by other columns than its key may be stored
in their order instead:

    -- incremental stored by night_date, accommodation_type_id

(`core/fct_rate_nights.sql`, keyed by type: `marts.rate_availability_daily` reads it by night x
type for an hour's nights, which a type order spreads over every row group; its own refresh by
type comes with a rate's change, a few a day; docs/benchmarks.md, session 18;
`core/fct_stay_nights.sql`, keyed by reservation: four marts read it by night x type, and an
hour's nights are the coming year's, so the past's row groups are skipped; session 23). The
same rows, the same version. Either order may be given to one of the model's common table expressions
instead of its result, when the steps after it keep its rows' order (projections, filters,
`unnest`: DuckDB keeps an `order by`'s order through them into the table) and it holds fewer rows:

    -- incremental stored by reservation_id in allocatable

(`core/fct_bill_line_nights.sql`: its 4.2 million bill lines sorted before each is spread over
its nights, not the 19.2 million nights after, -2 CPU s at large; docs/benchmarks.md, session 25).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lake.sql import has_cte

_INCREMENTAL = re.compile(
    r"^--\s*incremental by ([a-z_][a-z0-9_]*(?:\s*,\s*[a-z_][a-z0-9_]*)*)"
    r"(?:\s+from\s+([a-z_][a-z0-9_.]*)\s*:\s*(.+))?$"
)
_GUARD = re.compile(r"^--\s*incremental guard:\s*(.+)$")
_NARROW = re.compile(r"^--\s*incremental narrows its inputs\s*$")
_NARROWS = re.compile(
    r"^--\s*incremental narrows ([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)\s*:\s*(.+)$"
)
_WHOLE = re.compile(
    r"^--\s*incremental when ([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*) changed whole\s*:"
    r"\s*(.+)$",
    re.IGNORECASE,
)
_SHIFTS = re.compile(r"^--\s*incremental shifts ([a-z_][a-z0-9_]*) with the as-of date\s*$")
_VIEW = re.compile(r"^--\s*materialized as a view\s*$")
_STORED = re.compile(r"^--\s*incremental stored\b")  # a line of the form below, or a slip of it
_STORED_AS_BUILT = re.compile(r"^--[ \t]*incremental stored as built[ \t]*(?:\n|$)", re.MULTILINE)
_STORED_BY = re.compile(
    r"^--[ \t]*incremental stored by ([a-z_][a-z0-9_]*(?:[ \t]*,[ \t]*[a-z_][a-z0-9_]*)*)"
    r"(?:[ \t]+in[ \t]+([a-z_][a-z0-9_]*))?[ \t]*(?:\n|$)",
    re.MULTILINE,
)
_EVERY_KEY = re.compile(
    r"^--[ \t]*incremental changes every affected key[ \t]*(?:\n|$)", re.MULTILINE
)
_SUMS = re.compile(
    r"^--\s*incremental sums over ([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)"
    r" by ([a-z_][a-z0-9_]*(?:\s*,\s*[a-z_][a-z0-9_]*)*)\s*$"
)


@dataclass(frozen=True)
class Incremental:
    """How a model is maintained by key: delete the affected keys' rows, insert them again.

    `sources`: input (`layer.name` or `lake.<table>`) -> SQL expression over its changed rows
    giving the key values; empty means every input maps by the key column's own name.
    `narrows`: input (`layer.name`) -> SQL condition on its rows that the refresh reads it by
    (`affected_keys` in it is the affected key values, one column `k`).
    `whole`: input (`layer.name`, or `meta.build_settings`) -> a query over the database (the
    input already brought up to date, the model not yet) giving the affected keys when that
    input changed whole.
    """

    keys: tuple[str, ...]
    sources: tuple[tuple[str, str], ...] = ()
    guard: str | None = None
    narrow: bool = False
    narrows: tuple[tuple[str, str], ...] = ()
    whole: tuple[tuple[str, str], ...] = ()
    stored_as_built: bool = False
    stored_by: tuple[str, ...] = ()  # `-- incremental stored by <columns>`: not the key's order
    every_key_changes: bool = False  # `-- incremental changes every affected key`
    stored_in: str | None = None  # `-- incremental stored by <columns> in <cte>`: sorted there

    @property
    def storage_order(self) -> tuple[str, ...]:
        """The columns a whole build orders the stored rows by (none: as built)."""
        if self.stored_as_built:
            return ()
        return self.stored_by or self.keys

    def expression(self, source: str) -> str | None:
        """The key expression over `source`'s changed rows (one value per key column, comma
        separated); None if it is not a keyed input."""
        if not self.sources:
            return ", ".join(self.keys)
        return dict(self.sources).get(source)

    def when_whole(self, source: str) -> str | None:
        """The query giving the affected keys when `source` changed whole (no changed rows
        known), if the header names one."""
        return dict(self.whole).get(source)


@dataclass(frozen=True)
class Sums:
    """How a model of sums is maintained (`warehouse.additive`): its rows are the `keys` and
    sums over `source`'s rows, each row counted on its own, so the changed rows of `source`
    are added (its new rows) and subtracted (its old ones)."""

    source: str
    keys: tuple[str, ...]
    shifts: str | None = None  # a date column moved with the as-of date, then `moved` added
    moved: str | None = None  # the query of the differences a move makes (see the module doc)


def description(sql: str) -> str:
    """The header's prose: its comment lines that declare nothing, joined."""
    lines = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        if any(
            p.match(line)
            for p in (
                _INCREMENTAL,
                _GUARD,
                _NARROW,
                _NARROWS,
                _WHOLE,
                _SHIFTS,
                _SUMS,
                _VIEW,
                _STORED,
                _EVERY_KEY,
            )
        ):
            continue
        lines.append(line[2:].strip())
    return " ".join(x for x in lines if x)


def incremental(sql: str, where: Path) -> Incremental | None:
    """The `-- incremental ...` declaration of a model's header, if any (see the module doc)."""
    keys: set[tuple[str, ...]] = set()
    sources: list[tuple[str, str]] = []
    guard: list[str] = []
    narrow = False
    narrows: list[tuple[str, str]] = []
    whole: list[tuple[str, str]] = []
    shifts: list[str] = []
    stored: list[str] = []
    every_key = 0
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        if _EVERY_KEY.match(line.strip()):
            every_key += 1
        elif _STORED.match(line.strip()):
            stored.append(line.strip())
        elif found := _SHIFTS.match(line.strip()):
            shifts.append(found.group(1))
        elif found := _WHOLE.match(line.strip()):  # a long query continues on the next line
            whole.append((found.group(1), found.group(2).strip()))
        elif found := _INCREMENTAL.match(line.strip()):
            keys.add(tuple(k.strip() for k in found.group(1).split(",")))
            if found.group(2):
                sources.append((found.group(2), found.group(3).strip()))
        elif found := _GUARD.match(line.strip()):
            guard.append(found.group(1).strip())  # a long guard continues on the next line
        elif _NARROW.match(line.strip()):
            narrow = True
        elif found := _NARROWS.match(line.strip()):
            narrows.append((found.group(1), found.group(2).strip()))
    if stored and (
        not keys
        or len(stored) > 1
        or not (_STORED_AS_BUILT.match(stored[0]) or _STORED_BY.match(stored[0]))
    ):
        raise ValueError(
            f"{where}: one `-- incremental stored as built` (or `stored by <columns>`) line, with "
            f"an `incremental by` key (not {stored})"
        )
    by = _STORED_BY.match(stored[0]) if stored else None
    stored_by = tuple(c.strip() for c in by.group(1).split(",")) if by else ()
    stored_in = by.group(2) if by else None
    if stored_in and not has_cte(sql, stored_in):
        raise ValueError(f"{where}: `incremental stored by ... in {stored_in}`: no such CTE")
    if every_key and (not keys or every_key > 1):
        raise ValueError(
            f"{where}: one `-- incremental changes every affected key` line, with an "
            "`incremental by` key"
        )
    if not keys:
        return None
    if len(keys) > 1:
        raise ValueError(f"{where}: one incremental key per model, not {sorted(keys)}")
    key = keys.pop()
    if len(set(key)) != len(key):
        raise ValueError(f"{where}: a key column named twice in {', '.join(key)}")
    if narrows and not sources:
        raise ValueError(f"{where}: `incremental narrows <input>:` needs the `from` form")
    if whole and not sources:
        raise ValueError(
            f"{where}: `incremental when <input> changed whole:` needs the `from` form"
        )
    if shifts:
        raise ValueError(
            f"{where}: `incremental shifts` is for a model of sums; a model by key stores its "
            "snapshots by their distance from the as-of date and a view adds the dates "
            "(as core/fct_allotment_pickup_weeks.sql does)"
        )
    joined: dict[str, str] = {}
    for source, query in whole:
        joined[source] = f"{joined[source]} {query}" if source in joined else query
    return Incremental(
        key,
        tuple(sources),
        " ".join(guard) or None,
        narrow,
        tuple(narrows),
        tuple(joined.items()),
        bool(stored) and not stored_by,
        stored_by,
        bool(every_key),
        stored_in,
    )


def without_storage_order(sql: str) -> str:
    """The model's SQL without its `-- incremental stored as built` (or `stored by`) line and
    its `-- incremental changes every affected key` line: what its rows are, whatever order
    they are stored in and however its readers learn of a change
    (`warehouse.changes.model_version`)."""
    return _EVERY_KEY.sub("", _STORED_BY.sub("", _STORED_AS_BUILT.sub("", sql)))


def sums(sql: str, where: Path) -> Sums | None:
    """The `-- incremental sums over <input> by <column>, ...` line of a model's header."""
    found, shifts, moved = [], [], []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        if m := _SUMS.match(line.strip()):
            found.append(m)
        elif m := _SHIFTS.match(line.strip()):
            shifts.append(m.group(1))
        elif (m := _WHOLE.match(line.strip())) and m.group(1) == "meta.build_settings":
            moved.append(m.group(2).strip())  # a long query continues on the next line
    if not found:
        return None
    if len(found) > 1 or incremental(sql, where) is not None:
        raise ValueError(f"{where}: one `incremental sums` line, and no other incremental form")
    if len(shifts) > 1 or bool(shifts) != bool(moved):
        raise ValueError(
            f"{where}: one `incremental shifts <column> with the as-of date` line, with an "
            "`incremental when meta.build_settings changed whole:` query"
        )
    keys = tuple(k.strip() for k in found[0].group(2).split(","))
    return Sums(found[0].group(1), keys, *(shifts or [None]), " ".join(moved) or None)


def view(sql: str, where: Path, lake_tables: set[str]) -> bool:
    """Whether the header says `-- materialized as a view` (see the module doc)."""
    header = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        header.append(line.strip())
    if not any(_VIEW.match(line) for line in header):
        return False
    if lake_tables or incremental(sql, where) is not None or sums(sql, where) is not None:
        raise ValueError(f"{where}: a view reads models only, and is not maintained by key")
    return True
