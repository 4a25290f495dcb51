"""Keeping the client secret and bearer tokens out of logs, reprs and exceptions.

`Secret` wraps a string so that printing a config or an exception never shows it; the value is
only reachable through `reveal()`. `RedactingFilter` is a logging filter installed on the client's
own logger and on httpx/httpcore: it scrubs every registered secret value plus anything that looks
like an Authorization header, a bearer token or a credential form field.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

REDACTED = "***"

# Values scrubbed from every log record that passes the filter. Registered by Secret.reveal
# users (config and token manager); kept as a set of plain strings under a lock.
_known: set[str] = set()
_known_lock = threading.Lock()

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)([^'\",}\r\n]+)"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1" + REDACTED),
    (
        re.compile(
            r"(?i)((?:client_?secret|clientSecret|access_token|accessToken|secret|password)"
            r"['\"]?\s*[:=]\s*['\"]?)([^&'\",}\s]+)"
        ),
        r"\1" + REDACTED,
    ),
)


class Secret:
    """A string that shows as `***` everywhere except through `reveal()`."""

    __slots__ = ("_value",)

    def __init__(self, value: str | Secret):
        raw = value.reveal() if isinstance(value, Secret) else str(value)
        object.__setattr__(self, "_value", raw)
        register_secret(raw)

    def reveal(self) -> str:
        """The real value; use it only where it goes on the wire."""
        return self._value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Secret is immutable")

    def __repr__(self) -> str:
        return f"Secret('{REDACTED}')"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Secret):
            return self._value == other._value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self) -> Any:
        # Pickling (e.g. Dagster run config) must not silently write the value.
        raise TypeError("Secret values are not picklable")


def register_secret(value: str | None) -> None:
    """Scrub `value` from every record that passes a RedactingFilter (ignores short values)."""
    if value and len(value) >= 6:
        with _known_lock:
            _known.add(value)


def forget_secret(value: str | None) -> None:
    """Stop scrubbing an expired token (keeps the set from growing over a long process)."""
    if value:
        with _known_lock:
            _known.discard(value)


def redact(text: str) -> str:
    """`text` with registered secrets and credential-looking fragments replaced by ***."""
    with _known_lock:
        known = sorted(_known, key=len, reverse=True)
    for value in known:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def redact_headers(headers: Any) -> dict[str, str]:
    """A loggable copy of request headers with Authorization and cookies hidden."""
    out: dict[str, str] = {}
    for key, value in dict(headers).items():
        lowered = key.lower()
        if lowered in {"authorization", "cookie", "set-cookie", "proxy-authorization"}:
            out[key] = REDACTED
        else:
            out[key] = redact(str(value))
    return out


class RedactingFilter(logging.Filter):
    """Rewrites the message of every record so secrets cannot reach a handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is not our concern; keep the record
            return True
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg = cleaned
            record.args = None
        return True


_FILTER = RedactingFilter()
_installed: set[str] = set()


def install_log_redaction(*logger_names: str) -> None:
    """Attach the redacting filter (once) to the client's and the HTTP libraries' loggers.

    Called when a client is built, not at import, so importing the package has no side effects.
    """
    names = logger_names or ("service", "httpx", "httpcore", "stamina")
    with _known_lock:
        for name in names:
            if name in _installed:
                continue
            logging.getLogger(name).addFilter(_FILTER)
            _installed.add(name)


# The loggers whose records may carry a request or a response: redacted before they are written.
CLIENT_LOGGERS = (
    "service",
    "service.client",
    "service.paging",
    "service.api",
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "aiohttp.client",
    "aiohttp.internal",
    "stamina",
)
