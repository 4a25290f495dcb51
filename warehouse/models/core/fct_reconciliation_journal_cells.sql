-- incremental sums over core.fct_journal_entries by company_id, month_start, currency_code
-- The journal side of marts.revenue_reconciliation per company x month x currency: credit -
-- debit (VAT included, and excluded) on revenue ledgers (8xxx) by mutation month, and how many
-- entries (a refresh adds the changed reports' new entries and subtracts their old ones).

with journal_entries as (
    select * from core.fct_journal_entries
),

final as (
    select
        company_id,
        month_start,
        currency_code,
        sum(net_vat_included) as journal_revenue,
        sum(net_vat_excluded) as journal_revenue_vat_excluded,
        count(*) as entries,
    from journal_entries
    where is_revenue_ledger
    group by all
)

select * from final
