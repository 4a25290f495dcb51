"""Start the sandbox: in a background thread for tests and the pipeline, or in the foreground.

`run_sandbox()` binds a free loopback port itself (so the URL is known before uvicorn starts),
runs `uvicorn.Server` in a daemon thread and stops it on exit. `serve()` is the `python -m
sandbox.runner` entry point for a developer who wants to poke at the service with curl.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette

from sandbox.areas import AreaRefusals
from sandbox.encode import DEFAULT_CACHE_BYTES
from sandbox.faults import Faults
from sandbox.protocol import World
from sandbox.server import ADMIN_PREFIX, SERVICE_PREFIX, create_app
from sandbox.settings import DEFAULT_HOST, PROFILES, SandboxSettings

STARTUP_TIMEOUT = 30.0
SHUTDOWN_TIMEOUT = 10.0


@dataclass
class SandboxHandle:
    """What a caller needs to talk to a running sandbox."""

    base_url: str
    admin_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str
    world: World
    settings: SandboxSettings
    app: Starlette = field(repr=False)

    @property
    def faults(self) -> Faults:
        """Change faults in-process: `handle.faults.configure({"http_500": 0.2})`."""
        return self.app.state.service.faults

    @property
    def areas(self) -> AreaRefusals:
        """Refuse areas to the client in-process: `handle.areas.configure({"owners": 403})`."""
        return self.app.state.service.areas

    def stats(self) -> dict[str, Any]:
        """The same figures as `GET /_admin/stats`, read in-process."""
        service = self.app.state.service
        return {**service.stats.snapshot(), "faults": service.faults.describe()}

    def reset_stats(self) -> None:
        self.app.state.service.stats.reset()

    def configure_late_events(
        self, share: float, lag_seconds: float | None = None
    ) -> dict[str, Any]:
        """Change the late-visible events setting in-process (see `SandboxSettings`)."""
        return configure_late_events(self.world, share, lag_seconds)


def configure_late_events(
    world: World, share: float, lag_seconds: float | None = None
) -> dict[str, Any]:
    """Apply the late-visible events setting to a world that supports it (ValueError if not)."""
    configure = getattr(world, "configure_late_events", None)
    if configure is None:
        raise ValueError("this world cannot delay events (no configure_late_events)")
    return configure(share, lag_seconds)


def attach_webhooks(world: World, url: str | None, secret: str | None) -> Any:
    """Start a webhook sender for `url` and hand it to the world; None when no URL is given.

    The world pushes reservation webhooks through it (sandbox/webhooks.py) once it has been given
    the sender with `world.attach_webhooks(sender)`.
    """
    if not url:
        return None
    if not secret:
        raise ValueError("a webhook URL needs a whsec_... secret")
    from sandbox.webhooks import WebhookSender

    sender = WebhookSender(url, secret)
    if not hasattr(world, "attach_webhooks"):
        sender.close()
        raise ValueError("this world cannot push webhooks (no attach_webhooks)")
    world.attach_webhooks(sender)
    return sender


def default_world(settings: SandboxSettings) -> World:
    """The generated world (imported lazily: building it is the expensive part)."""
    from sandbox.world import World as GeneratedWorld

    return GeneratedWorld(
        seed=settings.seed,
        scale=settings.scale,
        late_event_share=settings.late_event_share,
        late_event_lag=settings.late_event_lag_seconds,
    )


def profiled(world: World, settings: SandboxSettings) -> World:
    """The world as the settings' profile serves it: the strict profile wraps it in a
    `StrictWorld` (records shaped as the real service's; docs/sandbox.md)."""
    if not settings.strict:
        return world
    from sandbox.strict import StrictWorld

    return world if isinstance(world, StrictWorld) else StrictWorld(world, settings.seed)


class _QuietDrops(logging.Filter):
    """Drop uvicorn's error line for connections the `drop` fault closes on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing response" not in record.getMessage()


def _config(app: Starlette, settings: SandboxSettings, log_level: str) -> uvicorn.Config:
    logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
    # httptools and uvloop come with uvicorn[standard] (a dependency of dagster-webserver);
    # named explicitly so that a missing one is a visible fallback, not a silent one.
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=http,
        loop=loop,
        lifespan="off",
        access_log=False,
        log_level=log_level,
        timeout_graceful_shutdown=1,
        date_header=False,  # the app states the world's clock instead (sandbox.server.clock)
    )


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


@contextmanager
def run_sandbox(
    settings: SandboxSettings | None = None,
    world: World | None = None,
    *,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
) -> Iterator[SandboxHandle]:
    """Serve the sandbox on loopback in a background thread for the duration of the block."""
    settings = settings or SandboxSettings()
    if world is None:
        world = default_world(settings)
    elif settings.late_event_share > 0:  # a caller's world: apply the setting when asked for
        configure_late_events(world, settings.late_event_share, settings.late_event_lag_seconds)
    world = profiled(world, settings)
    app = create_app(world, settings)
    if settings.warm_cache:
        app.state.service.warm_cache()
    app.state.service.start_encode_pool(settings.encode_workers)  # forks: before any thread
    sender = attach_webhooks(world, webhook_url, webhook_secret)
    sock = _bind(settings.host, settings.port)
    host, port = sock.getsockname()[:2]
    server = uvicorn.Server(_config(app, settings, "warning"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"sandbox-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError("sandbox server did not start")
        time.sleep(0.01)
    root = f"http://{host}:{port}"
    try:
        yield SandboxHandle(
            base_url=root + SERVICE_PREFIX,
            admin_url=root + ADMIN_PREFIX,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            scope=settings.scope,
            world=world,
            settings=settings,
            app=app,
        )
    finally:
        server.should_exit = True
        thread.join(SHUTDOWN_TIMEOUT)
        sock.close()
        app.state.service.close()
        if sender is not None:
            sender.close()


def serve(
    settings: SandboxSettings | None = None,
    *,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
) -> None:
    """Run in the foreground until Ctrl-C, printing where and how to connect."""
    settings = settings or SandboxSettings()
    world = profiled(default_world(settings), settings)
    app = create_app(world, settings)
    if settings.warm_cache:
        app.state.service.warm_cache()
    app.state.service.start_encode_pool(settings.encode_workers)  # forks: before any thread
    sender = attach_webhooks(world, webhook_url, webhook_secret)
    sock = _bind(settings.host, settings.port)
    host, port = sock.getsockname()[:2]
    root = f"http://{host}:{port}"
    print(f"sandbox base URL : {root}{SERVICE_PREFIX}")
    print(f"admin            : {root}{ADMIN_PREFIX}/stats  (OpenAPI: {root}/openapi.json)")
    print(f"client id        : {settings.client_id}")
    print(f"client secret    : {settings.client_secret}")
    print(f"scope            : {settings.scope}")
    print(f"profile          : {settings.profile}")
    print("point reservoir at it (in this shell, or in .env without 'export'):")
    print(f"  export RESERVOIR_BASE_URL={root}{SERVICE_PREFIX}")
    print(f"  export RESERVOIR_CLIENT_ID={settings.client_id}")
    print(f"  export RESERVOIR_CLIENT_SECRET={settings.client_secret}")
    print(f"  export RESERVOIR_SCOPE={settings.scope}")
    print(f"move its clock: reservoir sandbox advance --url {root}{ADMIN_PREFIX} --hours 24")
    if webhook_url:
        print(f"webhooks         : {webhook_url}")
    try:
        uvicorn.Server(_config(app, settings, "info")).run(sockets=[sock])
    finally:
        app.state.service.close()
        if sender is not None:
            sender.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the reservation-service sandbox.")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", default="small")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument(
        "--encode-cache-mb",
        type=float,
        default=DEFAULT_CACHE_BYTES / 2**20,
        help="encoded records kept in memory (0 = no cache)",
    )
    parser.add_argument(
        "--encode-workers",
        type=int,
        default=0,
        help="processes that encode cold pages of the generated world (0: none)",
    )
    parser.add_argument(
        "--warm-cache", action="store_true", help="encode the pipeline's lists before serving"
    )
    parser.add_argument(
        "--late-event-share",
        type=float,
        default=0.0,
        help="share of new events that join /events only after a lag (default 0: none)",
    )
    parser.add_argument(
        "--late-event-lag-seconds",
        type=float,
        default=300.0,
        help="how far the clock must move past a late event's eventDate before it is visible",
    )
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default="default",
        help="strict: behave like the real service where its notes speak (docs/sandbox.md)",
    )
    parser.add_argument(
        "--client-secret", default=None, help="fixed secret (default: random, printed at start)"
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME=RATE",
        help="opt-in fault, e.g. --fault http_503=0.05 (repeatable)",
    )
    parser.add_argument(
        "--refuse",
        action="append",
        default=[],
        metavar="AREA=STATUS",
        help="an area the client's credentials do not cover, e.g. --refuse owners=403 (no "
        "permission) or --refuse companies=404 (module not enabled); repeatable",
    )
    args = parser.parse_args(argv)
    refused = {}
    for item in args.refuse:
        area, _, status = item.partition("=")
        refused[area] = int(status or 403)
    faults = {}
    for item in args.fault:
        name, _, rate = item.partition("=")
        faults[name] = float(rate)
    settings = SandboxSettings(
        host=args.host,
        port=args.port,
        seed=args.seed,
        scale=args.scale,
        latency_ms=args.latency_ms,
        faults=faults,
        encode_cache_bytes=int(args.encode_cache_mb * 2**20),
        warm_cache=args.warm_cache,
        encode_workers=args.encode_workers,
        late_event_share=args.late_event_share,
        late_event_lag_seconds=args.late_event_lag_seconds,
        profile=args.profile,
        refused_areas=refused,
    )
    if args.client_secret:
        settings.client_secret = args.client_secret
    serve(settings)


if __name__ == "__main__":
    main()
