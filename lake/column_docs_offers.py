"""What the offers' lake columns mean: offers with their rates (`/offers`) and the additions of
accommodation types and offers (`/accommodationtypes/additions`, `/offers/additions`).
`lake.column_docs` merges these entries into its `TABLES` and `ENTITIES`; the shapes are the
sandbox's choice (docs/contracts.md section 1).
"""

from __future__ import annotations

_VALID_FROM = "First day the {what} holds (included; null: since always)."
_VALID_TO = "Last day the {what} holds (included; null: still in force)."
_ADDITIONS = {
    "addition_id": "Addition id (key).",
    "addon_resource_id": "The add-on that may be added: resourceId of /add-ons.",
    "addon_code": "Code of that add-on (LINEN, CLEANING, PETS in the sandbox).",
    "mandatory": "True when the add-on must be booked with the holder (false: optional).",
    "max_quantity": "Most of the add-on one stay may book.",
    "valid_from": _VALID_FROM.format(what="addition"),
    "valid_to": _VALID_TO.format(what="addition"),
}

OFFER_ENTITIES: dict[str, str] = {
    "offers": "offer",
    "offer_rates": "offer rate",
    "accommodation_type_additions": "addition",
    "offer_additions": "addition",
}

OFFER_TABLES: dict[str, dict[str, str]] = {
    "offers": {
        "resource_id": "Offer id: the resourceId of the discount bill lines (resourceType "
        "SPECIAL) that apply it (key).",
        "code": "Short code of the offer (EARLYBIRD, LASTMINUTE, ... in the sandbox).",
        "name": "Name of the offer shown to guests.",
        "type": "Resource type of the offer: SPECIAL.",
        "description": "Free text describing the offer to guests.",
        "discount_percentage": "Percentage off the rent the offer gives (its rates hold the "
        "same value per rate type).",
        "min_days_before_arrival": "Fewest days between booking and arrival for a stay to "
        "qualify (null: no minimum).",
        "max_days_before_arrival": "Most days between booking and arrival for a stay to "
        "qualify (null: no maximum).",
        "rate_type_ids": "Rate types (price lists) the offer applies to.",
        "choosable_on_internet": "True when guests can book the offer online.",
        "valid_from": "First arrival date the offer is sold for (included).",
        "valid_to": "Last arrival date the offer is sold for (included; null: open-ended).",
    },
    "offer_rates": {
        "rate_id": "Offer rate id (key).",
        "resource_id": "The offer the rate belongs to (parent key).",
        "rate_type_id": "Rate type the rate applies to.",
        "rate_type_ids": "Rate types linked to the rate.",
        "value": "The rate's value: with quantifier RELATIVE a percentage (negative: off the "
        "rent), with ABSOLUTE an amount, with OVERRIDE the price.",
        "value_type": "Kind of value (single).",
        "priority": "Highest priority wins among rates that apply.",
        "valid_from": "First arrival date the rate applies to (included).",
        "valid_to": "Last arrival date the rate applies to (included; null: open-ended).",
        "bookdate_from": "First booking date the rate applies to (null: any).",
        "bookdate_to": "Last booking date the rate applies to (null: any).",
        "min_deviation": "Fewest days between booking and arrival (null: no minimum).",
        "max_deviation": "Most days between booking and arrival (null: no maximum).",
        "min_duration": "Shortest stay in nights the rate applies to (null: any).",
        "max_duration": "Longest stay in nights the rate applies to (null: any).",
    },
    "accommodation_type_additions": {
        **_ADDITIONS,
        "resource_id": "Accommodation type holding the addition (ADDITION_EVENT names it).",
    },
    "offer_additions": {
        **_ADDITIONS,
        "resource_id": "Offer holding the addition (ADDITION_EVENT names it).",
    },
}
