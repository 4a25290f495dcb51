"""Per-collection record storage: records in wire format, ascending keys, child indexes."""

from __future__ import annotations

from typing import Any

from sandbox.protocol import CHILDREN, COLLECTIONS

Record = dict[str, Any]


class Table:
    """Records keyed by primary key, kept in ascending key order without copying.

    Ids are assigned increasing, so appending keeps `keys()` and `records()` sorted; a deletion
    marks the lists stale and they are rebuilt on the next read (deletions are rare).
    """

    __slots__ = ("_dirty", "_keys", "_list", "index", "link", "name", "next_id", "pk", "rows")

    def __init__(self, name: str, start_id: int = 1) -> None:
        self.name = name
        self.pk = COLLECTIONS[name]
        self.rows: dict[int, Record] = {}
        self._keys: list[int] = []
        self._list: list[Record] = []
        self._dirty = False
        self.next_id = start_id
        self.link: str | None = CHILDREN[name][1] if name in CHILDREN else None
        self.index: dict[int, list[int]] = {}

    def new_id(self) -> int:
        nid = self.next_id
        self.next_id += 1
        return nid

    def add(self, rec: Record) -> Record:
        key = rec[self.pk]
        if key < self.next_id - 1 or key in self.rows:
            raise ValueError(f"{self.name}: key {key} not above the last key")
        self.next_id = key + 1
        self.rows[key] = rec
        if not self._dirty:
            self._keys.append(key)
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

    def delete(self, key: int) -> Record | None:
        rec = self.rows.pop(key, None)
        if rec is None:
            return None
        self._dirty = True
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
        if self._dirty:
            self._keys = list(self.rows)  # insertion order == ascending key order
            self._list = list(self.rows.values())
            self._dirty = False

    def key_list(self) -> list[int]:
        self._refresh()
        return self._keys

    def records(self) -> list[Record]:
        self._refresh()
        return self._list

    def get(self, key: int) -> Record | None:
        return self.rows.get(key)

    def children(self, parent: int) -> list[Record]:
        rows = self.rows
        return [rows[k] for k in self.index.get(parent, ())]

    def __len__(self) -> int:
        return len(self.rows)


def record_factory(name: str, fields: tuple[str, ...]):
    """A fast constructor of wire dicts that share one key table (CPython split dicts).

    A bill line as a plain dict costs ~500 bytes, as the `__dict__` of a throw-away instance
    ~280 bytes, and is quicker to build; medium worlds hold 1.3M of them. The result is a real
    `dict`; updating existing keys keeps it compact.
    """
    args = ", ".join(f"a{i}" for i in range(len(fields)))
    body = "".join(f"    o.{f} = a{i}\n" for i, f in enumerate(fields))
    src = (f"class {name}:\n    pass\n"
           f"def make({args}):\n    o = {name}()\n{body}    return o.__dict__\n")
    ns: dict[str, Any] = {}
    exec(src, ns)  # fields are our own constant identifiers, never input
    return ns["make"]
