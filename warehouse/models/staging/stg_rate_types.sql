-- Rate types (price lists), each in one currency.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.rate_types
),

final as (
    select
        rate_type_id,
        code as rate_type_code,
        name as rate_type_name,
        currency_code,
        distribution_channel_ids,
        priority,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
