-- Units (rentable objects) of accommodation types, with setup and archive dates.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.units
),

final as (
    select
        unit_id,
        resource_id as accommodation_type_id,
        code as unit_code,
        room_code,
        nr_of_bedrooms,
        nr_of_bathrooms,
        choosable_on_internet,
        cleaning_status,
        setup_date,
        archived_from,
        name as unit_name,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
