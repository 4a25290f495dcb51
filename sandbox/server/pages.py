"""Paged lists and single records: the hot path of a full read (`PageHandlers`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from sandbox.encode import page_bytes
from sandbox.filters import (
    LIVE_OP,
    Condition,
    Filters,
    build_predicate,
    compile_filters,
    parse_sort,
)
from sandbox.protocol import COLLECTIONS, Record
from sandbox.query import LazyPage, envelope, parse_paging, plan_keys, select, select_keyed
from sandbox.server.base import ServiceBase
from sandbox.server.common import _JSON, ApiError
from sandbox.server.encode_pool import StalePage, offloadable
from sandbox.server.encoding import View


class PageHandlers(ServiceBase):
    """Handlers for `page` and `item` endpoints (any collection, any `View`)."""

    def _page_handler(
        self,
        collection: str,
        *,
        no_content: bool = False,
        extra: Callable[[Request], Filters] | None = None,
        view: Callable[[Request], View] | None = None,
        source: Callable[[Request], Sequence[Record]] | None = None,
    ) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            call = functools.partial(
                self._page_body,
                request,
                collection,
                extra=extra,
                view=view,
                source=source,
                no_content=no_content,
            )
            body = await asyncio.get_running_loop().run_in_executor(self._pages, call)
            if body is None:
                return Response(status_code=204)
            return Response(body, media_type=_JSON)

        handler.__name__ = f"page_{collection}"
        return handler

    def _page_body(
        self,
        request: Request,
        collection: str,
        *,
        extra: Callable[[Request], Filters] | None,
        view: Callable[[Request], View] | None,
        source: Callable[[Request], Sequence[Record]] | None,
        no_content: bool,
    ) -> bytes | None:
        """One page as JSON bytes, or None for an empty page of a 204-when-empty endpoint.

        Under the world's lock: select the records and take their encoded bytes (from the
        cache, encoding the misses; an encode worker may encode them while the lock is let go,
        sandbox/server/encode_pool.py). Outside it: join them into the envelope.
        """
        query = request.query_params
        page, size = parse_paging(query.get("page"), query.get("size"), self.settings.max_page_size)
        show_archived = request.headers.get("x-show-archived", "false").lower() == "true"
        pk = COLLECTIONS[collection]
        served = view(request) if view is not None else self.plain_view(collection)
        world = self.world
        with world.lock:
            self._churn(request, collection)
            types = self.types(collection)
            filters = compile_filters(query.getlist("filter"), types)
            orders = parse_sort(query.getlist("sort"), types)
            if extra is not None:
                filters += extra(request)
            if not show_archived and dict.get(types, "archivedFrom") is not None:
                filters.append([Condition("archivedFrom", LIVE_OP, self.today())])
            if source is not None:
                records = source(request)
                # a lazy child view knows its keys (ascending): bisect, render only the page
                keys = getattr(records, "key_list", None)
            else:
                keys, records = world.keys(collection), world.records(collection)
                if len(keys) != len(records):  # a world mid-change; correctness over speed
                    keys = None
            if keys is not None:
                plan = plan_keys(filters, pk)
                selection = select_keyed(
                    keys, records, plan, build_predicate(plan.rest, types), orders, pk, page, size
                )
            else:
                selection = select(records, build_predicate(filters, types), orders, page, size)
            content = selection.content
            if "malformed" in self.decision(request):
                # The faulted path only: build the records, damage copies, encode the page.
                damaged = self._malform(request, [served.build(r) for r in content], collection)
                if not damaged and no_content:
                    return None
                return orjson.dumps(
                    envelope(
                        damaged,
                        page=page,
                        size=size,
                        total=selection.total,
                        orders=orders,
                        sort_object=self.strict,
                    )
                )
            enabled = self.cache.sync(world)
            pool = self.encode_pool
            offload = None
            # A worker rebuilds the page's source: the collection, or one parent's children
            # (`World.child_view`: routes with one path parameter, the parent's key).
            params = list(request.path_params.values())
            parent = params[0] if len(params) == 1 and hasattr(records, "key_list") else None
            # (usable: the world is still the one the workers hold)
            if (
                pool is not None
                and (source is None or parent is not None)
                and offloadable(served.variant)
                and pool.usable(world)
            ):

                def offload(todo: Sequence[Record]) -> Sequence[bytes] | None:
                    if not isinstance(todo, LazyPage) or todo.source is not records:
                        return None
                    return pool.encode(world, served.variant, collection, todo, parent)

            try:
                parts = self.cache.encode_all(
                    served.variant,
                    content,
                    pk,
                    served.encode,
                    enabled=enabled,
                    encode_many=served.encode_many,
                    offload=offload,
                )
            except StalePage:  # the world moved while a worker encoded: the pool is retired
                parts = None
        if parts is None:  # select again from the world as it is now, encoded here
            return self._page_body(
                request,
                collection,
                extra=extra,
                view=view,
                source=source,
                no_content=no_content,
            )
        if not parts and no_content:
            return None
        return page_bytes(
            parts,
            page=page,
            size=size,
            total=selection.total,
            orders=orders,
            sort_object=self.strict,
        )

    def _item_handler(
        self, collection: str, view: Callable[[Request], View] | None
    ) -> Callable[[Request], Any]:
        pk = COLLECTIONS[collection]

        def body(request: Request) -> bytes:
            key = next(iter(request.path_params.values()))
            served = view(request) if view is not None else self.plain_view(collection)
            with self.world.lock:
                record = self.world.get(collection, key)
                if record is None:
                    raise ApiError(404, "NOT_FOUND", f"{pk} {key} not found")
                if "malformed" in self.decision(request):
                    damaged = self._malform(request, [served.build(record)], collection)[0]
                    return orjson.dumps(damaged)
                enabled = self.cache.sync(self.world)
                return bytes(
                    self.cache.encode_all(
                        served.variant, [record], pk, served.encode, enabled=enabled
                    )[0]
                )

        async def handler(request: Request) -> Response:
            return Response(await run_in_threadpool(body, request), media_type=_JSON)

        handler.__name__ = f"item_{collection}"
        return handler
