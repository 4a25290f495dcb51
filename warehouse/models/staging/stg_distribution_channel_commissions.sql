-- Commission add-ons of each distribution channel (child of distribution_channels, from the
-- details list's COMMISSION_ADDONS): a percentage of the agent bill's total plus VAT on it.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.distribution_channel_commissions
),

final as (
    select
        commission_addon_id,
        distribution_channel_id,
        name as commission_name,
        percentage as commission_percentage,
        calculation_base,
        vat_rate as commission_vat_rate,
        valid_from,
        valid_to,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
