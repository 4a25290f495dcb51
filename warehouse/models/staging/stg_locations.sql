-- Locations (parks); each belongs to one company, through its admin organisation.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.locations
),

final as (
    select
        location_id,
        code as location_code,
        location_number,
        parent_id,
        admin_organisation_id,
        company_id,
        bookable_location,
        archived_from,
        min_age_for_booking,
        name as location_name,
        visit_address_address1 as address_line_1,
        visit_address_zip_code as zip_code,
        visit_address_city as city,
        visit_address_country_code as country_code,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
