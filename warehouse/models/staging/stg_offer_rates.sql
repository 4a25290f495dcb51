-- Rates of each offer (child of offers): the discount per rate type and booking window.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.offer_rates
),

final as (
    select
        rate_id as offer_rate_id,
        resource_id as offer_id,
        rate_type_id,
        rate_type_ids,
        value,
        quantifier,
        value_type,
        priority,
        valid_from,
        valid_to,
        bookdate_from,
        bookdate_to,
        min_deviation,
        max_deviation,
        min_duration,
        max_duration,
        status,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
