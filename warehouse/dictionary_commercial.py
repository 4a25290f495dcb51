"""The metric dictionary's commercial part: owner statements (`warehouse.dictionary` adds
these marts to its `MARTS`, so they reach `COMMENT ON` and docs/metrics.md alike)."""

from __future__ import annotations

_MONEY = "DECIMAL(18,2), in the row's currency_code"
_SOLD = (
    "on-the-books (status 12, 21, 31, 41) guest stays (type RESERVATION, category not OWNER/BLOCK)"
)
_UNDER_CONTRACT = (
    "on the unit while a contract of the owner runs (contract start_date <= night < end_date; "
    "a null end runs on)"
)

OWNER_STATEMENT: dict[str, str] = {
    "owner_id": "Owner (ownerId of /owners); names and contact details never reach the lake.",
    "unit_id": "The owner's unit (unitId of the contract; a reservation's unit is the one of "
    "its first ACCOMMODATIONTYPE reserved resource).",
    "accommodation_type_id": "Accommodation type of the unit.",
    "location_id": "Location (park) of the unit's accommodation type.",
    "month_start": "Month of the nights (statement side) and of the journal report's period "
    "(journal side).",
    "currency_code": "Currency of the row's money: the distribution channel's for the stays, "
    "the journal report's for the booked share; never summed across currencies.",
    "nights_rented": f"Stay nights of {_SOLD} {_UNDER_CONTRACT}.",
    "room_revenue_gross": "Room revenue of those stays allocated to the month's nights under "
    f"contract, VAT included as billed ({_MONEY}).",
    "room_revenue_net": "The same room revenue net of VAT (each line's VAT, total x vatRate / "
    f"(100 + vatRate) to the cent, spread like its total) ({_MONEY}).",
    "owner_share": "The owner's share: per contract and month, room_revenue_net x "
    "revenueSharePercentage / 100, rounded half away from zero to the cent (exact integers, "
    "the percentage as basis points); a month under two contracts adds both "
    f"(docs/contracts.md, 'Owners') ({_MONEY}).",
    "owner_use_nights": "Stay nights of the owner's own stays: on-the-books reservations of "
    f"category OWNER (type INVOICE) {_UNDER_CONTRACT}. Blocks (category BLOCK) are not owner use.",
    "journal_owner_share": "The owner share the service booked: credit - debit VAT excluded on "
    "ledger 1610 of OWNER_MUTATION_REPORT journal reports whose period is the month, the unit "
    "named by the entry's resource_code. The service books a month when it closes, so open "
    f"months show 0 ({_MONEY}).",
    "owner_share_difference": "owner_share - journal_owner_share: 0 for a closed month unless "
    "something changed after the close (a late change, a contract booked differently); the "
    "asset check `owner_statement_reconciles` reports closed months that differ.",
}

_DIV = "rounded half away from zero to the cent; null when the divisor is 0"
_COMMISSION = (
    "the commission the bills carry: the agent bill's COMMISSION (100) line, plus COMMISSION_VAT "
    "(110, all VAT) in the gross figure, allocated to the nights like every bill line (the "
    "sandbox posts these lines; the channel's rule is shown beside them, never used instead)"
)

CHANNEL_NET_REVENUE: dict[str, str] = {
    "month_start": "Month of the nights.",
    "distribution_channel_id": "Distribution channel of the reservations.",
    "distribution_channel_code": "Code of the channel.",
    "channel_type": "DIRECT, RESELLER or TOUROPERATOR.",
    "currency_code": "Currency of every money column of the row (from the channel).",
    "nights_sold": f"Stay nights of {_SOLD} sold through the channel.",
    "room_revenue_gross": f"Room revenue, VAT included as billed ({_MONEY}).",
    "room_revenue_net": f"Room revenue net of VAT ({_MONEY}).",
    "commission_gross": f"Commission with its VAT: {_COMMISSION} ({_MONEY}).",
    "commission_net": f"Commission without VAT (the 100 line only) ({_MONEY}).",
    "net_room_revenue_gross": "room_revenue_gross - commission_gross: what the room nights "
    f"earn after the channel's cut, VAT included ({_MONEY}).",
    "net_room_revenue_net": f"room_revenue_net - commission_net ({_MONEY}).",
    "adr_net": f"ADR net of VAT = room_revenue_net / nights_sold, {_DIV}.",
    "net_adr_gross": f"Net ADR = net_room_revenue_gross / nights_sold, {_DIV}.",
    "net_adr_net": f"Net ADR net of VAT = net_room_revenue_net / nights_sold, {_DIV}.",
    "commission_share_of_room": "commission_net / room_revenue_net (DOUBLE; null when no room "
    "revenue). The commission is a share of the whole agent bill (extras and tourist tax "
    "included), so this exceeds the rule's percentage.",
    "commission_percentage": "The channel's commission rule in force on the month's first day "
    "(the percentages of its COMMISSION_ADDONS valid then, from /distributionchannels/details); "
    "0 for a channel without commission.",
}

