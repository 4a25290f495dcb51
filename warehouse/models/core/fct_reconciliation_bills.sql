-- incremental by reservation_id
-- The bill side of marts.revenue_reconciliation per reservation x currency: the item lines of an
-- on-the-books reservation by its booking month, tourist tax (revenue_class 'tax') left out, or
-- the cancellation compensation (revenue_class 'cancellation') of a cancelled one by its
-- cancellation month; with the reservation's company. Per reservation, so maintained by
-- reservation; core.fct_reconciliation_bill_cells sums it.

with bill_lines as (
    select * from core.fct_bill_lines
),

reservations as (
    select * from core.fct_reservations
),

final as (
    select
        reservations.reservation_id,
        reservations.company_id,
        cast(date_trunc(
            'month',
            case
                when reservations.is_cancelled
                    then coalesce(reservations.cancelled_on, reservations.booking_date)
                else reservations.booking_date
            end
        ) as date) as month_start,
        bill_lines.currency_code,
        sum(bill_lines.total) as bill_revenue,
        count(*) as lines,
    from bill_lines
    inner join reservations
        on bill_lines.reservation_id = reservations.reservation_id
    where bill_lines.line_class = 'item'
        and bill_lines.revenue_class <> 'tax'
        and (
            reservations.is_on_the_books
            or (reservations.is_cancelled and bill_lines.revenue_class = 'cancellation')
        )
    group by all
)

select * from final
