-- Companies (legal entities) with their bookkeeping currency.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.companies
),

final as (
    select
        company_id,
        code as company_code,
        name as company_name,
        admin_organisation_id,
        currency_code,
        country_code,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
