"""SQL text the lake owns: quoting, and the current-state rule stated once.

Quoting is the one place where text is embedded into SQL: identifiers and (for view bodies) file
paths. Values are bound as parameters everywhere else; DuckDB cannot bind parameters inside DDL
(`create view`, `comment on`), so those few spots go through these quoting helpers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lake.schema import Table
from lake.tables import TABLES

_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")


def quote_literal(text: str) -> str:
    """Quote text as a SQL string literal (single quotes doubled); reject NUL bytes."""
    if "\x00" in text:
        raise ValueError("NUL byte in SQL literal")
    return "'" + text.replace("'", "''") + "'"


def quote_ident(name: str) -> str:
    """Quote an identifier we own (lower-case snake case only), so typos fail loudly."""
    if not _IDENT.match(name):
        raise ValueError(f"not a plain identifier: {name!r}")
    return '"' + name + '"'


def _latest_per_key(candidates: str, key: list[str], order: str) -> str:
    """The latest candidate row per key: rows whose key occurs once are taken as they are, and
    only the keys that occur more than once are ranked (a window over every row of a 13M-row
    child table cost about as much as writing it; duplicates are the few rows re-extracted)."""
    cols = ", ".join(quote_ident(k) for k in key)
    on = " and ".join(f"c.{quote_ident(k)} = d.{quote_ident(k)}" for k in key)
    partition = ", ".join(f"c.{quote_ident(k)}" for k in key)
    return f"""
with candidates as not materialized (
{candidates}
),
duplicated as (
    select {cols} from candidates group by all having count(*) > 1
)
select c.* from candidates as c
anti join duplicated as d on {on}
where not coalesce(c._is_deleted, false)
union all by name
select * exclude (_row_rank) from (
    select c.*, row_number() over (partition by {partition} order by {order}) as _row_rank
    from candidates as c
    semi join duplicated as d on {on}
)
where _row_rank = 1
    and not coalesce(_is_deleted, false)
