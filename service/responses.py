"""What one exchange with the service means: a transient failure to retry (and how long to
wait), or an error to raise; and the query string as the service expects it."""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Mapping
from typing import Any, NoReturn

import httpx
import orjson
import stamina

from service.config import ServiceConfig
from service.errors import (
    TEST_REFRESH_HINT,
    AuthenticationError,
    BadRequest,
    NotFound,
    PermissionDenied,
    ResponseTooLarge,
    ServiceError,
    ServiceUnavailable,
)
from service.lazy import loads, skim
from service.secrets import redact, redact_headers
from service.stats import endpoint_template

log = logging.getLogger("service.client")

QueryParams = Mapping[str, Any]

RETRY_WAIT_INITIAL = 0.25  # seconds before the first retry
RETRY_WAIT_MAX = 10.0  # cap of one exponential backoff step
RETRY_WAIT_JITTER = 0.5  # random extra seconds per backoff
RETRY_AFTER_MAX = 60.0  # never sleep longer than this on one Retry-After
RETRY_AFTER_DEFAULT = 1.0  # 429 without Retry-After
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})


class Transient(Exception):
    """One failed attempt that may succeed if repeated."""

    def __init__(self, reason: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retrying(config: ServiceConfig) -> Any:
    """Stamina's retry loop within the config's bounds (attempts, seconds)."""
    return stamina.retry_context(
        on=retry_hook,
        attempts=config.max_retries + 1,
        timeout=config.max_retry_seconds,
        wait_initial=RETRY_WAIT_INITIAL,
        wait_max=RETRY_WAIT_MAX,
        wait_jitter=RETRY_WAIT_JITTER,
    )


def retry_hook(exc: Exception) -> bool | float:
    """Retry a transient failure, after its Retry-After when the service gave one."""
    if not isinstance(exc, Transient):
        return False
    if exc.retry_after is not None:
        wait = min(exc.retry_after, RETRY_AFTER_MAX)
        return wait + random.uniform(0, RETRY_WAIT_JITTER)
    return True


def server_message(response: httpx.Response) -> tuple[str | None, str | None]:
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        text = response.text.strip()
        return (redact(text[:300]) or None), None
    if isinstance(body, dict):
        message = body.get("message") or body.get("error_description") or body.get("error")
        return (redact(str(message)) if message else None), body.get("code")
    return None, None


def raise_for_status(response: httpx.Response, template: str, method: str) -> NoReturn:
    """The error a failed response means (400, 401, 403, 404, 5xx, anything else)."""
    status = response.status_code
    message, code = server_message(response)
    where = f"{method} {template}"
    suffix = f": {message}" if message else ""
    if status == 400:
        raise BadRequest(
            f"{where} rejected (400){suffix}",
            endpoint=template,
            server_message=message,
            code=code,
        )
    if status == 401:
        raise AuthenticationError(
            f"{where}: token refused (401). " + TEST_REFRESH_HINT,
            endpoint=template,
            status=status,
        )
    if status == 403:
        raise PermissionDenied(
            f"{where}: the API user has no access (403){suffix}",
            endpoint=template,
            status=status,
        )
    if status == 404:
        raise NotFound(f"{where}: not found (404){suffix}", endpoint=template, status=status)
    if status in TRANSIENT_STATUSES:
        raise ServiceUnavailable(
            f"{where} failed with {status}{suffix}", endpoint=template, status=status
        )
    raise ServiceError(
        f"{where} failed with HTTP {status}{suffix}", endpoint=template, status=status
    )


def clean_params(params: QueryParams | None) -> list[tuple[str, str]] | None:
    """Flatten to a list of pairs (repeated keys for lists; None dropped; bools lower-case)."""
    if not params:
        return None
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        if value is None:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if v is None:
                continue
            if isinstance(v, bool):
                v = "true" if v else "false"
            pairs.append((key, str(v)))
    return pairs


def raise_if_transient(response: httpx.Response) -> None:
    """A status worth repeating (429, 5xx) as a `Transient`, with the wait the service asked."""
    if response.status_code in TRANSIENT_STATUSES:
        retry_after = retry_after_seconds(response.headers.get("retry-after"))
        if response.status_code == 429 and retry_after is None:
            retry_after = RETRY_AFTER_DEFAULT
        raise Transient(
            f"HTTP {response.status_code}", status=response.status_code, retry_after=retry_after
        )


def decode_body(
    content: bytes, status: int, template: str, expect_page: bool, lazy: bool, key: str | None
) -> Any:
    """A successful body: a page skimmed undecoded when it can be, else the decoded JSON; a
    truncated body or a page whose envelope disagrees with its content is transient."""
    if expect_page and lazy:
        skimmed = skim(content, key, template)
        if skimmed is not None:
            return skimmed
    try:
        body = loads(content)
    except orjson.JSONDecodeError as exc:
        raise Transient("truncated or malformed JSON body", status=status) from exc
    if expect_page and isinstance(body, dict) and "content" in body:
        page = body.get("content")
        declared = body.get("numberOfElements")
        if not isinstance(page, list) or (isinstance(declared, int) and declared != len(page)):
            raise Transient("page envelope does not match its content", status=status)
    return body


async def log_request(request: httpx.Request) -> None:
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "-> %s %s headers=%s", request.method, request.url, redact_headers(request.headers)
        )


async def log_response(response: httpx.Response) -> None:
    if log.isEnabledFor(logging.DEBUG):
        request = response.request
        log.debug("<- %s %s %s", response.status_code, request.method, request.url)


# Transport failures worth another attempt (not e.g. an unsupported URL scheme).
TRANSIENT_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


def transient_failure(exc: BaseException, deadline: float) -> Transient:
    """What a request that got no whole answer failed of: the deadline, a timeout, a drop."""
    if isinstance(exc, TimeoutError):
        return Transient(f"no whole answer within {deadline:g} s")
    if isinstance(exc, httpx.TimeoutException):
        return Transient(f"timeout ({type(exc).__name__})")
    return Transient(f"connection dropped ({type(exc).__name__})")


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """Read the whole (decoded) body like `aread`, refusing one larger than `limit` bytes.

    The declared length is checked first; the count while reading catches a body without one
    and a compressed body that inflates past the limit.
    """
    template = endpoint_template(response.request.url.path) if response.request else "?"
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(template, int(declared), limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _too_large(template, size, limit)
        chunks.append(chunk)
    body = b"".join(chunks)
    response._content = body  # what `Response.aread` stores; `.content` reads it
    return body


def _too_large(template: str, size: int, limit: int) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"GET {template}: the response body passed {size:,} bytes, above the limit of "
        f"{limit:,} (RESERVOIR_MAX_RESPONSE_MB = {limit / 1048576:g}). Pages of this service "
        "are normally under 10 MiB, so a record in it is probably damaged; nothing from this "
        "table was landed. If the service really sends pages this big, lower the page size "
        "(RESERVOIR_PAGE_SIZE) or raise RESERVOIR_MAX_RESPONSE_MB.",
        endpoint=template,
    )
