-- Operations tasks: the issue/incident each resolves and the nights it takes a unit out of order
-- (out_of_order_from = first night, out_of_order_to = the day after the last, like a stay).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.operation_tasks
),

final as (
    select
        task_id,
        issue_incident_id,
        location_id,
        resource_id as accommodation_type_id,
        unit_id,
        task_type,
        description,
        status as task_status,
        out_of_order as is_out_of_order,
        out_of_order_from,
        out_of_order_to,
        created_date as created_at,
        modified_date as modified_at,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
