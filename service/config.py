"""Settings of the service client, validated once when built.

Nothing here reads the environment: the wiring (`pipelines.settings.client_tuning`, read when a
command or a run starts) builds a config from the RESERVOIR_* variables.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from service.errors import ConfigurationError
from service.secrets import Secret

DEFAULT_MAX_CONCURRENCY = 15  # the service caps concurrent calls per IP address at 15
DEFAULT_PAGE_SIZE = 1000
# Reservation details carry their children (~6 KB of JSON per record against ~0.4 KB for flat
# lists): parsing a page of 1000 costs the client ~100 ms of CPU, 30x the latency share of one
# request at 15 in flight. Smaller pages keep the read latency-bound (docs/benchmarks.md).
DEFAULT_DETAILS_PAGE_SIZE = 100
DEFAULT_TIMEOUT = 30.0  # seconds, per request
# Seconds one request may take from sending to its whole body, however slowly the bytes come
# (the timeout above applies to each read, so a body dripped byte by byte never hits it).
DEFAULT_REQUEST_DEADLINE = 120.0
DEFAULT_MAX_RETRIES = 8  # transient retries per request after the first attempt
DEFAULT_MAX_RETRY_SECONDS = 120.0  # wall-clock budget for one request including backoff
DEFAULT_EVENTS_PATH = "/events"
DEFAULT_DAILY_FREE_REQUESTS = 25_000  # production requests per day that cost nothing
# Requests one run may send (0 = no limit): a run stops with a message before it alone can use
# up the free daily quota, e.g. against a service that ignores a filter and repeats its pages.
# A full read of a large park group (~1M reservations) takes ~16,000 (docs/benchmarks.md).
DEFAULT_MAX_REQUESTS = 20_000
# Largest response body read (decompressed): pages are well under 10 MiB; a body past this is a
# fault (a record with a 100 MB string took a run from 290 MB to 1.6 GB of memory).
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_URL_LENGTH = 1800  # stay well below the 2k limit of common proxies
DEFAULT_AVAILABILITY_WINDOW_DAYS = 31  # the availability endpoint answers 400 beyond 31 arrivals

AuthStyle = Literal["camel", "snake"]

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, kw_only=True)
class ServiceConfig:
    """Where the service is, who we are, and how hard we may push it."""

    base_url: str
    client_id: str
    client_secret: Secret
    scope: str = ""
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    page_size: int = DEFAULT_PAGE_SIZE
    details_page_size: int = DEFAULT_DETAILS_PAGE_SIZE  # capped by page_size
    timeout: float = DEFAULT_TIMEOUT
    request_deadline: float = DEFAULT_REQUEST_DEADLINE
    max_retries: int = DEFAULT_MAX_RETRIES
    max_retry_seconds: float = DEFAULT_MAX_RETRY_SECONDS
    events_path: str = DEFAULT_EVENTS_PATH
    auth_style: AuthStyle = "camel"
    locale: str | None = None
    # Archived entities (units, locations, channels) stay referenced by stays, bills and
    # allotments, so every client asks for them: without the header the service hides them
    # (interface: `x-show-archived`), and a lake built without them misses dimensions.
    show_archived: bool = True
    daily_free_requests: int = DEFAULT_DAILY_FREE_REQUESTS
    max_requests: int = DEFAULT_MAX_REQUESTS
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_url_length: int = DEFAULT_MAX_URL_LENGTH
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    # List pages arrive as `LazyRecords`: counted and keyed by a skim, decoded where used
    # (`service.lazy`). Off: every page is decoded as it arrives.
    lazy_pages: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.client_secret, Secret):
            object.__setattr__(self, "client_secret", Secret(self.client_secret or ""))
        object.__setattr__(self, "base_url", (self.base_url or "").rstrip("/"))
        problems = list(self._problems())
        if problems:
            raise ConfigurationError("invalid service configuration: " + "; ".join(problems))

    def _problems(self) -> Any:
        parts = urlsplit(self.base_url)
        if not self.base_url:
            yield "base_url is missing (set RESERVOIR_BASE_URL or start the sandbox)"
        elif parts.scheme not in {"http", "https"} or not parts.hostname:
            yield f"base_url {self.base_url!r} is not an absolute http(s) URL"
        elif parts.scheme == "http" and not _is_loopback(parts.hostname):
            yield "base_url must use https (plain http is only allowed for loopback hosts)"
        if not self.client_id:
            yield "client_id is missing (RESERVOIR_CLIENT_ID)"
        if not self.client_secret:
            yield "client_secret is missing (RESERVOIR_CLIENT_SECRET)"
        if not self.scope.strip():
            # authenticate takes the environment's concern code as `scope`; without it the
            # service refuses (or answers 500), which would read like a wrong secret
            yield "scope is missing (RESERVOIR_SCOPE, the environment's 3-letter concern code)"
        if self.max_concurrency < 1:
            yield "max_concurrency must be at least 1"
        if self.page_size < 1:
            yield "page_size must be at least 1"
        if self.details_page_size < 1:
            yield "details_page_size must be at least 1"
        if self.timeout <= 0:
            yield "timeout must be positive"
        if self.request_deadline <= 0:
            yield "request_deadline must be positive"
        if self.max_retries < 0 or self.max_retry_seconds <= 0:
            yield "max_retries must be >= 0 and max_retry_seconds > 0"
        if self.auth_style not in ("camel", "snake"):
            yield "auth_style must be 'camel' or 'snake'"
        if not self.events_path.startswith("/"):
            yield "events_path must start with '/'"
        if self.max_requests < 0:
            yield "max_requests must be 0 (no limit) or more (RESERVOIR_MAX_REQUESTS)"
        if self.max_response_bytes < 64 * 1024:
            yield "max_response_bytes must be at least 64 KiB (RESERVOIR_MAX_RESPONSE_MB)"
        if self.max_url_length < 256:
            yield "max_url_length must be at least 256"

    @property
    def details_size(self) -> int:
        """Page size of reservation details: the smaller of the two settings."""
        return min(self.page_size, self.details_page_size)

    def with_(self, **changes: Any) -> ServiceConfig:
        """A copy with some settings changed (validated again)."""
        return replace(self, **changes)
