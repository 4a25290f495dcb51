-- Accommodation types with their location and unit count.

with accommodation_types as (
    select * from staging.stg_accommodation_types
),

units as (
    select * from staging.stg_units
),

locations as (
    select * from core.dim_locations
),

unit_counts as (
    select
        accommodation_type_id,
        count(*) as unit_count,
    from units
    group by accommodation_type_id
),

final as (
    select
        accommodation_types.accommodation_type_id,
        accommodation_types.accommodation_type_code,
        accommodation_types.accommodation_type_name,
        accommodation_types.kind_code,
        accommodation_types.location_id,
        locations.location_code,
        locations.company_id,
        accommodation_types.nr_of_bedrooms,
        accommodation_types.nr_of_bathrooms,
        accommodation_types.number_of_persons,
        accommodation_types.priority,
        accommodation_types.archived_from,
        coalesce(unit_counts.unit_count, 0) as unit_count,
    from accommodation_types
    left join locations
        on accommodation_types.location_id = locations.location_id
    left join unit_counts
        on accommodation_types.accommodation_type_id = unit_counts.accommodation_type_id
)

select * from final
