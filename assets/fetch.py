"""Reading what a run lands: id-list refetches, full lists, and running the async client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from assets.endpoints import EndpointSpec
from assets.pages import list_pages
from assets.settings import Pages, Record
from service.lazy import LazyRecords


def stamp(pages: Pages) -> AsyncIterator[tuple[Sequence[Record], datetime]]:
    """Each page with the time it arrived; an undecoded page stays undecoded (the landing's
    worker pool may decode it)."""

    async def gen() -> AsyncIterator[tuple[Sequence[Record], datetime]]:
        async for page in pages:
            yield (page if isinstance(page, LazyRecords) else list(page)), datetime.now(UTC)

    return gen()


def by_ids(service: Any, spec: EndpointSpec, ids: Sequence[int]) -> Pages:
    """Id-list refetch of a stream (`spec.by_ids`), in URL-safe batches (the facade batches)."""
    how = spec.by_ids
    if how is None:
        raise ValueError(f"the catalogue says no way to refetch {spec.name!r} by id")
    if how.method is not None:
        return getattr(service, how.method)(ids=ids)
    if not how.params:
        return service.get_by_ids(how.path, how.id_field, ids)
    # get_by_ids takes no extra params; the details list needs returnSections.
    from service.api import merge
    from service.filters import F, batch_ids

    cfg = service.config
    budget = max(64, cfg.max_url_length - len(cfg.base_url) - len(how.path) - 300)
    return merge(
        [
            service.client.iter_keyset(
                how.path,
                how.id_field,
                params={**how.params, "filter": [F(how.id_field).isin(batch).render()]},
            )
            for batch in batch_ids(ids, budget=budget)
        ],
        maxsize=max(2, service.client.limiter.limit * 2),
    )


def full_list(service: Any, spec: EndpointSpec) -> Pages:
    return list_pages(service, spec, **dict(spec.kwargs))


def run_sync(coro_factory: Callable[[], Any]) -> Any:
    from service.sync import run

    return run(coro_factory)


async def only_resources(pages: Pages, resource_ids: Iterable[int]) -> Pages:
    """Pages of availability records restricted to some accommodation types."""
    wanted = set(resource_ids)
    async for page in pages:
        # A record whose resourceId is damaged is kept, so that it reaches the quarantine.
        kept = [
            r for r in page if not isinstance(r.get("resourceId"), int) or r["resourceId"] in wanted
        ]
        if kept:
            yield kept
