-- Net revenue per month x distribution channel x currency: the room revenue of on-the-books
-- guest stays less the commission the channel earns, as the bills carry it (the agent bill's
-- COMMISSION 100 line, and COMMISSION_VAT 110, which is all VAT), allocated to the nights like
-- every bill line; gross (VAT included, as billed) and net (VAT excluded); net ADR per night
-- sold, and the channel's commission rule in force on the month's first day for reference.

with channel_mix as (
    select * from marts.channel_mix_monthly
),

rules as (
    select * from core.dim_channel_commission_rules
),

-- nights, room revenue and commission per month x channel x currency are channel_mix's (one
-- definition of what a channel sold)
monthly as (
    select
        month_start,
        distribution_channel_id,
        distribution_channel_code,
        channel_type,
        currency_code,
        nights_sold,
        room_revenue_gross,
        room_revenue_net,
        commission_gross,
        commission_net,
    from channel_mix
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
        monthly.distribution_channel_code,
        monthly.channel_type,
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
    left join rule_in_force
        on monthly.month_start = rule_in_force.month_start
        and monthly.distribution_channel_id = rule_in_force.distribution_channel_id
)

select * from final
