-- Net revenue per month x distribution channel x currency: the room revenue of on-the-books
-- guest stays less the commission the channel earns, as the bills carry it (the agent bill's
-- COMMISSION 100 line, and COMMISSION_VAT 110, which is all VAT), allocated to the nights like
-- every bill line; gross (VAT included, as billed) and net (VAT excluded); net ADR per night
-- sold, and the channel's commission rule in force on the month's first day for reference.

with stay_nights as (
    select * from core.fct_stay_nights
),

channels as (
    select * from core.dim_distribution_channels
),

rules as (
    select * from core.dim_channel_commission_rules
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
        sum(stay_nights.commission) as commission_gross,
        sum(stay_nights.commission_net) as commission_net,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
    group by all
),

rule_in_force as (
    select
        monthly.month_start,
        monthly.distribution_channel_id,
        sum(rules.commission_percentage) as commission_percentage,
    from monthly
    inner join rules
        on monthly.distribution_channel_id = rules.distribution_channel_id
        and (rules.valid_from is null or rules.valid_from <= monthly.month_start)
        and (rules.valid_to is null or rules.valid_to >= monthly.month_start)
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
        cast(monthly.commission_gross as decimal(18, 2)) as commission_gross,
        cast(monthly.commission_net as decimal(18, 2)) as commission_net,
        cast(monthly.room_revenue_gross - monthly.commission_gross as decimal(18, 2))
            as net_room_revenue_gross,
        cast(monthly.room_revenue_net - monthly.commission_net as decimal(18, 2))
            as net_room_revenue_net,
        div_money(monthly.room_revenue_net, monthly.nights_sold) as adr_net,
        div_money(monthly.room_revenue_gross - monthly.commission_gross, monthly.nights_sold)
            as net_adr_gross,
        div_money(monthly.room_revenue_net - monthly.commission_net, monthly.nights_sold)
            as net_adr_net,
        safe_ratio(monthly.commission_net, monthly.room_revenue_net) as commission_share_of_room,
        coalesce(rule_in_force.commission_percentage, 0.0) as commission_percentage,
    from monthly
    left join channels
        on monthly.distribution_channel_id = channels.distribution_channel_id
    left join rule_in_force
        on monthly.month_start = rule_in_force.month_start
        and monthly.distribution_channel_id = rule_in_force.distribution_channel_id
)

select * from final
