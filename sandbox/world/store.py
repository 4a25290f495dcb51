"""Per-collection record storage: records in wire format, ascending keys, child indexes."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from sandbox.protocol import CHILDREN, COLLECTIONS
from sandbox.world.columns import CentsColumn, ConstColumn, IntColumn, KeyColumn, VocabColumn
from sandbox.world.pieces import NULL as NULL
from sandbox.world.pieces import Getter
from sandbox.world.rows import Encoded, RowPlan, join_pieces, to_bytes
from sandbox.world.time_columns import DateColumn, DatetimeColumn

Record = dict[str, Any]


class Table:
    """Records in ascending primary-key order, kept in two parallel lists without copying.

    Ids are assigned increasing, so appending keeps `keys()` and `records()` sorted. A lookup is
    a bisect on the key list (no per-record hash entry: a large world holds ~25M records). A
    deletion leaves a tombstone (None) in the record list and marks the table stale; the lists
    are compacted on the next read of `key_list()`/`records()` (deletions are rare).

    A table may also hold a frozen `block` (columns, see `Block`) of the records generated in
    bulk; its keys are all below the list's. `key_list()`/`records()` are then lazy views.
    """

    __slots__ = ("_dead", "_keys", "_list", "block", "index", "link", "name", "next_id", "pk")

    def __init__(self, name: str, start_id: int = 1) -> None:
        self.name = name
        self.pk = COLLECTIONS[name]
        self._keys: list[int] = []
        self._list: list[Record | None] = []
        self._dead = 0  # tombstones in _list
        self.next_id = start_id
        self.link: str | None = CHILDREN[name][1] if name in CHILDREN else None
        self.index: dict[int, list[int]] = {}
        self.block: Block | None = None

    def set_block(self, block: Block) -> None:
        """Install the frozen block (before any record of the list; keys must follow on)."""
        if self._keys or self.block is not None:
            raise ValueError(f"{self.name}: a block goes into an empty table")
        if block.base < self.next_id:
            raise ValueError(f"{self.name}: block keys start below the next id")
        self.block = block
        self.next_id = block.base + block.n

    def thaw(self, key: int) -> Record | None:
        """The served dict of a record, to change in place (a block record joins the overlay)."""
        blk = self.block
        if blk is not None and isinstance(key, int) and key < blk.end:
            return blk.thaw(key)
        return self.get(key)

    def child_keys(self, parent: int) -> list[int]:
        out: list[int] = []
        blk = self.block
        if blk is not None and blk.parent is not None:
            out = (blk.child_positions(parent) + blk.base).tolist()
        return out + list(self.index.get(parent, ()))

    def child_view(self, parent: int) -> ChildView:
        """A parent's records in key order, rendered only when read (see `ChildView`)."""
        return ChildView(self, parent)

    def new_id(self) -> int:
        nid = self.next_id
        self.next_id += 1
        return nid

    def add(self, rec: Record) -> Record:
        key = rec[self.pk]
        keys = self._keys
        if key < self.next_id - 1 or (keys and key <= keys[-1]):
            raise ValueError(f"{self.name}: key {key} not above the last key")
        self.next_id = key + 1
        keys.append(key)
        self._list.append(rec)
        link = self.link
        if link is not None:
            parent = rec[link]
            lst = self.index.get(parent)
            if lst is None:
                self.index[parent] = [key]
            else:
                lst.append(key)
        return rec

    def insert(self, rec: Record) -> Record:
        """Add a record whose key was issued earlier (`new_id`) and may lie below keys added
        since (a late-visible event): it goes to its key's place, so the key list stays sorted.
        Only for the list part (keys above the block) and for keys never added before."""
        key = rec[self.pk]
        if not isinstance(key, int) or key >= self.next_id:
            raise ValueError(f"{self.name}: key {key!r} was not issued by new_id")
        blk = self.block
        if blk is not None and key < blk.end:
            raise ValueError(f"{self.name}: key {key} lies in the frozen block")
        keys = self._keys
        i = bisect_left(keys, key)
        if i < len(keys) and keys[i] == key:
            raise ValueError(f"{self.name}: key {key} is already present")
        keys.insert(i, key)
        self._list.insert(i, rec)
        link = self.link
        if link is not None:
            lst = self.index.setdefault(rec[link], [])
            lst.insert(bisect_left(lst, key), key)
        return rec

    def _pos(self, key: int) -> int:
        """Position of a live key in the lists, or -1."""
        keys = self._keys
        i = bisect_left(keys, key)
        if i < len(keys) and keys[i] == key and self._list[i] is not None:
            return i
        return -1

    def delete(self, key: int) -> Record | None:
        blk = self.block
        if blk is not None and isinstance(key, int) and key < blk.end:
            return blk.delete(key)
        i = self._pos(key)
        if i < 0:
            return None
        rec = self._list[i]
        assert rec is not None
        self._list[i] = None
        self._dead += 1
        if self.link is not None:
            lst = self.index.get(rec[self.link])
            if lst is not None:
                lst.remove(key)
                if not lst:
                    del self.index[rec[self.link]]
        return rec

    def relink(self, key: int, old_parent: int, new_parent: int) -> None:
        """Move a child record to another parent in the index (its link field already changed)."""
        lst = self.index.get(old_parent)
        if lst is not None and key in lst:
            lst.remove(key)
            if not lst:
                del self.index[old_parent]
        dst = self.index.setdefault(new_parent, [])
        dst.append(key)
        dst.sort()

    def _refresh(self) -> None:
        if self._dead:
            live = [i for i, rec in enumerate(self._list) if rec is not None]
            keys = self._keys
            lst = self._list
            self._keys = [keys[i] for i in live]
            self._list = [lst[i] for i in live]
            self._dead = 0

    def key_list(self) -> Sequence[int]:
        self._refresh()
        if self.block is not None:
            return KeyView(self.block, self._keys)
        return self._keys

    def records(self) -> Sequence[Record]:
        self._refresh()
        if self.block is not None:
            return RecordsView(self.block, self._list)  # type: ignore[arg-type]
        return self._list  # type: ignore[return-value]  # no tombstones after _refresh

    def get(self, key: int) -> Record | None:
        blk = self.block
        if blk is not None and isinstance(key, int) and key < blk.end:
            return blk.get(key)
        keys = self._keys
        try:
            i = bisect_left(keys, key)
        except TypeError:  # not a key of this kind
            return None
        if i < len(keys) and keys[i] == key:
            return self._list[i]
        return None

    def children(self, parent: int) -> list[Record]:
        """A parent's records: one bisect, then a walk (a parent's children are mostly adjacent)."""
        out: list[Record] = []
        blk = self.block
        if blk is not None and blk.parent is not None:
            pos = blk.child_positions(parent)
            if len(pos):
                out = blk.render(
                    slice(int(pos[0]), int(pos[-1]) + 1)
                    if len(pos) == pos[-1] - pos[0] + 1
                    else pos
                )
        if not self.index.get(parent):
            return out
        out.extend(self._listed_children(parent))
        return out

    def children_many(self, parents: Sequence[int]) -> list[list[Record]]:
        """`[children(p) for p in parents]` with the block's records rendered in one batch (one
        column gather per field for a whole page of parents instead of one per parent)."""
        blk = self.block
        if blk is None or blk.parent is None or len(parents) < 2:
            return [self.children(p) for p in parents]
        flat, counts = blk.children_positions(parents)
        rendered = blk.render(flat)
        out: list[list[Record]] = []
        at = 0
        for parent, count in zip(parents, counts, strict=True):
            rows = rendered[at : at + count]
            at += count
            if self.index.get(parent):
                rows.extend(self._listed_children(parent))
            out.append(rows)
        return out

    def _listed_children(self, parent: int) -> list[Record]:
        out: list[Record] = []
        keys, lst = self._keys, self._list
        n = len(keys)
        i = 0
        for k in self.index.get(parent, ()):  # ascending, and every key in the index is live
            if i >= n or keys[i] != k:
                i = bisect_left(keys, k, i)
            out.append(lst[i])  # type: ignore[arg-type]
            i += 1
        return out

    def __len__(self) -> int:
        n = len(self._keys) - self._dead
        return n + (self.block.n_alive if self.block is not None else 0)


