-- incremental by reservation_id
-- incremental changes every affected key
-- Reserved resources of reservations (child of reservations): accommodation and extras.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.reserved_resources
),

final as (
    select
        reserved_resource_id,
        reservation_id,
        resource_id,
        unit_id,
        rate_type_id,
        type as resource_type,
        code as reserved_resource_code,
        name as reserved_resource_name,
        quantity,
        start_date,
        end_date,
        status_name,
        override_value,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
