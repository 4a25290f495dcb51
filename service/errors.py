"""Exceptions raised by the service client.

One tree so callers can catch what they can act on::

    ServiceError                      base of everything below
    ├── ConfigurationError            settings missing or invalid (fix the configuration)
    ├── AuthenticationError           credentials refused (check id/secret/scope; see message)
    ├── PermissionDenied              403: the API user may not read this resource
    ├── NotFound                      404: the resource does not exist
    ├── BadRequest                    400: the server rejected the request (its message included)
    ├── ServiceUnavailable            transient failures outlived the retry budget
    ├── RequestBudgetExceeded         the run used its request budget (max_requests)
    └── ResponseTooLarge              a response body passed max_response_bytes

Messages never contain secrets: the client only puts endpoint templates, status codes and the
server's own error message into them.
"""

from __future__ import annotations

TEST_REFRESH_HINT = (
    "Check client id, client secret and scope (the 3-letter concern code). If this is the test "
    "environment: a refresh of test with production data removes the API keys of users that do "
    "not exist in production, so a new API user and key may have to be created in the back office."
)


class ServiceError(Exception):
    """Base of every error the client raises on purpose."""

    def __init__(self, message: str, *, endpoint: str | None = None, status: int | None = None):
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status


class ConfigurationError(ServiceError):
    """A setting is missing or invalid; nothing was sent."""


class AuthenticationError(ServiceError):
    """The authenticate endpoint refused the credentials, or a fresh token was still refused."""


class PermissionDenied(ServiceError):
    """403: the token is valid but the API user has no access to this data."""


class NotFound(ServiceError):
    """404: the path or the entity does not exist."""


class BadRequest(ServiceError):
    """400: the server rejected the request; `server_message` holds what it said."""

    def __init__(
        self,
        message: str,
        *,
        endpoint: str | None = None,
        status: int | None = 400,
        server_message: str | None = None,
        code: str | None = None,
    ):
        super().__init__(message, endpoint=endpoint, status=status)
        self.server_message = server_message
        self.code = code


class ServiceUnavailable(ServiceError):
    """The endpoint kept failing transiently (429, 5xx, timeouts, dropped or truncated bodies)."""

    def __init__(
        self,
        message: str,
        *,
        endpoint: str | None = None,
        status: int | None = None,
        attempts: int = 0,
    ):
        super().__init__(message, endpoint=endpoint, status=status)
        self.attempts = attempts


class RequestBudgetExceeded(ServiceError):
    """The run has sent `max_requests` requests: it stops before it can use up the daily quota.

    A run that needs that many is either very large (raise the budget) or stuck asking a service
    that ignores a filter for the same pages (the endpoint named in the message)."""


class ResponseTooLarge(ServiceError):
    """A response body passed `max_response_bytes`; it was not read further (nor retried: a
    record that big comes back the same)."""
