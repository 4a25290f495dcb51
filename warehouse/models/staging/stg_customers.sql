-- incremental by customer_id
-- incremental changes every affected key
-- Customers without PII: ids, country, language, loyalty level and timestamps only (never a
-- name, contact, address or birth year, even when a lake holds one).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.customers
),

final as (
    select
        customer_id,
        country_code,
        language,
        loyalty_level,
        created_date as created_at,
        modified_date as modified_at,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
