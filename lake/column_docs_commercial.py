"""What the commercial areas' lake columns mean: the channels' commission and cancellation
add-ons (`/distributionchannels/details`), the add-on catalogue with its prices (`/add-ons`) and
the owners with their contracts (`/owners`). `lake.column_docs` merges these entries into its
`TABLES` and `ENTITIES`; the shapes are the sandbox's choice (docs/contracts.md section 1).
"""

from __future__ import annotations

_VALID_FROM = "First day the {what} holds (included; null: since always)."
_VALID_TO = "Last day the {what} holds (included; null: still in force)."

COMMERCIAL_ENTITIES: dict[str, str] = {
    "distribution_channel_commissions": "commission rule",
    "distribution_channel_cancellation_addons": "cancellation add-on",
    "addons": "add-on",
    "owners": "owner",
}

COMMERCIAL_TABLES: dict[str, dict[str, str]] = {
    "distribution_channel_commissions": {
        "commission_addon_id": "Commission add-on (the channel's commission rule) id (key).",
        "distribution_channel_id": "Distribution channel that earns the commission (parent key).",
        "percentage": "Commission as a percentage of the agent bill's total (the bill's "
        "COMMISSION 100 line follows it; a channel without commission has no rule).",
        "calculation_base": "What the percentage is taken of: BILL_TOTAL, the agent bill's total.",
        "vat_rate": "VAT rate (percent) charged on the commission: the rate of the bill's "
        "COMMISSION_VAT 110 line (21 in the sandbox).",
        "valid_from": _VALID_FROM.format(what="rule"),
        "valid_to": _VALID_TO.format(what="rule"),
    },
    "distribution_channel_cancellation_addons": {
        "cancellation_addon_id": "Cancellation add-on (the cancellation insurance a channel "
        "sells) id (key).",
        "distribution_channel_id": "Distribution channel that sells the insurance (parent key).",
        "resource_id": "The insurance add-on (resourceId of /add-ons, category INSURANCE) its "
        "bill lines carry.",
        "percentage": "Price of the insurance as a percentage of the stay.",
        "valid_from": _VALID_FROM.format(what="percentage"),
        "valid_to": _VALID_TO.format(what="percentage") + " A repricing closes the old row "
        "the day before the new one starts.",
    },
    "addons": {
        "resource_id": "Add-on id: the resourceId of the EXTRA / SPECIAL bill lines that bill "
        "it (key).",
        "type": "EXTRA (an extra the guest pays for) or SPECIAL (a discount on the rent).",
        "addon_category_id": "Category of the add-on (id).",
        "category_code": "Code of the add-on's category (LINEN, CLEANING, PETS, DISCOUNT, "
        "INSURANCE in the sandbox): what marts.ancillary_revenue_monthly groups extras by.",
        "category_name": "Name of the add-on's category.",
        "price_type": "What the price is per: PERSON, STAY, PET_NIGHT (per pet and night) or "
        "SPECIAL (a discount).",
        "vat_rate": "VAT rate (percent) of the add-on's bill lines; its prices include it.",
        "choosable_on_internet": "True when guests can choose the add-on when booking online.",
        "description": "Free text describing the add-on to guests.",
    },
    "addon_prices": {
        "addon_price_id": "Add-on price id (key).",
        "resource_id": "The add-on priced: resourceId of /add-ons (parent key).",
        "currency_code": "Currency of the price: a bill line's unit price is the add-on's price "
        "in the bill's currency.",
        "price": "Unit price, VAT included, in currency_code (per price_type of the add-on).",
        "valid_from": _VALID_FROM.format(what="price"),
        "valid_to": _VALID_TO.format(what="price"),
    },
    "owners": {
        "owner_id": "Owner id (key). An owner's name, contact and address never land.",
        "country_code": "ISO country code of the owner (the country of their address).",
        "language": "Language the owner corresponds in.",
    },
    "owner_contracts": {
        "contract_id": "Owner contract id (key).",
        "owner_id": "Owner who holds the contract (parent key).",
        "unit_id": "Unit the contract puts in the rental pool.",
        "resource_id": "Accommodation type of the contract's unit.",
        "contract_type": "Kind of contract: RENTAL_POOL (the park rents the unit out and pays "
        "the owner a share of its revenue).",
        "share_basis": "What the owner's share is taken of: ROOM_REVENUE_EXCL_VAT, the room "
        "revenue net of VAT of the guest nights sold on the unit under the contract "
        "(docs/contracts.md, 'Owners').",
        "revenue_share_percentage": "The owner's share of that revenue, in percent.",
        "start_date": "First night the contract covers (included).",
        "end_date": "The day the contract ends: nights before it are covered (excluded; null: "
        "open-ended).",
    },
}
