-- Nightly rates per accommodation type and rate type.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.rates
),

final as (
    select
        rate_id,
        resource_id as accommodation_type_id,
        rate_type_id,
        rate_type_ids,
        rate_option_id,
        value as nightly_price,
        quantifier,
        value_type,
        priority,
        valid_from,
        valid_to,
        bookdate_from,
        bookdate_to,
        min_duration,
        max_duration,
        applicable_days,
        status as rate_status,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
