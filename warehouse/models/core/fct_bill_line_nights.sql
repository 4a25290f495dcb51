-- incremental by reservation_id
-- incremental changes every affected key
-- incremental stored by reservation_id in allocatable
-- Bill line x night: every item and commission line's money allocated to nights in integer cents
-- per contracts.md section 1 (a line's own period, else its reserved resource's, else the
-- accommodation's; a period of zero or negative length puts the whole line on its first night),
-- the first |cents| mod nights nights taking the extra cent; net_cents (the line's total less
-- its VAT) spread by the same rule. The one place this rule lives: core.fct_stay_nights sums
-- it per reservation night, marts.ancillary_revenue_monthly per add-on.

with reservations as (
    select * from core.fct_reservations
),

bill_lines as (
    select * from core.fct_bill_lines
),

reserved_resources as (
    select * from staging.stg_reserved_resources
),

allocatable as (
    select
        bill_lines.bill_line_id,
        bill_lines.reservation_id,
        bill_lines.line_class,
        bill_lines.revenue_class,
        bill_lines.resource_id,
        bill_lines.total_cents,
        bill_lines.total_cents - bill_lines.vat_cents as net_cents,
        case
            when bill_lines.start_date is not null and bill_lines.end_date is not null
                then bill_lines.start_date
            when reserved_resources.start_date is not null
                and reserved_resources.end_date is not null
                then reserved_resources.start_date
            else reservations.stay_start_date
        end as period_start,
        case
            when bill_lines.start_date is not null and bill_lines.end_date is not null
                then bill_lines.end_date
            when reserved_resources.start_date is not null
                and reserved_resources.end_date is not null
                then reserved_resources.end_date
            else reservations.stay_end_date
        end as period_end,
    from bill_lines
    inner join reservations
        on bill_lines.reservation_id = reservations.reservation_id
    left join reserved_resources
        on bill_lines.reserved_resource_id = reserved_resources.reserved_resource_id
    where bill_lines.line_class in ('item', 'commission')
        and bill_lines.total_cents <> 0
),

-- a period of zero or negative length puts the whole line on its first night
periods as (
    select
        *,
        greatest(coalesce(period_end - period_start, 1), 1) as night_count,
    from allocatable
    where period_start is not null
),

line_nights as (
    select
        *,
        unnest(range(0, night_count)) as night_index,
    from periods
),

allocated as (
    select
        bill_line_id,
        reservation_id,
        cast(period_start + cast(night_index as integer) as date) as night_date,
        line_class,
        revenue_class,
        resource_id,
        sign(total_cents) * (abs(total_cents) // night_count)
        + case when night_index < abs(total_cents) % night_count then sign(total_cents) else 0 end
            as cents,
        sign(net_cents) * (abs(net_cents) // night_count)
        + case when night_index < abs(net_cents) % night_count then sign(net_cents) else 0 end
            as net_cents,
    from line_nights
),

final as (
    select * from allocated
)

select * from final
