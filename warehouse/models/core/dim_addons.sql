-- Add-ons (the resources of EXTRA and SPECIAL bill lines) with their category.

with addons as (
    select * from staging.stg_addons
),

final as (
    select
        addon_id,
        addon_code,
        addon_name,
        addon_type,
        addon_category_id,
        addon_category_code,
        addon_category_name,
        price_type,
        vat_rate,
    from addons
)

select * from final
