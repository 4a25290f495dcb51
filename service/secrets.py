"""Keeping the client secret and bearer tokens out of logs, reprs and exceptions.

`Secret` wraps a string so that printing a config or an exception never shows it; the value is
only reachable through `reveal()`. `RedactingFilter` is a logging filter installed on the client's
own logger and on httpx/httpcore: it scrubs every registered secret value plus anything that looks
like an Authorization header, a bearer token or a credential form field.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "***"
# A run of this many characters of a registered secret (in any encoding below) is scrubbed: a
# service that echoes part of a secret, or a message cut in the middle of one, leaks no part
# long enough to guess the rest from. Secrets shorter than twice this are scrubbed whole only.
PARTIAL_RUN = 8

# Values scrubbed from every log record that passes the filter. Registered by Secret.reveal
# users (config and token manager); kept as a set of plain strings under a lock.
_known: set[str] = set()
_known_lock = threading.Lock()

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)([^'\",}\r\n]+)"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1" + REDACTED),
    (
        re.compile(
            r"(?i)((?:client(?:_|%5F)?secret|access(?:_|%5F)?token|secret|password)"
            r"(?:['\"]|%22|%27)?\s*(?:[:=]|%3A|%3D)\s*(?:['\"]|%22|%27)?)"
            r"((?:[^&'\",}\s%]|%[0-9A-Fa-f]{2})+)"
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


def _encodings(value: str) -> set[str]:
    """The forms a secret takes when a URL, a form body, JSON or Basic auth carries it."""
    forms = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]}
    forms.add(quote(quote(value, safe=""), safe=""))  # encoded twice by a proxy or a redirect
    forms.add(base64.b64encode(value.encode()).decode().rstrip("="))
    return {form for form in forms if form}


@lru_cache(maxsize=256)
def _secret_pattern(value: str) -> re.Pattern[str]:
    """Any form of `value` and, for long secrets, any run of PARTIAL_RUN of its characters."""
    pieces: set[str] = set()
    for form in _encodings(value):
        pieces.add(form)
        if len(value) >= 2 * PARTIAL_RUN:
            pieces.update(form[i : i + PARTIAL_RUN] for i in range(len(form) - PARTIAL_RUN + 1))
    return re.compile("|".join(re.escape(p) for p in sorted(pieces, key=len, reverse=True)))


def _scrub(text: str, value: str) -> str:
    """Replace each stretch of `text` covered by pieces of `value` with one ***.

    Pieces overlap ("abcdefghij" is "abcdefgh" and "cdefghij"), so matches are searched from
    every start position and merged; a leaked stretch becomes one *** however long it was.
    """
    pattern = _secret_pattern(value)
    spans: list[list[int]] = []
    match = pattern.search(text)
    while match is not None:
        start, end = match.span()
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
        match = pattern.search(text, start + 1)
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], REDACTED]
        last = end
    out.append(text[last:])
    return "".join(out)


def redact(text: str) -> str:
    """`text` with registered secrets (whole, encoded or in part) and credential-looking
    fragments replaced by ***."""
    with _known_lock:
        known = sorted(_known, key=len, reverse=True)
    for value in known:
        text = _scrub(text, value)
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