"""


def current_state_sql(
    table: Table, raw: str, parent_current: str | None = None, *, all_rows: str | None = None
) -> str:
    """The contract's current-state rule (docs/contracts.md section 3), the one statement of it.

    `raw` is a relation over every row of the table (a view, or `read_parquet(...)`);
    `parent_current` the current state of its parent (child tables only). The Python reader
    (`lake.store.Lake.current`) and the warehouse's `lake_current` views both use this.

    Top-level tables: the latest row per key (by batch, then extraction time) among batches from
    the last full batch on, unless it is a tombstone. A key whose latest row is older than the
    last full batch is excluded, which is the same as leaving older batches out before ranking.
    Child tables: the rows of the batch their current parent row came from, latest per key.

    `all_rows`: every row of the table when `raw` holds only some keys' rows (the warehouse's
    refresh of a few reservations): the last full batch is a fact of the whole table.
    """
    if table.parent is None:
        candidates = f"""    select t.* from {raw} as t
    where t._batch_id >= coalesce(
        (select max(_batch_id) from {all_rows or raw} where _batch_kind = 'full'), ''
    )"""
        order = "c._batch_id desc, c._extracted_at desc nulls last"
        return _latest_per_key(candidates, list(table.key), order)
    if parent_current is None:
        raise ValueError(f"child table {table.name!r} needs its parent's current state")
    join = " and ".join(
        f"t.{quote_ident(c)} = p.{quote_ident(pk)}" for c, pk in table.parent_key.items()
    )
    candidates = f"""    select t.* from {raw} as t
    semi join {parent_current} as p
        on {join} and t._batch_id = p._batch_id"""
    return _latest_per_key(candidates, list(table.key), "c._extracted_at desc nulls last")


def narrowed_current_sql(
    table: str,
    columns: tuple[str, ...],
    match: Callable[[tuple[str, ...]], str],
    *,
    rows: Callable[[str], str | None],
    current: Callable[[str], str | None],
    known: Callable[[str, tuple[str, ...]], str | None] | None = None,
    narrowed_rows: Callable[[str], str | None] | None = None,
) -> str | None:
    """The current state of the rows of `table` for which `match(columns)` holds (a predicate
    on those columns), at the cost of those rows rather than of the whole table. The same rows
    as filtering the whole current state when each value of `columns` has its own current rows
    (a reservation's children; an availability record's accommodation type and arrival date,
    part of its key).

    `rows(name)` is a relation of every row of a table (`read_parquet` over its files for the
    Python reader, the `lake` catalog's view for the warehouse), None when it has none; then
    the result is None too. A child's parent is narrowed the same way through the parent link
    (`match` on the parent's names of `columns`) when the parent has those columns, otherwise
    read whole as `current(parent)`.

    The narrowed rows and the parent's narrowed current state are materialized once: the rule
    names its candidates several times and a child names its parent in its candidates, so
    inlined they read the parent's files some eight times for a child table (docs/benchmarks.md,
    session 13).

    `known(table, columns)`: a relation already holding that narrowed current state for this
    `match` (a parent several children's reads share), else None. `narrowed_rows(name)`: a
    relation already holding at least that table's rows for `match` (filtered again), else
    None: its last full batch is still read from `rows(name)`, a fact of the whole table."""
    found = known(table, columns) if known is not None else None
    if found is not None:
        return f"select * from {found}"
    spec = TABLES[table]
    everything = rows(table)
    if everything is None:
        return None
    narrowed = quote_ident(f"_narrowed_{table}")
    where = match(columns)
    ctes: list[str] = []  # the narrowed parent first: the child's rows are narrowed by its batches
    parent = latest = None
    if spec.parent is not None:
        linked = tuple(spec.parent_key.get(c, c) for c in columns)
        if set(linked) <= {c.column for c in TABLES[spec.parent].columns}:
            inner = narrowed_current_sql(
                spec.parent,
                linked,
                match,
                rows=rows,
                current=current,
                known=known,
                narrowed_rows=narrowed_rows,
            )
            if inner is None:
                return None
            parent = quote_ident(f"_narrowed_current_{spec.parent}")
            ctes.append(f"{parent} as materialized ({inner})")
            # only the batches the narrowed parents' current rows came from: the rule keeps no
            # other (its semi join pairs a row with its parent's batch), and a file holds one
            # batch, so the scan skips every other batch's files by their statistics
            # (docs/benchmarks.md, session 18: the hour's bill lines 253 files -> 1)
            where = f"{where} and _batch_id in (select _batch_id from {parent})"
        else:
            parent = current(spec.parent)
            if parent is None:
                return None
    else:  # its last full batch, a fact of the whole table: read once
        latest = quote_ident(f"_last_full_{table}")
        ctes.append(
            f"{latest} as materialized (select max(_batch_id) as _batch_id, "
            f"'full' as _batch_kind from {everything} where _batch_kind = 'full')"
        )
    source = (narrowed_rows(table) if narrowed_rows is not None else None) or everything
    ctes.insert(
        len(ctes) if spec.parent is not None else 0,
        f"{narrowed} as materialized (select * from {source} where {where})",
    )
    current_rows = current_state_sql(spec, narrowed, parent, all_rows=latest)
    return f"with {', '.join(ctes)}\nselect * from ({current_rows})"


def recent_tombstones_sql(table: Table, raw: str) -> str:
    """Keys whose latest row (from the last full batch on) is a tombstone extracted at or after
    `$since`: what the sweep asks the service about again before believing the deletion."""
    cols = ", ".join(quote_ident(k) for k in table.key)
    return f"""
select {cols} from (
    select t.*, row_number() over (
        partition by {cols} order by t._batch_id desc, t._extracted_at desc nulls last
    ) as _row_rank
    from {raw} as t
    where t._batch_id >= coalesce(
        (select max(_batch_id) from {raw} where _batch_kind = 'full'), ''
    )
)
where _row_rank = 1 and _is_deleted and _extracted_at >= $since
order by {cols}"""


def _twice_sql(key: list[str], passes: int) -> str:
    """The keys with more than one row in one batch of `$files` (`key` columns and the batch as
    `b`), in pass `$part` of `passes`."""
    cols = ", ".join(quote_ident(k) for k in key)
    only = f"where hash({cols}) % {int(passes)} = $part" if passes > 1 else ""
    return f"""
    select {cols}, _batch_id as b from read_parquet($files, union_by_name = true)
    {only}
    group by all having count(*) > 1"""


def twice_in_a_batch_sql(key: list[str], passes: int = 1) -> str:
    """Whether any key has more than one row in one batch of `$files` (in pass `$part` of
    `passes`, as `duplicate_keys_sql`): where none has (a healthy lake), that pass counts 0 and
    its second read of the files is not needed."""
    return f"select count(*) from ({_twice_sql(key, passes)}\n)"


def duplicate_keys_sql(key: list[str], passes: int = 1) -> str:
    """Keys with more than one row in their latest batch, counted over `$files`.

    Only the keys found twice in one batch (rare: none in a healthy lake) are then compared with
    every batch of their key, so no step holds a row per key and batch id together with a join
    of the whole table (which took 3.2 GB for 12.8M bill lines). With `partitioned`, only the
    keys whose hash modulo `passes` is `$part` are counted: `Lake.duplicate_keys` sums the
    passes, each holding a share of the keys.
    """
    cols = ", ".join(quote_ident(k) for k in key)
    return f"""
with twice as ({_twice_sql(key, passes)}
),
latest as (
    select {cols}, max(_batch_id) as b
    from read_parquet($files, union_by_name = true) semi join twice using ({cols})
    group by all
)
select count(*) from twice inner join latest using ({cols}) where twice.b = latest.b"""


def swap_relations(sql: str, swaps: dict[str, str]) -> str:
    """Replace each reference to a relation (`core.fct_x`, `lake_current.t`) in one pass."""
    if not swaps:
        return sql
    names = "|".join(re.escape(n) for n in sorted(swaps, key=len, reverse=True))
    pattern = re.compile(rf"\b({names})(?![a-z0-9_])")
    return pattern.sub(lambda found: swaps[found.group(1)], sql)


def _code_mask(sql: str) -> str:
    """`sql` with its comments and string literals blanked (the same length): what a search for
    SQL syntax may look at."""
    out = list(sql)
    i, n = 0, len(sql)
    while i < n:
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
        elif sql[i] == "'":
            end = i + 1
            while end < n and not (sql[end] == "'" and not sql.startswith("''", end)):
                end += 2 if sql.startswith("''", end) else 1
            end += 1
        else:
            i += 1
            continue
        out[i:end] = " " * (min(end, n) - i)
        i = end
    return "".join(out)


def _cte_span(sql: str, name: str) -> tuple[int, int]:
    """Where the query of `sql`'s common table expression `name` starts and ends (the
    positions just inside its parentheses); ValueError if there is none."""
    code = _code_mask(sql)
    found = re.search(rf"(?<![a-z0-9_.]){re.escape(name)}\s+as\s+(?:materialized\s+)?\(", code)
    if found is None:
        raise ValueError(f"no common table expression {name!r} in the query")
    start = end = found.end()
    depth = 1
    while depth:
        if end >= len(code):
            raise ValueError(f"the common table expression {name!r} is not closed")
        depth += {"(": 1, ")": -1}.get(code[end], 0)
        end += 1
    return start, end - 1


def has_cte(sql: str, name: str) -> bool:
    """Whether `sql` has a common table expression `name` (outside its comments and strings)."""
    try:
        _cte_span(sql, name)
    except ValueError:
        return False
    return True


def narrow_cte(sql: str, name: str, condition: str) -> str:
    """`sql` with its common table expression `name` read where `condition` holds: the CTE's
    query becomes `select * from (<query>) as <name> where <condition>` (the condition names its
    columns as `<name>.column`), or, when `condition` is a query (`select ...`), that query."""
    start, end = _cte_span(sql, name)
    body = sql[start:end]
    narrowed = (
        condition
        if re.match(r"\s*select\s", condition, re.IGNORECASE)
        else f"select * from ({body}\n) as {name} where {condition}"
    )
    return f"{sql[:start]}{narrowed}{sql[end:]}"


def order_cte(sql: str, name: str, columns: str) -> str:
    """`sql` with the rows of its common table expression `name` ordered by `columns` (SQL, comma
    separated): its query becomes `select * from (<query>) order by <columns>`."""
    start, end = _cte_span(sql, name)
    return f"{sql[:start]}select * from ({sql[start:end]}\n) order by {columns}{sql[end:]}"
