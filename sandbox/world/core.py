"""The `World`: a seeded simulation of the reservation service behind `sandbox.protocol.World`."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from sandbox.protocol import COLLECTIONS, WorldError
from sandbox.world.block import Section
from sandbox.world.generate import GenerateMixin
from sandbox.world.reservations import ReservationsMixin
from sandbox.world.store import Record, Table
from sandbox.world.views import RecordsView

from .addons import AddonsMixin
from .allocator import generating
from .allotments import AllotmentsMixin
from .billing import BillingMixin
from .bulk import BulkMixin
from .cancellation import CancellationMixin
from .channel_details import ChannelDetailsMixin
from .clock import DEFAULT_NOW, ms, parse_datetime
from .customers import CustomersMixin
from .events import DEFAULT_LATE_EVENT_LAG, EventsMixin
from .finance import FinanceMixin
from .offers import OffersMixin
from .operations import OperationsMixin
from .owners import OwnersMixin
from .pricing import PricingMixin
from .reference import SCALES, ReferenceMixin
from .reference_changes import ReferenceChangesMixin
from .rentability import RentabilityMixin
from .simulate import SimulateMixin
from .truth import TruthMixin
from .truth_cancellations import TruthCancellationsMixin

# First ids per collection: distinct ranges make mix-ups between id kinds visible in tests.
START_IDS = {"reservations": 100001, "customers": 5001, "reservedresources": 1, "billlines": 1}


class World(
    ReferenceMixin,
    PricingMixin,
    BillingMixin,
    CancellationMixin,
    FinanceMixin,
    OwnersMixin,
    ChannelDetailsMixin,
    AddonsMixin,
    OffersMixin,
    CustomersMixin,
    EventsMixin,
    ReservationsMixin,
    OperationsMixin,
    AllotmentsMixin,
    RentabilityMixin,
    ReferenceChangesMixin,
    GenerateMixin,
    BulkMixin,
    SimulateMixin,
    TruthMixin,
    TruthCancellationsMixin,
):
    """Deterministic for (seed, scale, now): the same calls give the same records and events.

    Records are wire dicts; callers must not mutate them. The generated history is kept as
    columns (`store.Block`, built by `bulk.py`) and rendered on each read, so two reads of an
    untouched generated record give equal but distinct dicts; `res` holds only the reservations
    that are live Python objects (booked later, or thawed by a change: see `_res`).
    All public methods take `self.lock`, because the HTTP server calls in from its own thread.
    """

    _COUNTERS = (
        "n_created",
        "n_moves",
        "n_payments",
        "n_extended",
        "n_archived",
        "webhooks_sent",
        "n_operations",
    )

    def __init__(
        self,
        seed: int = 7,
        scale: str = "small",
        now: datetime | str | None = None,
        *,
        late_event_share: float = 0.0,
        late_event_lag: timedelta | float = DEFAULT_LATE_EVENT_LAG,
    ) -> None:
        """`late_event_share`/`late_event_lag` (a timedelta or seconds): that share of the events
        made after generation joins the feed only `lag` after its eventDate (see events.py)."""
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {sorted(SCALES)}")
        self.lock = threading.RLock()
        self.seed = seed
        self.scale = scale
        self.now: datetime = ms(parse_datetime(now)) if now is not None else DEFAULT_NOW
        self.rng = np.random.default_rng(seed)
        self.py = random.Random(seed)
        self.t: dict[str, Table] = {
            name: Table(name, START_IDS.get(name, 1)) for name in COLLECTIONS
        }
        self.res: dict[int, Any] = {}  # live reservations (the bulk ones: see bulk.py)
        self._fz: Any = None
        self._bulk_postings: Any = None
        self.cust_res: dict[int, list[int]] = {}
        self._cust_ids: list[int] = []
        self._dups: list[tuple[int, int]] = []
        self.merges: list[tuple[int, int, str]] = []
        self.deleted: list[tuple[int, list]] = []
        self.heap: list[tuple] = []
        self._seq = 0
        self._bill_seq = 0
        self._reports: dict[tuple, dict] = {}
        self._report_numbers: dict[int, int] = {}
        self._post_buffer: list[tuple] = []
        self._event_buffer: list[tuple] = []
        self._webhooks = None
        self._init_late_events(late_event_share, late_event_lag)
        self.generation = 0  # +1 per public mutation; the HTTP layer's encode cache keys on it
        for k in self._COUNTERS:
            setattr(self, k, 0)
        self._event_window = self.now - timedelta(days=7)
        self._generating = True
        with generating(), self.lock:  # the allocator for generation (allocator.py)
            self._generate()
        self._generating = False

    # the protocol ------------------------------------------------------------------------------
    def _table(self, collection: str) -> Table:
        try:
            return self.t[collection]
        except KeyError:
            raise WorldError(f"unknown collection {collection!r}") from None

    def keys(self, collection: str) -> Sequence[int]:
        with self.lock:
            return self._table(collection).key_list()

    def records(self, collection: str) -> Sequence[Record]:
        with self.lock:
            return self._table(collection).records()

    def get(self, collection: str, key: int) -> Record | None:
        with self.lock:
            return self._table(collection).get(key)

    def get_many(self, collection: str, keys: Sequence[int]) -> list[Record | None]:
        """`[get(collection, k) for k in keys]`, the columns' records rendered in one batch."""
        with self.lock:
            return self._table(collection).get_many(keys)

    def children(self, collection: str, parent_key: int) -> list[Record]:
        with self.lock:
            tbl = self._table(collection)
            if tbl.link is None:
                raise WorldError(f"{collection} is not a child collection")
            return tbl.children(parent_key)

    def child_view(self, collection: str, parent_key: int) -> Sequence[Record]:
        """`children(collection, parent_key)` as a lazy view with its keys (`key_list`)."""
        with self.lock:
            tbl = self._table(collection)
            if tbl.link is None:
                raise WorldError(f"{collection} is not a child collection")
            return tbl.child_view(parent_key)

    def children_many(self, collection: str, parent_keys: Sequence[int]) -> list[list[Record]]:
        """`[children(collection, k) for k in parent_keys]`, rendered in one batch."""
        with self.lock:
            tbl = self._table(collection)
            if tbl.link is None:
                raise WorldError(f"{collection} is not a child collection")
            return tbl.children_many(parent_keys)

    def encode_with_children(
        self,
        collection: str,
        page: Sequence[Record],
        sections: Sequence[tuple[str, str, str | None, Any]],
    ) -> Sequence[bytes | None] | None:
        """The JSON of each record of `page` followed by its child sections, encoded from the
        frozen columns without building dicts (see `RecordsView.encode_with_children`): a
        section `(key, child collection, field, value)` holds the children whose `field`
        equals `value` (all when `field` is None). None for a record the columns cannot give
        (the caller builds it), or for the whole page when it is not a lazy page of
        `collection`'s records (`sandbox.query.LazyPage`)."""
        with self.lock:
            tbl = self._table(collection)
            source = getattr(page, "source", None)
            positions = getattr(page, "positions", None)
            if (
                not isinstance(source, RecordsView)
                or tbl.block is None
                or source.block is not tbl.block
                or positions is None
            ):
                return None
            spec: list[Section] = []
            for key, child, field, value in sections:
                child_tbl = self._table(child)
                if child_tbl.link is None:
                    raise WorldError(f"{child} is not a child collection")
                spec.append((key, child_tbl, field, value))
            return source.encode_with_children(positions, spec)

    # mutations: each bumps `generation` (under the lock) once it is done --------------------------
    # Records are the wire dicts and are changed in place, so the server's cache of encoded
    # records (sandbox/encode.py) is valid for one generation. Every public method that changes
    # records must go through `_mutation`.
    # Late-visible events whose time has come join the feed at the end of every mutation (the
    # clock only moves inside one), before the generation moves.
    def _mutation(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            try:
                return method(*args, **kwargs)
            finally:
                self._release_due_events(self.now)
                self.generation += 1

    def configure_late_events(
        self, share: float, lag: timedelta | float | None = None
    ) -> dict[str, Any]:
        return self._mutation(super().configure_late_events, share, lag)

    def advance(self, hours: float) -> dict[str, Any]:
        return self._mutation(super().advance, hours)

    def churn(self, collection: str) -> dict[str, Any]:
        return self._mutation(super().churn, collection)

    def create_reservation(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._mutation(super().create_reservation, body)

    def update_reservation(self, reservation_id: int, body: dict[str, Any]) -> dict[str, Any]:
        return self._mutation(super().update_reservation, reservation_id, body)

    def pay(self, *args: Any, **kwargs: Any) -> Any:
        return self._mutation(super().pay, *args, **kwargs)

    def change_stay(self, reservation_id: int, departure_date: Any) -> dict[str, Any]:
        return self._mutation(super().change_stay, reservation_id, departure_date)

    def merge_customers(self, *args: Any, **kwargs: Any) -> Any:
        return self._mutation(super().merge_customers, *args, **kwargs)

    # beyond the protocol -------------------------------------------------------------------------
    def details(self, collection: str, key: int) -> Record | None:
        """A record plus its detail sections (accommodation types: capacities)."""
        with self.lock:
            rec = self._table(collection).get(key)
            if rec is None:
                return None
            out = dict(rec)
            if collection == "accommodationtypes":
                out["capacities"] = self.capacities(key)
            return out

    def capacities(self, resource_id: int) -> list[Record]:
        """Capacities of an accommodation type (the details section CAPACITIES)."""
        with self.lock:
            return [dict(c) for c in self._capacities.get(int(resource_id), [])]

    def attach_webhooks(self, sender: Any) -> None:
        """Use an already started sender (sandbox.runner builds one from its settings)."""
        with self.lock:
            if self._webhooks is not None and self._webhooks is not sender:
                self._webhooks.close()
            self._webhooks = sender

    def configure_webhooks(self, url: str | None, secret: str | None = None, **options: Any) -> Any:
        """Push reservation webhooks to `url`, signed with `secret` (None url = stop pushing)."""
        from sandbox.webhooks import WebhookSender

        with self.lock:
            if self._webhooks is not None:
                self._webhooks.close()
                self._webhooks = None
            if url:
                if not secret:
                    raise WorldError("a webhook secret is required")
                self._webhooks = WebhookSender(url, secret, **options)
            return self._webhooks

    @property
    def webhooks(self) -> Any:
        return self._webhooks

    def close(self) -> None:
        """Stop the webhook worker (if any)."""
        if self._webhooks is not None:
            self._webhooks.close()
            self._webhooks = None

    def stats(self) -> dict[str, int]:
        with self.lock:
            return {name: len(tbl) for name, tbl in self.t.items()}
