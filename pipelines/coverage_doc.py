"""docs/interface-coverage.md: every path of the interface, whether the sandbox serves it, which
stream of the endpoint catalogue extracts it, which marts model it, and why where not.

Generated (`python -m pipelines.coverage_doc > docs/interface-coverage.md`) from the interface's
path list (`service.interface`), the sandbox's route table, the catalogue (`assets.catalogue`,
its list paths and refetch paths) and the warehouse's model graph; only the reasons are written
by hand (`WHY_NOT`, `OTHER_READS`). It lives with the CLI because it reads the sandbox's routes
(nothing below the CLI imports `sandbox/`). tests/test_coverage_doc.py keeps the committed page
equal to this output and every sandbox route in it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

from assets.catalogue import CATALOGUE, Catalogue
from service.interface import INTERFACE_PATHS, InterfacePath
from warehouse.models import discover_models

# Paths the pipeline reads outside the catalogue's streams: (method, path) -> what reads it.
OTHER_READS: dict[tuple[str, str], str] = {
    ("GET", "/reservations"): "reservation-id reconciliation (sweep)",
    ("GET", "/accommodationtype/{}/rates"): "rates (the singular spelling, after a 404)",
    ("POST", "/authenticate"): "every run (client credentials)",
}

_NO_STATE = "creates nothing, no revenue or supply state"
_PARTS = "a part of {what} that no figure depends on; the details list carries what the marts use"
_BY_ID = "the same records as the list {list}, which is extracted (events refetch through it)"
# (method, path) -> why it is not served, not extracted or not modelled (whichever applies).
WHY_NOT: dict[tuple[str, str], str] = {
    ("GET", "/distributionchannels/{}"): _BY_ID.format(list="/distributionchannels/details"),
    ("GET", "/distributionchannels/{}/details"): _BY_ID.format(
        list="/distributionchannels/details"
    ),
    ("GET", "/distributionchannels"): "the details list /distributionchannels/details carries "
    "the same channels with their commission and cancellation add-ons",
    ("GET", "/distributionchannels/{}/locations"): "which parks a channel sells: no figure "
    "depends on it (reservations name their channel and park)",
    ("GET", "/distributionchannels/paymentmethods"): "payment methods: no revenue or supply "
    "state (payments reach the bills as PAID_AMOUNT lines)",
    ("GET", "/distributionchannels/{}/paymentmethods"): "payment methods: no revenue or supply "
    "state",
    ("GET", "/companies/{}"): _BY_ID.format(list="/companies"),
    ("POST", "/amenities"): "a write; the pipeline only reads",
    ("GET", "/amenities"): "amenities (features of a type or park): no revenue or supply state",
    ("GET", "/amenities/categories"): "amenity categories: no revenue or supply state",
    ("GET", "/amenities/details"): "amenities: no revenue or supply state",
    ("GET", "/rentability/stays"): "derived from the rentability sets and config, which are "
    "extracted (the allowed stays of one resource and channel per call)",
    ("GET", "/operations/{}/images"): "images of an issue: no revenue or supply state",
    ("GET", "/ratetypes/{}/rateoptions"): _BY_ID.format(list="/ratetypes/rateoptions"),
    ("POST", "/accommodationtypes/search"): f"a search: {_NO_STATE}",
    ("POST", "/accommodationtypes/arrivalrangesearch"): f"a search: {_NO_STATE}",
    ("POST", "/accommodationtypes/availability"): "the GET form is extracted (same records)",
    ("POST", "/accommodationtypes/availability/implies"): "mandatory costs for an external "
    "index, body not shown by the interface; the bills carry the costs charged",
    ("GET", "/accommodationtypes"): "the details list /accommodationtypes/details carries the "
    "same types with their capacities",
    ("GET", "/accommodationtypes/{}"): _BY_ID.format(list="/accommodationtypes/details"),
    ("GET", "/accommodationtypes/{}/details"): _BY_ID.format(list="/accommodationtypes/details"),
    ("GET", "/accommodationtypes/{}/capacities"): "carried by the details list (section "
    "CAPACITIES)",
    ("GET", "/accommodationtypes/{}/images"): "images: no revenue or supply state",
    ("GET", "/accommodationtypes/{}/amenitylinks"): "amenities: no revenue or supply state",
    ("GET", "/accommodationtypes/{}/additions"): _BY_ID.format(
        list="/accommodationtypes/additions"
    ),
    ("GET", "/accommodationtypes/{}/allotments"): _BY_ID.format(list="/allotments"),
    ("GET", "/accommodationtypes/{}/implies"): "implies have no list in the interface: one "
    "request per type, add-on, offer and unit (a large park: over 12,000 a read, half the "
    "daily free requests); they set what a booking must include, and the bills already carry "
    "what was charged. IMPLY_EVENT is counted",
    ("GET", "/units/{}"): _BY_ID.format(list="/units"),
    ("GET", "/units/{}/details"): _BY_ID.format(list="/units"),
    ("GET", "/units/{}/capacities"): "unit capacities: the type's capacities are extracted",
    ("GET", "/units/{}/amenitylinks"): "amenities: no revenue or supply state",
    ("GET", "/units/{}/implies"): "implies: see /accommodationtypes/{resourceId}/implies",
    ("POST", "/reservations/proposals"): f"search/proposal: {_NO_STATE}",
    ("POST", "/reservations"): "a write; the pipeline only reads",
    ("PUT", "/reservations/{}"): "a write; the pipeline only reads",
    ("GET", "/reservations/{}"): "the details list /reservations/details carries the header "
    "with its bills, reserved resources and subjects (refetched by reservationIds)",
    ("GET", "/reservations/{}/details"): _BY_ID.format(list="/reservations/details"),
    ("GET", "/reservations/{}/preferences"): "guest preferences: no revenue or supply state",
    ("GET", "/reservations/{}/bills"): "carried by the details list (sections CUSTOMERBILL, "
    "PAYINGCUSTOMERBILL, AGENTBILL)",
    ("GET", "/reservations/{}/content"): "carried by the details list (RESERVEDRESOURCES)",
    ("GET", "/reservations/{}/subjects"): "carried by the details list (SUBJECTS)",
    ("GET", "/offers/{}/additions"): _BY_ID.format(list="/offers/additions"),
    ("GET", "/add-ons/{}"): _BY_ID.format(list="/add-ons"),
    ("GET", "/customers/{}"): _BY_ID.format(list="/customers"),
    ("GET", "/customers/{}/communications"): "communications with a guest: personal data, no "
    "revenue or supply state",
    ("GET", "/customers/{}/files"): "files of a guest: personal data, no revenue or supply state",
    ("GET", "/customers/{}/loyalty"): "loyalty points: no revenue state (redeemed points reach "
    "the bills)",
    ("GET", "/customerstatus"): "loyalty status: no revenue state",
    ("GET", "/add-ons/{}/implies"): "implies: see /accommodationtypes/{resourceId}/implies",
    ("GET", "/offers/{}/implies"): "implies: see /accommodationtypes/{resourceId}/implies",
    ("GET", "/offers/{}"): _BY_ID.format(list="/offers"),
    ("GET", "/owners/{}"): _BY_ID.format(list="/owners"),
    ("GET", "/offers/{}/rates"): "carried by the offers list (each offer with its rates)",
    ("GET", "/unitreservability"): "units come and go by setupDate and archivedFrom, and go out "
    "of order by operations tasks, both extracted; the unit flag is not served",
    ("GET", "/locations/{}"): _BY_ID.format(list="/locations"),
    ("GET", "/locations/{}/details"): _BY_ID.format(list="/locations"),
    ("GET", "/locations/{}/amenitylinks"): "amenities: no revenue or supply state",
    ("GET", "/locations/{}/subjects"): "the subjects a park takes (persons, pets): no revenue "
    "or supply state; each reservation's subjects are extracted",
    # extracted, not modelled
    ("GET", "/operations/periodicalTasks"): "recurring tasks never take a unit out of order by "
    "themselves",
    ("GET", "/ratetypes/rateoptions"): "per night or length of stay: the rates' own windows "
    "carry what the marts price",
    ("GET", "/accommodationtypes/additions"): "what may be added to a stay: the bills carry what "
    "was added (marts.ancillary_revenue_monthly)",
    ("GET", "/offers/additions"): "what may be added to an offer: the bills carry what was added",
    ("GET", "/cashreservations/accounts"): "registers; the clearances are modelled",
    ("GET", "/resourcereservability"): "staged only (staging.stg_resource_reservability): the "
    "sandbox never makes an accommodation type unreservable, so no mart depends on it yet",
}


def _norm(path: str) -> str:
    """`/units/{unitId:int}` and `/units/{unitId}` -> `/units/{}` (parameter names differ)."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def sandbox_routes() -> list[tuple[str, str]]:
    """(method, path) of every service route the sandbox mounts (a small world's)."""
    from sandbox.openapi import template
    from sandbox.server.routes import Service
    from sandbox.settings import SandboxSettings
    from sandbox.world.core import World

    service = Service(World(seed=7, scale="small"), SandboxSettings())
    return [(e.method, template(e.path)) for e in service.endpoints]


