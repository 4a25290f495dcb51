"""Asking the service for a token: POST /authenticate, retried only when the answer was not an
answer, never on a refusal (a wrong credential stops the run with a message that says what to
check).

The interface documents one error of authenticate: 500 "when an error occurs while processing".
A service of that style answers a wrong client id, secret or scope with a 500, so a 500 is not
simply "the service is down" there:

- 429, 502, 503, 504, timeouts and dropped connections: transient, retried within the client's
  budget (`max_retries`, `max_retry_seconds`), then `ServiceUnavailable`;
- 500 (or another 5xx) whose body names the credentials (client, secret, scope, credential,
  concern, grant, API key, "unauthorized", "invalid", "denied", "forbidden"): refused at once;
- 500 whose body names nothing (e.g. the documented "Error occurred while processing"): asked
  again at most `BARE_500_RETRIES` times with the short first backoff steps (about 1 s in all),
  then refused with a message that says a wrong credential is the likely cause;
- 404 or 405: the URL has no authenticate endpoint (a base URL without its base path);
- any other status (400, 401, 403, ...): refused at once.

Every refusal is an `AuthenticationError` whose one line ends with `TEST_REFRESH_HINT`.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import httpx
import orjson

from service.auth import AUTH_TEMPLATE, Token, credential_form, parse_token
from service.errors import (
    TEST_REFRESH_HINT,
    AuthenticationError,
    NotFound,
    ServiceUnavailable,
)
from service.responses import Transient, retry_after_seconds, retrying, server_message
from service.secrets import redact

BARE_500_RETRIES = 2  # a 500 that names nothing is asked again at most this often
RETRIED_STATUSES = frozenset({429, 502, 503, 504})  # never a verdict on the credentials
CREDENTIAL_WORDS = re.compile(
    r"credential|client|secret|scope|concern|grant|api[ _-]?key|unauthori[sz]ed|"
    r"unauthenticated|invalid|denied|forbidden|not allowed|password|login",
    re.IGNORECASE,
)
BODY_SCANNED = 4096  # characters of an error body searched for credential words


class Sender(Protocol):
    """What asking for a token uses of the client (`service.client.ServiceClient`)."""

    config: Any
    stats: Any

    async def _send_once(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any: ...


def names_credentials(response: httpx.Response) -> bool:
    """Whether an error answer of authenticate talks about the credentials."""
    try:
        text = response.content[:BODY_SCANNED].decode("utf-8", "replace")
    except Exception:  # pragma: no cover - content is always bytes once read
        return False
    return bool(CREDENTIAL_WORDS.search(text))


async def request_token(client: Sender) -> Token:
    """POST /authenticate (retried on transient failures, never on a refusal)."""
    form = credential_form(client.config)
    headers = {"content-type": "application/x-www-form-urlencoded"}
    attempt_no = bare_500s = 0
    last: Transient | None = None
    response: httpx.Response | None = None
    try:
        async for attempt in retrying(client.config):
            with attempt:
                attempt_no = attempt.num
                if last is not None:
                    client.stats.count_retry(last.reason)
                try:
                    response = await client._send_once(
                        "POST",
                        "authenticate",
                        None,
                        AUTH_TEMPLATE,
                        None,
                        headers=headers,
                        form=form,
                        retry_statuses=False,
                    )
                    status = response.status_code
                    if status == 200:
                        try:
                            body = orjson.loads(response.content)
                        except orjson.JSONDecodeError as exc:
                            raise Transient("truncated authenticate response") from exc
                        return parse_token(body)
                    if status in RETRIED_STATUSES:
                        raise _transient(response)
                    if status >= 500 and not names_credentials(response):
                        bare_500s += 1
                        if bare_500s <= BARE_500_RETRIES:
                            raise _transient(response)
                except Transient as exc:
                    last = exc
                    raise
    except Transient as exc:
        raise ServiceUnavailable(
            f"POST {AUTH_TEMPLATE} still failing after {attempt_no} attempts (last: {exc.reason})",
            endpoint=AUTH_TEMPLATE,
            status=exc.status,
            attempts=attempt_no,
        ) from exc
    assert response is not None
    raise refusal(client.config, response, bare_500s)


def _transient(response: httpx.Response) -> Transient:
    status = response.status_code
    retry_after = retry_after_seconds(response.headers.get("retry-after"))
    if status == 429 and retry_after is None:
        retry_after = 1.0
    return Transient(f"HTTP {status}", status=status, retry_after=retry_after)


def refusal(config: Any, response: httpx.Response, bare_500s: int = 0) -> Exception:
    """The error a non-transient answer of authenticate means (one line, no secret)."""
    status = response.status_code
    message, _ = server_message(response)
    said = f": {redact(message)}" if message else ""
    if status in (404, 405):
        return NotFound(
            f"POST {AUTH_TEMPLATE} does not exist at {config.base_url} (HTTP {status}{said}); "
            "RESERVOIR_BASE_URL must include the service's base path, e.g. https://<host>/<path>/v2",
            endpoint=AUTH_TEMPLATE,
            status=status,
        )
    if bare_500s > BARE_500_RETRIES:
        return AuthenticationError(
            f"authentication failed for client id {config.client_id!r}: POST {AUTH_TEMPLATE} "
            f"answered HTTP {status} {bare_500s} times in a row{said}. This service answers a "
            "wrong client id, secret or scope with a 500 (if they are right, the service itself "
            "is failing: try again later). " + TEST_REFRESH_HINT,
            endpoint=AUTH_TEMPLATE,
            status=status,
        )
    return AuthenticationError(
        f"authentication refused for client id {config.client_id!r} "
        f"(HTTP {status}{said}). " + TEST_REFRESH_HINT,
        endpoint=AUTH_TEMPLATE,
        status=status,
    )
