-- Prices of each add-on per currency (child of addons), with their validity.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.addon_prices
),

final as (
    select
        addon_price_id,
        resource_id as addon_id,
        currency_code,
        price,
        valid_from,
        valid_to,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
