"""OAuth2 client-credentials tokens for the sandbox.

Tokens are random opaque strings kept in memory with their expiry, so a forged token is simply
unknown. Expiry uses the wall clock (not the world clock): the world clock jumps when the world is
advanced, and a token must not die because a test moved the business a week forward.
Secrets and tokens never appear in messages; errors name the client id at most.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

DEFAULT_TOKEN_TTL = 3600.0
GRANT_TYPE = "client_credentials"
TOKEN_TYPE = "Bearer"


class AuthError(Exception):
    """Authentication refused; `status` and `code` go into the error body."""

    def __init__(self, message: str, *, status: int = 401, code: str = "UNAUTHORIZED") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Credentials:
    client_id: str
    client_secret: str = field(repr=False)
    scope: str
    concern_id: int = 1


@dataclass(frozen=True)
class Token:
    access_token: str = field(repr=False)
    jti: str
    client_id: str
    expires_at: float


def _field(form: Mapping[str, str], camel: str, snake: str) -> str:
    return (form.get(camel) or form.get(snake) or "").strip()


class TokenStore:
    """Issues and checks tokens; thread-safe because handlers run in a thread pool."""

    def __init__(
        self,
        credentials: Credentials,
        *,
        ttl: float = DEFAULT_TOKEN_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.credentials = credentials
        self.ttl = ttl
        self._clock = clock
        self._tokens: dict[str, Token] = {}
        self._lock = threading.Lock()

    def authenticate(self, form: Mapping[str, str]) -> dict[str, object]:
        """The `/authenticate` exchange: form fields in camelCase or snake_case."""
        grant = _field(form, "grantType", "grant_type")
        client_id = _field(form, "clientId", "client_id")
        client_secret = _field(form, "clientSecret", "client_secret")
        scope = _field(form, "scope", "scope")
        if grant != GRANT_TYPE:
            raise AuthError(
                f"grantType must be {GRANT_TYPE!r}", status=400, code="UNSUPPORTED_GRANT_TYPE"
            )
        expected = self.credentials
        id_ok = hmac.compare_digest(client_id.encode(), expected.client_id.encode())
        secret_ok = hmac.compare_digest(client_secret.encode(), expected.client_secret.encode())
        if not (id_ok and secret_ok):
            raise AuthError("invalid client credentials", code="INVALID_CLIENT")
        if scope and scope != expected.scope:
            raise AuthError("invalid scope for this client", code="INVALID_SCOPE")
        token = self.issue(client_id)
        return {
            "access_token": token.access_token,
            "token_type": TOKEN_TYPE,
            "expires_in": int(self.ttl),
            "scope": expected.scope,
            "jti": token.jti,
            "client_id": client_id,
            "concern_id": expected.concern_id,
            "details": {},
        }

    def issue(self, client_id: str) -> Token:
        now = self._clock()
        token = Token(secrets.token_urlsafe(32), str(uuid.uuid4()), client_id, now + self.ttl)
        with self._lock:
            expired = [k for k, t in self._tokens.items() if t.expires_at <= now]
            for key in expired:
                del self._tokens[key]
            self._tokens[token.access_token] = token
        return token

    def check(self, header: str | None) -> Token:
        """Validate an `Authorization: Bearer <token>` header; AuthError says why not."""
        if not header:
            raise AuthError("missing Authorization header")
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() != TOKEN_TYPE.lower() or not value.strip():
            raise AuthError("Authorization header must be '<token_type> <access_token>'")
        with self._lock:
            token = self._tokens.get(value.strip())
        if token is None:
            raise AuthError("invalid access token", code="INVALID_TOKEN")
        if token.expires_at <= self._clock():
            raise AuthError("access token expired", code="TOKEN_EXPIRED")
        return token