def record_factory(name: str, fields: tuple[str, ...]):
    """A fast constructor of wire dicts that share one key table (CPython split dicts).

    A bill line as a plain dict costs ~500 bytes, as the `__dict__` of a throw-away instance
    ~280 bytes, and is quicker to build; medium worlds hold 1.3M of them. The result is a real
    `dict`; updating existing keys keeps it compact.
    """
    args = ", ".join(f"a{i}" for i in range(len(fields)))
    body = "".join(f"    o.{f} = a{i}\n" for i, f in enumerate(fields))
    src = (
        f"class {name}:\n    pass\n"
        f"def make({args}):\n    o = {name}()\n{body}    return o.__dict__\n"
    )
    ns: dict[str, Any] = {}
    exec(src, ns)  # fields are our own constant identifiers, never input
    return ns["make"]


# ---------------------------------------------------------------------------------------------
# Frozen blocks: records that are (mostly) never changed again, stored as columns


def col_int(a: np.ndarray, nullable: bool = False) -> Getter:
    return IntColumn(a, nullable)


def col_key(base: int) -> Getter:
    """The block's own keys (base + position): no column needed."""
    return KeyColumn(base)


def col_cents(a: np.ndarray | Callable[[Any], np.ndarray]) -> Getter:
    """Integer cents (an array, or a function of the positions giving them) served as floats."""
    return CentsColumn(a)


