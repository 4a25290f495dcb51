"""`StrictWorld`: a world whose records read as the strict profile serves them.

It wraps a generated world (`sandbox.world.World`) and shapes every record it hands out
(`sandbox.strict.shape`, `sandbox.strict.lines`); the HTTP layer serves it like any world, and
the ground truth computed from it (`sandbox.world.truth_marts.mart_truth(strict_world)`) reads
the very records a client receives. Everything else (the clock, the lock, `advance`, webhooks,
late events) is the wrapped world's.

The wrapped world's shortcuts that would bypass the shaping (encoding from its columns, lazy
child views) are hidden, so the server falls back to its dict path. That path is slower; the
strict profile is for small worlds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, overload

from sandbox.protocol import Record, World
from sandbox.strict.lines import added_lines, is_added, retype
from sandbox.strict.shape import Shaper

_HIDDEN = frozenset({"child_view", "encode_with_children", "details"})


class ShapedRecords(Sequence[Record]):
    """`records` shaped on access, followed by `extra` (already shaped; their keys are larger)."""

    def __init__(
        self,
        records: Sequence[Record],
        shape: Callable[[Record], Record],
        extra: Sequence[Record] = (),
    ) -> None:
        self._records, self._shape, self._extra = records, shape, extra

    def __len__(self) -> int:
        return len(self._records) + len(self._extra)

    @overload
    def __getitem__(self, index: int) -> Record: ...

    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...

    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self._records)
        i = range(len(self))[index]  # IndexError as a list would raise it
        return self._shape(self._records[i]) if i < n else self._extra[i - n]

    def __iter__(self) -> Iterator[Record]:
        for record in self._records:
            yield self._shape(record)
        yield from self._extra


@dataclass(frozen=True)
class _Added:
    """The bill lines the strict profile adds, for one generation of the wrapped world."""

    generation: Any
    lines: list[Record]  # shaped, in id order
    by_id: dict[int, Record]
    keys: list[int]  # the wrapped world's bill-line keys followed by the added ones


class StrictWorld:
    """The wrapped world's records as the strict profile serves them (see the module doc)."""

    def __init__(self, world: World, seed: int) -> None:
        self.inner = world
        self.seed = seed
        self.shaper = Shaper(seed)
        self._added: _Added | None = None

    def __getattr__(self, name: str) -> Any:
        if name in _HIDDEN:
            raise AttributeError(name)
        return getattr(self.inner, name)

    # -- shaping --------------------------------------------------------------------------------

    def shape_of(self, collection: str) -> Callable[[Record], Record]:
        if collection == "billlines":
            return self._bill_line
        return partial(self.shaper.shape, collection)

    def _bill_line(self, line: Record) -> Record:
        return self.shaper.shape("billlines", retype(self.seed, line))

    def _with_added(self, collection: str, parent_key: int, kids: Sequence[Record]) -> list[Record]:
        shape = self.shape_of(collection)
        out = [shape(r) for r in kids]
        if collection == "billlines":
            out += [
                self.shaper.shape("billlines", line)
                for line in added_lines(self.seed, parent_key, kids)
            ]
        return out

    def added(self) -> _Added:
        """The added bill lines of the world as it is now (cached per world generation)."""
        generation = getattr(self.inner, "generation", None)
        with self.inner.lock:
            cached = self._added
            if cached is not None and generation is not None and cached.generation == generation:
                return cached
            rids = list(self.inner.keys("reservations"))
            many = getattr(self.inner, "children_many", None)
            kids = (
                many("billlines", rids)
                if many is not None
                else [self.inner.children("billlines", r) for r in rids]
            )
            lines = [
                self.shaper.shape("billlines", line)
                for rid, ks in zip(rids, kids, strict=True)
                for line in added_lines(self.seed, rid, ks)
            ]
            ids = [line["reservationBillLineId"] for line in lines]
            keys = [*self.inner.keys("billlines"), *ids]
            self._added = _Added(generation, lines, dict(zip(ids, lines, strict=True)), keys)
            return self._added

    # -- the protocol ---------------------------------------------------------------------------

    def keys(self, collection: str) -> Sequence[int]:
        if collection == "billlines":
            return self.added().keys
        return self.inner.keys(collection)

    def records(self, collection: str) -> Sequence[Record]:
        extra = self.added().lines if collection == "billlines" else ()
        return ShapedRecords(self.inner.records(collection), self.shape_of(collection), extra)

    def get(self, collection: str, key: int) -> Record | None:
        if collection == "billlines" and isinstance(key, int) and is_added(key):
            return self.added().by_id.get(key)
        record = self.inner.get(collection, key)
        return None if record is None else self.shape_of(collection)(record)

    def children(self, collection: str, parent_key: int) -> list[Record]:
        return self._with_added(collection, parent_key, self.inner.children(collection, parent_key))

    def children_many(self, collection: str, parent_keys: Sequence[int]) -> list[list[Record]]:
        many = getattr(self.inner, "children_many", None)
        lists = (
            many(collection, parent_keys)
            if many is not None
            else [self.inner.children(collection, k) for k in parent_keys]
        )
        return [
            self._with_added(collection, k, kids)
            for k, kids in zip(parent_keys, lists, strict=True)
        ]

    def availability(self, **kwargs: Any) -> list[Record]:
        return [self.shaper.availability(r) for r in self.inner.availability(**kwargs)]

    def create_reservation(self, body: Record) -> Record:
        return self.inner.create_reservation(body)

    def update_reservation(self, reservation_id: int, body: Record) -> Record:
        return self.inner.update_reservation(reservation_id, body)

    def advance(self, hours: float) -> Record:
        return self.inner.advance(hours)
