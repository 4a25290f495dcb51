-- Cash clearances per clearance date x company x location x currency: expected vs counted
-- amounts and the differences found.

with clearances as (
    select * from core.fct_cash_clearances
),

final as (
    select
        clearance_date,
        company_id,
        location_id,
        currency_code,
        count(*) as clearance_count,
        cast(sum(expected_amount) as decimal(18, 2)) as expected_amount,
        cast(sum(counted_cash) as decimal(18, 2)) as counted_cash,
        cast(sum(counted_card) as decimal(18, 2)) as counted_card,
        cast(sum(counted_cheque) as decimal(18, 2)) as counted_cheque,
        cast(sum(counted_ancv) as decimal(18, 2)) as counted_ancv,
        cast(sum(counted_total) as decimal(18, 2)) as counted_total,
        cast(sum(difference) as decimal(18, 2)) as difference,
        count(*) filter (where difference <> 0) as clearances_with_difference,
    from clearances
    group by clearance_date, company_id, location_id, currency_code
)

select * from final