def col_vocab(codes: np.ndarray, vocab: Sequence[Any]) -> Getter:
    """Codes into `vocab`; code -1 is None (the table's last entry)."""
    return VocabColumn(codes, vocab)


def col_date(a: np.ndarray) -> Getter:
    """Day ordinals; 0 is None."""
    return DateColumn(a)


def col_dt(a: np.ndarray) -> Getter:
    """Milliseconds since 1970-01-01 (UTC), rendered as `dtstr` does; negative is None."""
    return DatetimeColumn(a)


def col_const(value: Any) -> Getter:
    return ConstColumn(value)


class Block:
    """Records with contiguous keys `base .. base + n - 1` kept as columns and rendered to wire
    dicts on demand. A record changed after generation is "thawed": its dict lives in `overlay`
    (position -> dict) and is served from there. Deleted records are marked in `alive`.
    `parent` (child collections) is non-decreasing, so a parent's records are one range.

    `encode` writes the records' JSON straight from the columns (`columns.RowPlan`), the same
    bytes as `orjson.dumps` of the rendered dicts, without building them."""

    def __init__(
        self,
        base: int,
        n: int,
        fields: tuple[str, ...],
        getters: Sequence[Getter],
        parent: np.ndarray | None = None,
        parent_sorted: bool = True,
    ) -> None:
        self.base = base
        self.n = n
        self.fields = fields
        self.getters = list(getters)
        self.make = record_factory("Frozen", fields)
        self.parent = parent
        # when the parents are not in key order: positions sorted by parent (stable) and their
        # parents, so a parent's records are still one searchsorted range
        self.parent_order: np.ndarray | None = None
        if parent is not None and not parent_sorted:
            self.parent_order = np.argsort(parent, kind="stable").astype(np.int32)
            self.parent = parent[self.parent_order]
        self.alive = np.ones(n, dtype=bool)
        self.n_alive = n
        self.overlay: dict[int, Record] = {}
        self._overlay_keys: np.ndarray | None = None  # sorted overlay positions (a cache)
        self._plans: dict[bool, RowPlan] = {}  # how to encode a row (closed or not)
        self._alive_pos: np.ndarray | None = None  # positions of live records after deletions

    @property
    def end(self) -> int:
        return self.base + self.n

    def pos(self, key: Any) -> int:
        if not isinstance(key, int) or isinstance(key, bool):
            return -1
        p = key - self.base
        if 0 <= p < self.n and self.alive[p]:
            return p
        return -1

    def render(self, idx: Any) -> list[Record]:
        """Records at positions `idx` (a slice or an int array), overlay first."""
        if isinstance(idx, slice):
            start, stop, _ = idx.indices(self.n)
            count = max(0, stop - start)
            idx = slice(start, start + count)
            positions: Iterable[int] = range(start, start + count)
        else:
            count = len(idx)
            positions = idx.tolist()
        if count == 0:
            return []
        cols = [g(idx, count) for g in self.getters]
        rows = list(map(self.make, *cols))
        overlay = self.overlay
        if overlay:
            for i, p in enumerate(positions):
                rec = overlay.get(p)
                if rec is not None:
                    rows[i] = rec
        return rows

    def project(self, pos: np.ndarray, fields: Sequence[str]) -> list[Record]:
        """Records at positions `pos` with only `fields` (for filtering and sorting scans);
        thawed records are served whole from the overlay."""
        count = len(pos)
        if count == 0:
            return []
        index = {f: i for i, f in enumerate(self.fields)}
        names = [f for f in fields if f in index]
        cols = [self.getters[index[f]](pos, count) for f in names]
        rows = [dict(zip(names, vals, strict=True)) for vals in zip(*cols, strict=True)]
        if not names:
            rows = [{} for _ in range(count)]
        overlay = self.overlay
        if overlay:
            for i, p in enumerate(pos.tolist()):
                rec = overlay.get(p)
                if rec is not None:
                    rows[i] = rec
        return rows

    def get(self, key: Any) -> Record | None:
        p = self.pos(key)
        if p < 0:
            return None
        rec = self.overlay.get(p)
        return rec if rec is not None else self.render(slice(p, p + 1))[0]

    def thaw(self, key: int) -> Record | None:
        """The record as a dict that stays the served one (so changes to it are seen)."""
        p = self.pos(key)
        if p < 0:
            return None
        rec = self.overlay.get(p)
        if rec is None:
            rec = self.overlay[p] = self.render(slice(p, p + 1))[0]
            self._overlay_keys = None
        return rec

    def put(self, key: int, rec: Record) -> None:
        self.overlay[key - self.base] = rec
        self._overlay_keys = None

    def delete(self, key: int) -> Record | None:
        p = self.pos(key)
        if p < 0:
            return None
        rec = self.get(key)
        self.alive[p] = False
        self.overlay.pop(p, None)
        self._overlay_keys = None
        self.n_alive -= 1
        self._alive_pos = None
        return rec

    # -- JSON straight from the columns (no dicts) -------------------------------------------------

    def in_overlay(self, pos: np.ndarray) -> np.ndarray | None:
        """Which of positions `pos` are thawed (served from the overlay); None when none is."""
        if not self.overlay or not len(pos):
            return None
        keys = self._overlay_keys
        if keys is None:
            keys = self._overlay_keys = np.sort(np.fromiter(self.overlay, np.int64))
        i = np.minimum(keys.searchsorted(pos), len(keys) - 1)
        hit = keys[i] == pos
        return hit if hit.any() else None

    def encode_json(
        self, pos: np.ndarray, *, close: bool = True, first: np.ndarray | None = None
    ) -> pa.Array:
        """The JSON object of the columns' record at each position (a string array), byte for
        byte `orjson.dumps` of what `render` gives for a record that is not thawed; without
        `close`, the text stops before the final `}`; with `first` (a bool per row), a row that
        is not first starts with `,`. The overlay is not consulted."""
        plan = self._plans.get(close)
        if plan is None:
            plan = self._plans[close] = RowPlan(self.fields, self.getters, close=close)
        return plan.encode(pos, len(pos), first)

    def encode(self, pos: np.ndarray) -> Sequence[bytes]:
        """`[orjson.dumps(r) for r in self.render(pos)]`, from the columns (thawed records from
        the overlay): an `Encoded` batch, or a list when some are thawed."""
        if not len(pos):
            return []
        rows = self.encode_json(pos)
        thawed = self.in_overlay(pos)
        if thawed is None:
            return Encoded.of(rows)
        out = to_bytes(rows)
        overlay = self.overlay
        for i in np.flatnonzero(thawed).tolist():
            out[i] = orjson.dumps(overlay[int(pos[i])])
        return out

    def equals(self, field: str, value: Any, pos: np.ndarray) -> np.ndarray:
        """Which positions' records hold `value` in `field` (`record.get(field) == value`)."""
        if field not in self.fields:
            return np.full(len(pos), value is None)  # a missing field reads None
        getter = self.getters[self.fields.index(field)]
        equals = getattr(getter, "equals", None)
        if equals is not None:
            return equals(value, pos)
        return np.fromiter((v == value for v in getter(pos, len(pos))), bool, len(pos))

    def alive_positions(self) -> np.ndarray | None:
        """None when nothing was deleted (position = index)."""
        if self.n_alive == self.n:
            return None
        if self._alive_pos is None:
            self._alive_pos = np.flatnonzero(self.alive)
        return self._alive_pos

    def child_positions(self, parent: int) -> np.ndarray:
        """Positions of one parent's live records (ascending)."""
        return self.children_positions([parent])[0]

    def children_positions(
        self, parents: Sequence[int] | np.ndarray
    ) -> tuple[np.ndarray, list[int]]:
        """`child_positions` of many parents at once: their positions concatenated in the order
        of `parents`, and how many belong to each."""
        assert self.parent is not None
        info = np.iinfo(self.parent.dtype)
        if isinstance(parents, np.ndarray) and parents.dtype.kind == "i":
            keys = parents.astype(np.int64, copy=False)
        else:
            keys = np.fromiter(
                (
                    p if isinstance(p, int) and not isinstance(p, bool) else info.min
                    for p in parents
                ),
                dtype=np.int64,
                count=len(parents),
            )
        fits = (keys > info.min) & (keys <= info.max)
        values = np.where(fits, keys, 0).astype(self.parent.dtype)
        lo = self.parent.searchsorted(values, "left")
        hi = self.parent.searchsorted(values, "right")
        lengths = np.where(fits, hi - lo, 0)
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int64), [0] * len(parents)
        # positions lo..hi-1 of every parent, one after the other
        starts = np.repeat(lo - (np.cumsum(lengths) - lengths), lengths)
        pos = (starts + np.arange(total)).astype(np.int64)
        if self.parent_order is not None:
            pos = self.parent_order[pos].astype(np.int64)
        if self.n_alive != self.n:
            live = self.alive[pos]
            owner = np.repeat(np.arange(len(parents)), lengths)
            pos = pos[live]
            lengths = np.bincount(owner[live], minlength=len(parents))
        return pos, lengths.tolist()

    def nbytes(self) -> int:
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))


