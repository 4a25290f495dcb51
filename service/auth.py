"""Client-credentials tokens: one authenticate call shared by all concurrent requests.

The token is reused until 80 % of `expires_in` has passed (the notes give no typical lifetime, so
we read it from every response). A 401 on a data call triggers one refresh; if several requests
see the 401 together they wait on the same refresh instead of each authenticating (single-flight).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from service.errors import AuthenticationError
from service.secrets import Secret, forget_secret, register_secret

REFRESH_FRACTION = 0.8  # renew after this share of the announced lifetime
DEFAULT_EXPIRES_IN = 300  # seconds, when the response does not say

AUTH_TEMPLATE = "/authenticate"


@dataclass(frozen=True)
class Token:
    """A bearer token and the identity fields the payment integration needs."""

    header: Secret  # "<token_type> <access_token>"
    refresh_at: float  # time.monotonic() after which we renew
    expires_in: int
    client_id: str | None
    concern_id: str | None
    scope: str | None

    def fresh(self) -> bool:
        return time.monotonic() < self.refresh_at


def credential_form(config: Any) -> dict[str, str]:
    """The authenticate form in the configured spelling (interface: camelCase)."""
    secret = config.client_secret.reveal()
    if config.auth_style == "snake":
        form = {
            "grant_type": "client_credentials",
            "client_id": config.client_id,
            "client_secret": secret,
        }
    else:
        form = {
            "grantType": "client_credentials",
            "clientId": config.client_id,
            "clientSecret": secret,
        }
    if config.scope:
        form["scope"] = config.scope
    return form


def parse_token(body: Any) -> Token:
    if not isinstance(body, dict) or not body.get("access_token"):
        raise AuthenticationError(
            "the authenticate response carried no access_token", endpoint=AUTH_TEMPLATE
        )
    access = str(body["access_token"])
    register_secret(access)
    token_type = str(body.get("token_type") or "Bearer")
    if token_type.lower() == "bearer":
        token_type = "Bearer"
    try:
        expires_in = int(body.get("expires_in") or DEFAULT_EXPIRES_IN)
    except (TypeError, ValueError):
        expires_in = DEFAULT_EXPIRES_IN
    expires_in = max(expires_in, 1)
    client_id = body.get("client_id")
    concern_id = body.get("concern_id")
    return Token(
        header=Secret(f"{token_type} {access}"),
        refresh_at=time.monotonic() + REFRESH_FRACTION * expires_in,
        expires_in=expires_in,
        client_id=None if client_id is None else str(client_id),
        concern_id=None if concern_id is None else str(concern_id),
        scope=body.get("scope"),
    )


# Tokens shared by every client of the process with the same service and credentials: a run
# opens one client per asset, and each would otherwise authenticate again (one request each).
_SHARED: dict[tuple[str, ...], Token] = {}
_SHARED_LOCK = threading.Lock()


def _cache_key(config: Any) -> tuple[str, ...]:
    # The secret takes part only as a digest, so the key itself reveals nothing.
    digest = hashlib.sha256(config.client_secret.reveal().encode()).hexdigest()
    return (config.base_url, config.client_id, config.scope or "", config.auth_style, digest)


def forget_shared_tokens() -> None:
    """Drop every cached token (tests; after credentials change)."""
    with _SHARED_LOCK:
        _SHARED.clear()


class TokenManager:
    """Holds the current token of one client; lives in the client's event loop.

    A fresh token cached by an earlier client of the process is reused; renewals are shared back.
    """

    def __init__(self, config: Any, authenticate: Callable[[], Awaitable[Token]]):
        """`authenticate` asks the service for a new token (the client's POST /authenticate)."""
        self._authenticate = authenticate
        self._key = _cache_key(config)
        with _SHARED_LOCK:
            shared = _SHARED.get(self._key)
        self._token: Token | None = shared if shared is not None and shared.fresh() else None
        self._lock: asyncio.Lock | None = None
        self.authentications = 0

    @property
    def token(self) -> Token | None:
        return self._token

    @property
    def identity(self) -> dict[str, str | None]:
        """`client_id` and `concern_id` of the authentication response (payment fields)."""
        token = self._token
        if token is None:
            return {"client_id": None, "concern_id": None}
        return {"client_id": token.client_id, "concern_id": token.concern_id}

    def _get_lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def header(self) -> Secret:
        """The Authorization value, authenticating first if there is no fresh token."""
        token = self._token
        if token is not None and token.fresh():
            return token.header
        async with self._get_lock():
            token = self._token
            if token is not None and token.fresh():
                return token.header
            return (await self._renew()).header

    async def refresh(self, rejected: Secret) -> Secret:
        """Called after a 401 with the header that was refused; refreshes at most once per token."""
        async with self._get_lock():
            token = self._token
            if token is not None and token.header != rejected and token.fresh():
                return token.header  # someone else already refreshed
            return (await self._renew()).header

    async def _renew(self) -> Token:
        old = self._token
        self._token = await self._authenticate()
        self.authentications += 1
        with _SHARED_LOCK:
            _SHARED[self._key] = self._token
        if old is not None:
            forget_secret(old.header.reveal())
            forget_secret(old.header.reveal().split(" ", 1)[-1])
        return self._token
