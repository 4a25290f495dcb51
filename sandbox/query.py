"""Paging and selection for the sandbox's list endpoints, as pure functions: a page of the
records that pass the filters (`sandbox.filters`), in order, and keyset paging answered by
bisect on the sorted primary keys (`KeyPlan`) instead of a scan.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sandbox.filters import (
    COMPARISONS,
    DEFAULT_PAGE_SIZE,
    Filters,
    Predicate,
    QueryError,
    Selection,
    SortOrder,
    sort_entry,
    sort_records,
)

Record = dict[str, Any]


def parse_paging(page: str | None, size: str | None, max_size: int) -> tuple[int, int]:
    """0-based page, size defaulting to 20 and silently clamped to `max_size`."""
    try:
        number = int(page) if page not in (None, "") else 0
        count = int(size) if size not in (None, "") else DEFAULT_PAGE_SIZE
    except ValueError:
        raise QueryError("page and size must be integers", code="INVALID_PAGING") from None
    if number < 0:
        raise QueryError("page must be >= 0", code="INVALID_PAGING")
    if count < 1:
        raise QueryError("size must be >= 1", code="INVALID_PAGING")
    return number, min(count, max_size)


def envelope(
    content: list[Record],
    *,
    page: int,
    size: int,
    total: int,
    orders: Sequence[SortOrder],
    sort_object: bool = False,
) -> dict[str, Any]:
    """The Spring-style page wrapper of contracts.md."""
    total_pages = -(-total // size)
    return {
        "content": content,
        "size": size,
        "number": page,
        "numberOfElements": len(content),
        "totalElements": total,
        "totalPages": total_pages,
        "first": page == 0,
        "last": page >= total_pages - 1,
        "empty": not content,
        **sort_entry(orders, as_object=sort_object),
    }


# ---------------------------------------------------------------------------------------------
# Selection


def select(
    records: Iterable[Record],
    pred: Predicate | None,
    orders: Sequence[SortOrder],
    page: int,
    size: int,
) -> Selection:
    """Filter lazily, count everything, keep only the page (sorting needs the matches in memory)."""
    start = page * size
    if orders:
        matched = list(records) if pred is None else [r for r in records if pred(r)]
        sort_records(matched, orders)
        return Selection(matched[start : start + size], len(matched))
    if pred is None and isinstance(records, Sequence):
        return Selection(list(records[start : start + size]), len(records))
    content: list[Record] = []
    total = 0
    end = start + size
    for record in records:
        if pred is not None and not pred(record):
            continue
        if start <= total < end:
            content.append(record)
        total += 1
    return Selection(content, total)


@dataclass
class KeyPlan:
    """Primary-key bounds taken out of the filters; `rest` holds the groups still to evaluate."""

    low: Any = None
    low_inclusive: bool = True
    high: Any = None
    high_inclusive: bool = True
    ids: list[Any] | None = None  # sorted ids when a membership or equality term was given
    rest: Filters = field(default_factory=list)
    # OR groups made only of pk comparisons (`id<b||id>c`, the client's packed remainders):
    # each is a union of key intervals, intersected with the bounds by bisect.
    unions: Filters = field(default_factory=list)

    def index_range(self, keys: Sequence[Any]) -> tuple[int, int]:
        lo, hi = 0, len(keys)
        if self.low is not None:
            lo = (bisect_left if self.low_inclusive else bisect_right)(keys, self.low)
        if self.high is not None:
            hi = (bisect_right if self.high_inclusive else bisect_left)(keys, self.high)
        return lo, max(lo, hi)

    def index_ranges(self, keys: Sequence[Any]) -> list[range]:
        """Positions in `keys` allowed by the bounds and the unions, as ascending ranges."""
        lo, hi = self.index_range(keys)
        ranges = [(lo, hi)] if lo < hi else []
        n = len(keys)
        for group in self.unions:
            allowed: list[tuple[int, int]] = []
            for cond in group:
                if cond.op == "<":
                    allowed.append((0, bisect_left(keys, cond.value)))
                elif cond.op == "<:":
                    allowed.append((0, bisect_right(keys, cond.value)))
                elif cond.op == ">":
                    allowed.append((bisect_right(keys, cond.value), n))
                else:  # ">:"
                    allowed.append((bisect_left(keys, cond.value), n))
            ranges = _intersect(ranges, _merge(allowed))
        return [range(a, b) for a, b in ranges]


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(i for i in intervals if i[0] < i[1]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _intersect(left: list[tuple[int, int]], right: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(left) and j < len(right):
        a, b = max(left[i][0], right[j][0]), min(left[i][1], right[j][1])
        if a < b:
            out.append((a, b))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def plan_keys(filters: Filters, pk: str) -> KeyPlan:
    """Move single-term groups on the primary key into bounds / an id list."""
    plan = KeyPlan()
    for group in filters:
        if len(group) > 1 and all(
            c.field == pk and c.op in COMPARISONS and _is_key_value(c.value) for c in group
        ):
            plan.unions.append(group)
            continue
        cond = group[0] if len(group) == 1 else None
        if cond is None or cond.field != pk or not _is_key_value(cond.value):
            plan.rest.append(group)
            continue
        if cond.op in (">", ">:"):
            inclusive = cond.op == ">:"
            if (
                plan.low is None
                or cond.value > plan.low
                or (cond.value == plan.low and not inclusive)
            ):
                plan.low, plan.low_inclusive = cond.value, inclusive
        elif cond.op in ("<", "<:"):
            inclusive = cond.op == "<:"
            if (
                plan.high is None
                or cond.value < plan.high
                or (cond.value == plan.high and not inclusive)
            ):
                plan.high, plan.high_inclusive = cond.value, inclusive
        elif cond.op in (":", "::", "in"):
            ids = set(cond.value) if cond.op == "in" else {cond.value}
            plan.ids = sorted(ids if plan.ids is None else ids.intersection(plan.ids))
        else:
            plan.rest.append(group)
    if plan.ids is not None and plan.unions:  # rare: test the unions record by record
        plan.rest.extend(plan.unions)
        plan.unions = []
    return plan


def _is_key_value(value: Any) -> bool:
    if isinstance(value, frozenset):
        return all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def select_keyed(
    keys: Sequence[Any],
    records: Sequence[Record],
    plan: KeyPlan,
    pred: Predicate | None,
    orders: Sequence[SortOrder],
    pk: str,
    page: int,
    size: int,
) -> Selection:
    """Page a pk-sorted collection: bisect for the bounds, slice when nothing else filters."""
    if plan.ids is not None:
        lo, hi = plan.index_range(keys)
        positions = []
        for key in plan.ids:
            i = bisect_left(keys, key, lo, hi)
            if i < hi and keys[i] == key:
                positions.append(i)
        ranges: list[Sequence[int]] = [positions]
    else:
        ranges = list(plan.index_ranges(keys))
    by_key = not orders or (len(orders) == 1 and orders[0].property == pk)
    if pred is None and by_key:
        descending = bool(orders) and orders[0].descending
        if descending:
            ranges = [r[::-1] for r in reversed(ranges)]
        start = page * size
        positions = _slice(ranges, start, start + size)
        if getattr(records, "take", None) is not None:  # records rendered on demand
            page = LazyPage(records, positions, _keys_at(keys, positions))
            page.scan = (keys, ranges, start + size)  # what follows, for reading ahead
            return Selection(page, sum(len(r) for r in ranges))
        return Selection(_take(records, positions), sum(len(r) for r in ranges))
    if getattr(records, "project", None) is not None:
        fields = {c.field for group in plan.rest for c in group} | {o.property for o in orders}
        return _select_projected(
            records,
            ranges,
            pred,
            orders,
            sorted(fields | {pk}),
            page,
            size,
            sort=not (by_key and not (orders and orders[0].descending)),
        )
    candidates = _iter_positions(records, ranges)
    if by_key and not (orders and orders[0].descending):
        return select(candidates, pred, (), page, size)
    return select(candidates, pred, orders, page, size)


_TAKE_CHUNK = 1024


def _select_projected(
    records: Any,
    ranges: Sequence[Sequence[int]],
    pred: Predicate | None,
    orders: Sequence[SortOrder],
    fields: list[str],
    page: int,
    size: int,
    *,
    sort: bool,
) -> Selection:
    """`select` over records rendered on demand: filter (and sort) on records holding only the
    fields the filter and sort read, then render the page's records whole."""
    start, end = page * size, page * size + size
    total = 0
    picked: list[int] = []
    matches: list[tuple[Record, int]] = []
    for r in ranges:
        for lo in range(0, len(r), _TAKE_CHUNK):
            chunk = list(r[lo : lo + _TAKE_CHUNK])
            for i, rec in zip(chunk, records.project(chunk, fields), strict=True):
                if pred is not None and not pred(rec):
                    continue
                if sort:
                    matches.append((rec, i))
                elif start <= total < end:
                    picked.append(i)
                total += 1
    if sort:
        recs = [m[0] for m in matches]
        where = {id(rec): i for rec, i in matches}
        sort_records(recs, orders)
        picked = [where[id(rec)] for rec in recs[start:end]]
    return Selection(_take(records, picked), total)


