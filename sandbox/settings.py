"""What shapes one sandbox instance (below the server and its launcher, which both read it)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from sandbox.encode import DEFAULT_CACHE_BYTES
from sandbox.faults import DEFAULT_MALFORMED_FRACTION, DEFAULT_SLOW_SECONDS

DEFAULT_HOST = "127.0.0.1"
DEFAULT_MAX_PAGE_SIZE = 2000
DEFAULT_MAX_CONCURRENCY = 15
DEFAULT_TOKEN_TTL = 3600.0
# "default": the sandbox as docs/contracts.md describes it; "strict": like the real service
# wherever real-service-notes.md speaks (docs/sandbox.md, "The strict profile").
PROFILES = ("default", "strict")


@dataclass
class SandboxSettings:
    """Everything that shapes one sandbox instance; the secret is random unless given."""

    seed: int = 7
    scale: str = "small"
    host: str = DEFAULT_HOST
    port: int = 0  # 0 = a free port
    latency_ms: float = 0.0
    max_page_size: int = DEFAULT_MAX_PAGE_SIZE
    token_ttl: float = DEFAULT_TOKEN_TTL
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    faults: dict[str, float] = field(default_factory=dict)
    fault_seed: int | None = None  # None = `seed`
    slow_seconds: float = DEFAULT_SLOW_SECONDS
    malformed_fraction: float = DEFAULT_MALFORMED_FRACTION
    client_id: str = "reservoir-sandbox"
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    scope: str = "SBX"
    concern_id: int = 1
    encode_cache_bytes: int = DEFAULT_CACHE_BYTES  # encoded records kept per world generation
    encode_from_columns: bool = True  # False: render every record and encode it with orjson
    warm_cache: bool = False  # encode the pipeline's lists before serving (slower start)
    # Processes forked after generation that encode cold pages of the generated world, until it
    # first changes (sandbox/server/encode_pool.py); 0: all encoding in the server's process.
    encode_workers: int = 0
    # Late-visible events (off by default): this share of the events made after generation gets
    # its eventId at change time but joins /events only once the world's clock has moved this
    # many seconds past its eventDate (sandbox/world/events.py).
    late_event_share: float = 0.0
    late_event_lag_seconds: float = 300.0
    profile: str = "default"  # one of PROFILES
    # Areas the client's credentials do not cover (sandbox/areas.py): the first path segment
    # under /service/v2 -> 403 (permission not granted) or 404 (module not enabled)
    refused_areas: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {self.profile!r}")

    @property
    def strict(self) -> bool:
        return self.profile == "strict"
