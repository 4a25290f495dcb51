"""The lake tables of offers and what can be added to a stay: offers with their rates, and the
additions of accommodation types and offers (`lake.tables` registers them in `TABLES`; the wire
shapes are the sandbox's, docs/contracts.md section 1, since the interface shows none).

Only the key is required, as for every table of `lake.tables`.
"""

from __future__ import annotations

from lake.schema import RATE_QUANTIFIERS, RATE_STATUSES, Column, Table, col


def _id(source: str, **kw: object) -> Column:
    return col(source, "id", **kw)


def _additions(name: str) -> Table:
    return Table(
        name,
        (
            _id("additionId", required=True),
            _id("resourceId"),
            _id("addonResourceId"),
            col("addonCode"),
            col("mandatory", "bool"),
            col("maxQuantity", "int"),
            col("validFrom", "date"),
            col("validTo", "date"),
        ),
        ("addition_id",),
    )


OFFER_TABLES: tuple[Table, ...] = (
    # Offers (specials): a discount on the rent for stays that qualify; their bill lines name the
    # offer by resourceId (resourceType SPECIAL). The rates become their own table.
    Table(
        "offers",
        (
            _id("resourceId", required=True),
            col("code"),
            col("name"),
            col("type"),
            col("description"),
            col("discountPercentage", "float"),
            col("minDaysBeforeArrival", "int"),
            col("maxDaysBeforeArrival", "int"),
            col("rateTypeIds", "int_list"),
            col("choosableOnInternet", "bool"),
            col("validFrom", "date"),
            col("validTo", "date"),
            col("archivedFrom", "date"),
        ),
        ("resource_id",),
        ignored=("rates",),
    ),
    Table(
        "offer_rates",
        (
            _id("rateId", required=True),
            _id("resourceId", required=True),
            _id("rateTypeId"),
            col("rateTypeIds", "int_list"),
            col("value", "money"),
            col("quantifier", codes=RATE_QUANTIFIERS),
            col("valueType"),
            col("priority", "int"),
            col("validFrom", "date"),
            col("validTo", "date"),
            col("bookdateFrom", "date"),
            col("bookdateTo", "date"),
            col("minDeviation", "int"),
            col("maxDeviation", "int"),
            col("minDuration", "int"),
            col("maxDuration", "int"),
            col("status", "int", codes=RATE_STATUSES),
        ),
        ("rate_id",),
        parent="offers",
        parent_key={"resource_id": "resource_id"},
    ),
    # Additions: the add-ons a guest may add to an accommodation type or to an offer.
    _additions("accommodation_type_additions"),
    _additions("offer_additions"),
)
