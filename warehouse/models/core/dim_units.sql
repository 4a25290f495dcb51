-- Units (rentable objects) with accommodation type, location and the dates they are rentable.

with units as (
    select * from staging.stg_units
),

accommodation_types as (
    select * from staging.stg_accommodation_types
),

final as (
    select
        units.unit_id,
        units.unit_code,
        units.unit_name,
        units.room_code,
        units.accommodation_type_id,
        accommodation_types.location_id,
        units.nr_of_bedrooms,
        units.setup_date,
        units.archived_from,
    from units
    left join accommodation_types
        on units.accommodation_type_id = accommodation_types.accommodation_type_id
)

select * from final
