-- Locations (parks) with their company and the company's currency.

with locations as (
    select * from staging.stg_locations
),

companies as (
    select * from core.dim_companies
),

final as (
    select
        locations.location_id,
        locations.location_code,
        locations.location_name,
        locations.location_number,
        locations.parent_id as parent_location_id,
        locations.company_id,
        companies.company_code,
        companies.currency_code,
        locations.bookable_location as is_bookable,
        locations.archived_from,
        locations.city,
        locations.country_code,
    from locations
    left join companies
        on locations.company_id = companies.company_id
)

select * from final
