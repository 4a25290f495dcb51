-- incremental by accommodation_type_id, arrival_date from lake.availability: resource_id, arrival_date
-- incremental narrows its inputs
-- incremental changes every affected key
-- Availability index records: accommodation type x arrival date x duration.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.
--
-- Maintained by accommodation type x arrival date, as staging.stg_availability_prices.

with source as (
    select * from lake_current.availability
),

final as (
    select
        resource_id as accommodation_type_id,
        arrival_date,
        duration,
        accommodation_kind_id,
        location_id,
        location_code,
        departure_date,
        available_units,
        units,
        max_capacity,
        pet_capacity,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
