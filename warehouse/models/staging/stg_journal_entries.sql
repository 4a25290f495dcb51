-- materialized as a view
-- Journal entries of journal reports (child of journal_reports).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only. A view of `core.fct_journal_entries`,
-- which reads the same current state with the same renames and keeps these columns (the
-- amounts as the lake holds them under `lake_` names): the journal entries are stored once.

with journal_entries as (
    select * from core.fct_journal_entries
),

final as (
    select
        journal_entry_id,
        journal_report_id,
        journal_type,
        report_number,
        mutation_date,
        reservation_id,
        reservation_number,
        location_id,
        resource_code,
        ledger_number,
        second_ledger_number,
        cost_center,
        lake_debit_vat_included as debit_vat_included,
        lake_credit_vat_included as credit_vat_included,
        lake_debit_vat_excluded as debit_vat_excluded,
        lake_credit_vat_excluded as credit_vat_excluded,
        customer_id,
        distribution_channel_id,
        reserved_resource_id,
        comments,
        batch_id,
        batch_kind,
        extracted_at,
        extra_fields,
    from journal_entries
)

select * from final
