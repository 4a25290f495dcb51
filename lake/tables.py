"""The lake's tables as data: every table's columns (wire field, type, rules), key and parent.

Adding an endpoint is one entry in `assets.catalogue` plus its table in the module of its area
(listed below); the table drives normalisation, the Parquet schema, the Dagster column schema, the
warehouse's typed views and the current-state rule (docs/contracts.md section 3).

`required=True` (a null or absent value quarantines the record) is kept for what identifies a
row: the key columns and the link to the parent. real-service-notes.md never says that any other
field is always present, so every other column is nullable: a record that lacks an optional field
lands with a null there (the strict sandbox leaves such fields out at random). The one exception
is `customer_merges.customer_id`: a MERGE event carries the surviving customer in `entityId`
(interface, "Events"), and a merge without it means nothing.
"""

from __future__ import annotations

from lake.schema import Table
from lake.tables_commercial import COMMERCIAL_TABLES
from lake.tables_finance import FINANCE_TABLES
from lake.tables_offers import OFFER_TABLES
from lake.tables_reference import REFERENCE_TABLES
from lake.tables_reservations import RESERVATION_TABLES
from lake.tables_supply import SUPPLY_TABLES

# By area, in the order every reader lists them: what is sold and at what price
# (`lake.tables_reference`), the books (`lake.tables_finance`), reservations and customers
# (`lake.tables_reservations`), the supply areas (`lake.tables_supply`), add-ons and owners
# (`lake.tables_commercial`), offers, additions and implies (`lake.tables_offers`).
TABLES: dict[str, Table] = {
    t.name: t
    for area in (
        REFERENCE_TABLES,
        FINANCE_TABLES,
        RESERVATION_TABLES,
        SUPPLY_TABLES,
        COMMERCIAL_TABLES,
        OFFER_TABLES,
    )
    for t in area
}
