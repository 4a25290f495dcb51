-- Bill-based vs journal-based revenue per company x month x currency. Bill side: item lines of
-- on-the-books reservations by booking month, tourist tax (line 250, revenue_class 'tax') left
-- out: the service posts it to a non-revenue ledger, and it is not revenue (docs/contracts.md);
-- plus the cancellation compensation (line 190, revenue_class 'cancellation') of cancelled
-- reservations by cancellation month, which the service posts to a revenue ledger when it
-- reverses the booking. Journal side: credit - debit (VAT included) on revenue ledgers (8xxx)
-- by mutation month. Cumulative columns absorb timing differences between booking and
-- posting; the asset check compares the all-time totals.

-- The two sides are summed by core.fct_reconciliation_bill_cells and
-- core.fct_reconciliation_journal_cells (maintained by adding what changed), so a refresh
-- rebuilds this small mart whole from them.

with bill_cells as (
    select * from core.fct_reconciliation_bill_cells
),

journal_cells as (
    select * from core.fct_reconciliation_journal_cells
),

bills as (
    select
        company_id,
        month_start,
        currency_code,
        bill_revenue,
    from bill_cells
),

journals as (
    select
        company_id,
        month_start,
        currency_code,
        journal_revenue,
        journal_revenue_vat_excluded,
    from journal_cells
),

joined as (
    select
        company_id,
        month_start,
        currency_code,
        cast(coalesce(bills.bill_revenue, 0) as decimal(18, 2)) as bill_revenue,
        cast(coalesce(journals.journal_revenue, 0) as decimal(18, 2)) as journal_revenue,
        cast(coalesce(journals.journal_revenue_vat_excluded, 0) as decimal(18, 2))
            as journal_revenue_vat_excluded,
    from bills
    full outer join journals
        using (company_id, month_start, currency_code)
),

final as (
    select
        *,
        bill_revenue - journal_revenue as difference,
        cast(sum(bill_revenue) over w as decimal(18, 2)) as cumulative_bill_revenue,
        cast(sum(journal_revenue) over w as decimal(18, 2)) as cumulative_journal_revenue,
        cast(sum(bill_revenue - journal_revenue) over w as decimal(18, 2))
            as cumulative_difference,
    from joined
    window w as (
        partition by company_id, currency_code order by month_start
        rows between unbounded preceding and current row
    )
)

select * from final
