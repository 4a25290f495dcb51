-- incremental sums over core.fct_reconciliation_bills by company_id, month_start, currency_code
-- The bill side of marts.revenue_reconciliation per company x month x currency: the sums of
-- core.fct_reconciliation_bills (a refresh adds the changed reservations' new rows and subtracts
-- their old ones).

with bills as (
    select * from core.fct_reconciliation_bills
),

final as (
    select
        company_id,
        month_start,
        currency_code,
        sum(bill_revenue) as bill_revenue,
        sum(lines) as lines,
    from bills
    group by all
)

select * from final
