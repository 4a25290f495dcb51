-- incremental by journal_report_id
-- Journal reports of companies (mutation reports, revenue distributions).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.journal_reports
),

final as (
    select
        journal_report_id,
        company_id,
        report_number,
        type as journal_type,
        period_from,
        period_to,
        created_date as created_at,
        currency_code,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
