"""Asking the service for a token: POST /authenticate, retried on transient failures, never on
a refusal (a wrong credential stops the run with a message that says what to check)."""

from __future__ import annotations

from typing import Any, Protocol

import orjson

from service.auth import AUTH_TEMPLATE, Token, credential_form, parse_token
from service.errors import TEST_REFRESH_HINT, AuthenticationError, ServiceUnavailable
from service.responses import Transient, retrying, server_message


class Sender(Protocol):
    """What asking for a token uses of the client (`service.client.ServiceClient`)."""

    config: Any
    stats: Any

    async def _send_once(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any: ...


async def request_token(client: Sender) -> Token:
    """POST /authenticate (retried on transient failures, never on a refusal)."""
    form = credential_form(client.config)
    headers = {"content-type": "application/x-www-form-urlencoded"}
    attempt_no = 0
    last: Transient | None = None
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
                    )
                    if response.status_code == 200:
                        try:
                            body = orjson.loads(response.content)
                        except orjson.JSONDecodeError as exc:
                            raise Transient("truncated authenticate response") from exc
                        return parse_token(body)
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
    message, _ = server_message(response)
    raise AuthenticationError(
        f"authentication refused for client id {client.config.client_id!r} "
        f"(HTTP {response.status_code}{': ' + message if message else ''}). " + TEST_REFRESH_HINT,
        endpoint=AUTH_TEMPLATE,
        status=response.status_code,
    )
