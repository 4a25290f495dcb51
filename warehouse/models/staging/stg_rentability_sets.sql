-- Rentability sets: the rule a stay must meet (allowed arrival weekdays, minimum and maximum
-- nights). Current state per the lake contract; renamed and cast only.

with source as (
    select * from lake_current.rentability_sets
),

final as (
    select
        rentability_set_id,
        name as rentability_set_name,
        arrival_days,
        min_duration,
        max_duration,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