class LazyPage(Sequence[Record]):
    """A page of records known by key and rendered only when read: the encode cache answers a
    warm page from `page_keys` alone and renders just its misses (`subset`). When the records
    can be encoded without rendering them (`source.encode`, the world's frozen blocks), `encode`
    gives their JSON straight away. A page of a keyset scan knows what follows it in the scan
    (`following`), so that an encoder may take the next records along in the same batch."""

    def __init__(self, records: Sequence[Record], positions: list[int], page_keys: list[Any]):
        self.source = records
        self.positions = positions
        self.page_keys = page_keys
        self._rendered: list[Record] | None = None
        # (keys, the scan's position ranges, where this page ends in them), see select_keyed
        self.scan: tuple[Sequence[Any], Sequence[Sequence[int]], int] | None = None

    def _all(self) -> list[Record]:
        if self._rendered is None:
            self._rendered = _take(self.source, self.positions)
        return self._rendered

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __iter__(self) -> Any:
        return iter(self._all())

    def subset(self, indices: list[int]) -> Sequence[Record]:
        """The records at page indices `indices`, as a page that renders only those."""
        if self._rendered is not None:
            return [self._rendered[i] for i in indices]
        return LazyPage(
            self.source,
            [self.positions[i] for i in indices],
            [self.page_keys[i] for i in indices],
        )

    def following(self, n: int) -> LazyPage | None:
        """Up to `n` records that come after this page in its keyset scan (what the next pages
        of the same scan hold), or None when this page is not one of a scan."""
        if self.scan is None or n <= 0:
            return None
        keys, ranges, end = self.scan
        positions = _slice(ranges, end, end + n)
        return LazyPage(self.source, positions, _keys_at(keys, positions))

    def joined(self, other: LazyPage) -> LazyPage:
        """This page's records, then `other`'s (of the same source)."""
        if other.source is not self.source:
            raise ValueError("pages of different sources")
        return LazyPage(
            self.source, self.positions + other.positions, self.page_keys + other.page_keys
        )

    def encode(self) -> Sequence[bytes] | None:
        """`[orjson.dumps(r) for r in self]` without rendering, when the source can (the
        world's frozen blocks: see `sandbox.world.store.RecordsView.encode`), else None."""
        encode = getattr(self.source, "encode", None)
        return encode(self.positions) if encode is not None else None


