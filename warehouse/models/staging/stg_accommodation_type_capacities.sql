-- Capacities of accommodation types (child of accommodation_types).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.accommodation_type_capacities
),

final as (
    select
        capacity_id,
        resource_id as accommodation_type_id,
        capacity,
        subject_id,
        start_date,
        end_date,
        name as capacity_name,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
