-- Locations (parks) with their company and the company's currency. The company is found through
-- the location's admin organisation (adminOrganisationId, the documented field of a location;
-- the lowest company id when several companies share one); the companyId that the default
-- sandbox also serves is only the fallback for a location whose organisation has no company.

with locations as (
    select * from staging.stg_locations
),

companies as (
    select * from core.dim_companies
),

organisation_companies as (
    select
        admin_organisation_id,
        min(company_id) as company_id,
    from companies
    where admin_organisation_id is not null
    group by admin_organisation_id
),

located as (
    select
        locations.*,
        coalesce(organisation_companies.company_id, locations.company_id) as location_company_id,
    from locations
    left join organisation_companies
        on locations.admin_organisation_id = organisation_companies.admin_organisation_id
),

final as (
    select
        located.location_id,
        located.location_code,
        located.location_name,
        located.location_number,
        located.parent_id as parent_location_id,
        located.admin_organisation_id,
        located.location_company_id as company_id,
        companies.company_code,
        companies.currency_code,
        located.bookable_location as is_bookable,
        located.archived_from,
        located.city,
        located.country_code,
    from located
    left join companies
        on located.location_company_id = companies.company_id
)

select * from final
