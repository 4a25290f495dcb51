-- incremental by journal_report_id from lake.journal_entries: report_id
-- incremental by journal_report_id from lake.journal_reports: journal_report_id
-- incremental narrows its inputs
-- Journal entries of journal reports (child of journal_reports).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.journal_entries
),

final as (
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
        debit_vat_included,
        credit_vat_included,
        debit_vat_excluded,
        credit_vat_excluded,
        customer_id,
        distribution_channel_id,
        reserved_resource_id,
        comments,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
