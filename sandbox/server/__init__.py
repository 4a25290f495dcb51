"""The sandbox's HTTP layer: the service's REST interface over a `World` (sandbox/protocol.py).

`create_app(world, settings)` returns a Starlette app. Everything the real service does at the
edge lives here: OAuth2 tokens, the page envelope, filters and sorts, 204 on empty lists, the
per-address concurrency cap (429), latency, opt-in faults and request statistics. The world only
answers "which records exist now".

Request path for `/service/v2/...`, in `ServiceGate` (pure ASGI middleware, so it can count
in-flight requests before routing and break responses on purpose):
throttle -> latency -> faults (429/5xx) -> token check -> slow -> handler -> drop/truncate.
Handlers do their work in the thread pool under `world.lock`, because a scan over 1.5M records
must not stall the event loop (which would also stall every other request's latency sleep).
List pages use a thread of their own (see `ServiceBase.__init__`; one more per encode worker).

Modules:

- `app`: `create_app` and the exception handlers (error bodies);
- `gate`: `ServiceGate` (throttle, latency, faults, auth, stats) and the broken-response sends;
- `routes`: `Service`, the route table combining the handler groups below;
- `base`: `ServiceBase`, the state the groups share (tokens, faults, stats, encode cache);
- `pages`: paged lists and single records (the hot path of a full read);
- `encode_pool`: encode workers, forked copies of the generated world that encode cold batches
  until the world first changes (`SandboxSettings.encode_workers`);
- `views`: endpoint-specific filters, record sources and views, `warm_cache`;
- `handlers`: token, reservation bills/subjects/writes, availability, `/openapi.json`;
- `admin`: `/_admin/...`;
- `common`, `encoding`, `params`, `stats`: constants and error answers, `View`, parameter
  parsing, request counters.
"""

from __future__ import annotations

from sandbox.server.app import create_app
from sandbox.server.common import ACCOMMODATION_SECTIONS as ACCOMMODATION_SECTIONS
from sandbox.server.common import ADMIN_PREFIX, SERVICE_PREFIX, ApiError
from sandbox.server.common import AUTHENTICATE_PATH as AUTHENTICATE_PATH
from sandbox.server.common import BILL_SECTIONS as BILL_SECTIONS
from sandbox.server.common import ERROR_NAMES as ERROR_NAMES
from sandbox.server.common import MAX_ARRIVAL_DAYS as MAX_ARRIVAL_DAYS
from sandbox.server.common import PAYER_TYPES as PAYER_TYPES
from sandbox.server.common import RESERVATION_SECTIONS as RESERVATION_SECTIONS
from sandbox.server.common import TEMPLATE_CACHE_SIZE as TEMPLATE_CACHE_SIZE
from sandbox.server.common import WARM_COLLECTIONS as WARM_COLLECTIONS
from sandbox.server.common import error_body as error_body
from sandbox.server.common import error_response as error_response
from sandbox.server.common import json_response as json_response
from sandbox.server.encoding import View as View
from sandbox.server.encoding import plain_view as plain_view
from sandbox.server.gate import ServiceGate as ServiceGate
from sandbox.server.routes import Service
from sandbox.server.stats import Stats

__all__ = ["ADMIN_PREFIX", "SERVICE_PREFIX", "ApiError", "Service", "Stats", "create_app"]
