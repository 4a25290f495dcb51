-- Rates per accommodation type and rate type: value, quantifier (OVERRIDE / ABSOLUTE / RELATIVE)
-- and the windows they hold in (nights, arrival, booking date, length of stay).
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
        value as rate_value,
        quantifier,
        value_type,
        priority,
        valid_from as arrival_from,
        valid_to as arrival_to,
        usage_duration_from as nights_from,
        usage_duration_to as nights_to,
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
