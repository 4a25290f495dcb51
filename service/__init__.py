"""Client for the reservation service: auth, paging, filters, throttling, errors.

Public surface: `ServiceConfig`, `Secret`, `ServiceClient`, `ReservationService`, the error tree
in `service.errors`, the filter builder `F`/`Filter`, and the sync bridge `run`, `collect_pages`,
`extract`. See docs/client.md.
"""

from __future__ import annotations

from service.api import ReservationService
from service.client import ServiceClient
from service.config import ServiceConfig
from service.errors import (
    AuthenticationError,
    BadRequest,
    ConfigurationError,
    NotFound,
    PermissionDenied,
    ServiceError,
    ServiceUnavailable,
)
from service.filters import F, Filter
from service.secrets import Secret
from service.sync import collect_pages, extract, run
from service.throttle import ConcurrencyLimiter, limiter_for

__all__ = [
    "AuthenticationError",
    "BadRequest",
    "ConcurrencyLimiter",
    "ConfigurationError",
    "F",
    "Filter",
    "NotFound",
    "PermissionDenied",
    "ReservationService",
    "Secret",
    "ServiceClient",
    "ServiceConfig",
    "ServiceError",
    "ServiceUnavailable",
    "collect_pages",
    "extract",
    "limiter_for",
    "run",
]
