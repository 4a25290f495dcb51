-- Revenue per night and currency across the group: each tenant's revenue_daily summed over its
-- parks and accommodation types, then over the tenants, within one currency (figures in
-- different currencies are never summed). ADR and RevPAR are recomputed from the summed revenue
-- and nights of that currency, never averaged.

with revenue as (
    select * from tenants.revenue_daily
),

summed as (
    select
        date_day,
        currency_code,
        cast(count(distinct tenant) as bigint) as tenants,
        cast(sum(room_revenue_gross) as decimal(18, 2)) as room_revenue_gross,
        cast(sum(room_revenue_net) as decimal(18, 2)) as room_revenue_net,
        cast(sum(total_revenue_gross) as decimal(18, 2)) as total_revenue_gross,
        cast(sum(total_revenue_net) as decimal(18, 2)) as total_revenue_net,
        cast(sum(commission_gross) as decimal(18, 2)) as commission_gross,
        cast(sum(commission_net) as decimal(18, 2)) as commission_net,
        cast(sum(cancellation_revenue) as decimal(18, 2)) as cancellation_revenue,
        cast(sum(nights_sold) as bigint) as nights_sold,
        cast(sum(nights_available) as bigint) as nights_available,
    from revenue
    group by date_day, currency_code
),

final as (
    select
        *,
        div_money(room_revenue_gross, nights_sold) as adr_gross,
        div_money(room_revenue_net, nights_sold) as adr_net,
        div_money(room_revenue_gross, nights_available) as revpar_gross,
        div_money(room_revenue_net, nights_available) as revpar_net,
    from summed
)

select * from final