# a details section: (key, child table, field to match or None, value)
Section = tuple[str, "Table", str | None, Any]


class _BlockView:
    """A block's live (not deleted, not thawed) positions, then a list of live items."""

    def __init__(self, block: Block, live: list[Any]) -> None:
        self.block = block
        self.live = live
        self.alive = block.alive_positions()
        self.nb = block.n_alive

    def __len__(self) -> int:
        return self.nb + len(self.live)


class KeyView(_BlockView, Sequence[int]):
    """Ascending keys of a table with a block: the block's live keys, then the list's."""

    live: list[int]

    def _key(self, i: int) -> int:
        if i < self.nb:
            a = self.alive
            return self.block.base + (i if a is None else int(a[i]))
        return self.live[i - self.nb]

    def at(self, indices: Sequence[int]) -> list[int]:
        """`[self[i] for i in indices]` (indices in range), block keys looked up at once."""
        ind = np.asarray(indices, dtype=np.int64)
        nb = self.nb
        if len(ind) and int(ind.max()) < nb and int(ind.min()) >= 0:
            pos = ind if self.alive is None else self.alive[ind]
            return (pos + self.block.base).tolist()
        return [self[i] for i in indices]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._key(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._key(i)

    def __iter__(self) -> Iterator[int]:
        a = self.alive
        if a is None:
            yield from range(self.block.base, self.block.base + self.nb)
        else:
            yield from (a + self.block.base).tolist()
        yield from self.live


class RecordsView(_BlockView, Sequence[Record]):
    """Records of a table with a block in key order, rendered on demand (in chunks)."""

    CHUNK = 2048
    live: list[Record]

    def take(self, indices: Sequence[int]) -> list[Record]:
        """Records at view indices (ascending or not), block ones rendered in one batch."""
        nb = self.nb
        blk = [i for i in indices if i < nb]
        out: dict[int, Record] = {}
        if blk:
            arr = np.asarray(blk, dtype=np.int64)
            pos = arr if self.alive is None else self.alive[arr]
            for i, rec in zip(blk, self.block.render(pos), strict=True):
                out[i] = rec
        return [out[i] if i < nb else self.live[i - nb] for i in indices]

    def _block_positions(self, ind: np.ndarray) -> np.ndarray:
        return ind if self.alive is None else self.alive[ind]

    def encode(self, indices: Sequence[int]) -> Sequence[bytes]:
        """`[orjson.dumps(r) for r in self.take(indices)]`, block records encoded from the
        columns (see `Block.encode`)."""
        ind = np.asarray(indices, dtype=np.int64)
        nb = self.nb
        if not len(ind) or (ind < nb).all():
            return self.block.encode(self._block_positions(ind))
        out: list[bytes] = [b""] * len(ind)
        in_block = np.flatnonzero(ind < nb)
        encoded = self.block.encode(self._block_positions(ind[in_block]))
        for i, data in zip(in_block.tolist(), encoded, strict=True):
            out[i] = data
        for i in np.flatnonzero(ind >= nb).tolist():
            out[i] = orjson.dumps(self.live[int(ind[i]) - nb])
        return out

    def encode_with_children(
        self, indices: Sequence[int], sections: Sequence[Section]
    ) -> Sequence[bytes | None]:
        """The JSON of the records at view indices `indices`, each followed by its children in
        `sections`: `orjson.dumps({**record, key: children, ...})` for each section `(key,
        table, field, value)`, where `children` are `table.children(record key)` whose `field`
        equals `value` (all of them when `field` is None), in key order.

        Encoded from the columns, a whole page per child table at once, for the records that
        are in the block and not thawed and whose children are all so too. The others (and
        every record when a section key is also a field) are None: the caller builds them."""
        out: list[bytes | None] = [None] * len(indices)
        blk = self.block
        ind = np.asarray(indices, dtype=np.int64)
        slots = np.flatnonzero(ind < self.nb)
        if not len(slots) or any(key in blk.fields for key, *_ in sections):
            return out
        pos = self._block_positions(ind[slots])
        ok = np.ones(len(pos), dtype=bool)
        thawed = blk.in_overlay(pos)
        if thawed is not None:
            ok &= ~thawed
        rids = pos + blk.base
        # each child table's children of the page: block positions and their parent's slot
        kids: dict[int, tuple[Table, np.ndarray, np.ndarray]] = {}
        for _key, table, _field, _value in sections:
            if id(table) in kids:
                continue
            cb = table.block
            if cb is None or cb.parent is None:
                flat = owner = np.zeros(0, dtype=np.int64)
            else:
                flat, counts = cb.children_positions(rids)
                owner = np.repeat(np.arange(len(rids)), counts)
                thawed = cb.in_overlay(flat)
                if thawed is not None:
                    ok[owner[thawed]] = False
            index = table.index  # children added after generation: built the ordinary way
            if index and not index.keys().isdisjoint(rids.tolist()):
                ok &= ~np.fromiter((bool(index.get(r)) for r in rids.tolist()), bool, len(rids))
            kids[id(table)] = (table, flat, owner)
        chosen = np.flatnonzero(ok)
        if not len(chosen):
            return out
        n_par = len(chosen)
        new_slot = np.full(len(pos), -1, dtype=np.int64)
        new_slot[chosen] = np.arange(n_par)
        # Each section's text per parent is a stretch of its rows' text: the rows are ordered
        # by (section, parent), each starting with `,` but the first of its (section, parent),
        # so that a parent's section is one slice of the rows' buffer (no copy).
        texts: list[pa.Array | None] = [None] * len(sections)
        for tid, (table, flat, owner) in kids.items():
            keep = ok[owner]
            flat, owner = flat[keep], new_slot[owner[keep]]
            mine = [s for s, sec in enumerate(sections) if id(sec[1]) == tid]
            rows, owners, secs = [], [], []
            for k, s in enumerate(mine):
                field, value = sections[s][2], sections[s][3]
                if field is None or not len(flat):
                    match: Any = slice(None)
                else:
                    assert table.block is not None
                    match = table.block.equals(field, value, flat)
                rows.append(flat[match])
                owners.append(owner[match])
                secs.append(np.full(len(rows[-1]), k, dtype=np.int64))
            r_pos, r_own, r_sec = (np.concatenate(a) for a in (rows, owners, secs))
            group = r_sec * n_par + r_own
            order = np.argsort(group, kind="stable")  # key order within a group
            r_pos, group = r_pos[order], group[order]
            if len(r_pos):
                first = np.ones(len(group), dtype=bool)
                first[1:] = group[1:] != group[:-1]
                assert table.block is not None
                text = table.block.encode_json(r_pos, first=first)
                offsets = np.frombuffer(text.buffers()[1], dtype=np.int32)
                offsets = offsets[text.offset : text.offset + len(text) + 1]
                data = text.buffers()[2] or pa.py_buffer(b"")
            else:
                offsets, data = np.zeros(1, dtype=np.int32), pa.py_buffer(b"")
            bounds = np.searchsorted(group, np.arange(len(mine) * n_par + 1))
            for k, s in enumerate(mine):
                cut = offsets[bounds[k * n_par : (k + 1) * n_par + 1]]
                texts[s] = pa.StringArray.from_buffers(n_par, pa.py_buffer(cut.tobytes()), data)
        lead = "," if blk.fields else ""
        pieces: list[Any] = [blk.encode_json(pos[chosen], close=False)]
        for s, (key, *_rest) in enumerate(sections):
            pieces += [("]," if s else lead) + orjson.dumps(key).decode() + ":[", texts[s]]
        pieces.append("]}" if sections else "}")
        docs = join_pieces(pieces, n_par)
        if n_par == len(out):  # every record from the columns: one buffer
            return Encoded.of(docs)
        for slot, data in zip(slots[chosen].tolist(), to_bytes(docs), strict=True):
            out[slot] = data
        return out

    def project(self, indices: Sequence[int], fields: Sequence[str]) -> list[Record]:
        """Like `take`, but block records carry only `fields` (see `Block.project`)."""
        nb = self.nb
        blk = [i for i in indices if i < nb]
        out: dict[int, Record] = {}
        if blk:
            arr = np.asarray(blk, dtype=np.int64)
            pos = arr if self.alive is None else self.alive[arr]
            for i, rec in zip(blk, self.block.project(pos, fields), strict=True):
                out[i] = rec
        return [out[i] if i < nb else self.live[i - nb] for i in indices]

    def _range(self, start: int, stop: int) -> list[Record]:
        nb = self.nb
        out: list[Record] = []
        if start < nb:
            b_stop = min(stop, nb)
            if self.alive is None:
                out.extend(self.block.render(slice(start, b_stop)))
            else:
                out.extend(self.block.render(self.alive[start:b_stop]))
        if stop > nb:
            out.extend(self.live[max(0, start - nb) : stop - nb])
        return out

    def __getitem__(self, i: Any) -> Any:
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                return self.take(list(range(start, stop, step)))
            return self._range(start, max(start, stop))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._range(i, i + 1)[0]

    def __iter__(self) -> Iterator[Record]:
        n = len(self)
        for start in range(0, n, self.CHUNK):
            yield from self._range(start, min(n, start + self.CHUNK))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=False)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class ChildView(Sequence[Record]):
    """One parent's records in ascending key order, with their keys (`key_list`) known up front
    and records rendered only for the positions read (`take`): a keyset page of a parent's
    children renders one page, not every child of the parent.

    The block's records come first (their keys are below every key added later), then the live
    records of the list part (created after generation)."""

    def __init__(self, table: Table, parent: int) -> None:
        blk = table.block
        if blk is not None and blk.parent is not None:
            self._pos = blk.child_positions(parent).astype(np.int64, copy=False)
        else:
            self._pos = np.zeros(0, dtype=np.int64)
        self._blk = blk
        self._listed = table._listed_children(parent) if table.index.get(parent) else []
        base = blk.base if blk is not None else 0
        self.key_list: list[int] = [
            *(self._pos + base).tolist(),
            *(rec[table.pk] for rec in self._listed),
        ]

    def __len__(self) -> int:
        return len(self.key_list)

    def take(self, indices: Sequence[int]) -> list[Record]:
        nb = len(self._pos)
        in_block = [i for i in indices if i < nb]
        rendered = iter(self._blk.render(self._pos[in_block]) if in_block and self._blk else ())
        return [next(rendered) if i < nb else self._listed[i - nb] for i in indices]

    def encode(self, indices: Sequence[int]) -> Sequence[bytes]:
        """`[orjson.dumps(r) for r in self.take(indices)]`, block records from the columns."""
        ind = np.asarray(indices, dtype=np.int64)
        nb = len(self._pos)
        if self._blk is not None and len(ind) and int(ind.max()) < nb:
            return self._blk.encode(self._pos[ind])
        out: list[bytes] = [b""] * len(ind)
        in_block = np.flatnonzero(ind < nb)
        if len(in_block) and self._blk is not None:
            encoded = self._blk.encode(self._pos[ind[in_block]])
            for k, data in zip(in_block.tolist(), encoded, strict=True):
                out[k] = data
        for k in np.flatnonzero(ind >= nb).tolist():
            out[k] = orjson.dumps(self._listed[int(ind[k]) - nb])
        return out

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self.take(range(len(self))[i])
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self.take([i % n])[0]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.take(range(len(self))))
