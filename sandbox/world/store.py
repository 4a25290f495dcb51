"""Per-collection record storage: records in wire format, ascending keys, child indexes."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import numpy as np

from sandbox.protocol import CHILDREN, COLLECTIONS
from sandbox.world.block import (
    Block,
)
from sandbox.world.pieces import NULL as NULL
from sandbox.world.views import (
    ChildView,
    KeyView,
    RecordsView,
)

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

    def get_many(self, keys: Sequence[int]) -> list[Record | None]:
        """`[get(k) for k in keys]` with the block's records rendered in one batch."""
        blk = self.block
        if blk is None or len(keys) < 2 or not all(type(k) is int for k in keys):
            return [self.get(k) for k in keys]
        arr = np.fromiter(keys, dtype=np.int64, count=len(keys)) - blk.base
        inside = (arr >= 0) & (arr < blk.n)
        inside[inside] = blk.alive[arr[inside]]
        out: list[Record | None] = [None] * len(keys)
        where = np.flatnonzero(inside)
        for i, rec in zip(where.tolist(), blk.render(arr[where]), strict=True):
            out[i] = rec
        for i, k in enumerate(keys):
            if k >= blk.end:
                out[i] = self.get(k)
        return out

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
