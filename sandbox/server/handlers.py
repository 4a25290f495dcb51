"""Handlers beyond lists and records: token, reservation bills, subjects and writes,
availability and `/openapi.json` (`ResourceHandlers`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from sandbox.auth import AuthError
from sandbox.openapi import build_openapi
from sandbox.protocol import Record
from sandbox.query import envelope, parse_paging
from sandbox.server.base import ServiceBase
from sandbox.server.common import (
    _JSON,
    MAX_ARRIVAL_DAYS,
    SERVICE_PREFIX,
    ApiError,
    error_response,
    json_response,
)
from sandbox.server.params import _date, _int, _int_list
from sandbox.world.allocator import release

AUTH_ERROR_MESSAGE = "Error occurred while processing"  # real-service-notes section 1


class ResourceHandlers(ServiceBase):
    """The service's handlers that are not plain `page`/`item` endpoints."""

    async def authenticate(self, request: Request) -> Response:
        # Parsed by hand: the form is always url-encoded, and starlette's parser needs an extra
        # dependency (python-multipart) for nothing else.
        fields = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
        try:
            return json_response(self.tokens.authenticate(fields))
        except AuthError as exc:
            if self.strict:  # the only authenticate error the real service documents
                return error_response(500, "INTERNAL_SERVER_ERROR", AUTH_ERROR_MESSAGE)
            return error_response(exc.status, exc.code, exc.message)

    async def reservation_bills(self, request: Request) -> Response:
        payer = self._payer(request, required=True)
        rid = request.path_params["reservationId"]

        def body() -> bytes:
            with self.world.lock:
                if self.world.get("reservations", rid) is None:
                    raise ApiError(404, "NOT_FOUND", f"reservationId {rid} not found")
                lines = [
                    r for r in self.world.children("billlines", rid) if r.get("payerType") == payer
                ]
                return orjson.dumps(self._malform(request, lines, "billlines"))

        return Response(await run_in_threadpool(body), media_type=_JSON)

    async def reservation_subjects(self, request: Request) -> Response:
        rid = request.path_params["reservationId"]

        def body() -> bytes:
            with self.world.lock:
                if self.world.get("reservations", rid) is None:
                    raise ApiError(404, "NOT_FOUND", f"reservationId {rid} not found")
                subjects = self.world.children("subjects", rid)
                return orjson.dumps(self._malform(request, subjects, "subjects"))

        return Response(await run_in_threadpool(body), media_type=_JSON)

    async def create_reservation(self, request: Request) -> Response:
        body = await self._json_body(request)

        def call() -> Record:
            with self.world.lock:
                return self.world.create_reservation(body)

        return json_response(await run_in_threadpool(call), 201)

    async def rentability_stays(self, request: Request) -> Response:
        """The stays a resource may be sold as (real-service-notes 5: distributionChannelId and
        resourceId required; arrivals default to the next 31 days, durations to 1..28)."""
        query = request.query_params
        for name in ("distributionChannelId", "resourceId"):
            if not query.get(name):
                raise ApiError(400, "INVALID_PARAMETER", f"{name} is required")
        resource = _int(query.get("resourceId"), "resourceId")
        first = query.get("minArrival") or self.today()
        lo = _date(first, "minArrival").toordinal()
        last = query.get("maxArrival")
        hi = _date(last, "maxArrival").toordinal() if last else lo + MAX_ARRIVAL_DAYS - 1
        if hi - lo + 1 > MAX_ARRIVAL_DAYS:
            raise ApiError(400, "RANGE_TOO_LARGE", f"at most {MAX_ARRIVAL_DAYS} arrival dates")
        least = _int(query.get("minDuration"), "minDuration") or 1
        most = _int(query.get("maxDuration"), "maxDuration") or 28
        page, size = parse_paging(query.get("page"), query.get("size"), self.settings.max_page_size)

        def call() -> Record:
            world: Any = self.world  # beyond the protocol: the generated world's rules
            stays = world.rentability_stays(resource, lo, hi, least, most)
            content = stays[page * size : (page + 1) * size]
            return envelope(content, page=page, size=size, total=len(stays), orders=())

        return json_response(await run_in_threadpool(call))

    async def update_reservation(self, request: Request) -> Response:
        body = await self._json_body(request)
        rid = request.path_params["reservationId"]

        def call() -> Record:
            with self.world.lock:
                if self.world.get("reservations", rid) is None:
                    raise ApiError(404, "NOT_FOUND", f"reservationId {rid} not found")
                return self.world.update_reservation(rid, body)

        return json_response(await run_in_threadpool(call))

    async def availability_get(self, request: Request) -> Response:
        query = request.query_params
        params = {
            name: query.get(name)
            for name in (
                "arrivalDateFrom",
                "arrivalDateTo",
                "distributionChannelCode",
                "rateTypeId",
                "locationId",
            )
        }
        params["resourceIds"] = query.getlist("resourceId") + query.getlist("resourceIds")
        params["durations"] = query.getlist("duration")
        return await self._availability(params)

    async def availability_post(self, request: Request) -> Response:
        body = await self._json_body(request)
        params = dict(body)
        params.setdefault("arrivalDateFrom", body.get("arrivalDate"))
        resource = body.get("resourceIds", body.get("resourceId"))
        params["resourceIds"] = (
            resource if isinstance(resource, list) else ([] if resource is None else [resource])
        )
        duration = body.get("durations", body.get("duration"))
        params["durations"] = (
            duration if isinstance(duration, list) else ([] if duration is None else [duration])
        )
        return await self._availability(params)

    async def _availability(self, params: Mapping[str, Any]) -> Response:
        if not params.get("arrivalDateFrom"):
            raise ApiError(400, "MISSING_PARAMETER", "arrivalDateFrom is required")
        start = _date(params["arrivalDateFrom"], "arrivalDateFrom")
        end = _date(params.get("arrivalDateTo") or params["arrivalDateFrom"], "arrivalDateTo")
        if end < start:
            raise ApiError(400, "INVALID_PARAMETER", "arrivalDateTo is before arrivalDateFrom")
        if (end - start).days + 1 > MAX_ARRIVAL_DAYS:
            raise ApiError(
                400, "RANGE_TOO_LARGE", f"at most {MAX_ARRIVAL_DAYS} arrival dates per call"
            )
        resource_ids = [
            int(i)
            for v in params.get("resourceIds") or []
            for i in (_int_list(v, "resourceId") or [])
        ]
        durations = [
            int(i) for v in params.get("durations") or [] for i in (_int_list(v, "duration") or [])
        ]
        kwargs = {
            "arrival_from": start,
            "arrival_to": end,
            "resource_ids": resource_ids or None,
            "location_id": _int(params.get("locationId"), "locationId"),
            "durations": durations or None,
            "rate_type_id": _int(params.get("rateTypeId"), "rateTypeId"),
            "distribution_channel_code": params.get("distributionChannelCode") or None,
        }

        def call() -> bytes:
            with self.world.lock:
                body = orjson.dumps(self.world.availability(**kwargs))
            # the records' Python objects (~300 MB for 31 arrival dates at large) are freed:
            # give them back, which the serving's allocator (`sandbox.heap`) would keep
            release()
            return body

        return Response(await run_in_threadpool(call), media_type=_JSON)

    async def openapi(self, request: Request) -> Response:
        def build() -> bytes:
            with self.world.lock:
                doc = build_openapi(
                    self.endpoints,
                    base_path=SERVICE_PREFIX,
                    types_for=lambda c: dict(self.types(c)),
                )
            return orjson.dumps(doc)

        return Response(await run_in_threadpool(build), media_type=_JSON)
