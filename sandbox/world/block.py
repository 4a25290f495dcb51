"""A block of records stored as columns (with an overlay of records changed since), and the column getters it is built from."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np
import orjson
import pyarrow as pa

from sandbox.world.columns import CentsColumn, ConstColumn, IntColumn, KeyColumn, VocabColumn
from sandbox.world.pieces import NULL as NULL
from sandbox.world.pieces import Getter
from sandbox.world.rows import RowPlan, join_bytes
from sandbox.world.time_columns import DateColumn, DatetimeColumn

Record = dict[str, Any]


class ChildTable(Protocol):
    """What a block's readers use of a child table (`sandbox.world.store.Table`)."""

    block: Block | None
    index: dict[int, Any]
    pk: str

    def _listed_children(self, parent: int) -> list[Record]: ...


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

    def json_pieces(self, pos: np.ndarray, *, close: bool = True) -> list[Any]:
        """The pieces `encode_json` joins (`RowPlan.pieces`), for a caller that joins more."""
        plan = self._plans.get(close)
        if plan is None:
            plan = self._plans[close] = RowPlan(self.fields, self.getters, close=close)
        return plan.pieces(pos, len(pos))

    def encode(self, pos: np.ndarray) -> Sequence[bytes]:
        """`[orjson.dumps(r) for r in self.render(pos)]`, from the columns (thawed records from
        the overlay): an `Encoded` batch, or a list when some are thawed."""
        if not len(pos):
            return []
        out = join_bytes(self.json_pieces(pos), len(pos))
        thawed = self.in_overlay(pos)
        if thawed is None:
            return out
        out = list(out)  # not `Encoded`: orjson's bytes below are not sized to their content
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
Section = tuple[str, "ChildTable", str | None, Any]
