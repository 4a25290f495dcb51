-- Cash accounts (registers) per company and location.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.cash_accounts
),

final as (
    select
        cash_account_id,
        company_id,
        location_id,
        code as cash_account_code,
        name as cash_account_name,
        currency_code,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
