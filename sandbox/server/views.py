"""Endpoint-specific filters and views (accommodation types, rate types, reservations, bills)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from starlette.requests import Request

from sandbox.filters import Condition, Filters
from sandbox.protocol import COLLECTIONS, Record
from sandbox.server.base import ServiceBase
from sandbox.server.common import (
    ACCOMMODATION_SECTIONS,
    BILL_SECTIONS,
    CHANNEL_SECTIONS,
    RESERVATION_SECTIONS,
    STRICT_RESERVATION_SECTIONS,
    SUBJECTS_FIELD,
    WARM_COLLECTIONS,
    ApiError,
)
from sandbox.server.encoding import View
from sandbox.server.params import _ids, _int, _sections


class EndpointViews(ServiceBase):
    """Extra filters, record sources and views that endpoints plug into `PageHandlers`."""

    def _accotype_filters(self, request: Request) -> Filters:
        ids = _ids(request.query_params.getlist("resourceIds"), "resourceIds")
        return [[Condition("resourceId", "in", frozenset(ids))]] if ids else []

    def _resource_filter(self, request: Request) -> Filters:
        ids = _ids(request.query_params.getlist("resourceId"), "resourceId")
        return [[Condition("resourceId", "in", frozenset(ids))]] if ids else []

    def _rentability_filters(self, request: Request) -> Filters:
        """`resourceId`, `resourceType` (prefix, as the interface cuts it) and
        `distributionChannelId` (a config without a channel holds for every channel)."""
        query = request.query_params
        filters = self._resource_filter(request)
        if kind := query.get("resourceType"):
            kinds = {"ACCOMMODATIONTYPE"} if "ACCOMMODATIONTYPE".startswith(kind) else set()
            filters.append([Condition("resourceType", "in", frozenset(kinds))])
        if channel := query.get("distributionChannelId"):
            ids = frozenset(_ids([channel], "distributionChannelId"))
            filters.append(
                [
                    Condition("distributionChannelId", "in", ids),
                    Condition("distributionChannelId", "in", frozenset({None})),
                ]
            )
        return filters

    def _location_ids_filter(self, request: Request) -> Filters:
        ids = _ids(request.query_params.getlist("locationIds"), "locationIds")
        return [[Condition("locationId", "in", frozenset(ids))]] if ids else []

    @staticmethod
    def _accotype_record(record: Record) -> Record:
        if "capacities" not in record:
            return record
        return {k: v for k, v in record.items() if k != "capacities"}

    def _accotype_plain(self, request: Request) -> View:
        build = self._accotype_record
        return View("accommodationtypes", build, lambda r: orjson.dumps(build(r)))

    def _accotype_details(self, request: Request) -> View:
        return self._accotype_view("CAPACITIES" in _sections(request, ACCOMMODATION_SECTIONS))

    def _accotype_view(self, with_capacities: bool) -> View:
        def build(record: Record) -> Record:
            out = dict(self._accotype_record(record))
            if with_capacities:
                if hasattr(self.world, "capacities"):
                    out["capacities"] = self.world.capacities(record["resourceId"])
                else:
                    out["capacities"] = record.get("capacities") or []
            return out

        variant = "accommodationtypes/details" + (":CAPACITIES" if with_capacities else "")
        return View(variant, build, lambda r: orjson.dumps(build(r)))

    def _channel_details(self, request: Request) -> View:
        """Channels with the sections asked (COMMISSION_ADDONS, CANCELLATION_ADDONS; RATETYPES
        and IMAGES accepted, adding nothing), from the world's `channel_details`."""
        wanted = _sections(request, CHANNEL_SECTIONS)
        details = getattr(self.world, "channel_details", None)

        def build(record: Record) -> Record:
            if details is None:
                return record
            out = details(record["distributionChannelId"], wanted)
            return (
                record if out is None else {**record, **{k: out[k] for k in out if k not in record}}
            )

        variant = "distributionchannels/details:" + ",".join(sorted(wanted))
        return View(variant, build, lambda r: orjson.dumps(build(r)))

    def _ratetype_filters(self, request: Request) -> Filters:
        code = request.query_params.get("distributionChannelCode")
        if not code:
            return []
        ids = [
            r["distributionChannelId"]
            for r in self.world.records("distributionchannels")
            if r.get("code") == code
        ]
        if not ids:
            return [[Condition("rateTypeId", "in", frozenset())]]
        return [[Condition("distributionChannelIds", ":", i) for i in ids]]

    def _reservation_filters(self, request: Request) -> Filters:
        """The query parameters of `GET /reservations` (real-service-notes 4.1)."""
        query = request.query_params
        filters = self._common_reservation_filters(request)
        if code := query.get("accommodationtypecode"):
            filters.append([Condition("reservationId", "in", self._booked({"code": code}))])
        return filters

    def _details_filters(self, request: Request) -> Filters:
        """The query parameters of `GET /reservations/details` (real-service-notes 4.3)."""
        query = request.query_params
        filters = self._common_reservation_filters(request)
        for name, field in (
            ("statusIds", "status"),
            ("customerIds", "customerId"),
            ("reservationCategoryIds", "reservationCategoryId"),
        ):
            values = _ids(query.getlist(name), name)
            if values:
                filters.append([Condition(field, "in", frozenset(values))])
        channel = _int(query.get("distributionChannelId"), "distributionChannelId")
        if channel is not None:
            filters.append([Condition("distributionChannelId", "in", frozenset({channel}))])
        if number := query.get("reservationNumber"):
            filters.append([Condition("reservationNumber", "::", number)])
        kinds = _ids(query.getlist("accommodationKindIds"), "accommodationKindIds")
        if kinds:
            if not (query.getlist("reservationIds") or query.getlist("customerIds")):
                raise ApiError(
                    400,
                    "INVALID_PARAMETER",
                    "accommodationKindIds needs reservationIds or customerIds with it",
                )
            types = frozenset(
                t["code"]
                for t in self.world.records("accommodationtypes")
                if t.get("accotypeKindId") in kinds
            )
            filters.append([Condition("reservationId", "in", self._booked({"code": types}))])
        return filters

    def _booked(self, wanted: dict[str, Any]) -> frozenset[int]:
        """Reservations with an accommodation reserved resource whose fields match `wanted`
        (a value, or a frozenset of allowed values)."""

        def match(r: Record) -> bool:
            for k, v in wanted.items():
                got = r.get(k)
                if not (got in v if isinstance(v, frozenset) else got == v):
                    return False
            return True

        return frozenset(
            r["reservationId"]
            for r in self.world.records("reservedresources")
            if r.get("type") == "ACCOMMODATIONTYPE" and match(r)
        )

    def _common_reservation_filters(self, request: Request) -> Filters:
        query = request.query_params
        filters: Filters = []
        ids = _ids(query.getlist("reservationIds"), "reservationIds")
        if ids:
            filters.append([Condition("reservationId", "in", frozenset(ids))])
        if code := query.get("distributionChannelCode"):
            filters.append([Condition("distributionChannelCode", "::", code)])
        wanted = {name: _int(query.get(name), name) for name in ("resourceId", "unitId")}
        wanted = {k: v for k, v in wanted.items() if v is not None}
        if wanted:
            matching = frozenset(
                r["reservationId"]
                for r in self.world.records("reservedresources")
                if all(r.get(k) == v for k, v in wanted.items())
            )
            filters.append([Condition("reservationId", "in", matching)])
        return filters

    def _reservation_details(self, request: Request) -> View:
        if not self.strict:
            return self._details_view(_sections(request, RESERVATION_SECTIONS))
        # The real enum: unknown names are 400; without returnSections every modelled section.
        asked = _sections(request, STRICT_RESERVATION_SECTIONS)
        if request.query_params.getlist("returnSections"):
            served = asked & set(RESERVATION_SECTIONS)
        else:
            served = set(RESERVATION_SECTIONS)
        return self._details_view(served, subjects_field=SUBJECTS_FIELD["strict"])

    def _details_view(self, sections: set[str], subjects_field: str = "subjects") -> View:
        asked = [name for name in RESERVATION_SECTIONS if name in sections]
        bills = [(payer, key) for name, (payer, key) in BILL_SECTIONS.items() if name in sections]
        world = self.world
        batch = getattr(world, "children_many", None)  # beyond the protocol: optional
        columnar = getattr(world, "encode_with_children", None) if self.from_columns else None
        # the sections as (key, child collection, field, value): children whose field equals
        # the value (all of them when the field is None), in the order they are served
        spec: list[tuple[str, str, str | None, Any]] = []
        if "RESERVEDRESOURCES" in sections:
            spec.append(("reservedResources", "reservedresources", None, None))
        spec += [(key, "billlines", "payerType", payer) for payer, key in bills]
        if "SUBJECTS" in sections:
            spec.append((subjects_field, "subjects", None, None))

        def sections_of(records: Sequence[Record]) -> list[dict[str, list[Record]]]:
            """Per record, its sections in contracts order, each child collection rendered for
            all `records` in one batch. `{**record, **sections}` keeps the record's field order
            and appends the sections (the served field order)."""
            rids = [record["reservationId"] for record in records]

            def kids(collection: str) -> list[list[Record]]:
                if batch is not None:
                    return batch(collection, rids)
                return [world.children(collection, rid) for rid in rids]

            resources = kids("reservedresources") if "RESERVEDRESOURCES" in sections else None
            lines = kids("billlines") if bills else None
            subjects = kids("subjects") if "SUBJECTS" in sections else None
            out: list[dict[str, list[Record]]] = []
            for i in range(len(records)):
                sec: dict[str, list[Record]] = {}
                if resources is not None:
                    sec["reservedResources"] = resources[i]
                if lines is not None:
                    by_payer: dict[Any, list[Record]] = {}
                    for line in lines[i]:
                        by_payer.setdefault(line.get("payerType"), []).append(line)
                    for payer, key in bills:
                        sec[key] = by_payer.get(payer, [])
                if subjects is not None:
                    sec[subjects_field] = subjects[i]
                out.append(sec)
            return out

        def build(record: Record) -> Record:
            return {**record, **sections_of([record])[0]}

        def encode_built(records: Sequence[Record]) -> list[bytes]:
            return [
                orjson.dumps({**record, **sec})
                for record, sec in zip(records, sections_of(records), strict=True)
            ]

        def encode_many(records: Sequence[Record]) -> Sequence[bytes]:
            encoded = columnar("reservations", records, spec) if columnar is not None else None
            if encoded is None:
                return encode_built(records)
            # records the columns cannot give (thawed, or with children added later) are built
            built = [i for i, data in enumerate(encoded) if data is None]
            if not built:
                return encoded  # type: ignore[return-value]
            out = list(encoded)
            subset = getattr(records, "subset", None)
            todo = subset(built) if subset is not None else [records[i] for i in built]
            for i, data in zip(built, encode_built(todo), strict=True):
                out[i] = data
            return out

        def encode(record: Record) -> bytes:
            return encode_many([record])[0]

        variant = "reservations/details:" + ",".join(asked) + ":" + subjects_field
        return View(variant, build, encode, encode_many)

    def _bill_filters(self, request: Request) -> Filters:
        payer = self._payer(request, required=False)
        return [[Condition("payerType", "::", payer)]] if payer else []

    def _bill_source(self, request: Request) -> Sequence[Record]:
        ids = _ids(request.query_params.getlist("reservationIds"), "reservationIds")
        if not ids:
            return self.world.records("billlines")
        return [line for rid in sorted(set(ids)) for line in self.world.children("billlines", rid)]

    def warm_cache(self) -> int:
        """Encode every record of the lists the pipeline reads (as it reads them) into the
        cache now, so the first full read is served from bytes; returns the cached bytes."""
        views = [(c, self.plain_view(c)) for c in WARM_COLLECTIONS]
        views += [
            ("accommodationtypes", self._accotype_view(True)),
            (
                "reservations",
                self._details_view(
                    set(RESERVATION_SECTIONS),
                    SUBJECTS_FIELD["strict" if self.strict else "default"],
                ),
            ),
        ]
        with self.world.lock:
            if not self.cache.sync(self.world):
                return 0
            for collection, view in views:
                self.cache.encode_all(
                    view.variant,
                    self.world.records(collection),
                    COLLECTIONS[collection],
                    view.encode,
                    enabled=True,
                )
            return self.cache.nbytes