def _extracted(catalogue: Catalogue) -> dict[tuple[str, str], list[str]]:
    """(method, normalised path) -> the streams that read it (list or refetch path)."""
    out: dict[tuple[str, str], list[str]] = {}
    for spec in catalogue.specs:
        paths = {spec.source} | ({spec.by_ids.path} if spec.by_ids else set())
        for path in paths:
            out.setdefault(("GET", _norm(path)), []).append(spec.name)
    return out


# The calendar spans the dates of reservations, journal entries and clearances: every dated
# mart reads it, which says nothing about what they model, so the trail stops there.
CALENDAR = "core.dim_dates"


def _marts_of(catalogue: Catalogue, streams: Iterable[str]) -> list[str]:
    """Marts that read what the streams land, through any model but the calendar."""
    tables = {t for s in streams for t in catalogue.tables_of(s)}
    models = discover_models()
    reached = {q for q, m in models.items() if m.lake_tables & tables} - {CALENDAR}
    for q, m in models.items():  # dependency order: one pass suffices
        if m.deps & reached and q != CALENDAR:
            reached.add(q)
    return sorted(q.removeprefix("marts.") for q in reached if q.startswith("marts."))


def rows(
    routes: Iterable[tuple[str, str]], catalogue: Catalogue = CATALOGUE
) -> list[tuple[InterfacePath, bool, str, str, str]]:
    """(interface path, served, extracted, modelled, why not) per path; fails on a missing
    reason, so a path nobody explained cannot reach the page."""
    served = {(m, _norm(p)) for m, p in routes}
    extracted = _extracted(catalogue)
    out = []
    missing = []
    for ip in INTERFACE_PATHS:
        key = (ip.method, _norm(ip.path))
        streams = extracted.get(key, [])
        other = OTHER_READS.get(key)
        marts = _marts_of(catalogue, streams) if streams else []
        why = WHY_NOT.get(key, "")
        is_served = key in served
        if (not is_served or not (streams or other) or (streams and not marts)) and not why:
            missing.append(f"{ip.method} {ip.path}")
        ext = ", ".join(streams) if streams else (f"read: {other}" if other else "no")
        out.append((ip, is_served, ext, ", ".join(marts) if marts else "no", why))
    if missing:
        raise ValueError("no reason in WHY_NOT for what is not done: " + "; ".join(missing))
    return out


