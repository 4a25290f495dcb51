-- Cancellation insurance add-ons of each distribution channel (child of distribution_channels,
-- from the details list's CANCELLATION_ADDONS): a percentage of the stay, with its validity.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.distribution_channel_cancellation_addons
),

final as (
    select
        cancellation_addon_id,
        distribution_channel_id,
        resource_id as addon_resource_id,
        name as addon_name,
        percentage as addon_percentage,
        valid_from,
        valid_to,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
