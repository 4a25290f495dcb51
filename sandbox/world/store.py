"""Per-collection record storage: records in wire format, ascending keys, child indexes."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from sandbox.protocol import CHILDREN, COLLECTIONS

Record = dict[str, Any]


class Table:
    """Records in ascending primary-key order, kept in two parallel lists without copying.

    Ids are assigned increasing, so appending keeps `keys()` and `records()` sorted. A lookup is
    a bisect on the key list (no per-record hash entry: a large world holds ~25M records). A
    deletion leaves a tombstone (None) in the record list and marks the table stale; the lists
    are compacted on the next read of `key_list()`/`records()` (deletions are rare).
    """

    __slots__ = ("_dead", "_keys", "_list", "index", "link", "name", "next_id", "pk")

    def __init__(self, name: str, start_id: int = 1) -> None:
        self.name = name
        self.pk = COLLECTIONS[name]
        self._keys: list[int] = []
        self._list: list[Record | None] = []
        self._dead = 0  # tombstones in _list
        self.next_id = start_id
        self.link: str | None = CHILDREN[name][1] if name in CHILDREN else None
        self.index: dict[int, list[int]] = {}

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

    def _pos(self, key: int) -> int:
        """Position of a live key in the lists, or -1."""
        keys = self._keys
        i = bisect_left(keys, key)
        if i < len(keys) and keys[i] == key and self._list[i] is not None:
            return i
        return -1

    def delete(self, key: int) -> Record | None:
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

    def key_list(self) -> list[int]:
        self._refresh()
        return self._keys

    def records(self) -> list[Record]:
        self._refresh()
        return self._list  # type: ignore[return-value]  # no tombstones after _refresh

    def get(self, key: int) -> Record | None:
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
        ks = self.index.get(parent)
        if not ks:
            return []
        keys, lst = self._keys, self._list
        n = len(keys)
        i = 0
        out: list[Record] = []
        for k in ks:  # ascending, and every key in the index is live
            if i >= n or keys[i] != k:
                i = bisect_left(keys, k, i)
            out.append(lst[i])  # type: ignore[arg-type]
            i += 1
        return out

    def __len__(self) -> int:
        return len(self._keys) - self._dead


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
