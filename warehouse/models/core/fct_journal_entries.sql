-- incremental by journal_report_id
-- Journal entries with their report's company and currency; net amounts are credit - debit,
-- and revenue ledgers are those starting with 8. The cancellation compensation a cancelled
-- booking retains (bill line 190) has a revenue ledger of its own, 8300 (docs/contracts.md).

with entries as (
    select * from staging.stg_journal_entries
),

reports as (
    select * from staging.stg_journal_reports
),

companies as (
    select * from core.dim_companies
),

locations as (
    select * from core.dim_locations
),

final as (
    select
        entries.journal_entry_id,
        entries.journal_report_id,
        reports.journal_type as report_type,
        entries.journal_type,
        coalesce(reports.company_id, locations.company_id) as company_id,
        coalesce(reports.currency_code, companies.currency_code) as currency_code,
        entries.mutation_date,
        cast(date_trunc('month', entries.mutation_date) as date) as month_start,
        entries.location_id,
        entries.reservation_id,
        entries.distribution_channel_id,
        entries.reserved_resource_id,
        entries.resource_code,
        entries.ledger_number,
        entries.second_ledger_number,
        entries.cost_center,
        coalesce(entries.debit_vat_included, 0) as debit_vat_included,
        coalesce(entries.credit_vat_included, 0) as credit_vat_included,
        coalesce(entries.debit_vat_excluded, 0) as debit_vat_excluded,
        coalesce(entries.credit_vat_excluded, 0) as credit_vat_excluded,
        coalesce(entries.credit_vat_included, 0) - coalesce(entries.debit_vat_included, 0)
            as net_vat_included,
        coalesce(entries.credit_vat_excluded, 0) - coalesce(entries.debit_vat_excluded, 0)
            as net_vat_excluded,
        coalesce(entries.ledger_number like '8%', false) as is_revenue_ledger,
        coalesce(entries.ledger_number = '8300', false) as is_cancellation_ledger,
    from entries
    left join reports
        on entries.journal_report_id = reports.journal_report_id
    left join locations
        on entries.location_id = locations.location_id
    left join companies
        on coalesce(reports.company_id, locations.company_id) = companies.company_id
)

select * from final
