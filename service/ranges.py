"""Keyset id ranges: splitting a range among readers, and packing the remainders of short
ranges into one request each (an OR of id ranges) that nearly fills a page."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

EARLY_PACK_FILL = 0.9  # send a packed remainder request early once it fills 90 % of a page


@dataclass(frozen=True)
class Gap:
    """Records with low < id < high not read yet; `count` as the server last reported it."""

    low: int
    high: int | None  # None: no upper bound
    count: int


def split_range(low: int, high: int, parts: int) -> list[tuple[int, int]]:
    """Cut the open id interval (low, high) into `parts` adjacent open intervals.

    Integer ids: piece i holds ids cut[i]+1 .. cut[i+1], expressed as (cut[i], cut[i+1]+1), and
    the last piece ends at `high`. Together they cover every id in (low, high) exactly once.
    """
    span = high - low - 1  # ids strictly between
    parts = max(1, min(parts, span)) if span > 0 else 1
    cuts = [low + (span * i) // parts for i in range(parts)] + [high - 1]
    return [(cuts[i], cuts[i + 1] + 1) for i in range(parts)]


def union_filters(id_field: str, gaps: list[Gap]) -> list[str]:
    """AND-ed filter terms selecting ids in the union of disjoint open intervals.

    For sorted intervals (a1,b1),...,(ak,bk): id>a1, id<bk, and for each hole between bi and
    a(i+1) the OR term `id<bi||id>a(i+1)`.
    """
    ordered = sorted(gaps, key=lambda g: g.low)
    terms = [f"{id_field}>{ordered[0].low}", f"{id_field}<{ordered[-1].high}"]
    for left, right in itertools.pairwise(ordered):
        terms.append(f"{id_field}<{left.high}||{id_field}>{right.low}")
    return terms


def pack_gaps(gaps: list[Gap], size: int) -> list[list[Gap]]:
    """First-fit decreasing: groups of gaps whose counts add up to at most one page each."""
    bins: list[tuple[int, list[Gap]]] = []
    for gap in sorted(gaps, key=lambda g: g.count, reverse=True):
        for i, (used, members) in enumerate(bins):
            if used + gap.count <= size:
                bins[i] = (used + gap.count, [*members, gap])
                break
        else:
            bins.append((gap.count, [gap]))
    return [members for _, members in bins]


class Packer:
    """Collects chain remainders and releases groups that nearly fill a page."""

    def __init__(self, size: int):
        self.size = size
        self.pending: list[Gap] = []

    def add(self, gap: Gap) -> None:
        self.pending.append(gap)

    def take_full(self) -> list[list[Gap]]:
        if sum(g.count for g in self.pending) < self.size * EARLY_PACK_FILL:
            return []
        groups = pack_gaps(self.pending, self.size)
        ready = [g for g in groups if sum(x.count for x in g) >= self.size * EARLY_PACK_FILL]
        taken = {id(x) for group in ready for x in group}
        self.pending = [g for g in self.pending if id(g) not in taken]
        return ready

    def drain(self) -> list[Gap]:
        pending, self.pending = self.pending, []
        return pending
