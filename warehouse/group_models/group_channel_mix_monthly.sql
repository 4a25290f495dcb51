-- Channel mix per month x channel code x currency across the group: each tenant's
-- channel_mix_monthly summed over the tenants whose channel has that code (concerns number their
-- channels independently; the code is what they share), with each channel's share of the
-- group's nights in the month (all currencies) and of its net room revenue in that currency.

with channel_mix as (
    select * from tenants.channel_mix_monthly
),

summed as (
    select
        month_start,
        distribution_channel_code,
        currency_code,
        cast(count(distinct tenant) as bigint) as tenants,
        cast(sum(nights_sold) as bigint) as nights_sold,
        cast(sum(room_revenue_gross) as decimal(18, 2)) as room_revenue_gross,
        cast(sum(room_revenue_net) as decimal(18, 2)) as room_revenue_net,
        cast(sum(total_revenue_gross) as decimal(18, 2)) as total_revenue_gross,
        cast(sum(total_revenue_net) as decimal(18, 2)) as total_revenue_net,
        cast(sum(commission_gross) as decimal(18, 2)) as commission_gross,
        cast(sum(commission_net) as decimal(18, 2)) as commission_net,
    from channel_mix
    group by month_start, distribution_channel_code, currency_code
),

final as (
    select
        *,
        safe_ratio(
            nights_sold,
            sum(nights_sold) over (partition by month_start)
        ) as nights_share,
        safe_ratio(
            room_revenue_net,
            sum(room_revenue_net) over (partition by month_start, currency_code)
        ) as room_revenue_share,
    from summed
)

select * from final
