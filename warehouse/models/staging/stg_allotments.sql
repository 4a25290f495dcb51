-- Allotments: units of an accommodation type held for a distribution channel on the nights
-- start_date <= D < end_date, released release_days before each night.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.allotments
),

final as (
    select
        allotment_id,
        resource_id as accommodation_type_id,
        distribution_channel_id,
        start_date,
        end_date,
        quantity,
        release_days,
        created_date as created_at,
        modified_date as modified_at,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
