"""The routes of offers, additions and implies (docs/sandbox.md "Offers, additions, implies"):
the interface's paths for them, mounted by `sandbox.server.routes` with its `page` and `item`
helpers; every `{id}` path has an int converter, so the static lists never clash with it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sandbox.openapi import Endpoint


def offer_endpoints(
    page: Callable[..., Endpoint],
    item: Callable[..., Endpoint],
    children: Callable[[str, str], Callable[[Any], Sequence[Any]]],
) -> list[Endpoint]:
    """Offers with their rates, the additions of types and offers, the implies of types,
    add-ons, offers and units."""
    return [
        page(
            "/accommodationtypes/additions",
            "typeadditions",
            "Additions of accommodation types (filter=resourceId:[ids])",
        ),
        page(
            "/accommodationtypes/{resourceId:int}/additions",
            "typeadditions",
            "Additions (optional add-ons) of a type",
            source=children("resourceId", "typeadditions"),
        ),
        page(
            "/accommodationtypes/{resourceId:int}/implies",
            "implies",
            "Implies (mandatory costs) of a type",
            source=children("resourceId", "implies"),
        ),
        page("/offers", "offers", "Offers (specials) with their rates (filter=resourceId:[ids])"),
        page(
            "/offers/additions",
            "offeradditions",
            "Additions of offers (filter=resourceId:[ids])",
        ),
        item("/offers/{resourceId:int}", "offers", "One offer with its rates"),
        page(
            "/offers/{resourceId:int}/rates",
            "offerrates",
            "Rates of an offer",
            source=children("resourceId", "offerrates"),
        ),
        page(
            "/offers/{resourceId:int}/additions",
            "offeradditions",
            "Additions of an offer",
            source=children("resourceId", "offeradditions"),
        ),
        page(
            "/offers/{resourceId:int}/implies",
            "implies",
            "Implies of an offer",
            source=children("resourceId", "implies"),
        ),
        page(
            "/units/{unitId:int}/implies",
            "unitimplies",
            "Implies of a unit",
            source=children("unitId", "unitimplies"),
        ),
        page(
            "/add-ons/{resourceId:int}/implies",
            "implies",
            "Implies of an add-on",
            source=children("resourceId", "implies"),
        ),
    ]
