-- incremental sums over core.fct_stay_nights by month_start, distribution_channel_id, currency_code
-- The cells of marts.channel_mix_monthly: the sold nights of on-the-books guest stays in the
-- reporting range per month x distribution channel x currency (sold_nights, every one of them;
-- nights_sold, the stay nights among them) and their revenue and commission, gross and net.
-- Every measure is a sum over stay nights, so a refresh adds the changed stay nights' new rows
-- and subtracts their old ones rather than summing every stay night of the months they reach.

with stay_nights as (
    select * from core.fct_stay_nights
),

dates as (
    select * from core.dim_dates
),

final as (
    select
        dates.month_start,
        stay_nights.distribution_channel_id,
        stay_nights.currency_code,
        count(*) as sold_nights,
        count(*) filter (where stay_nights.is_stay_night) as nights_sold,
        sum(stay_nights.room_revenue) as room_revenue_gross,
        sum(stay_nights.room_revenue_net) as room_revenue_net,
        sum(stay_nights.total_revenue) as total_revenue_gross,
        sum(stay_nights.total_revenue_net) as total_revenue_net,
        sum(stay_nights.commission) as commission_gross,
        sum(stay_nights.commission_net) as commission_net,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
    group by all
)

select * from final
