-- Cash clearances with the account's company, location and currency, and the counted total.

with clearances as (
    select * from staging.stg_cash_clearances
),

accounts as (
    select * from staging.stg_cash_accounts
),

final as (
    select
        clearances.cash_clearance_id,
        clearances.cash_account_id,
        accounts.cash_account_code,
        accounts.company_id,
        accounts.location_id,
        accounts.currency_code,
        clearances.clearance_number,
        clearances.clearance_date,
        clearances.cleared_at,
        clearances.start_balance,
        clearances.expected_amount,
        clearances.counted_cash,
        clearances.counted_card,
        clearances.counted_cheque,
        clearances.counted_ancv,
        coalesce(clearances.counted_cash, 0) + coalesce(clearances.counted_card, 0)
        + coalesce(clearances.counted_cheque, 0) + coalesce(clearances.counted_ancv, 0)
            as counted_total,
        clearances.difference,
        clearances.difference_reason,
        clearances.start_balance_next_day,
        clearances.employee_id,
    from clearances
    left join accounts
        on clearances.cash_account_id = accounts.cash_account_id
)

select * from final
