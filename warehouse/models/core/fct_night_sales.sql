-- incremental sums over core.fct_stay_nights by date_day, currency_code
-- The sold nights of on-the-books guest stays in the reporting range per night x currency
-- (sold_nights, every one of them; nights_sold, the stay nights among them) and their room
-- revenue, VAT included: marts.sales_daily's nights and room revenue summed over location,
-- type, channel and booking window, which marts.forecast_daily reads for last year's nights.
-- Every measure is a sum over stay nights, so a refresh adds the changed stay nights' new rows
-- and subtracts their old ones (summing the sales mart's ~3.7 million rows at large cost
-- forecast_daily ~0.05 CPU s an hour).

with stay_nights as (
    select * from core.fct_stay_nights
),

dates as (
    select * from core.dim_dates
),

final as (
    select
        dates.date_day,
        stay_nights.currency_code,
        count(*) as sold_nights,
        count(*) filter (where stay_nights.is_stay_night) as nights_sold,
        sum(stay_nights.room_revenue) as room_revenue_gross,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
    group by all
)

select * from final
