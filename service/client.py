"""The HTTP layer: authentication, the shared concurrency cap, retries, error mapping, accounting.

`ServiceClient` sends requests; `service.paging` turns them into streams of pages and
`service.api.ReservationService` names the endpoints. A client lives inside one event loop (its
httpx pool and token lock do); the concurrency cap it uses is process-wide (`service.throttle`).

Retries (GET and authenticate only; writes are never repeated): 429 (honouring Retry-After),
500/502/503/504, timeouts, dropped connections and bodies that are not valid JSON or whose page
envelope disagrees with its content. Jittered exponential backoff via stamina, bounded by
`max_retries` and `max_retry_seconds`; then `ServiceUnavailable` naming the endpoint.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx
import orjson

from service.auth import TokenManager
from service.clock import ServiceClock
from service.config import ServiceConfig
from service.errors import TEST_REFRESH_HINT, AuthenticationError, ServiceUnavailable
from service.gctune import relax_gc, restore_gc
from service.page import Page
from service.paging import iter_keyset, iter_pages
from service.responses import (
    TRANSIENT_ERRORS,
    QueryParams,
    Transient,
    clean_params,
    decode_body,
    log_request,
    log_response,
    raise_for_status,
    raise_if_transient,
    read_capped,
    retrying,
    transient_failure,
)
from service.secrets import CLIENT_LOGGERS, Secret, install_log_redaction
from service.stats import RequestStats, endpoint_template
from service.throttle import ConcurrencyLimiter, limiter_for
from service.token_request import request_token
from service.transport import ServiceTransport

log = logging.getLogger("service.client")


class ServiceClient:
    """Async client of the reservation service. Use as `async with ServiceClient(config) as c`."""

    def __init__(
        self,
        config: ServiceConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        limiter: ConcurrencyLimiter | None = None,
        used_today: int = 0,
    ):
        install_log_redaction(*CLIENT_LOGGERS)
        self.config = config
        self.limiter = limiter or limiter_for(config.base_url, config.max_concurrency)
        daily_free, budget = config.daily_free_requests, config.max_requests
        self.stats = RequestStats(used_today=used_today, daily_free=daily_free, max_requests=budget)
        self.clock = ServiceClock()  # the service's time, from its responses' Date headers
        self.auth = TokenManager(self.config, lambda: request_token(self))
        headers: dict[str, str] = {"accept": "application/json"}
        if config.locale:
            headers["locale"] = config.locale
        headers["x-show-archived"] = "true" if config.show_archived else "false"
        headers.update(config.extra_headers)
        pool = max(config.max_concurrency, self.limiter.limit)
        self._http = httpx.AsyncClient(
            base_url=config.base_url + "/",
            transport=transport
            or ServiceTransport(pool, base_url=config.base_url, max_body=config.max_response_bytes),
            headers=headers,
            timeout=httpx.Timeout(config.timeout),
            limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
            event_hooks={"request": [log_request], "response": [log_response]},
            follow_redirects=False,
        )
        # Requests are built here and handed to the transport directly: `AsyncClient.request`'s
        # URL merging, header copies and auth/redirect/cookie machinery (none used here) were
        # ~35 % of the client's CPU per GET. The AsyncClient still owns the transport and the
        # default headers: the wire is unchanged (`tests/service/test_request_building.py`).
        self._transport = self._http._transport
        self._base_url = config.base_url.rstrip("/") + "/"
        self._default_headers = dict(self._http.headers)
        self._extensions = {"timeout": httpx.Timeout(config.timeout).as_dict()}
        self._gc_relaxed = False

    def __repr__(self) -> str:
        return (
            f"ServiceClient(base_url={self.config.base_url!r}, client_id={self.config.client_id!r})"
        )

    async def __aenter__(self) -> ServiceClient:
        if not self._gc_relaxed:
            self._gc_relaxed = True
            relax_gc()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        try:
            await self._http.aclose()
        finally:
            if self._gc_relaxed:
                self._gc_relaxed = False
                restore_gc()

    # ------------------------------------------------------------------ identity and accounting

    @property
    def identity(self) -> dict[str, str | None]:
        return self.auth.identity

    def stats_snapshot(self) -> dict[str, Any]:
        snap = self.stats.snapshot()
        snap["authentications"] = self.auth.authentications
        snap["peak_in_flight"] = self.limiter.peak
        return snap

    # ------------------------------------------------------------------ reading

    async def get_json(
        self,
        path: str,
        *,
        params: QueryParams | None = None,
        template: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """GET with retries; the decoded JSON body, or None for 204."""
        _, body = await self._get(path, params=params, template=template, headers=headers)
        return body

    async def get_page(
        self,
        path: str,
        *,
        params: QueryParams | None = None,
        template: str | None = None,
        headers: Mapping[str, str] | None = None,
        lazy: bool = False,
        key: str | None = None,
    ) -> Page:
        """GET one page of a paged list (204 and bare arrays included).

        With `lazy`, the records are not decoded here: the page's content is `LazyRecords`,
        which knows how many records came and each one's `key` field, and decodes on first use
        (`service.lazy`). A body the skim cannot read is decoded at once, as without `lazy`.
        """
        status, body = await self._get(
            path,
            params=params,
            template=template,
            headers=headers,
            expect_page=True,
            lazy=lazy,
            key=key,
        )
        return Page.from_body(body, status)

    def iter_pages(
        self,
        path: str,
        *,
        params: QueryParams | None = None,
        template: str | None = None,
        size: int | None = None,
    ) -> AsyncIterator[Sequence[dict[str, Any]]]:
        """All pages by page number: page 0 first, then the rest concurrently."""
        return iter_pages(
            self.get_page,
            path,
            page_size=self.config.page_size,
            parallel=self.limiter.limit,
            lazy=self.config.lazy_pages,
            params=params,
            template=template,
            size=size,
        )

    def iter_keyset(
        self,
        path: str,
        id_field: str,
        *,
        params: QueryParams | None = None,
        template: str | None = None,
        after: int | None = None,
        ordered: bool = False,
        size: int | None = None,
    ) -> AsyncIterator[Sequence[dict[str, Any]]]:
        """All records by id-keyset paging, id ranges read in parallel (churn-safe)."""
        return iter_keyset(
            self.get_page,
            path,
            id_field,
            page_size=self.config.page_size,
            parallel=self.limiter.limit,
            lazy=self.config.lazy_pages,
            params=params,
            template=template,
            after=after,
            ordered=ordered,
            size=size,
        )

    async def send(
        self,
        method: str,
        path: str,
        *,
        params: QueryParams | None = None,
        json: Any = None,
        template: str | None = None,
    ) -> Any:
        """A write (POST/PUT): one attempt, no retries, errors mapped; the JSON body or None."""
        template = template or endpoint_template(path)
        header = await self.auth.header()
        try:
            response = await self._send_once(
                method, path, params, template, header, json=json, retry_statuses=False
            )
            if response.status_code == 401:
                header = await self.auth.refresh(header)
                response = await self._send_once(
                    method, path, params, template, header, json=json, retry_statuses=False
                )
        except Transient as exc:
            raise ServiceUnavailable(
                f"{method} {template} failed ({exc.reason}); writes are not retried because "
                "they are not idempotent - check the entity before sending again",
                endpoint=template,
            ) from exc
        if response.status_code >= 400:
            raise_for_status(response, template, method)
        if response.status_code == 204 or not response.content:
            return None
        return orjson.loads(response.content)

    # ------------------------------------------------------------------ internals

    async def _get(
        self,
        path: str,
        *,
        params: QueryParams | None,
        template: str | None,
        headers: Mapping[str, str] | None,
        expect_page: bool = False,
        lazy: bool = False,
        key: str | None = None,
    ) -> tuple[int, Any]:
        template = template or endpoint_template(path)
        path = path.lstrip("/")
        # The first attempt runs outside stamina: its bookkeeping (a retry state, a future and
        # its lock per attempt) was ~7 % of the client's CPU in a full read, and almost every
        # request succeeds at once. A failed first attempt is handed to stamina as its attempt
        # 1, so the waits, Retry-After, the bounds and the logs are stamina's as before.
        try:
            return await self._get_once(path, params, template, headers, expect_page, lazy, key)
        except Transient as exc:
            last: Transient = exc
        replay: Transient | None = last
        attempt_no = 1
        try:
            async for attempt in retrying(self.config):
                with attempt:
                    attempt_no = attempt.num
                    if replay is not None:
                        failed, replay = replay, None
                        raise failed
                    self.stats.count_retry(last.reason)
                    try:
                        return await self._get_once(
                            path, params, template, headers, expect_page, lazy, key
                        )
                    except Transient as exc:
                        last = exc
                        raise
        except Transient as exc:
            if exc.status == 401:
                raise AuthenticationError(
                    f"GET {template}: freshly issued tokens were refused (401) "
                    f"{attempt_no} times. " + TEST_REFRESH_HINT,
                    endpoint=template,
                    status=401,
                ) from exc
            raise ServiceUnavailable(
                f"GET {template} still failing after {attempt_no} attempts "
                f"(last: {exc.reason}); the service may be overloaded or down",
                endpoint=template,
                status=exc.status,
                attempts=attempt_no,
            ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    async def _get_once(
        self,
        path: str,
        params: QueryParams | None,
        template: str,
        headers: Mapping[str, str] | None,
        expect_page: bool,
        lazy: bool = False,
        key: str | None = None,
    ) -> tuple[int, Any]:
        header = await self.auth.header()
        response = await self._send_once("GET", path, params, template, header, headers=headers)
        if response.status_code == 401:
            header = await self.auth.refresh(header)
            response = await self._send_once("GET", path, params, template, header, headers=headers)
            if response.status_code == 401:
                # Retried within the normal budget (a token can be revoked again at once);
                # reported as an authentication problem if it never clears.
                raise Transient("token refused after a refresh", status=401)
        status = response.status_code
        if status == 204:
            return status, None
        if status >= 400:
            raise_for_status(response, template, "GET")
        return status, decode_body(response.content, status, template, expect_page, lazy, key)

    async def _send_once(
        self,
        method: str,
        path: str,
        params: QueryParams | None,
        template: str,
        authorization: Secret | None,
        *,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        form: Mapping[str, str] | None = None,
        retry_statuses: bool = True,
    ) -> httpx.Response:
        request_headers = dict(headers or {})
        if authorization is not None:
            request_headers["Authorization"] = authorization.reveal()
        async with self.limiter.slot():
            self.stats.count_request(template)
            request = self._build_request(method, path, params, request_headers, json, form)
            try:
                async with asyncio.timeout(self.config.request_deadline):
                    response = await self._exchange(request)
            except (TimeoutError, *TRANSIENT_ERRORS) as exc:
                raise transient_failure(exc, self.config.request_deadline) from None
        self.stats.count_response(response.status_code, len(response.content))
        self.clock.observe(response.headers.get("date"))
        if retry_statuses:
            raise_if_transient(response)
        return response

    def _build_request(
        self,
        method: str,
        path: str,
        params: QueryParams | None,
        headers: Mapping[str, str],
        json: Any = None,
        form: Mapping[str, str] | None = None,
    ) -> httpx.Request:
        """The request `AsyncClient.build_request` would make, built once."""
        url = self._base_url + path.lstrip("/")
        pairs = clean_params(params)
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs)
        return httpx.Request(
            method,
            url,
            headers={**self._default_headers, **headers},
            json=json,
            data=form,
            extensions=self._extensions,
        )

    async def _exchange(self, request: httpx.Request) -> httpx.Response:
        """Send through the transport and read the whole body (closed on any failure)."""
        await log_request(request)
        response = await self._transport.handle_async_request(request)
        response.request = request
        try:
            await read_capped(response, self.config.max_response_bytes)
        except BaseException:
            await response.aclose()
            raise
        await log_response(response)
        return response
