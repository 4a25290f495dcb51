-- Distribution channels (booking sources); currency and commission come from here.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.distribution_channels
),

final as (
    select
        distribution_channel_id,
        code as distribution_channel_code,
        name as distribution_channel_name,
        type as channel_type,
        parent_id,
        currency_id,
        currency_code,
        commission_percentage,
        active_start_date,
        active_end_date,
        archived_from,
        allotment_only,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
