"""Several pages read in one parse (`assets.batches`) land each page as it lands alone, and the
worker pool's feed (`assets.feed`) sends pages in batches and applies them in page order.

The reference is the normaliser of one page at a time (`Normaliser.normalise`: at the client's
100 records a page, the typed decoder), on the sandbox's reservation details at several seeds,
on the bench's pages and on a batch holding one of the columnar read's hostile bodies.
"""

from __future__ import annotations

import random
from concurrent.futures import Future
from datetime import timedelta
from typing import Any

import orjson
import pytest

from assets import feed as feed_module
from assets.batches import BATCH_RECORDS, Page, normalise_batch
from assets.feed import PoolFeed
from assets.normalise import Normalised, Normaliser
from assets.workers import Job, PageResult, normalise_pages
from bench.normalise import synthetic_record
from sandbox.world import World
from service.lazy import LazyRecords
from tests.assets.test_normalise_columnar import HOSTILE, RESERVATIONS, _hostile
from tests.assets.test_normalise_typed import BATCH, NOW, _same


def _pages(records: list[dict[str, Any]], size: int = 100) -> list[Page]:
    """Pages as the client delivers them (undecoded), each with its own extraction time."""
    pages: list[Page] = []
    for i, start in enumerate(range(0, len(records), size)):
        chunk = records[start : start + size]
        body = orjson.dumps({"content": chunk})
        page = LazyRecords(body, len(chunk), [r["reservationId"] for r in chunk], "/x")
        pages.append((page, NOW + timedelta(seconds=i)))
    return pages


def _alone(pages: list[Page]) -> list[Normalised]:
    """Each page normalised on its own by a normaliser of its own (the reference)."""
    return [Normaliser(RESERVATIONS, batch_id=BATCH).normalise(p, at) for p, at in pages]


def _world(seed: int) -> list[dict[str, Any]]:
    world = World(seed=seed, scale="small")
    details = (world.details("reservations", k) for k in world.keys("reservations"))
    return [r for r in details if r is not None]


@pytest.mark.parametrize("seed", [3, 7, 19])
def test_a_batch_of_sandbox_pages_lands_each_page_as_alone(seed: int) -> None:
    records = _world(seed)
    assert len(records) >= 800, len(records)
    pages = _pages(records[:1050])  # ten pages of 100 and one of 50
    got = normalise_batch(Normaliser(RESERVATIONS, batch_id=BATCH), pages)
    assert got is not None, "a clean batch was declined"
    want = _alone(pages)
    assert len(got) == len(want) == 11
    for mine, theirs in zip(got, want, strict=True):
        _same(mine, theirs)
    stamped = got[3].tables["reservations"].column("_extracted_at").unique().to_pylist()
    assert stamped == [NOW + timedelta(seconds=3)]  # each page keeps its own time


@pytest.mark.parametrize("seed", [1, 2])
def test_a_batch_of_bench_pages_lands_each_page_as_alone(seed: int) -> None:
    rng = random.Random(seed)
    records = [synthetic_record(rng, i) for i in range(1, 1001)]
    pages = _pages(records, rng.choice((100, 125, 250)))
    got = normalise_batch(Normaliser(RESERVATIONS, batch_id=BATCH), pages)
    assert got is not None
    for mine, theirs in zip(got, _alone(pages), strict=True):
        _same(mine, theirs)
        assert mine.tables["bill_lines"].num_rows == 9 * mine.records


def test_a_small_or_single_page_batch_is_read_page_by_page() -> None:
    rng = random.Random(4)
    records = [synthetic_record(rng, i) for i in range(1, 1001)]
    normaliser = Normaliser(RESERVATIONS, batch_id=BATCH)
    assert normalise_batch(normaliser, _pages(records[:700])) is None  # below the columnar read
    assert normalise_batch(normaliser, _pages(records, 1000)) is None  # one page
    assert normalise_batch(normaliser, _pages(records)) is not None


Outcome = tuple[list[Normalised | None], tuple[str, str] | None]


def _in_batches(pages: list[Page]) -> Outcome:
    """The pages through `normalise_pages` as the feed sends them: after a shorter answer (a
    page failed after others), the rest again from the failing page."""
    normaliser = Normaliser(RESERVATIONS, batch_id=BATCH)
    got: list[Normalised | None] = []
    try:
        while pages:
            results = normalise_pages(RESERVATIONS, normaliser, pages)
            got.extend(r.normalised for r in results)
            pages = pages[len(results) :]
    except Exception as exc:
        return got, (type(exc).__name__, str(exc))
    return got, None


