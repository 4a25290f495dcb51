-- Add-ons (extras and products) with their category.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.addons
),

final as (
    select
        resource_id as addon_id,
        code as addon_code,
        name as addon_name,
        type as addon_type,
        addon_category_id,
        category_code as addon_category_code,
        category_name as addon_category_name,
        price_type,
        vat_rate,
        choosable_on_internet,
        description,
        archived_from,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
