"""Quarantine keeps the last good version: what fails validation on re-landing stays current as
it was, and nothing else of its parent is lost (docs/contracts.md section 3).

A top-level record that fails lands nothing, so its last good row (and the children of that
row's batch) simply stay current. Children need help, because a child row is current only in
its parent's current batch: a parent re-landed without one of its children would drop that
child's last good version. So, at commit, the landing copies that version into its own batch:

* A record whose header is good and only some children are bad (a reservation with one
  malformed bill line) lands its header and good children, with each bad child at its last good
  version: the row with the bad child's key under the same parent, or, when that key cannot be
  read, the parent's previous children that the new version lacks. When a bad child has no last
  good version (a new record, a new child), nothing of the record lands, so that no record is
  ever landed with a child missing; its previous version, header and all children, stays current.
* A bad record of a stream whose table is a child of another stream's (a journal entry of a
  journal report): its last good row (by key; by parent when the key cannot be read; every
  previous row when neither can) is copied into the batch unless the landing wrote that key, so
  that its parent, re-landed in the same batch, keeps it.

"Last good" is the current state before this batch (`Lake.current_sql(before=...)`), so a parent
committed earlier in the same batch does not hide it. Copies keep their data and
`_extracted_at`, `_source`, `_extra`; they take this batch's `_batch_id` and `_batch_kind`.
Quarantine itself is unchanged: the whole source record is there with its reasons.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from assets.endpoints import EndpointSpec
from lake.schema import Table
from lake.sql import quote_ident
from lake.store import Lake, connect

Key = tuple[Any, ...]
Written = Callable[[str, list[str]], pa.Table]  # table, columns -> those columns of its rows


@dataclass
class Kept:
    """Rows to add to the batch, per table, and what they are."""

    tables: dict[str, list[pa.Table]] = field(default_factory=lambda: defaultdict(list))
    records: int = 0  # records landed with some children at their last good version
    carried: dict[str, int] = field(default_factory=dict)  # last good rows copied, per table

    def add(self, table: str, rows: pa.Table, carried: bool = False) -> None:
        if rows.num_rows:
            self.tables[table].append(rows)
            if carried:
                self.carried[table] = self.carried.get(table, 0) + rows.num_rows


def previous(lake: Lake, table: Table, batch_id: str, match: pa.Table | None) -> pa.Table:
    """Current rows of `table` before `batch_id` that equal a row of `match` on its columns
    (every current row when `match` is None)."""
    params: dict[str, Any] = {}
    sql = lake.current_sql(table.name, params, before=batch_id)
    if sql is None or (match is not None and not match.num_rows):
        return table.arrow_schema(True).empty_table()
    with connect() as con:
        if match is None:
            return con.sql(f"select * from {sql}", params=params).to_arrow_table()
        con.register("wanted", match)
        on = " and ".join(f"c.{quote_ident(c)} = w.{quote_ident(c)}" for c in match.column_names)
        query = f"select c.* from {sql} as c semi join wanted as w on {on}"
        return con.sql(query, params=params).to_arrow_table()


def conform(rows: pa.Table, schema: pa.Schema, batch_id: str, kind: str) -> pa.Table:
    """Rows read from the lake as rows of this batch, in the writer's schema."""
    n = rows.num_rows
    columns = []
    for f in schema:
        if f.name == "_batch_id":
            columns.append(pa.array([batch_id] * n, f.type))
        elif f.name == "_batch_kind":
            columns.append(pa.array([kind] * n, f.type))
        elif f.name in rows.column_names:
            columns.append(rows.column(f.name).cast(f.type))
        else:
            columns.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def keys_of(table: pa.Table, columns: Sequence[str]) -> list[Key]:
    """The values of `columns`, row by row, as tuples."""
    if not table.num_rows:
        return []
    return list(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def rows_matching(parts: list[pa.Table], keys: pa.Table) -> list[pa.Table]:
    """The rows of `parts` whose `keys` columns match a row of `keys`, in their order."""
    cols = ", ".join(quote_ident(c) for c in keys.column_names)
    out = []
    with connect() as con:
        con.register("wanted", keys)
        for part in parts:
            if not part.num_rows:
                continue
            probe = part.select(keys.column_names).append_column(
                "_row", pa.array(range(part.num_rows), pa.int64())
            )
            con.register("probe", probe)
            rows = con.sql(
                f"select _row from probe semi join wanted using ({cols}) order by _row"
            ).to_arrow_table()
            con.unregister("probe")
            if rows.num_rows:
                out.append(part.take(rows.column("_row")))
    return out


def _take(rows: pa.Table, index: set[int] | list[int]) -> pa.Table:
    return rows.take(pa.array(sorted(index), pa.int64()))


def _where(rows: pa.Table, columns: list[str], wanted: set[Key]) -> pa.Table:
    mask = [k in wanted for k in keys_of(rows, columns)]
    return rows.filter(pa.array(mask, pa.bool_())) if rows.num_rows else rows


def _complete(key: Key) -> bool:
    return all(v is not None for v in key)


def keep_last_good(
    lake: Lake,
    spec: EndpointSpec,
    batch: tuple[str, str],
    include_pii: bool,
    partial_parts: Mapping[str, list[pa.Table]],
    lost_parts: Mapping[str, list[pa.Table]],
    written: Written,
) -> Kept:
    """What a landing adds to its batch (id, kind) so that nothing bad replaces a last good
    version: `partial_parts` and `lost_parts` as the normaliser handed them over (`Normalised`),
    `written` the columns of what the landing wrote so far."""
    batch_id, kind = batch
    schemas = {t.name: t.arrow_schema(include_pii) for t in spec.tables}
    partial = {n: pa.concat_tables(p).cast(schemas[n]) for n, p in partial_parts.items() if p}
    lost = {n: pa.concat_tables(p) for n, p in lost_parts.items() if p}
    kept = Kept()
    root = spec.table
    heads = partial.get(root.name)
    if heads is not None and heads.num_rows:
        _partial_records(lake, spec, batch_id, kind, schemas, partial, lost, written, kept)
    bad = lost.get(root.name)
    if root.parent is not None and bad is not None and bad.num_rows:
        _lost_rows(lake, root, batch_id, kind, schemas[root.name], bad, written, kept)
    return kept


def _partial_records(
    lake: Lake,
    spec: EndpointSpec,
    batch_id: str,
    kind: str,
    schemas: dict[str, pa.Schema],
    partial: dict[str, pa.Table],
    lost: dict[str, pa.Table],
    written: Written,
    kept: Kept,
) -> None:
    root, key = spec.table, list(spec.table.key)
    heads = partial[root.name]
    landed_whole = set(keys_of(written(root.name, key), key))  # the same record, good, too
    wanted = set(keys_of(heads, key)) - landed_whole
    known = set(
        keys_of(previous(lake, root, batch_id, _where(heads, key, wanted).select(key)), key)
    )
    unresolved: set[Key] = set()
    carry: list[tuple[Table, pa.Table, dict[Key, set[int]]]] = []
    for table in spec.tables[1:]:
        bad = lost.get(table.name)
        if bad is None or not bad.num_rows:
            continue
        link = [c for pk in root.key for c, p in table.parent_key.items() if p == pk]
        child_key = list(table.key)
        bad_rows = [r for r in bad.to_pylist() if tuple(r[c] for c in link) in known]
        if not bad_rows:
            continue
        parents = {tuple(r[c] for c in link) for r in bad_rows}
        links = pa.table({c: bad.column(c) for c in link})
        prev = previous(lake, table, batch_id, _where(links, link, parents))
        by_parent: dict[Key, list[tuple[int, Key]]] = defaultdict(list)
        for i, (p, k) in enumerate(zip(keys_of(prev, link), keys_of(prev, child_key), strict=True)):
            by_parent[p].append((i, k))
        fresh: dict[Key, set[Key]] = defaultdict(set)
        good = partial.get(table.name)
        if good is not None and good.num_rows:
            for p, k in zip(keys_of(good, link), keys_of(good, child_key), strict=True):
                fresh[p].add(k)
        chosen: dict[Key, set[int]] = defaultdict(set)
        for r in bad_rows:
            p, k = tuple(r[c] for c in link), tuple(r[c] for c in child_key)
            match = [
                i
                for i, old in by_parent.get(p, [])
                if old not in fresh[p] and (old == k or not _complete(k))
            ]
            if match:
                chosen[p].update(match)
            else:
                unresolved.add(p)  # nothing to keep it at: the record waits, whole
        carry.append((table, prev, chosen))
    resolved = known - unresolved
    if not resolved:
        return
    kept.records += len(resolved)
    for table in spec.tables:
        good = partial.get(table.name)
        if good is None:
            continue
        link = (
            key
            if table is root
            else [c for pk in root.key for c, p in table.parent_key.items() if p == pk]
        )
        kept.add(table.name, _where(good, link, resolved))
    for table, prev, chosen in carry:
        index = {i for p, rows in chosen.items() if p in resolved for i in rows}
        if index:
            rows = conform(_take(prev, index), schemas[table.name], batch_id, kind)
            kept.add(table.name, rows, carried=True)


def _lost_rows(
    lake: Lake,
    table: Table,
    batch_id: str,
    kind: str,
    schema: pa.Schema,
    bad: pa.Table,
    written: Written,
    kept: Kept,
) -> None:
    key = list(table.key)
    link = list(table.parent_key)
    by_key: set[Key] = set()
    by_parent: set[Key] = set()
    everything = False
    for k, p in zip(keys_of(bad, key), keys_of(bad, link), strict=True):
        if _complete(k):
            by_key.add(k)
        elif _complete(p):
            by_parent.add(p)
        else:
            everything = True
    if everything:
        prev = previous(lake, table, batch_id, None)
    else:
        parts = []
        if by_key:
            parts.append(previous(lake, table, batch_id, _where(bad, key, by_key).select(key)))
        if by_parent:
            parts.append(previous(lake, table, batch_id, _where(bad, link, by_parent).select(link)))
        parts = [p for p in parts if p.num_rows]
        if not parts:
            return
        prev = pa.concat_tables(parts, promote_options="permissive")
    if not prev.num_rows:
        return
    landed = set(keys_of(written(table.name, key), key))
    index: dict[Key, int] = {}
    for i, k in enumerate(keys_of(prev, key)):
        if k not in landed:
            index.setdefault(k, i)
    if index:
        kept.add(
            table.name, conform(_take(prev, list(index.values())), schema, batch_id, kind), True
        )
