-- Rentability config: the set that holds for a resource's arrivals from start_date to the day
-- before end_date, for one channel or (null) every channel. Current state per the lake
-- contract; renamed and cast only.

with source as (
    select * from lake_current.rentability_config
),

final as (
    select
        rentability_config_id,
        resource_id,
        resource_type,
        distribution_channel_id,
        rentability_set_id,
        start_date,
        end_date,
        modified_date as modified_at,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
