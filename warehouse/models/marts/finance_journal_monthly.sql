-- incremental by month_start from core.fct_journal_entries: month_start
-- incremental narrows its inputs
-- Journal totals per company x ledger x month x currency (credit - debit = net; revenue ledgers
-- start with 8).

with entries as (
    select * from core.fct_journal_entries
),

final as (
    select
        company_id,
        ledger_number,
        month_start,
        currency_code,
        bool_or(is_revenue_ledger) as is_revenue_ledger,
        count(*) as entry_count,
        cast(sum(debit_vat_included) as decimal(18, 2)) as debit_vat_included,
        cast(sum(credit_vat_included) as decimal(18, 2)) as credit_vat_included,
        cast(sum(debit_vat_excluded) as decimal(18, 2)) as debit_vat_excluded,
        cast(sum(credit_vat_excluded) as decimal(18, 2)) as credit_vat_excluded,
        cast(sum(net_vat_included) as decimal(18, 2)) as net_vat_included,
        cast(sum(net_vat_excluded) as decimal(18, 2)) as net_vat_excluded,
    from entries
    group by company_id, ledger_number, month_start, currency_code
)

select * from final
