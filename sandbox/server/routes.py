"""The route table: `Service` combines the handler groups and declares the served interface."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from sandbox.openapi import Endpoint, Param
from sandbox.protocol import Record, World
from sandbox.server.admin import AdminHandlers
from sandbox.server.common import ADMIN_PREFIX, CHANNEL_SECTIONS, SERVICE_PREFIX, ApiError
from sandbox.server.encoding import View
from sandbox.server.handlers import ResourceHandlers
from sandbox.server.pages import PageHandlers
from sandbox.server.routes_offers import offer_endpoints
from sandbox.server.views import EndpointViews

if TYPE_CHECKING:
    from sandbox.settings import SandboxSettings


class Service(PageHandlers, EndpointViews, ResourceHandlers, AdminHandlers):
    """Handlers and shared state of one sandbox app."""

    def __init__(self, world: World, settings: SandboxSettings) -> None:
        super().__init__(world, settings)
        self.endpoints = self._endpoints()
        self.routes = [
            Route(SERVICE_PREFIX + e.path, e.handler, methods=[e.method]) for e in self.endpoints
        ] + [
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route(ADMIN_PREFIX + "/health", self.admin_health, methods=["GET"]),
            Route(ADMIN_PREFIX + "/stats", self.admin_stats, methods=["GET"]),
            Route(ADMIN_PREFIX + "/stats/reset", self.admin_stats_reset, methods=["POST"]),
            Route(ADMIN_PREFIX + "/advance", self.admin_advance, methods=["POST"]),
            Route(ADMIN_PREFIX + "/faults", self.admin_faults, methods=["GET", "POST"]),
            Route(ADMIN_PREFIX + "/areas", self.admin_areas, methods=["GET", "POST"]),
        ]

    # -- route table --------------------------------------------------------------------------

    def _endpoints(self) -> list[Endpoint]:
        """The served interface as data; static paths precede `{id}` paths on purpose."""
        ids = Param(
            "reservationIds",
            "integer",
            list=True,
            description="comma-separated or repeated reservation ids",
        )
        sections = Param("returnSections", "string", list=True)
        channel_sections = Param(
            "returnSections", "string", list=True, description=", ".join(CHANNEL_SECTIONS)
        )
        payer = Param("payerType", "string", description="CUSTOMER | PAYING_CUSTOMER | AGENT")
        avail = tuple(
            Param(n, t)
            for n, t in (
                ("arrivalDateFrom", "string"),
                ("arrivalDateTo", "string"),
                ("resourceId", "integer"),
                ("duration", "integer"),
                ("distributionChannelCode", "string"),
                ("rateTypeId", "integer"),
                ("locationId", "integer"),
            )
        )
        res_params = (
            ids,
            Param("distributionChannelCode"),
            Param("resourceId", "integer"),
            Param("unitId", "integer"),
        )
        details_params = (
            *res_params,
            *(
                Param(name, "integer", list=True)
                for name in ("statusIds", "customerIds", "reservationCategoryIds")
            ),
            Param("distributionChannelId", "integer"),
            Param("reservationNumber"),
            Param(
                "accommodationKindIds",
                "integer",
                list=True,
                description="needs reservationIds or customerIds with it",
            ),
            Param("returnAllInclusiveBill", "boolean", description="accepted; bills are whole"),
            sections,
        )

        def page(path: str, collection: str, summary: str, **kw: Any) -> Endpoint:
            handler = self._page_handler(
                collection,
                **{k: v for k, v in kw.items() if k in ("no_content", "extra", "view", "source")},
            )
            return Endpoint(
                "GET",
                path,
                handler,
                "page",
                collection,
                summary,
                params=kw.get("params", ()),
                no_content_when_empty=kw.get("no_content", False),
            )

        def item(
            path: str,
            collection: str,
            summary: str,
            view: Callable[[Request], View] | None = None,
            params: tuple[Param, ...] = (),
        ) -> Endpoint:
            return Endpoint(
                "GET",
                path,
                self._item_handler(collection, view),
                "item",
                collection,
                summary,
                params=params,
            )

        def children(parent_param: str, child: str) -> Callable[[Request], Sequence[Record]]:
            # a world that can (beyond the protocol) gives a lazy view with its keys
            view = getattr(self.world, "child_view", None)
            get = view if view is not None else self.world.children
            return lambda request: get(child, request.path_params[parent_param])

        def content(request: Request) -> Sequence[Record]:
            # the strict profile answers 404 for an unknown reservation, as the real service
            rid = request.path_params["reservationId"]
            if self.strict and self.world.get("reservations", rid) is None:
                raise ApiError(404, "NOT_FOUND", f"reservationId {rid} not found")
            return children("reservationId", "reservedresources")(request)

        rates = children("resourceId", "rates")
        return [
            Endpoint(
                "POST",
                "/authenticate",
                self.authenticate,
                "token",
                None,
                "OAuth2 client credentials (form-encoded)",
            ),
            page(
                "/distributionchannels",
                "distributionchannels",
                "Distribution channels",
                no_content=True,
            ),
            page(
                "/distributionchannels/details",
                "distributionchannels",
                "Distribution channels with commission and cancellation add-ons",
                no_content=True,
                view=self._channel_details,
                params=(channel_sections,),
            ),
            item(
                "/distributionchannels/{distributionChannelId:int}",
                "distributionchannels",
                "One distribution channel",
            ),
            item(
                "/distributionchannels/{distributionChannelId:int}/details",
                "distributionchannels",
                "One distribution channel with its add-ons",
                view=self._channel_details,
                params=(channel_sections,),
            ),
            page("/locations", "locations", "Locations"),
            item("/locations/{locationId:int}", "locations", "One location"),
            page(
                "/accommodationtypes",
                "accommodationtypes",
                "Accommodation types",
                extra=self._accotype_filters,
                view=self._accotype_plain,
                params=(Param("resourceIds", "integer", list=True),),
            ),
            page(
                "/accommodationtypes/details",
                "accommodationtypes",
                "Accommodation types with details",
                extra=self._accotype_filters,
                view=self._accotype_details,
                params=(sections,),
            ),
            Endpoint(
                "GET",
                "/accommodationtypes/availability",
                self.availability_get,
                "array",
                None,
                "Availability (at most 31 arrival dates)",
                params=avail,
            ),
            Endpoint(
                "POST",
                "/accommodationtypes/availability",
                self.availability_post,
                "array",
                None,
                "Availability, parameters in a JSON body",
                body=True,
            ),
            item(
                "/accommodationtypes/{resourceId:int}",
                "accommodationtypes",
                "One accommodation type",
                view=self._accotype_plain,
            ),
            item(
                "/accommodationtypes/{resourceId:int}/details",
                "accommodationtypes",
                "One accommodation type with details",
                view=self._accotype_details,
                params=(sections,),
            ),
            page(
                "/accommodationtypes/{resourceId:int}/rates",
                "rates",
                "Rates of a type",
                source=rates,
            ),
            page(
                "/accommodationtype/{resourceId:int}/rates",
                "rates",
                "Rates of a type (singular path named by the event section)",
                source=rates,
            ),
            page(
                "/accommodationtypes/{resourceId:int}/allotments",
                "allotments",
                "Allotments of a type",
                source=children("resourceId", "allotments"),
            ),
            page("/allotments", "allotments", "Allotments (filter=resourceId:[ids])"),
            *offer_endpoints(page, item, children),
            page("/rentability/sets", "rentabilitysets", "Rentability sets (rules)"),
            page(
                "/rentability/config",
                "rentabilityconfig",
                "Rentability config: the set of a resource per arrival period",
                extra=self._rentability_filters,
                params=(
                    Param("resourceId", "integer"),
                    Param("resourceType"),
                    Param("distributionChannelId", "integer"),
                ),
            ),
            Endpoint(
                "GET",
                "/rentability/stays",
                self.rentability_stays,
                "page",
                None,
                "Allowed stays of a resource (arrival, duration)",
                params=tuple(
                    Param(n, t, required=n in ("distributionChannelId", "resourceId"))
                    for n, t in (
                        ("distributionChannelId", "integer"),
                        ("resourceId", "integer"),
                        ("minArrival", "string"),
                        ("maxArrival", "string"),
                        ("minDuration", "integer"),
                        ("maxDuration", "integer"),
                    )
                ),
            ),
            page(
                "/resourcereservability",
                "reservability",
                "Reservability of resources",
                extra=self._resource_filter,
                params=(Param("resourceId", "integer"),),
            ),
            page("/units", "units", "Units"),
            item("/units/{unitId:int}", "units", "One unit"),
            page(
                "/ratetypes",
                "ratetypes",
                "Rate types",
                extra=self._ratetype_filters,
                params=(Param("distributionChannelCode"),),
            ),
            page("/ratetypes/rateoptions", "rateoptions", "Rate options"),
            page(
                "/ratetypes/{rateTypeId:int}/rateoptions",
                "rateoptions",
                "Rate options of a rate type",
                source=children("rateTypeId", "rateoptions"),
            ),
            page("/companies", "companies", "Companies"),
            page("/companies/journalreports", "journalreports", "Journal reports"),
            page(
                "/companies/journalreports/{journalReportId:int}/entries",
                "journalentries",
                "Entries of a journal report",
                source=children("journalReportId", "journalentries"),
            ),
            item("/companies/{companyId:int}", "companies", "One company"),
            page("/cashreservations/accounts", "cashaccounts", "Cash accounts"),
            page("/cashreservations/clearance", "cashclearances", "Cash clearances"),
            page("/operations/tasks", "operationtasks", "Operations tasks (out-of-order periods)"),
            page(
                "/operations/periodicalTasks",
                "periodicaltasks",
                "Periodical operations tasks",
                extra=self._location_ids_filter,
                params=(Param("locationIds", "integer", list=True),),
            ),
            page("/customers", "customers", "Customers"),
            page("/add-ons", "addons", "Add-ons (extras, products) with category and prices"),
            item("/add-ons/{resourceId:int}", "addons", "One add-on"),
            page("/owners", "owners", "Owners with their contracts (units and revenue share)"),
            item("/owners/{ownerId:int}", "owners", "One owner with its contracts"),
            item("/customers/{customerId:int}", "customers", "One customer"),
            page(
                "/reservations",
                "reservations",
                "Reservations",
                no_content=True,
                extra=self._reservation_filters,
                params=(*res_params, Param("accommodationtypecode")),
            ),
            Endpoint(
                "POST",
                "/reservations",
                self.create_reservation,
                "object",
                None,
                "Create a reservation",
                body=True,
            ),
            page(
                "/reservations/details",
                "reservations",
                "Reservations with sections",
                no_content=True,
                extra=self._details_filters,
                view=self._reservation_details,
                params=details_params,
            ),
            page(
                "/reservations/bills",
                "billlines",
                "Bill lines of several reservations",
                extra=self._bill_filters,
                source=self._bill_source,
                params=(ids, payer),
            ),
            item("/reservations/{reservationId:int}", "reservations", "One reservation"),
            Endpoint(
                "PUT",
                "/reservations/{reservationId:int}",
                self.update_reservation,
                "object",
                None,
                "Status action / expected times",
                body=True,
            ),
            item(
                "/reservations/{reservationId:int}/details",
                "reservations",
                "One reservation with sections",
                view=self._reservation_details,
                params=(sections,),
            ),
            Endpoint(
                "GET",
                "/reservations/{reservationId:int}/bills",
                self.reservation_bills,
                "array",
                "billlines",
                "Bill of one payer",
                params=(Param("payerType", required=True),),
            ),
            page(
                "/reservations/{reservationId:int}/content",
                "reservedresources",
                "Reserved resources",
                source=content,
            ),
            Endpoint(
                "GET",
                "/reservations/{reservationId:int}/subjects",
                self.reservation_subjects,
                "array",
                "subjects",
                "Subjects",
            ),
            page("/events", "events", "Event feed (filter=eventId>{cursor}&sort=eventId,asc)"),
        ]
