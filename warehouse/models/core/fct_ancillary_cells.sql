-- incremental sums over core.fct_ancillary_stay_months by month_start, location_id, currency_code, addon_category_code
-- The cells of marts.ancillary_revenue_monthly: what the on-the-books guest stays of
-- core.fct_ancillary_stay_months add per month x location x currency x add-on category (the
-- rows without a category: the stays in house there). Every measure is a sum over stays, so a
-- refresh adds the changed reservations' new rows and subtracts their old ones.

with stay_months as (
    select * from core.fct_ancillary_stay_months
),

final as (
    select
        month_start,
        location_id,
        currency_code,
        addon_category_code,
        cast(sum(stays) as bigint) as stays,
        cast(sum(stays_with_addon) as bigint) as stays_with_addon,
        cast(sum(extra_line_nights) as bigint) as extra_line_nights,
        sum(extra_cents) as extra_cents,
        sum(extra_net_cents) as extra_net_cents,
    from stay_months
    group by month_start, location_id, currency_code, addon_category_code
)

select * from final