def _keys_at(keys: Sequence[Any], positions: list[int]) -> list[Any]:
    """`[keys[i] for i in positions]`, in one batch when the key view can (`at`)."""
    at = getattr(keys, "at", None)
    return at(positions) if at is not None else [keys[i] for i in positions]


def _take(records: Sequence[Record], positions: list[int]) -> list[Record]:
    """`[records[i] for i in positions]`; in one batch when the sequence renders records on
    demand (the world's frozen blocks expose `take`)."""
    take = getattr(records, "take", None)
    if take is not None:
        return take(positions)
    return [records[i] for i in positions]


def _iter_positions(records: Sequence[Record], ranges: Sequence[Sequence[int]]) -> Iterable[Record]:
    """The records at the positions of `ranges`, in order, fetched in chunks."""
    if getattr(records, "take", None) is None:
        yield from (records[i] for r in ranges for i in r)
        return
    for r in ranges:
        for lo in range(0, len(r), _TAKE_CHUNK):
            yield from _take(records, list(r[lo : lo + _TAKE_CHUNK]))


def _slice(ranges: Sequence[Sequence[int]], start: int, stop: int) -> list[int]:
    """Items start..stop-1 of the concatenation of `ranges`, without building it."""
    out: list[int] = []
    offset = 0
    for r in ranges:
        n = len(r)
        if offset + n > start and offset < stop:
            out.extend(r[max(0, start - offset) : stop - offset])
        offset += n
        if offset >= stop:
            break
    return out
