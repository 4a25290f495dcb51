-- incremental by journal_report_id from lake.journal_entries: report_id
-- incremental by journal_report_id from lake.journal_reports: journal_report_id
-- incremental by journal_report_id from staging.stg_journal_reports: journal_report_id
-- incremental narrows its inputs
-- incremental stored as built
-- Journal entries with their report's company and currency; net amounts are credit - debit,
-- and revenue ledgers are those starting with 8. The cancellation compensation a cancelled
-- booking retains (bill line 190) has a revenue ledger of its own, 8300 (docs/contracts.md).
-- Read from the lake's current state (its staging renames below), with staging's other columns
-- last (the amounts as the lake holds them, null when the service gave none, and the lineage):
-- `staging.stg_journal_entries` is a view of this table, so the 3.0M journal entries of a
-- large world are written once (docs/benchmarks.md, session 15).

with source as (
    select * from lake_current.journal_entries
),

entries as (
    select
        journal_entry_id,
        report_id as journal_report_id,
        type as journal_type,
        report_number,
        mutation_date,
        reservation_id,
        reservation_number,
        location_id,
        resource_code,
        ledger_number,
        second_ledger_number,
        cost_center,
        debit_vat_included as lake_debit_vat_included,
        credit_vat_included as lake_credit_vat_included,
        debit_vat_excluded as lake_debit_vat_excluded,
        credit_vat_excluded as lake_credit_vat_excluded,
        customer_id,
        distribution_channel_id,
        reserved_resource_id,
        comments,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields,
    from source
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
        coalesce(entries.lake_debit_vat_included, 0) as debit_vat_included,
        coalesce(entries.lake_credit_vat_included, 0) as credit_vat_included,
        coalesce(entries.lake_debit_vat_excluded, 0) as debit_vat_excluded,
        coalesce(entries.lake_credit_vat_excluded, 0) as credit_vat_excluded,
        coalesce(entries.lake_credit_vat_included, 0)
        - coalesce(entries.lake_debit_vat_included, 0) as net_vat_included,
        coalesce(entries.lake_credit_vat_excluded, 0)
        - coalesce(entries.lake_debit_vat_excluded, 0) as net_vat_excluded,
        coalesce(entries.ledger_number like '8%', false) as is_revenue_ledger,
        coalesce(entries.ledger_number = '8300', false) as is_cancellation_ledger,
        entries.report_number,
        entries.reservation_number,
        entries.customer_id,
        entries.comments,
        entries.lake_debit_vat_included,
        entries.lake_credit_vat_included,
        entries.lake_debit_vat_excluded,
        entries.lake_credit_vat_excluded,
        entries.batch_id,
        entries.batch_kind,
        entries.extracted_at,
        entries.extra_fields,
    from entries
    left join reports
        on entries.journal_report_id = reports.journal_report_id
    left join locations
        on entries.location_id = locations.location_id
    left join companies
        on coalesce(reports.company_id, locations.company_id) = companies.company_id
)

select * from final
