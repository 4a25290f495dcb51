"""Every path of the reservation service's interface, as its path tables and its event section
list them (service-interface.md, "Endpoints" and "Events"), kept here so the repository stands
on its own. `pipelines.coverage_doc` holds each against the sandbox's routes, the endpoint
catalogue and the warehouse's marts (docs/interface-coverage.md). Paths are relative to the base
path `/service/v2`; the parameter names are the interface's spelling.
"""

from __future__ import annotations

from typing import NamedTuple


class InterfacePath(NamedTuple):
    method: str
    path: str
    area: str  # the interface's section (or the event type naming it as a refresh endpoint)


def _get(area: str, *paths: str) -> tuple[InterfacePath, ...]:
    return tuple(InterfacePath("GET", p, area) for p in paths)


INTERFACE_PATHS: tuple[InterfacePath, ...] = (
    InterfacePath("POST", "/authenticate", "Authentication"),
    *_get(
        "Distribution channels",
        "/distributionchannels",
        "/distributionchannels/{distributionChannelId}",
        "/distributionchannels/details",
        "/distributionchannels/{distributionChannelId}/details",
        "/distributionchannels/{distributionChannelId}/locations",
        "/distributionchannels/paymentmethods",
        "/distributionchannels/{distributionchannelId}/paymentmethods",
    ),
    *_get(
        "Cash clearance",
        "/companies",
        "/companies/{companyId}",
        "/cashreservations/accounts",
        "/cashreservations/clearance",
        "/companies/journalreports",
        "/companies/journalreports/{journalReportId}/entries",
    ),
    InterfacePath("POST", "/amenities", "Amenities"),
    *_get("Amenities", "/amenities", "/amenities/categories", "/amenities/details"),
    *_get("Rentability", "/rentability/config", "/rentability/sets", "/rentability/stays"),
    *_get(
        "Operations",
        "/operations/{issueIncidentId}/images",
        "/operations/periodicalTasks",
        "/operations/tasks",
    ),
    *_get(
        "Rate types",
        "/ratetypes",
        "/ratetypes/rateoptions",
        "/ratetypes/{rateTypeId}/rateoptions",
    ),
    *(
        InterfacePath("POST", p, "Accommodation types")
        for p in (
            "/accommodationtypes/search",
            "/accommodationtypes/arrivalrangesearch",
            "/accommodationtypes/availability",
            "/accommodationtypes/availability/implies",
        )
    ),
    *_get(
        "Accommodation types",
        "/accommodationtypes",
        "/accommodationtypes/{resourceId}",
        "/accommodationtypes/{resourceId}/details",
        "/accommodationtypes/{resourceId}/capacities",
        "/accommodationtypes/{resourceId}/images",
        "/accommodationtypes/{resourceId}/amenitylinks",
        "/accommodationtypes/{resourceId}/additions",
        "/accommodationtypes/{resourceId}/implies",
        "/accommodationtypes/{resourceId}/allotments",
        "/accommodationtypes/availability",
        "/accommodationtypes/{resourceId}/rates",
    ),
    *_get(
        "Units",
        "/units",
        "/units/{unitId}",
        "/units/{unitId}/details",
        "/units/{unitId}/capacities",
        "/units/{unitId}/amenitylinks",
        "/units/{unitId}/implies",
    ),
    InterfacePath("POST", "/reservations/proposals", "Reservations"),
    InterfacePath("POST", "/reservations", "Reservations"),
    InterfacePath("PUT", "/reservations/{reservationId}", "Reservations"),
    *_get(
        "Reservations",
        "/reservations",
        "/reservations/{reservationId}",
        "/reservations/{reservationId}/details",
        "/reservations/{reservationId}/preferences",
        "/reservations/{reservationId}/bills",
        "/reservations/{reservationId}/content",
        "/reservations/{reservationId}/subjects",
    ),
    # refresh endpoints named only by the event section (paths above are not repeated)
    *_get(
        "ADDITION_EVENT",
        "/offers/{resourceId}/additions",
        "/accommodationtypes/additions",
        "/offers/additions",
    ),
    *_get("ADDON_EVENT", "/add-ons/{resourceId}"),
    *_get(
        "CUSTOMER_EVENT",
        "/customers",
        "/customers/{customerId}",
        "/customers/{customerId}/communications",
        "/customers/{customerId}/files",
        "/customers/{customerId}/loyalty",
        "/customerstatus",
    ),
    *_get("IMPLY_EVENT", "/add-ons/{resourceId}/implies", "/offers/{resourceId}/implies"),
    *_get("OFFER_EVENT", "/offers", "/offers/{resourceId}"),
    *_get("OWNER_EVENT", "/owners", "/owners/{ownerId}"),
    *_get("RATE_EVENT", "/accommodationtype/{resourceId}/rates", "/offers/{resourceId}/rates"),
    *_get("RESERVABILITY_EVENT", "/resourcereservability", "/unitreservability"),
    *_get(
        "RESORT_EVENT",
        "/locations",
        "/locations/{locationId}",
        "/locations/{locationId}/details",
        "/locations/{locationId}/amenitylinks",
        "/locations/{locationId}/subjects",
    ),
    *_get("ALLOTMENT_EVENT", "/allotments"),
)
