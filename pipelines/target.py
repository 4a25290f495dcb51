"""The service a run targets: the configured one, or the embedded sandbox in a child process;
its one-request preflight; and the one-line `RunError` every run path reports.

Apart from `pipelines.runner` so that `reservoir run` can check a configured service before it
imports Dagster and the code location (seconds of CPU): a wrong credential, an unreachable host
or a plain-HTTP remote URL is then one line in about a second.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pipelines.settings import Settings


class RunError(Exception):
    """The run could not start or did not succeed; the message says why in one line."""


@dataclass(frozen=True)
class ServiceTarget:
    base_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str
    # An override of the business date (ISO); None = the service's date, which every run reads
    # from the service (the embedded sandbox's clock included): never this machine's clock.
    today: str | None = None
    sandbox: Any = None  # the sandbox handle when embedded

    @property
    def source(self) -> str:
        """What the lake records as its source (the embedded sandbox by its world)."""
        if self.sandbox is not None:
            world = self.sandbox.settings
            profile = "" if world.profile == "default" else f", profile {world.profile}"
            return f"the embedded sandbox (seed {world.seed}, scale {world.scale}{profile})"
        return f"the service at {self.base_url} (scope {self.scope or '-'})"

    def client_config(self, settings: Settings, **overrides: Any) -> Any:
        """The client's settings for this service under the run's limits, with `overrides`
        (a probe's short retries and timeouts)."""
        from service.config import ServiceConfig

        return ServiceConfig(
            base_url=self.base_url,
            client_id=self.client_id,
            client_secret=self.client_secret,
            scope=self.scope,
            max_concurrency=settings.max_concurrency,
            max_requests=settings.max_requests,
            max_response_bytes=round(settings.max_response_mb * 1024 * 1024),
            **{**settings.client_options, **overrides},  # page sizes, timeout, auth style, locale
        )

    def wait_ready(self) -> None:
        """Until the embedded sandbox serves: at once for a configured service and for a sandbox
        that already does (`service_target(..., wait=False)` starts one without waiting)."""
        wait = getattr(self.sandbox, "wait_ready", None)
        if wait is None:
            return
        from sandbox.process import SandboxStartError

        try:
            wait()
        except SandboxStartError as exc:
            raise RunError(f"{exc}; nothing was written") from None

    @classmethod
    def from_sandbox(cls, handle: Any) -> ServiceTarget:
        """A running sandbox (`sandbox.runner.SandboxHandle`, or `sandbox.process.SandboxProcess`
        served by a child process) as the run's service."""
        return cls(
            handle.base_url,
            handle.client_id,
            handle.client_secret,
            handle.scope,
            sandbox=handle,
        )


def quiet_retries() -> None:
    """No line per client retry on the terminal: the client counts its retries in the run's
    metadata, and a line each would bury the progress display and the one-line errors."""
    import stamina.instrumentation

    stamina.instrumentation.set_on_retry_hooks([])


def configured_target(settings: Settings) -> ServiceTarget | None:
    """The service the settings name (`RESERVOIR_BASE_URL`), or None for the embedded sandbox."""
    if settings.uses_sandbox:
        return None
    assert settings.base_url and settings.client_id and settings.client_secret
    return ServiceTarget(
        settings.base_url, settings.client_id, settings.client_secret, settings.scope or ""
    )


@contextlib.contextmanager
def service_target(
    settings: Settings, *, scale: str, seed: int, profile: str = "default", wait: bool = True
) -> Iterator[ServiceTarget]:
    """The configured service, or an embedded sandbox for the duration of the block. With
    `wait=False` the block starts while the sandbox still generates its world (a large one:
    ~30 CPU s), so the caller's own start-up overlaps it; call `wait_ready()` before a request."""
    configured = configured_target(settings)
    if configured is not None:
        yield configured
        return
    # The CLI is the sandbox's starter. Its own process keeps the world's memory and its GIL out
    # of the run's, so serving and landing use both cores (sandbox/process.py).
    from sandbox.encode import READ_ONCE_CACHE_BYTES
    from sandbox.process import SandboxStartError, run_sandbox_process
    from sandbox.settings import SandboxSettings

    # A run reads the world once: the encode cache needs room for read-ahead batches only
    # (1 GiB would put a large world's sandbox over 3 GB; docs/benchmarks.md, session 10).
    sandbox = SandboxSettings(
        seed=seed, scale=scale, profile=profile, encode_cache_bytes=READ_ONCE_CACHE_BYTES
    )
    try:
        with run_sandbox_process(sandbox, wait=wait) as sb:
            yield ServiceTarget.from_sandbox(sb)
    except SandboxStartError as exc:  # only starting raises it
        raise RunError(f"{exc}; nothing was written") from None


SECRET_ENV = "RESERVOIR_CLIENT_SECRET"


@contextlib.contextmanager
def secret_in_environment(secret: str) -> Iterator[None]:
    """The run's client secret in `RESERVOIR_CLIENT_SECRET` for the duration of the run.

    Resources take the secret as `dg.EnvVar`, resolved when the run starts: a literal value
    would be written into the job snapshot in Dagster's run storage. Against the real service the
    variable already holds it; for the embedded sandbox it is set here and restored after.
    """
    saved = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = secret
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(SECRET_ENV, None)
        else:
            os.environ[SECRET_ENV] = saved


PREFLIGHT_RETRIES = 2
PREFLIGHT_TIMEOUT_SECONDS = 10.0


def preflight(settings: Settings, target: ServiceTarget) -> None:
    """One authenticate and one small request before the job starts.

    A wrong credential, an unreachable host or a plain-HTTP remote URL then ends the command in
    a second with one line, instead of every asset spending the client's retry budget first.
    """
    from service.api import ReservationService
    from service.errors import ServiceError, ServiceUnavailable
    from service.sync import run

    try:
        config = target.client_config(
            settings,
            max_retries=PREFLIGHT_RETRIES,
            max_retry_seconds=PREFLIGHT_TIMEOUT_SECONDS,
            timeout=PREFLIGHT_TIMEOUT_SECONDS,
        )

        async def probe() -> None:
            async with ReservationService.connect(config) as service:
                await service.latest_event_id()

        run(probe())
    except ServiceUnavailable as exc:
        if exc.status is not None:  # it answered, with 429 or 5xx every time
            raise RunError(
                f"the service at {target.base_url} answered but kept failing ({exc}); nothing "
                "was written, try again later"
            ) from None
        raise RunError(
            f"the service at {target.base_url} did not answer ({exc}); check RESERVOIR_BASE_URL "
            "and that the host is reachable from here"
        ) from None
    except ServiceError as exc:
        raise RunError(f"{exc} (checked before the run; nothing was written)") from None
