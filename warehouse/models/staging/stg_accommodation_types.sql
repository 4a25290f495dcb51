-- Accommodation types (resources of type ACCOMMODATIONTYPE).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.accommodation_types
),

final as (
    select
        resource_id as accommodation_type_id,
        code as accommodation_type_code,
        location_id,
        accotype_kind_id,
        kind_code,
        type as resource_type,
        nr_of_bedrooms,
        nr_of_bathrooms,
        number_of_persons,
        has_objects,
        priority,
        checkin_time,
        checkout_time,
        archived_from,
        name as accommodation_type_name,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
