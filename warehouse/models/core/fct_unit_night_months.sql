-- incremental sums over core.fct_unit_nights by month_start, location_id
-- Supply per month x location: the unit nights of core.fct_unit_nights (the reporting range)
-- and those available (nights_available), the supply of marts.ancillary_revenue_monthly. Sums
-- over unit nights, so a refresh adds the changed unit nights' new rows and subtracts their
-- old ones rather than counting every unit night of the months and locations they reach.

with unit_nights as (
    select * from core.fct_unit_nights
),

final as (
    select
        cast(date_trunc('month', night_date) as date) as month_start,
        location_id,
        count(*) as unit_nights,
        count(*) filter (where is_available) as nights_available,
    from unit_nights
    group by all
)

select * from final
