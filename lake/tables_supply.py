"""The lake tables of the supply areas: operations tasks, allotments, rentability and
reservability (`lake.tables` registers them in `TABLES`; the wire shapes are the sandbox's,
docs/contracts.md section 1, since the interface shows none).

Only the key is required, as for every table of `lake.tables`.
"""

from __future__ import annotations

from lake.schema import Table, col, id_col

SUPPLY_TABLES: tuple[Table, ...] = (
    # Operations (docs/contracts.md: the sandbox's shape, the interface shows none): tasks with the
    # issue/incident they resolve and the nights they take a unit out of order.
    Table(
        "operation_tasks",
        (
            id_col("taskId", required=True),
            id_col("issueIncidentId"),
            id_col("locationId"),
            id_col("resourceId"),
            id_col("unitId"),
            col("taskType"),
            col("description"),
            col("status"),
            col("outOfOrder", "bool"),
            col("outOfOrderFrom", "date"),  # the first night out of order
            col("outOfOrderTo", "date"),  # the day after the last night (as a departure date)
            col("createdDate", "datetime"),
            col("modifiedDate", "datetime"),
        ),
        ("task_id",),
    ),
    Table(
        "periodical_tasks",
        (
            id_col("periodicalTaskId", required=True),
            id_col("locationId"),
            col("taskType"),
            col("description"),
            col("intervalDays", "int"),
            col("startDate", "date"),
            col("endDate", "date"),
        ),
        ("periodical_task_id",),
    ),
    # Allotments (docs/contracts.md: the sandbox's shape): units of a type held for a channel on the
    # nights startDate <= D < endDate, released releaseDays before each night.
    Table(
        "allotments",
        (
            id_col("allotmentId", required=True),
            id_col("resourceId"),
            id_col("distributionChannelId"),
            col("startDate", "date"),
            col("endDate", "date"),
            col("quantity", "int"),
            col("releaseDays", "int"),
            col("createdDate", "datetime"),
            col("modifiedDate", "datetime"),
        ),
        ("allotment_id",),
    ),
    # Rentability (docs/contracts.md: the sandbox's shape): rules (sets) and which rule holds for a
    # resource's arrivals per period; reservability of each resource.
    Table(
        "rentability_sets",
        (
            id_col("rentabilitySetId", required=True),
            col("name"),
            col("arrivalDays", "str_list"),
            col("minDuration", "int"),
            col("maxDuration", "int"),
        ),
        ("rentability_set_id",),
    ),
    Table(
        "rentability_config",
        (
            id_col("rentabilityConfigId", required=True),
            id_col("resourceId"),
            col("resourceType"),
            id_col("distributionChannelId"),
            id_col("rentabilitySetId"),
            col("startDate", "date"),  # arrivals from this date ...
            col("endDate", "date"),  # ... to the day before this one
            col("modifiedDate", "datetime"),
        ),
        ("rentability_config_id",),
    ),
    Table(
        "resource_reservability",
        (
            id_col("reservabilityId", required=True),
            id_col("resourceId"),
            col("resourceType"),
            col("reservable", "bool"),
            col("reservableOnInternet", "bool"),
            col("modifiedDate", "datetime"),
        ),
        ("reservability_id",),
    ),
)
