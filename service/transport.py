"""The client's HTTP transport: httpx's API on aiohttp's connections.

httpx's own transport parses HTTP in pure Python (h11 through httpcore and anyio). In a full read
at medium scale (~805 MB of JSON) that cost ~2.9 s of client CPU, more than a third of the
client's work: about 280 MB received per CPU second. `httpx_aiohttp.AiohttpTransport` keeps the
httpx API the rest of the package is written against (requests, responses, event hooks, and
`httpx.MockTransport` / the replay transport in tests) and receives with aiohttp's C parser: about
900 MB per CPU second on the same pages (`docs/benchmarks.md`, "The client's HTTP transport").

What this module adds to the library's transport:
- the aiohttp session is made inside the running event loop, on first use, with one connection
  per allowed request in flight and the process-wide TLS context;
- a proxy set in the environment is honoured, as httpx's own transport does, read once per client;
- aiohttp's silent repeat of a request whose connection dropped is off: every request sent is
  one the client counted and chose to retry;
- aiohttp's errors are mapped to the httpx error that names them (`_remapped`): the library
  reports every aiohttp connection error, a refused connection or one the server closed before
  answering among them, as `httpx.ConnectTimeout`. Retrying is the same either way (GETs are
  retried on every transport error); the reason a retry is counted under is not.
"""

from __future__ import annotations

import functools
import ssl
import urllib.request
from collections.abc import AsyncIterator
from typing import NoReturn

import aiohttp
import certifi
import httpx
from httpx_aiohttp import AiohttpTransport
from httpx_aiohttp.transport import AiohttpResponseStream

# Idle connections are closed after this long: below the 5 s after which uvicorn (the sandbox) and
# many servers close them, so that a connection is not reused just as the server closes it. At
# 15 s (aiohttp's default) a read of the large sandbox met such closes and paid a retry each.
KEEPALIVE_SECONDS = 4.0


def environment_proxy(base_url: str) -> httpx.Proxy | None:
    """The proxy the environment (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, ...) sets for
    `base_url`, read once per client. aiohttp's `trust_env` would read it, and `~/.netrc`, on
    every request: ~4 ms more per request in a loopback read."""
    url = httpx.URL(base_url)
    if not url.host or urllib.request.proxy_bypass(url.host):
        return None
    proxies = urllib.request.getproxies()
    value = proxies.get(url.scheme) or proxies.get("all")
    return httpx.Proxy(value) if value else None


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context per process (what httpx builds by default: the certifi CA bundle).
    Building one loads the bundle, ~30 ms of CPU, and a run opens a client per table."""
    return ssl.create_default_context(cafile=certifi.where())


def _cause(exc: Exception) -> BaseException | None:
    """The aiohttp error: `exc` itself, or the one the library mapped (`__cause__`)."""
    return exc if isinstance(exc, aiohttp.ClientError) else exc.__cause__


def _raise_remapped(exc: Exception, request: httpx.Request) -> NoReturn:
    """Raise `exc` as the httpx error that names it (unchanged when it already is)."""
    mapped = _remapped(exc, request)
    if mapped is exc:
        raise exc
    raise mapped from _cause(exc)


def _remapped(exc: Exception, request: httpx.Request) -> Exception:
    """The httpx error for an aiohttp error, raw or as the library mapped it (`__cause__`)."""
    cause = _cause(exc)
    if not isinstance(cause, aiohttp.ClientError):
        return exc
    kind: type[httpx.TransportError]
    if isinstance(cause, aiohttp.ConnectionTimeoutError):
        kind = httpx.ConnectTimeout
    elif isinstance(cause, aiohttp.SocketTimeoutError):
        kind = httpx.ReadTimeout
    elif isinstance(cause, aiohttp.ServerTimeoutError):
        kind = httpx.TimeoutException
    elif isinstance(cause, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
        kind = httpx.ProxyError
    elif isinstance(cause, aiohttp.ClientConnectorError):
        kind = httpx.ConnectError  # refused, unreachable, TLS handshake or certificate
    elif isinstance(cause, aiohttp.ServerDisconnectedError):
        kind = httpx.RemoteProtocolError  # closed before or while answering
    elif isinstance(cause, aiohttp.ClientPayloadError | aiohttp.ClientOSError):
        kind = httpx.ReadError  # body cut short, connection reset
    elif isinstance(cause, aiohttp.ClientConnectionError):
        kind = httpx.NetworkError
    else:
        kind = httpx.RemoteProtocolError  # a malformed status line or headers, and the rest
    if type(exc) is kind:
        return exc  # already right
    return kind(str(cause) or type(cause).__name__, request=request)


class _WholeBody(httpx.AsyncByteStream):
    """The response body in one piece, read by aiohttp, with errors remapped like the request's.

    The library's stream hands httpx the body in 16 KiB chunks through four layers of async
    generators, ~50,000 chunks in a full read at medium scale and ~0.8 s of the client's CPU
    there; the client always reads whole bodies (`Response.aread`), so aiohttp's `read()` gives
    it the body at once.
    """

    def __init__(
        self, inner: AiohttpResponseStream, request: httpx.Request, max_body: int | None
    ) -> None:
        self._inner = inner
        self._request = request
        self._max_body = max_body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            body = await self._read()
        except (httpx.TransportError, aiohttp.ClientError) as exc:
            _raise_remapped(exc, self._request)
        if body:
            yield body

    async def _read(self) -> bytes:
        """The whole (decompressed) body; stops reading once it passes `max_body` bytes and
        hands what it has on, so the client's own count refuses it without holding more."""
        response = self._inner._aiohttp_response
        if self._max_body is None:
            return await response.read()
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_any():
            chunks.append(chunk)
            size += len(chunk)
            if size > self._max_body:
                response.close()  # the connection is not reused for the rest of the body
                break
        return b"".join(chunks)

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        except (httpx.TransportError, aiohttp.ClientError) as exc:
            _raise_remapped(exc, self._request)


class ServiceTransport(AiohttpTransport):
    """`AiohttpTransport` with a session sized to the concurrency cap and honest error mapping."""

    def __init__(
        self, connections: int, base_url: str | None = None, max_body: int | None = None
    ) -> None:
        self.connections = connections
        self.max_body = max_body
        proxy = environment_proxy(base_url) if base_url else None
        super().__init__(verify=tls_context(), client=self._new_session, proxy=proxy)

    def _new_session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self.connections,
            ssl=self.ssl_context,
            keepalive_timeout=KEEPALIVE_SECONDS,
        )
        session = aiohttp.ClientSession(connector=connector)
        # aiohttp repeats an idempotent request once, unseen, when the connection drops; that
        # request would escape the per-endpoint accounting and the retry budget. The client
        # retries itself (`service.client`), so this is off, as aiohttp's own test client does.
        session._retry_connection = False
        return session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await super().handle_async_request(request)
        except (httpx.TransportError, aiohttp.ClientError) as exc:
            _raise_remapped(exc, request)
        stream = response.stream
        assert isinstance(stream, AiohttpResponseStream)
        response.stream = _WholeBody(stream, request, self.max_body)
        return response
