-- Rate options of rate types.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.rate_options
),

final as (
    select
        rate_option_id,
        rate_type_id,
        code as rate_option_code,
        name as rate_option_name,
        option_type,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
