"""The lake tables of offers and what can be added to a stay: offers with their rates, the
additions of accommodation types and offers, and the implies of types, add-ons and offers (`lake.tables` registers them in `TABLES`; the wire
shapes are the sandbox's, docs/contracts.md section 1, since the interface shows none).

Only the key is required, as for every table of `lake.tables`.
"""

from __future__ import annotations

from lake.schema import RATE_QUANTIFIERS, RATE_STATUSES, Table, col, id_col


def _additions(name: str) -> Table:
    return Table(
        name,
        (
            id_col("additionId", required=True),
            id_col("resourceId"),
            id_col("addonResourceId"),
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
            id_col("resourceId", required=True),
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
            id_col("rateId", required=True),
            id_col("resourceId", required=True),
            id_col("rateTypeId"),
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
    # Implies: the mandatory costs (add-ons) a holder brings along, read per holder. The facade
    # stamps holderKind and holderId from the path it read (`ReservationService.holder_list`),
    # so the key never depends on the record naming its holder.
    Table(
        "implies",
        (
            col("holderKind", required=True),
            id_col("holderId", required=True),
            id_col("implyId", required=True),
            id_col("impliedResourceId"),
            col("impliedCode"),
            col("quantity", "int"),
            col("validFrom", "date"),
            col("validTo", "date"),
        ),
        ("holder_kind", "holder_id", "imply_id"),
        ignored=("resourceId", "unitId", "holderType"),
    ),
)
