-- incremental by month_start from core.fct_stay_nights: cast(date_trunc('month', night_date) as date)
-- Channel mix per month x distribution channel x currency: nights sold and revenue of
-- on-the-books guest stays, gross (VAT included, as billed) and net (VAT excluded), with each
-- channel's share of the month's nights (all currencies) and of the month's net room revenue in
-- that currency.

with stay_nights as (
    select * from core.fct_stay_nights
),

channels as (
    select * from core.dim_distribution_channels
),

dates as (
    select * from core.dim_dates
),

monthly as (
    select
        dates.month_start,
        stay_nights.distribution_channel_id,
        stay_nights.currency_code,
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
),

final as (
    select
        monthly.month_start,
        monthly.distribution_channel_id,
        channels.distribution_channel_code,
        channels.channel_type,
        monthly.currency_code,
        monthly.nights_sold,
        cast(monthly.room_revenue_gross as decimal(18, 2)) as room_revenue_gross,
        cast(monthly.room_revenue_net as decimal(18, 2)) as room_revenue_net,
        cast(monthly.total_revenue_gross as decimal(18, 2)) as total_revenue_gross,
        cast(monthly.total_revenue_net as decimal(18, 2)) as total_revenue_net,
        cast(monthly.commission_gross as decimal(18, 2)) as commission_gross,
        cast(monthly.commission_net as decimal(18, 2)) as commission_net,
        safe_ratio(
            monthly.nights_sold,
            sum(monthly.nights_sold) over (partition by monthly.month_start)
        ) as nights_share,
        safe_ratio(
            monthly.room_revenue_net,
            sum(monthly.room_revenue_net) over (
                partition by monthly.month_start, monthly.currency_code
            )
        ) as room_revenue_share,
    from monthly
    left join channels
        on monthly.distribution_channel_id = channels.distribution_channel_id
)

select * from final
