-- incremental by month_start from core.fct_channel_months: month_start
-- incremental narrows its inputs
-- Channel mix per month x distribution channel x currency: nights sold and revenue of
-- on-the-books guest stays, gross (VAT included, as billed) and net (VAT excluded), with each
-- channel's share of the month's nights (all currencies) and of the month's net room revenue in
-- that currency. The sums of core.fct_channel_months (maintained by adding the changed stay
-- nights), maintained by month from the cells that moved.

with monthly as (
    select * from core.fct_channel_months
),

channels as (
    select * from core.dim_distribution_channels
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