def beyond_interface(routes: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Sandbox routes the interface's path tables do not name."""
    named = {(ip.method, _norm(ip.path)) for ip in INTERFACE_PATHS}
    return sorted({(m, p) for m, p in routes if (m, _norm(p)) not in named})


BEYOND_WHY: dict[tuple[str, str], str] = {
    ("GET", "/events"): "the polled event feed (its path is not shown by the interface; the "
    "real service's notes infer it)",
    ("GET", "/reservations/details"): "reservation details of many reservations in pages "
    "(real-service-notes 4.3); what the reservations stream reads",
    ("GET", "/accommodationtypes/details"): "accommodation type details in pages "
    "(real-service-notes 8.4); what the accommodation_types stream reads",
    ("GET", "/reservations/bills"): "bill lines of many reservations in pages "
    "(real-service-notes 4.4); the details list carries the same lines",
    ("GET", "/add-ons"): "the add-on list (the interface names only /add-ons/{resourceId}); "
    "what the addons stream reads",
}


def render(routes: list[tuple[str, str]], catalogue: Catalogue = CATALOGUE) -> str:
    lines = [
        "# Interface coverage",
        "",
        "<!-- generated by `python -m pipelines.coverage_doc > docs/interface-coverage.md`; "
        "tests/test_coverage_doc.py keeps it current -->",
        "",
        "Every path of the reservation service's interface (its path tables and the refresh "
        "endpoints its event section names; `service/interface.py`), whether the embedded "
        "sandbox serves it, which stream of the endpoint catalogue (`assets/catalogue.py`) "
        "extracts it (as its list or as the path that refetches records by id), which marts read "
        "what it lands (through any model), and why where not. Paths are relative to "
        "`/service/v2`.",
        "",
        "| method | path | area | sandbox | extracted | modelled (marts) | why not |",
        "|---|---|---|---|---|---|---|",
    ]
    for ip, served, ext, marts, why in rows(routes, catalogue):
        lines.append(
            f"| {ip.method} | `{ip.path}` | {ip.area} | {'yes' if served else 'no'} | {ext} "
            f"| {marts} | {why} |"
        )
    lines += [
        "",
        "## Served by the sandbox beyond the interface's path tables",
        "",
        "| method | path | why |",
        "|---|---|---|",
    ]
    for method, path in beyond_interface(routes):
        why = BEYOND_WHY.get((method, _norm(path)), "")
        if not why:
            raise ValueError(f"{method} {path}: served beyond the interface without a reason")
        lines.append(f"| {method} | `{path}` | {why} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    sys.stdout.write(render(sandbox_routes()))


if __name__ == "__main__":
    main()
