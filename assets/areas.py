"""The service's areas a run can do without, and what a refusal of one means.

An API user's credentials may not cover every area of the service: a permission not granted
(HTTP 403) or a module not enabled for the concern (HTTP 404 on the area's list). For an
optional area (`EndpointSpec.optional_area` names it) a refusal is not a failure: the run lands
every other stream, keeps what the lake already holds for the refused one (no tombstones, no
removal guard), says which area and what to ask for, and reads it in full once it answers again
(`assets.refusal`). A stream without an optional area is core: the marts cannot exist without
it, and its refusal fails the run. docs/areas.md lists both, with the reasons.
"""

from __future__ import annotations

from dataclasses import dataclass

PERMISSION = "ask the service's administrator to grant the API user the permission for {area}"
MODULE = "ask the service's administrator to enable the {area} module for the concern"


@dataclass(frozen=True)
class Area:
    """An optional area: its name as the service's documentation spells it, and why the marts
    can do without it (what stays empty or incomplete while it is refused)."""

    name: str
    without_it: str


def what_to_do(area: str, status: int | None) -> str:
    """What the user can ask for: the permission (403) or the module (404)."""
    return (MODULE if status == 404 else PERMISSION).format(area=area)


CUSTOMERS = Area("customers", "guest_mix_monthly has no customer attributes (country, age)")
RATE_TYPES = Area("rate types", "rate_availability_daily has no rate-type names")
OPERATIONS = Area(
    "operations",
    "occupancy counts nights an operations task took out of order as available",
)
ALLOTMENTS = Area("allotments", "allotment_pickup is empty; occupancy shows no held units")
RENTABILITY = Area("rentability", "orphan_nights has no arrival-day or stay-length rules")
ADDONS = Area("add-ons", "ancillary_revenue_monthly shows extras as UNCATEGORISED")
OWNERS = Area("owners", "owner_statement_monthly is empty")
OFFERS = Area("offers", "offer_discount_monthly has no offer names or rates")
ADDITIONS = Area("additions", "no mart reads them (the lake tables stay as they were)")
IMPLIES = Area("implies", "no mart reads them (the lake table stays as it was)")
FINANCE = Area(
    "companies and cash clearance",
    "finance_journal_monthly, cash_clearance_daily and revenue_reconciliation have no finance "
    "side; owner statements have no journal owner share",
)
PRICING = Area(
    "rates and availability", "rate_availability_daily is empty or shows the last read prices"
)

OPTIONAL_AREAS: tuple[Area, ...] = (
    CUSTOMERS,
    RATE_TYPES,
    OPERATIONS,
    ALLOTMENTS,
    RENTABILITY,
    ADDONS,
    OWNERS,
    OFFERS,
    ADDITIONS,
    IMPLIES,
    FINANCE,
    PRICING,
)