def _one_by_one(pages: list[Page]) -> Outcome:
    got: list[Normalised | None] = []
    try:
        for page, at in pages:
            got.append(Normaliser(RESERVATIONS, batch_id=BATCH).normalise(page, at))
    except Exception as exc:
        return got, (type(exc).__name__, str(exc))
    return got, None


@pytest.mark.parametrize("case", list(HOSTILE), ids=str)
def test_a_batch_with_a_hostile_page_lands_each_page_as_alone(case: str) -> None:
    """One hostile page among clean ones: the batch is declined where any page would be, and
    every page then lands exactly as alone (its bad records quarantined alike); a page that
    fails alone fails the same, after the pages before it landed as alone."""
    edit, text, _ = HOSTILE[case]
    rng = random.Random(8)
    clean = _pages([synthetic_record(rng, i) for i in range(10, 910)])
    body = _hostile(edit, text)
    hostile = (LazyRecords(body, 3, [None] * 3, RESERVATIONS.source), NOW)
    pages = [*clean[:4], hostile, *clean[4:]]
    (got, got_error), (want, want_error) = _in_batches(pages), _one_by_one(pages)
    assert got_error == want_error
    assert len(got) == len(want) == (4 if want_error else 10)
    for mine, theirs in zip(got, want, strict=True):
        assert mine is not None and theirs is not None
        _same(mine, theirs)
    if case == "clean":
        taken = normalise_batch(Normaliser(RESERVATIONS, batch_id=BATCH), pages)
        assert taken is not None


class _Inline:
    """A stand-in for the process pool: runs each call at once in this process (a page that
    is a string fails), and records how many pages each call carried."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def submit(self, fn: Any, job: Job, pages: list[Page]) -> Future[list[PageResult]]:
        self.calls.append(len(pages))
        done: Future[list[PageResult]] = Future()
        results: list[PageResult] = []
        for page, _ in pages:
            if isinstance(page, str):  # fails, as `workers.normalise_pages` does
                if not results:
                    done.set_exception(ValueError(page))
                    return done
                break
            results.append(PageResult(len(page), None))  # each page's size as its "cursor"
        done.set_result(results)
        return done


def _feed(pool: _Inline, applied: list[int | None]) -> PoolFeed:
    job = Job(RESERVATIONS.name, BATCH, "full", False)
    return PoolFeed(pool, 2, job, "reservations", lambda r: applied.append(r.cursor))  # type: ignore[arg-type]


def test_the_feed_sends_batches_and_applies_pages_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feed_module, "INFLIGHT_PER_WORKER", 1)
    pool, applied = _Inline(), []
    feed = _feed(pool, applied)
    sizes = [100] * 9 + [1000, 40, 100, 60] + [100] * 10 + [5]
    for n in sizes:
        feed.add([{}] * n, NOW)
    # pages gathered until they hold BATCH_RECORDS records: nine of 100 and the 1000, then
    # 40, 100, 60 and eight of 100; at two calls in flight the first is applied
    assert BATCH_RECORDS == 1000 and pool.calls == [10, 11]
    assert applied == sizes[:10]
    feed.drain()
    assert pool.calls == [10, 11, 3]
    assert applied == sizes  # every page once, in the order it came
    feed.drain()
    assert applied == sizes


def test_a_failing_page_fails_after_the_pages_before_it_are_applied() -> None:
    pool, applied = _Inline(), []
    feed = _feed(pool, applied)
    for n in (100, 200, 300):
        feed.add([{}] * n, NOW)
    feed.add("bad page", NOW)  # type: ignore[arg-type]
    feed.add([{}] * 50, NOW)
    with pytest.raises(ValueError, match="bad page"):
        feed.drain()
    assert applied == [100, 200, 300]  # what came before it, and nothing after it
    assert pool.calls == [5, 2]  # the call, then the rest from the failing page again


def test_an_aborted_feed_forgets_the_pages_it_gathered() -> None:
    pool, applied = _Inline(), []
    feed = _feed(pool, applied)
    for _ in range(3):
        feed.add([{}] * 100, NOW)
    feed.cancel()
    feed.drain()
    assert applied == [] and pool.calls == []