ANCILLARY_REVENUE: dict[str, str] = {
    "month_start": "Month of the nights.",
    "location_id": "Location (park) of the stays.",
    "currency_code": "Currency of every money column of the row (from the channel).",
    "addon_category_code": "Category of the add-on the extra lines bill (categoryCode of "
    "/add-ons: LINEN, CLEANING, PETS, INSURANCE in the sandbox); UNCATEGORISED when a line's "
    "resource is no known add-on. Every EXTRA add-on category has a row wherever stays were "
    "in house.",
    "extra_revenue_gross": "Extra bill lines (revenue class extra: EXTRA resources of lines 10 "
    f"and 20, stay articles 130) of {_SOLD}, allocated to the month's nights like every line "
    f"(core.fct_bill_line_nights), VAT included as billed ({_MONEY}).",
    "extra_revenue_net": f"The same net of VAT ({_MONEY}).",
    "stays": f"Stays in house: {_SOLD} with a stay night in the month at the location.",
    "stays_with_addon": "Those stays whose bills carry an extra line of the category with a "
    "non-zero total.",
    "attach_rate": "stays_with_addon / stays (DOUBLE; null without stays): the share of stays "
    "that bought the category.",
    "nights_available": "Unit nights available at the location in the month (contracts.md "
    "section 2), the same on every currency's rows.",
    "trevpar_part_gross": "The category's part of TRevPAR: extra_revenue_gross / "
    f"nights_available, {_DIV}. TRevPAR = RevPAR (revenue_daily) + the parts of every category.",
    "trevpar_part_net": f"The same net of VAT, {_DIV}.",
}

GUEST_MIX: dict[str, str] = {
    "month_start": "Arrival month of the stays.",
    "dimension": "What the stays are split by, one at a time: guest_type, country, party_size, "
    "length_of_stay, booking_window, arrival_weekday. Each dimension's rows add up to the "
    "month's stays.",
    "bucket": "The value: guest_type first / repeat (repeat: the customer, merges resolved, "
    "has a stay arriving earlier; ties by reservation id); country the customer's countryCode "
    "(UNKNOWN when none); party_size persons booked (PERSON subjects; 6+); length_of_stay "
    "nights (1, 2, 3, 4, 5-6, 7, 8-13, 14+); booking_window days from the booking date to "
    "arrival (0-6, 7-13, 14-29, 30-59, 60-89, 90-179, 180+); arrival_weekday MON..SUN.",
    "bucket_order": "Sort order of the buckets within a dimension (the lowest value of a range; "
    "ISO weekday; 0 for country).",
    "stays": f"{_SOLD} arriving in the month, in the bucket.",
    "nights": "Their nights (departure - arrival).",
    "guests": "Their persons booked.",
    "share_of_stays": "stays / the month's stays (DOUBLE): for guest_type 'repeat' the "
    "repeat-guest share; for country the country mix.",
}

_OFFER_STAYS = f"{_SOLD} whose bills carry a discount line of the offer"

OFFER_DISCOUNT: dict[str, str] = {
    "month_start": "Month of the nights.",
    "offer_id": "The offer: resourceId of the discount bill lines (item lines of resourceType "
    "SPECIAL), the resourceId of /offers.",
    "offer_code": "Code of the offer (null when the lake has no such offer: the asset check "
    "`offer_discounts_are_attributed` reports it).",
    "offer_name": "Name of the offer.",
    "currency_code": "Currency of every money column of the row (from the channel).",
    "bookings": f"Stays in house: {_OFFER_STAYS}, with a stay night in the month.",
    "nights": "Stay nights of those stays in the month.",
    "discount_amount": "What the offer took off the rent on the month's nights: minus its "
    "discount lines, allocated to the nights like every line (core.fct_bill_line_nights), VAT "
    f"included as billed; positive for a discount ({_MONEY}).",
    "discount_amount_net": f"The same net of VAT ({_MONEY}).",
    "room_revenue": "Room revenue of those stays on the month's nights, VAT included as billed, "
    f"after the discount (the discount lines are room revenue) ({_MONEY}).",
    "room_revenue_before_discount": "room_revenue + discount_amount: what the same nights would "
    f"have cost without the offer ({_MONEY}).",
    "discount_rate": "discount_amount / room_revenue_before_discount (DOUBLE; null when that is "
    "0): the share of the rent the offer gave away.",
}
