-- Cash clearances: closing counts of cash accounts.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.cash_clearances
),

final as (
    select
        cash_clearance_id,
        cash_account_id,
        clearance_number,
        clearance_date,
        cleared_at,
        start_balance,
        expected_amount,
        counted_cash,
        counted_card,
        counted_cheque,
        counted_ancv,
        difference,
        difference_reason,
        start_balance_next_day,
        employee_id,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
