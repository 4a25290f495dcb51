-- Owners of privately owned units without PII: ids, country, language and timestamps only (a
-- name, contact or address never lands in the lake).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.owners
),

final as (
    select
        owner_id,
        code as owner_code,
        country_code,
        language,
        created_date as created_at,
        modified_date as modified_at,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
