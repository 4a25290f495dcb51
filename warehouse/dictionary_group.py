"""What every column of the group warehouse means (`group.duckdb`, `warehouse.group`): the
`tenant` column of the stacked tenant marts, and the group marts summed across tenants.

The stacked marts (`tenants.<mart>`) keep each tenant mart's own descriptions
(`warehouse.dictionary`); `tests/test_tenants.py` fails on a group column without one.
"""

from __future__ import annotations

from warehouse.dictionary import COMMON

TENANT = (
    "The tenant (concern) the row belongs to: its name in the tenants file "
    "(RESERVOIR_TENANTS_FILE)."
)
TENANTS = "How many tenants have a row for this key (count of distinct tenants)."
_SUMMED = "summed over the tenants' rows (and their parks and accommodation types)"
_MONEY_SUM = f"DECIMAL(18,2) in the row's currency_code, {_SUMMED}; never across currencies."
_RATIO = "DOUBLE ratio of the summed counts; null when the divisor is 0; never an average"
_DIV = "rounded half away from zero to the cent; null when the divisor is 0"

GROUP_MARTS: dict[str, dict[str, str]] = {
    "marts.group_occupancy_daily": {
        "date_day": COMMON["date_day"],
        "tenants": TENANTS,
        "nights_available": f"Supply nights (units available), {_SUMMED}.",
        "nights_sold": f"Nights sold (on-the-books guest stays), {_SUMMED}.",
        "owner_hold_nights": f"Owner and hold nights, {_SUMMED}.",
        "occupancy": f"nights_sold / nights_available of the group; {_RATIO}.",
        "available_occupancy": (
            f"nights_sold / (nights_available - owner_hold_nights) of the group; {_RATIO}."
        ),
    },
    "marts.group_revenue_daily": {
        "date_day": COMMON["date_day"],
        "currency_code": COMMON["currency_code"],
        "tenants": TENANTS,
        "room_revenue_gross": f"Room revenue, VAT included (as billed). {_MONEY_SUM}",
        "room_revenue_net": f"Room revenue, VAT excluded. {_MONEY_SUM}",
        "total_revenue_gross": f"Total revenue (rooms and add-ons), VAT included. {_MONEY_SUM}",
        "total_revenue_net": f"Total revenue (rooms and add-ons), VAT excluded. {_MONEY_SUM}",
        "commission_gross": f"Channel commission, VAT included. {_MONEY_SUM}",
        "commission_net": f"Channel commission, VAT excluded. {_MONEY_SUM}",
        "cancellation_revenue": f"Cancellation compensation retained. {_MONEY_SUM}",
        "nights_sold": f"Nights sold in this currency, {_SUMMED}.",
        "nights_available": (
            f"Supply nights on this currency's rows, {_SUMMED} (each tenant mart puts its supply "
            "on every currency it reports; divide within one currency only)."
        ),
        "adr_gross": f"room_revenue_gross / nights_sold of the group, {_DIV}.",
        "adr_net": f"room_revenue_net / nights_sold of the group, {_DIV}.",
        "revpar_gross": f"room_revenue_gross / nights_available of the group, {_DIV}.",
        "revpar_net": f"room_revenue_net / nights_available of the group, {_DIV}.",
    },
    "marts.group_channel_mix_monthly": {
        "month_start": COMMON["month_start"],
        "distribution_channel_code": (
            "Code of the distribution channel: the tenants' channels with the same code are "
            "one channel of the group (their ids are each concern's own)."
        ),
        "currency_code": COMMON["currency_code"],
        "tenants": TENANTS,
        "nights_sold": f"Nights sold through the channel, {_SUMMED}.",
        "room_revenue_gross": f"Room revenue, VAT included. {_MONEY_SUM}",
        "room_revenue_net": f"Room revenue, VAT excluded. {_MONEY_SUM}",
        "total_revenue_gross": f"Total revenue, VAT included. {_MONEY_SUM}",
        "total_revenue_net": f"Total revenue, VAT excluded. {_MONEY_SUM}",
        "commission_gross": f"Channel commission, VAT included. {_MONEY_SUM}",
        "commission_net": f"Channel commission, VAT excluded. {_MONEY_SUM}",
        "nights_share": (
            f"The channel's share of the group's nights in the month, all currencies; {_RATIO}."
        ),
        "room_revenue_share": (
            "The channel's share of the group's net room revenue in the month, within this "
            f"currency; {_RATIO}."
        ),
    },
}
