"""The lake tables of add-ons with their prices and of owners with their contracts (`lake.tables`
registers them in `TABLES`).
"""

from __future__ import annotations

from lake.schema import Table, col, id_col, table

COMMERCIAL_TABLES: tuple[Table, ...] = (
    table(
        "addons",
        ("resource_id",),
        id_col("resourceId", required=True),
        col("code"),
        col("name"),
        col("type"),
        id_col("addonCategoryId"),
        col("categoryCode"),
        col("categoryName"),
        col("priceType"),
        col("vatRate", "float"),
        col("choosableOnInternet", "bool"),
        col("description"),
        col("archivedFrom", "date"),
        ignored=("prices",),
    ),
    table(
        "addon_prices",
        ("addon_price_id",),
        id_col("addonPriceId", required=True),
        id_col("resourceId", required=True),
        col("currencyCode"),
        col("price", "money"),
        col("validFrom", "date"),
        col("validTo", "date"),
        parent="addons",
        parent_key={"resource_id": "resource_id"},
    ),
    table(
        "owners",
        ("owner_id",),
        id_col("ownerId", required=True),
        col("code"),
        col("countryCode"),
        col("language"),
        col("createdDate", "datetime"),
        col("modifiedDate", "datetime"),
        # an owner is a private person: name, contact and address never land (not even with PII
        # allowed: nothing downstream needs them); the contracts become their own table
        ignored=("firstName", "lastName", "email", "phone", "address", "contracts"),
    ),
    table(
        "owner_contracts",
        ("contract_id",),
        id_col("contractId", required=True),
        id_col("ownerId", required=True),
        id_col("unitId"),
        id_col("resourceId"),
        col("contractType"),
        col("shareBasis"),
        col("revenueSharePercentage", "float"),
        col("startDate", "date"),
        col("endDate", "date"),
        parent="owners",
        parent_key={"owner_id": "owner_id"},
    ),
)
